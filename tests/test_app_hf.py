"""The app with Hugging Face models: tiny random-weight Marian, BART, T5 and M2M100 folders
(``testkit/hf_tiny.py``) opened by their path and from the Hugging Face cache layout, every
tab drawn in English and in Chinese; the further geometries (T5 v1.1 and mT5 with
H * d_kv != d_model, BART with byte-level Chinese) drawn in English; and the folders that
must be refused, a broken config.json among them."""

from __future__ import annotations

import json
import re
import shutil

import pytest
from apptest_helpers import charts, enter, heading, run_app

from model import load_pretrained
from testkit.hf_tiny import (
    FAMILIES,
    GEOMETRIES,
    pickle_only_folder,
    remote_code_folder,
    tiny_folder,
    to_hf_cache,
)
from ui.i18n import VIEWS
from ui.models import FOLDER

SENTENCE = "My mother is a doctor."


def open_folder(at, folder, load_pickle_weights: bool = False):
    """Pick "open a folder" in the sidebar and type ``folder``."""
    at.selectbox(key="model").select(FOLDER).run()
    if load_pickle_weights:
        at.checkbox(key="load_pickle_weights").check().run()
    at.text_input(key="model_folder").input(str(folder)).run()
    assert not at.exception, at.exception
    return at


def _titles(at) -> str:
    return json.dumps([f["layout"].get("title") for f in charts(at)], ensure_ascii=False)


@pytest.mark.parametrize("lang", ["English", "简体中文"])
@pytest.mark.parametrize("family", FAMILIES)
def test_every_tab_draws(family, lang, tmp_path_factory):
    """Every view tab draws the Hugging Face model's figures, with no error, in both
    languages; each family's positions are shown as the family encodes them."""
    at = run_app()
    at.radio(key="lang").set_value(lang).run()
    open_folder(at, tiny_folder(family, tmp_path_factory))
    enter(at, SENTENCE)
    assert not at.error, [e.value for e in at.error]
    han = re.search(r"[\u4e00-\u9fff]", heading(at))  # the translation's line
    # Pinyin is on by default in either language: the header's line with pinyin is there
    # for Chinese output only.
    assert bool(at.html) == bool(han)
    seen = set()
    for view in VIEWS:
        at.session_state["view"] = view
        at.run()
        assert not at.exception, (view, at.exception)
        assert not at.error, (view, [e.value for e in at.error])
        titles = _titles(at)
        assert titles not in seen, view  # the tab drew figures of its own
        seen.add(titles)
    at.session_state["view"] = "positional"
    at.run()
    relative = "bias" in _titles(at).lower() or "偏置" in _titles(at)
    assert relative == (family == "t5")
    at.radio(key="strategy").set_value("beam").run()
    assert not at.exception and not at.error
    at.radio(key="strategy").set_value("sampling").run()
    assert not at.exception and not at.error


@pytest.mark.slow  # over ~5 s: run in CI, not in the quick tier
@pytest.mark.parametrize("family", GEOMETRIES)
def test_the_published_geometries_draw_every_tab(family, tmp_path_factory):
    """T5 v1.1 / Flan-T5 and mT5 shapes (per-head width d_kv with H * d_kv != d_model, gated
    feed-forward, untied lm_head) and BART with byte-level Chinese pieces open and draw
    every tab; inside one head shows Q, K, V and d_k at the model's own per-head width."""
    folder = tiny_folder(family, tmp_path_factory)
    at = open_folder(run_app(), folder)
    enter(at, SENTENCE)
    for view in VIEWS:
        at.session_state["view"] = view
        at.run()
        assert not at.exception, (view, at.exception)
        assert not at.error, (view, [e.value for e in at.error])
        assert charts(at), view
    at.session_state["view"] = "inside"
    at.run()
    c = load_pretrained(folder).config
    texts = [el.value for kind in ("markdown", "caption") for el in getattr(at, kind)]
    assert any(f"d_model = {c.d_model}" in x and f"d_k = {c.head_dim}" in x
               for x in texts), texts
    titles = _titles(at)
    assert f"× {c.head_dim})" in titles  # Q, K, V and Z are (tokens × d_k)
    assert (f"× {c.d_model // c.nhead})" in titles) == (c.head_dim == c.d_model // c.nhead)


def test_a_broken_config_is_named_in_the_sidebar(tmp_path, tmp_path_factory):
    """A Flan-T5-shaped folder whose config.json lacks d_kv (transformers would quietly
    use 64) is refused in the sidebar with the field named; no traceback, no figures."""
    folder = shutil.copytree(tiny_folder("t5-v1_1", tmp_path_factory), tmp_path / "flan")
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    del config["d_kv"]
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    at = open_folder(run_app(), folder)
    (error,) = at.sidebar.error
    assert "d_kv" in error.value.replace("\\", "")  # the message is Markdown-escaped
    assert not charts(at)


def test_multilingual_model_has_language_pickers(tmp_path_factory):
    """M2M100: source and target language pickers; the target language token is the first
    generated token."""
    at = open_folder(run_app(), tiny_folder("m2m100", tmp_path_factory))
    assert at.selectbox(key="src_lang").value == "en"
    assert at.selectbox(key="tgt_lang").value == "zh"
    at.selectbox(key="tgt_lang").select("fr").run()
    assert not at.exception and not at.error
    page = [el.value for kind in ("markdown", "caption") for el in getattr(at, kind)]
    assert any("__fr__" in text for text in page), page


def test_model_from_the_hugging_face_cache(tmp_path_factory, tmp_path, monkeypatch):
    """A model in the Hugging Face cache layout is listed by its hub name and opens."""
    cache = tmp_path / "hub"
    to_hf_cache(tiny_folder("marian", tmp_path_factory), cache, "tiny-org/opus-mt-tiny")
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    at = run_app()
    picker = at.selectbox(key="model")
    assert "tiny-org/opus-mt-tiny" in picker.options[-2] or any(
        "tiny-org/opus-mt-tiny" in o for o in picker.options)
    picker.select("tiny-org/opus-mt-tiny").run()
    assert not at.exception and not at.error
    assert charts(at)


@pytest.mark.parametrize("make,words", [(remote_code_folder, "trust_remote_code"),
                                        (pickle_only_folder, "pickle")])
def test_refused_folders_get_a_clear_message_and_other_models_stay_usable(make, words,
                                                                         tmp_path):
    """A folder that needs remote code, or has only pickle weights, is refused in the
    sidebar (no traceback); the shipped models still work afterwards."""
    at = open_folder(run_app(), make(tmp_path / "m"))
    (error,) = at.sidebar.error
    assert words in error.value.replace("\\", "")  # the message is Markdown-escaped
    assert not charts(at)
    at.selectbox(key="model").select("en-zh-everyday").run()
    assert not at.exception and not at.error and charts(at)


def test_pickle_weights_load_only_when_ticked(tmp_path):
    """Ticking "load pickle weights" opens a pickle-only folder."""
    at = open_folder(run_app(), pickle_only_folder(tmp_path / "m"), load_pickle_weights=True)
    assert not at.exception and not at.error
    assert charts(at)


def test_a_missing_folder_is_named(tmp_path):
    at = open_folder(run_app(), tmp_path / "nowhere")
    (error,) = at.sidebar.error
    assert "nowhere" in error.value and not charts(at)


def test_t5_task_prefix_is_put_before_the_sentence(tmp_path, tmp_path_factory):
    """A T5 config's task_specific_params give a task picker; the chosen prefix is part of
    the source the encoder reads; an empty sentence is still refused as empty."""
    folder = shutil.copytree(tiny_folder("t5", tmp_path_factory), tmp_path / "t5")
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    config["task_specific_params"] = {
        "summarization": {"prefix": "summarize: "},
        "translation_en_to_de": {"prefix": "translate English to German: "}}
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    at = open_folder(run_app(), folder)
    assert at.selectbox(key="task").value == "translation_en_to_de"
    enter(at, SENTENCE)
    assert not at.exception and not at.error
    tr = load_pretrained(folder)
    src = tr.source(SENTENCE, task="translation_en_to_de")
    pieces = [(x, w) for tok, x, w in zip(src.tokens, src.labels, src.words, strict=True)
              if tok not in tr._source_side.tokenizer.all_special_tokens]
    split = " ".join("`" + " · ".join(x for x, w in pieces if w == i) + "`"
                     for i in dict.fromkeys(w for _, w in pieces))
    captions = [c.value for c in at.sidebar.caption]  # how the sentence was split
    assert any(c.endswith(split) for c in captions), (split, captions)
    enter(at, "   ")
    assert any("empty" in i.value for i in at.info)


@pytest.mark.parametrize("kind", ["encoder", "cross"])
def test_t5_inside_one_head_says_its_scores_are_not_scaled(kind, tmp_path_factory):
    """T5 does not divide Q Kᵀ by √d_k: Inside one head writes no √d_k for a T5 model, in
    self-attention (which adds the position bias B) nor in cross-attention (no bias)."""
    at = open_folder(run_app(), tiny_folder("t5", tmp_path_factory))
    enter(at, SENTENCE)
    at.session_state["view"] = "inside"
    at.run()
    at.selectbox(key="ih_kind").select(kind).run()
    assert not at.exception
    formulas = [el.value for el in at.latex]
    assert formulas and not any("sqrt" in f for f in formulas), formulas
    assert any(("B_{h}" in f) == (kind == "encoder") for f in formulas if "S_{ij}" in f)
