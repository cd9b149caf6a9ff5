"""One click between directions (ui.verdict.switch_button, ui.models.model_for) and the
stronger model of each direction (ui.models.stronger_model): which model reads which
language comes from each folder's card.json without loading it, else from a cached OPUS-MT
model's name; in the app, Chinese typed for the English -> Chinese model and English typed
for the Chinese -> English one each open the same sentence with the other model in one click,
and a link naming the Chinese -> English model and a sentence opens both, in either
interface language."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
from apptest_helpers import APP, markdown_sources
from streamlit.testing.v1 import AppTest

from testkit.hf_tiny import to_hf_cache
from ui import models

ZH_EN, EN_ZH = "zh-en-everyday", "en-zh-everyday"
OPUS_ZH_EN = "Helsinki-NLP/opus-mt-zh-en"


def _folder(root, name, card):
    (root / name).mkdir(parents=True)
    if card is not None:
        (root / name / "card.json").write_text(
            card if isinstance(card, str) else json.dumps(card), encoding="utf-8")


def _hub(tmp_path, *names):
    """A Hugging Face cache holding ``names`` (a Marian config.json each: listed, never
    loaded)."""
    folder = tmp_path / "marian"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"model_type": "marian",
                                                    "is_encoder_decoder": True}))
    for name in names:
        to_hf_cache(folder, tmp_path / "hub", name)
    return tmp_path / "hub"


def test_card_languages_read_without_loading_and_default_to_en_zh(tmp_path):
    _folder(tmp_path, "a", {"languages": ["zh", "en"]})
    _folder(tmp_path, "b", {"name": "old card"})  # no languages: ours before zh-en
    _folder(tmp_path, "c", None)
    _folder(tmp_path, "d", "{not json")
    _folder(tmp_path, "e", {"languages": "zh"})
    got = {n: models.card_languages(tmp_path / n) for n in "abcde"}
    assert got == {"a": ("zh", "en"), "b": ("en", "zh"), "c": None, "d": None, "e": None}


def test_model_for_prefers_ours_then_a_cached_opus_mt_model(tmp_path, monkeypatch):
    root = tmp_path / "pretrained"
    _folder(root, "x-en-zh", {})
    _folder(root, EN_ZH, {"languages": ["en", "zh"]})
    monkeypatch.setenv("ATTENTION_PRETRAINED_DIR", str(root))
    monkeypatch.setenv("HF_HUB_CACHE", str(_hub(tmp_path, "Someone/opus-mt-zh-en",
                                                OPUS_ZH_EN, "Helsinki-NLP/opus-mt-de-en")))
    assert models.model_for("en", "zh") == EN_ZH  # the app's default model first
    assert models.model_for("zh", "en") == OPUS_ZH_EN  # none of ours: the named one first
    assert models.model_for("de", "en") == "Helsinki-NLP/opus-mt-de-en"
    assert models.model_for("fr", "en") is None


def test_the_stronger_model_follows_the_direction(tmp_path, monkeypatch):
    def translator(backend, source, target):
        return SimpleNamespace(info=SimpleNamespace(backend=backend, source_language=source,
                                                    target_language=target))

    monkeypatch.setenv("HF_HUB_CACHE", str(_hub(tmp_path, OPUS_ZH_EN)))
    assert models.stronger_model(translator("ours", "zh", "en")) == OPUS_ZH_EN
    assert models.stronger_model(translator("ours", "en", "zh")) is None  # not cached
    assert models.stronger_model(translator("huggingface", "zh", "en")) is None
    assert models.STRONGER_MODELS[("en", "zh")] == models.STRONGER


def _page(at) -> str:
    return "\n".join(markdown_sources(at))


@pytest.mark.parametrize("lang, not_chinese, not_english", [
    ("en", "Not Chinese", "Not English"), ("zh", "不是中文", "不是英文")])
def test_a_link_opens_the_zh_en_model_and_english_switches_in_one_click(lang, not_chinese,
                                                                        not_english):
    sentence = "Why do we work?"
    at = AppTest.from_file(APP, default_timeout=180)
    at.query_params.update({"model": ZH_EN, "sentence": sentence, "lang": lang})
    at.run()
    assert not at.exception, at.exception
    assert at.selectbox(key="model").value == ZH_EN
    assert at.text_input(key="sentence").value == sentence
    assert at.query_params["model"] in (ZH_EN, [ZH_EN])  # the link still names both
    assert at.query_params["sentence"] in (sentence, [sentence])
    assert not_chinese in _page(at) and not_english not in _page(at)
    assert any(OPUS_ZH_EN in c.value for c in at.sidebar.caption)  # its stronger model's hint
    at.button(key="open_reverse").click().run()
    assert not at.exception, at.exception
    assert at.selectbox(key="model").value == EN_ZH
    assert at.text_input(key="sentence").value == sentence
    assert not_chinese not in _page(at) and not_english not in _page(at)
    assert not [b for b in at.button if b.key == "open_reverse"]


def test_chinese_typed_for_the_en_zh_model_switches_in_one_click():
    sentence = "我们为什么工作？"
    at = AppTest.from_file(APP, default_timeout=180)
    at.query_params["sentence"] = sentence
    at.run()
    assert not at.exception, at.exception
    assert at.selectbox(key="model").value == EN_ZH and "Not English" in _page(at)
    at.button(key="open_reverse").click().run()
    assert not at.exception, at.exception
    assert at.selectbox(key="model").value == ZH_EN
    assert at.text_input(key="sentence").value == sentence
    assert "Not English" not in _page(at) and "Not Chinese" not in _page(at)
