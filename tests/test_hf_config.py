"""Every ``config.json`` field the app reads from a Hugging Face folder (``hf_config.
config_fields``, used by ``hf_load._check_folder``, ``_config_bytes`` and ``_our_config``),
missing or invalid, gives a ``CheckpointError`` naming the field (and the value), never a
``ValueError`` / ``KeyError`` / ``TypeError`` from transformers or from our config.

The folders are copies of the tiny Marian (a BART-like family: learned or sinusoidal
positions, ``encoder_attention_heads``) and T5 v1.1 (``d_kv``, ``num_heads``, gated
feed-forward) models of ``testkit/hf_tiny.py`` with one field of ``config.json`` edited.
"""

from __future__ import annotations

import copy
import json
import shutil

import pytest

from model import CheckpointError, load_pretrained
from model.backends.hf_load import _our_config
from testkit.hf_tiny import tiny_folder

MISSING = object()
BAD_COUNTS = ["8", 8.5, True, -1, 0, None, [8]]  # a string, float, bool, <= 0, null, list
BAD_IDS = ["1", 2.0, True, -1, 10**6, None]  # ... and an id outside the vocabulary

# family -> fields that must be present: (field, invalid values)
REQUIRED = {
    "marian": [(f, BAD_COUNTS) for f in (
        "d_model", "encoder_attention_heads", "decoder_attention_heads", "encoder_layers",
        "decoder_layers", "encoder_ffn_dim", "decoder_ffn_dim", "max_position_embeddings",
        "vocab_size")] + [("pad_token_id", BAD_IDS), ("eos_token_id", BAD_IDS)],
    "t5-v1_1": [(f, BAD_COUNTS) for f in (
        "d_model", "d_kv", "num_heads", "num_layers", "d_ff", "vocab_size")]
    + [("pad_token_id", BAD_IDS), ("eos_token_id", BAD_IDS)],
}
# family -> fields that may be absent (a default applies) but not invalid
OPTIONAL = {
    "marian": [("decoder_start_token_id", [v for v in BAD_IDS if v is not None]),
               ("activation_function", ["swishy", 3, None]),
               ("is_encoder_decoder", ["yes", 1])],
    "t5-v1_1": [("decoder_start_token_id", [v for v in BAD_IDS if v is not None]),
                ("num_decoder_layers", [v for v in BAD_COUNTS if v is not None]),
                ("feed_forward_proj", ["gated-swishy", "gated-gelu-new", "", 3]),
                ("dense_act_fn", ["swishy", 3]), ("is_gated_act", ["yes", 1])],
}
# (family, changes, the field the message must name): values wrong only together
INCONSISTENT = [
    ("marian", {"encoder_attention_heads": 3}, "encoder_attention_heads"),  # 32 % 3
    ("marian", {"decoder_attention_heads": 2}, "decoder_attention_heads"),  # one H
    ("t5-v1_1", {"d_model": 33}, "d_model"),  # odd
    ("t5-v1_1", {"eos_token_id": [1, 0]}, "eos_token_id"),  # the app stops at one </s>
    ("marian", {"model_type": ["marian"]}, "model_type"),
    ("marian", {"model_type": None}, "model_type"),
]


def _cases():
    for family, fields in REQUIRED.items():
        for field, bad in fields:
            yield family, field, MISSING
            yield from ((family, field, value) for value in bad)
    for family, fields in OPTIONAL.items():
        for field, bad in fields:
            yield from ((family, field, value) for value in bad)


CASES = list(_cases())


def _edited(family, tmp_path, tmp_path_factory, changes: dict):
    folder = shutil.copytree(tiny_folder(family, tmp_path_factory), tmp_path / family)
    path = folder / "config.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    for field, value in changes.items():
        if value is MISSING:
            data.pop(field, None)
        else:
            data[field] = value
    path.write_text(json.dumps(data), encoding="utf-8")
    return folder


@pytest.mark.parametrize("family,field,value", CASES,
                         ids=[f"{f}-{n}-{'missing' if v is MISSING else json.dumps(v)}"
                              for f, n, v in CASES])
def test_a_missing_or_invalid_field_is_named(family, field, value, tmp_path,
                                             tmp_path_factory):
    folder = _edited(family, tmp_path, tmp_path_factory, {field: value})
    with pytest.raises(CheckpointError) as caught:
        load_pretrained(folder)
    message = str(caught.value)
    assert field in message, message
    assert message.startswith(folder.name), message
    if value is MISSING or value is None:
        assert "lacks" in message or "None" in message, message
    else:
        assert json.dumps(value).strip('"') in message or repr(value) in message, message


@pytest.mark.parametrize("family,changes,field", INCONSISTENT,
                         ids=[f"{f}-{json.dumps(c)}" for f, c, _ in INCONSISTENT])
def test_inconsistent_fields_are_named(family, changes, field, tmp_path, tmp_path_factory):
    folder = _edited(family, tmp_path, tmp_path_factory, changes)
    with pytest.raises(CheckpointError, match=field):
        load_pretrained(folder)


@pytest.mark.parametrize("family,rename", [("marian", {"d_model": "hidden_size"}),
                                           ("t5-v1_1", {"d_kv": "head_dim",
                                                        "num_heads": "num_attention_heads"})])
def test_transformers_aliases_are_read(family, rename, tmp_path, tmp_path_factory):
    """A field under its ``attribute_map`` alias (``hidden_size``, ``head_dim``) opens the
    same model as under its own name."""
    folder = tiny_folder(family, tmp_path_factory)
    data = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    moved = _edited(family, tmp_path, tmp_path_factory,
                    {**{old: MISSING for old in rename}, **{new: data[old]
                                                            for old, new in rename.items()}})
    want, got = load_pretrained(folder), load_pretrained(moved)
    assert got.config == want.config
    text = "Why do we work?"
    assert got.generate(text, max_new_tokens=5).tgt_tokens == want.generate(
        text, max_new_tokens=5).tgt_tokens


@pytest.mark.parametrize("family,field,value", [
    ("t5-v1_1", "d_kv", 0), ("t5-v1_1", "num_heads", "4"), ("t5-v1_1", "eos_token_id", None),
    ("t5-v1_1", "decoder_start_token_id", 10**6), ("marian", "encoder_layers", -2),
    ("marian", "max_position_embeddings", 1), ("marian", "pad_token_id", True),
    ("marian", "decoder_attention_heads", 1), ("marian", "activation_function", "nope"),
])
def test_our_config_names_the_field_of_a_loaded_config(family, field, value,
                                                       tmp_path_factory):
    """``_our_config`` on a loaded config (transformers' defaults filled in) checks the same
    fields: a value changed after loading is named too."""
    hf_config = copy.deepcopy(load_pretrained(tiny_folder(family, tmp_path_factory))
                              .model.hf.config)
    vars(hf_config)[field] = value  # past transformers' own check on assignment
    with pytest.raises(CheckpointError, match=field):
        _our_config(hf_config, hf_config.vocab_size, "config.json")


def test_a_config_that_does_not_fit_the_weights_says_so(tmp_path, tmp_path_factory):
    """Valid fields whose shapes differ from the weights (d_model 64 for 32-wide tensors):
    transformers refuses to load, and the message says the shapes disagree."""
    folder = _edited("t5-v1_1", tmp_path, tmp_path_factory, {"d_model": 64})
    with pytest.raises(CheckpointError, match="shapes do not match config.json"):
        load_pretrained(folder)


def test_weights_lacking_what_the_config_describes_are_refused(tmp_path, tmp_path_factory):
    """A valid feed_forward_proj that is not the weights' (relu for a gated model's wi_0 and
    wi_1): transformers would make a random ``wi``; the app refuses and names the field."""
    folder = _edited("t5-v1_1", tmp_path, tmp_path_factory, {"feed_forward_proj": "relu"})
    with pytest.raises(CheckpointError, match=r"lack \d+ tensor.*feed_forward_proj"):
        load_pretrained(folder)


def test_the_unchanged_configs_map_to_their_models(tmp_path_factory):
    """Control: the unedited folders load, with each field where the table says."""
    for family, heads in (("marian", (4, 8)), ("t5-v1_1", (4, 12))):
        tr = load_pretrained(tiny_folder(family, tmp_path_factory))
        hc = tr.model.hf.config
        assert (tr.config.nhead, tr.config.head_dim) == heads
        assert tr.config.eos_id == hc.eos_token_id and tr.config.pad_id == hc.pad_token_id
        assert tr.config.norm_first == (family == "t5-v1_1")
