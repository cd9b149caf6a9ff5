"""Checks of the tiny Hugging Face fixtures of ``testkit.hf_tiny`` (offline, a few seconds)."""

from __future__ import annotations

import json
import os

import pytest
import torch
from huggingface_hub import scan_cache_dir
from transformers import AutoConfig, AutoModelForSeq2SeqLM, AutoTokenizer

from testkit import hf_tiny  # offline: conftest sets HF_HUB_OFFLINE before any test imports

pytestmark = pytest.mark.filterwarnings("ignore:Recommended. pip install sacremoses")

MODEL_CLASSES = {
    "marian": "MarianMTModel",
    "bart": "BartForConditionalGeneration",
    "t5": "T5ForConditionalGeneration",
    "m2m100": "M2M100ForConditionalGeneration",
    "t5-v1_1": "T5ForConditionalGeneration",
    "mt5": "MT5ForConditionalGeneration",
    "bart-zh": "BartForConditionalGeneration",
    "mbart-zh": "MBartForConditionalGeneration",
}
TOKENIZER_CLASSES = {
    "marian": "MarianTokenizer",
    "bart": "RobertaTokenizer",  # transformers 5: BartTokenizer is an alias of it
    "t5": "T5Tokenizer",
    "m2m100": "M2M100Tokenizer",
    "t5-v1_1": "T5Tokenizer",
    "mt5": "T5Tokenizer",  # transformers 5 maps mt5 to T5Tokenizer
    "bart-zh": "RobertaTokenizer",
    "mbart-zh": "MBartTokenizer",
}
SENTENCE = "Where is the bus station?"


@pytest.fixture(scope="module", params=hf_tiny.ALL_FAMILIES)
def family(request) -> str:
    """Each model family in turn."""
    return request.param


@pytest.fixture(scope="module")
def loaded(family, tmp_path_factory):
    """``(folder, model, tokenizer)`` for the family, loaded the way the app would."""
    folder = hf_tiny.tiny_folder(family, tmp_path_factory)
    model = AutoModelForSeq2SeqLM.from_pretrained(folder, local_files_only=True)
    tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    return folder, model, tokenizer


def _content_ids(family, tokenizer, ids):
    """``ids`` without special tokens (M2M100's language tokens are not special in v5)."""
    special = set(tokenizer.all_special_ids)
    if family == "m2m100":
        special |= set(tokenizer.lang_code_to_id.values())
    return [i for i in ids if i not in special]


def test_folder_loads_with_the_family_classes(family, loaded):
    folder, model, tokenizer = loaded
    assert (folder / "model.safetensors").is_file()
    assert not (folder / "pytorch_model.bin").exists()
    assert type(model).__name__ == MODEL_CLASSES[family]
    assert type(tokenizer).__name__ == TOKENIZER_CLASSES[family]
    assert model.config.is_encoder_decoder
    assert not model.training


def test_special_ids_agree_with_the_tokenizer(family, loaded):
    _, model, tokenizer = loaded
    config = model.config
    assert config.pad_token_id == tokenizer.pad_token_id
    assert config.eos_token_id == tokenizer.eos_token_id
    pad_start = family == "marian" or family in hf_tiny.T5_HEADS
    start = config.pad_token_id if pad_start else config.eos_token_id
    assert config.decoder_start_token_id == start
    if family in ("bart", "bart-zh", "mbart-zh", "m2m100"):
        assert config.bos_token_id == tokenizer.bos_token_id
    # Every id the tokenizer can produce has an embedding row.
    ids = tokenizer(SENTENCE).input_ids + [tokenizer.pad_token_id]
    if family == "m2m100":
        ids += list(tokenizer.lang_code_to_id.values())
    assert max(ids) < config.vocab_size
    assert model.get_input_embeddings().num_embeddings == config.vocab_size


def test_generation_config_is_plain_greedy(family, loaded):
    _, model, tokenizer = loaded
    generation = model.generation_config
    assert generation.num_beams == 1 and not generation.do_sample
    assert generation.max_length == 64
    assert generation.forced_eos_token_id is None
    assert not generation.bad_words_ids and not generation.no_repeat_ngram_size
    assert generation.decoder_start_token_id == model.config.decoder_start_token_id
    expected_bos = (tokenizer.get_lang_id("zh") if family == "m2m100"
                    else tokenizer.convert_tokens_to_ids("zh_CN") if family == "mbart-zh"
                    else None)
    assert generation.forced_bos_token_id == expected_bos


def test_tokenizer_round_trip(family, loaded):
    _, _, tokenizer = loaded
    ids = tokenizer(SENTENCE).input_ids
    end = -2 if family == "mbart-zh" else -1  # mBART: </s> then the language code
    assert ids[end] == tokenizer.eos_token_id
    assert tokenizer.unk_token_id not in ids
    assert tokenizer.decode(_content_ids(family, tokenizer, ids)) == SENTENCE
    target = tokenizer(text_target="公共汽车站在哪里？").input_ids
    assert target[end] == tokenizer.eos_token_id
    assert tokenizer.unk_token_id not in target


def test_geometries_are_the_published_shapes(family, loaded):
    """T5 v1.1 and mT5: H * d_kv != d_model, a gated feed-forward (wi_0, wi_1), an lm_head
    of its own and config.json's tie_word_embeddings false (as google/flan-t5-* and
    google/mt5-*); the others tie the output layer to the embeddings."""
    folder, model, _ = loaded
    config = model.config
    saved = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    untied = family in hf_tiny.UNTIED
    assert (model.get_output_embeddings().weight is model.get_input_embeddings().weight) \
        != untied
    assert (saved.get("tie_word_embeddings") is False) == untied
    if family in hf_tiny.T5_HEADS:
        assert (config.num_heads, config.d_kv) == hf_tiny.T5_HEADS[family]
        assert (config.num_heads * config.d_kv != config.d_model) == untied
        ffn = model.encoder.block[0].layer[1].DenseReluDense
        assert hasattr(ffn, "wi_0") == hasattr(ffn, "wi_1") == untied == config.is_gated_act


def test_bart_zh_targets_are_byte_level_pieces_of_characters(tmp_path_factory):
    """The bart-zh tokenizer, trained on Chinese only with few merges, splits most Chinese
    characters into byte-level pieces that are not whole characters."""
    tokenizer = AutoTokenizer.from_pretrained(hf_tiny.tiny_folder("bart-zh", tmp_path_factory),
                                              local_files_only=True)
    text = "公共汽车站在哪里？"
    pieces = tokenizer.tokenize(text)
    partial = [p for p in pieces  # bytes that are no whole character decode to U+FFFD
               if "\ufffd" in tokenizer.convert_tokens_to_string([p])]
    assert len(partial) > len(pieces) // 2
    assert tokenizer.convert_tokens_to_string(pieces) == text


def test_m2m100_language_codes(tmp_path_factory):
    tokenizer = AutoTokenizer.from_pretrained(hf_tiny.tiny_folder("m2m100", tmp_path_factory),
                                              local_files_only=True)
    tokenizer.src_lang = "en"
    assert tokenizer(SENTENCE).input_ids[0] == tokenizer.get_lang_id("en")
    assert tokenizer.get_lang_id("zh") != tokenizer.get_lang_id("en")
    assert tokenizer.convert_ids_to_tokens(tokenizer.get_lang_id("zh")) == "__zh__"


def test_greedy_generation_is_not_degenerate(family, loaded):
    _, model, tokenizer = loaded
    english = [en for en, _ in hf_tiny.sentence_pairs()]
    forced = family in ("m2m100", "mbart-zh")  # a target language forced after the start
    prefix = 2 if forced else 1
    outputs = []
    for sentence in english:
        with torch.no_grad():
            sequence = model.generate(**tokenizer(sentence, return_tensors="pt"),
                                      max_new_tokens=10, max_length=None)[0].tolist()
        assert sequence[0] == model.config.decoder_start_token_id
        if forced:
            assert sequence[1] == model.generation_config.forced_bos_token_id
        outputs.append(sequence[prefix:])
    most = len(english) * 2 // 3
    assert sum(len(out) >= 2 for out in outputs) >= most
    assert sum(len(out) >= 5 for out in outputs) >= most
    assert sum(len(set(out)) >= 2 for out in outputs) >= most  # not one token over and over
    assert len({tuple(out) for out in outputs}) > 1  # the output depends on the source


def test_build_is_deterministic(tmp_path):
    first = hf_tiny.build_tiny("bart", tmp_path / "a", seed=0)
    again = hf_tiny.build_tiny("bart", tmp_path / "b", seed=0)
    other = hf_tiny.build_tiny("bart", tmp_path / "c", seed=1)
    weights = [(folder / "model.safetensors").read_bytes() for folder in (first, again, other)]
    assert weights[0] == weights[1] != weights[2]
    assert (first / "tokenizer.json").read_bytes() == (again / "tokenizer.json").read_bytes()


def test_tiny_folder_is_built_once_per_session(tmp_path_factory):
    first = hf_tiny.tiny_folder("t5", tmp_path_factory)
    assert hf_tiny.tiny_folder("t5", tmp_path_factory) == first


def test_hf_cache_layout_loads_by_repo_id(family, loaded, tmp_path):
    folder, model, _ = loaded
    repo_id = f"tiny-test/{family}-en-zh"
    snapshot = hf_tiny.to_hf_cache(folder, tmp_path, repo_id)
    repo_dir = tmp_path / f"models--tiny-test--{family}-en-zh"
    assert snapshot.parent == repo_dir / "snapshots"
    assert (repo_dir / "refs" / "main").read_text() == snapshot.name
    assert len(snapshot.name) == 40 and int(snapshot.name, 16) >= 0
    for path in snapshot.iterdir():
        assert path.is_symlink() and not os.path.isabs(os.readlink(path))
        assert path.resolve().parent == (repo_dir / "blobs").resolve()
    (repo,) = scan_cache_dir(tmp_path).repos
    assert repo.repo_id == repo_id and repo.repo_type == "model"
    (revision,) = repo.revisions
    assert revision.commit_hash == snapshot.name and "main" in revision.refs
    assert {f.file_name for f in revision.files} == {p.name for p in folder.iterdir()}
    cached = AutoModelForSeq2SeqLM.from_pretrained(repo_id, cache_dir=tmp_path,
                                                   local_files_only=True)
    tokenizer = AutoTokenizer.from_pretrained(repo_id, cache_dir=tmp_path, local_files_only=True)
    assert type(cached) is type(model)
    assert type(tokenizer).__name__ == TOKENIZER_CLASSES[family]
    for name, tensor in model.state_dict().items():
        assert torch.equal(tensor, cached.state_dict()[name]), name


def test_remote_code_folder_asks_for_custom_code(tmp_path):
    folder = hf_tiny.remote_code_folder(tmp_path / "remote")
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    assert config["auto_map"] == {"AutoModelForSeq2SeqLM": "modeling_custom.CustomModel",
                                  "AutoConfig": "configuration_custom.CustomConfig"}
    assert (folder / "modeling_custom.py").is_file()
    assert (folder / "configuration_custom.py").is_file()
    assert (folder / "model.safetensors").is_file()
    # Without trust_remote_code, transformers quietly uses its own Marian classes instead.
    assert type(AutoConfig.from_pretrained(folder, local_files_only=True)).__name__ == (
        "MarianConfig")


def test_pickle_only_folder_has_no_safetensors(tmp_path):
    folder = hf_tiny.pickle_only_folder(tmp_path / "pickle")
    assert (folder / "pytorch_model.bin").is_file()
    assert not list(folder.glob("*.safetensors"))
    model = AutoModelForSeq2SeqLM.from_pretrained(folder, local_files_only=True)
    assert type(model).__name__ == "MarianMTModel"
