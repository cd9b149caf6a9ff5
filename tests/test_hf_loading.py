"""Opening Hugging Face folders offline and safely: by path, from the cache layout, and the
folders that must be refused with a clear message (``model.hf_load.load_hf`` through
``load_pretrained``)."""

from __future__ import annotations

import json
import shutil
import warnings

import numpy as np
import pytest
from hostile_inputs import HOSTILE_INPUTS

from model import CheckpointError, InputError, load_pretrained
from model.backends import hf_load as hf_module
from testkit.hf_tiny import (
    FAMILIES,
    pickle_only_folder,
    remote_code_folder,
    tiny_folder,
    to_hf_cache,
)


@pytest.fixture()
def marian_copy(tmp_path, tmp_path_factory):
    """A private copy of the tiny Marian folder, free to damage."""
    return shutil.copytree(tiny_folder("marian", tmp_path_factory), tmp_path / "marian")


def test_a_folder_opens_by_path_and_by_name_in_the_cache(tmp_path, tmp_path_factory,
                                                         monkeypatch):
    """The same model from its folder and from the cache layout by hub name decodes alike;
    ``cached_models`` lists it; a hub name not in the cache is refused with how to get it."""
    folder = tiny_folder("marian", tmp_path_factory)
    to_hf_cache(folder, tmp_path / "hub", "tiny-org/opus-mt-tiny")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    assert hf_module.cached_models() == ["tiny-org/opus-mt-tiny"]
    by_path = load_pretrained(folder).generate("Why do we work?", max_new_tokens=6)
    by_name = load_pretrained("tiny-org/opus-mt-tiny").generate("Why do we work?",
                                                              max_new_tokens=6)
    assert by_name.tgt_tokens == by_path.tgt_tokens
    np.testing.assert_array_equal(by_name.cross_attentions, by_path.cross_attentions)
    with pytest.raises(CheckpointError, match="hf download"):
        load_pretrained("Helsinki-NLP/opus-mt-en-zh")


def test_remote_code_is_refused(tmp_path):
    """transformers would silently load the built-in class; we refuse the folder."""
    with pytest.raises(CheckpointError, match="trust_remote_code"):
        load_pretrained(remote_code_folder(tmp_path / "m"))


def test_pickle_weights_only_when_allowed(tmp_path, tmp_path_factory):
    """Pickle-only weights are refused with how to convert them; allowed, they load (in
    weights-only mode) and give the same model as the safetensors build of that seed."""
    folder = pickle_only_folder(tmp_path / "m")
    with pytest.raises(CheckpointError, match="safetensors"):
        load_pretrained(folder)
    pickled = load_pretrained(folder, load_pickle_weights=True).generate("Why do we work?",
                                                               max_new_tokens=6)
    safe = load_pretrained(tiny_folder("marian", tmp_path_factory)).generate(
        "Why do we work?", max_new_tokens=6)
    assert pickled.tgt_tokens == safe.tgt_tokens
    np.testing.assert_allclose(pickled.step_probs, safe.step_probs, atol=1e-6)


def _edit_config(folder, **changes):
    path = folder / "config.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data.update(changes)
    path.write_text(json.dumps(data), encoding="utf-8")


DAMAGES = {  # name: (what to do to the folder, words of the message)
    "no config": (lambda f: (f / "config.json").unlink(), "config.json"),
    "config not JSON": (lambda f: (f / "config.json").write_text("{oops", encoding="utf-8"),
                        "not valid JSON"),
    "config a list": (lambda f: (f / "config.json").write_text("[1]", encoding="utf-8"),
                      "JSON object"),
    "not encoder-decoder": (lambda f: _edit_config(f, model_type="bert"), "bert"),
    "no weights": (lambda f: (f / "model.safetensors").unlink(), "no weights"),
    "truncated weights": (lambda f: (f / "model.safetensors").write_bytes(
        (f / "model.safetensors").read_bytes()[:5000]), "cannot be loaded"),
    "config larger than the machine": (lambda f: _edit_config(f, d_model=2**20, vocab_size=2**20),
                                       "too little to run it"),
    "no tokenizer": (lambda f: [p.unlink() for p in f.iterdir()
                                if p.name not in ("config.json", "model.safetensors",
                                                  "generation_config.json")], "tokenizer"),
}


@pytest.mark.parametrize("name", list(DAMAGES))
def test_damaged_folders_get_a_clear_message(name, marian_copy):
    damage, words = DAMAGES[name]
    damage(marian_copy)
    with pytest.raises(CheckpointError, match=words):
        load_pretrained(marian_copy)


def test_weights_too_large_for_the_machine_are_refused(marian_copy, monkeypatch):
    """A model whose weights need more than MEMORY_SHARE of the memory is refused before
    any weights are read."""
    monkeypatch.setattr(hf_module, "MEMORY_SHARE", 1e-12)
    with pytest.raises(CheckpointError, match="too little to run it"):
        load_pretrained(marian_copy)


@pytest.mark.parametrize("family", FAMILIES)
def test_typed_special_tokens_are_text(family, tmp_path_factory):
    """A typed ``</s>`` or ``<pad>`` is tokenized as text, so the only special tokens of
    the source (other than ``<unk>``, for characters a small vocabulary lacks) are the ones
    the tokenizer adds around the sentence; or, where the tokenizer cannot split them
    (the tiny T5's), the text is refused with a message. Never a hidden ``</s>``."""
    tr = load_pretrained(tiny_folder(family, tmp_path_factory))
    plain = tr.source("we work").ids.tolist()
    try:
        typed = tr.source("we </s> <pad> work").ids.tolist()
    except InputError as exc:  # a tokenizer that cannot split them: a clear refusal
        assert "special tokens" in str(exc)
        return
    tokenizer = tr._source_side.tokenizer
    specials = set(tokenizer.all_special_ids) - {tokenizer.unk_token_id}
    assert [i for i in typed if i in specials] == [i for i in plain if i in specials]


@pytest.mark.parametrize("family", FAMILIES)
def test_hostile_input_gets_input_error_or_a_trace(family, tmp_path_factory):
    """Every hostile input either decodes or raises InputError with a message."""
    tr = load_pretrained(tiny_folder(family, tmp_path_factory))
    for _, text, _, _ in HOSTILE_INPUTS:
        try:
            trace = tr.generate(text, max_new_tokens=3)
        except InputError as exc:
            assert str(exc)
        else:
            assert trace.encoder_attentions.shape[-1] == len(trace.src_tokens)


def test_the_marian_model_opens_and_decodes_without_a_warning(tmp_path_factory):
    """sacremoses is installed (requirements.txt), so MarianTokenizer normalises punctuation
    instead of warning "Recommended: pip install sacremoses" at every load; nothing else
    warns either."""
    folder = tiny_folder("marian", tmp_path_factory)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tr = load_pretrained(folder)
        trace = tr.generate("Why do we work?", max_new_tokens=3)
    assert trace.tgt_tokens[0] == tr.target.vocab.itos[tr.config.bos_id]


def test_positional_experiments_are_refused_for_hugging_face_models(tmp_path_factory):
    tr = load_pretrained(tiny_folder("marian", tmp_path_factory))
    with pytest.raises(InputError, match="positions"):
        tr.generate("Why do we work?", positional="shuffled")
