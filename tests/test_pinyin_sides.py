"""Pinyin and glosses under whichever side of the model is Chinese (issue 46): the source of a
zh -> en model (``zh-en-everyday``), the target of an en -> zh one (``en-zh-everyday``), from
the model's own languages (``ModelInfo.source_language`` / ``target_language``). Nothing here
asserts a translation: the zh -> en model may be replaced by any model of that direction."""

from __future__ import annotations

import dataclasses
import json
import re

import jsonschema
import pytest
from apptest_helpers import APP, charts, heading
from shipped import model_of
from streamlit.testing.v1 import AppTest

from model.analysis.words import group_labels
from model.decoding import document as D
from ui import pinyin
from ui.gloss import glossed_html, source_line
from ui.i18n import STRINGS
from ui.pinyin import chinese_sides, readings, with_pinyin
from ui.player import in_browser, take_home

ZH_SENTENCE = "我们为什么工作？"
EN_SENTENCE = "why do we work ?"
HAN = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture(scope="module")
def zh_en():
    return model_of("zh-en-everyday")


@pytest.fixture(scope="module")
def en_zh():
    return model_of("en-zh-everyday")


@pytest.fixture
def switch_on(monkeypatch):
    monkeypatch.setattr(pinyin, "is_on", lambda: True)


def test_the_models_say_which_side_is_chinese(zh_en, en_zh):
    assert chinese_sides(zh_en.info) == (True, False)
    assert chinese_sides(en_zh.info) == (False, True)
    assert chinese_sides(None) == (False, True)  # our models' default: en -> zh
    other = dataclasses.replace(en_zh.info, source_language="ja", target_language="en")
    assert chinese_sides(other) == (False, False)  # kanji are not read as Mandarin
    unknown = dataclasses.replace(en_zh.info, source_language="", target_language="")
    assert chinese_sides(unknown) == (False, True)  # a multilingual model: as before
    prompt = dataclasses.replace(unknown, architecture="decoder-only")
    assert chinese_sides(prompt) == (True, True)  # Qwen's Chinese prompt gets its readings


def test_a_zh_en_model_gets_pinyin_on_its_source_labels_and_none_on_its_targets(
        zh_en, switch_on):
    trace = zh_en.generate(ZH_SENTENCE)
    shown = pinyin.annotate(trace, zh_en.info)
    assert shown.src_labels == with_pinyin(trace.src_labels) != trace.src_labels
    assert any("\n" in label for label in shown.src_labels)
    assert shown.tgt_labels == trace.tgt_labels
    assert not any("\n" in label for label in shown.tgt_labels)
    # the top-10 candidates are English: nothing to read, so nothing added
    for step in trace.steps:
        if not any(HAN.search(label) for label in step.top_labels):
            assert pinyin.alone(step.top_labels) == tuple(step.top_labels)


def test_an_en_zh_model_gets_pinyin_on_its_targets_and_none_on_its_source(en_zh, switch_on):
    trace = en_zh.generate(EN_SENTENCE)
    shown = pinyin.annotate(trace, en_zh.info)
    assert shown.tgt_labels == with_pinyin(trace.tgt_labels) != trace.tgt_labels
    assert shown.src_labels == trace.src_labels
    assert not any("\n" in label for label in shown.src_labels)


def test_the_switch_off_leaves_both_sides_alone(zh_en, monkeypatch):
    monkeypatch.setattr(pinyin, "is_on", lambda: False)
    trace = zh_en.generate(ZH_SENTENCE)
    assert pinyin.annotate(trace, zh_en.info) is trace


def test_grouped_source_labels_keep_each_words_pinyin_as_its_second_line():
    labels = ["我\nwǒ", "们\nmen", "为\nwèi", "什\nshén", "么\nme", "？", "</s>"]
    words = (0, 0, 1, 1, 1, 2, 3)
    assert group_labels(labels, words) == ["我们\nwǒ men", "为什么\nwèi shén me", "？", "</s>"]
    plain = ["learn", "ing", "machines", "?", "</s>"]
    assert group_labels(plain, (0, 0, 1, 2, 3)) == ["learning", "machines", "?", "</s>"]
    with pytest.raises(ValueError):
        group_labels(labels, words[:-1])


def test_the_take_home_document_of_a_zh_en_trace_carries_the_source_pinyin(zh_en, en_zh):
    trace = zh_en.generate(ZH_SENTENCE)
    page = take_home.page_html(trace, "zh-en-everyday", "en", info=zh_en.info)
    text = re.search(r'<script[^>]*id="trace-document"[^>]*>(.*?)</script>', page, re.S)[1]
    back = D.read_document(text.replace("\\u003c", "<"))
    assert back.raw["src_pinyin"] == readings(trace.src_labels)
    assert any(back.raw["src_pinyin"]) and back.raw["tgt_pinyin"] is None
    en_trace = en_zh.generate(EN_SENTENCE)
    doc = json.loads(in_browser.document_json(("en-zh",), "en-zh-everyday",
                                              chinese_sides(en_zh.info), en_trace))
    assert doc["src_pinyin"] is None and doc["tgt_pinyin"] == readings(en_trace.tgt_labels)


def test_src_pinyin_is_optional_in_the_schema_and_checked_by_the_reader(zh_en):
    schema = json.loads(D.SCHEMA_FILE.read_text(encoding="utf-8"))
    check = jsonschema.Draft202012Validator(schema).validate
    trace = zh_en.generate(ZH_SENTENCE)
    doc = json.loads(D.dumps(D.to_document(trace, _display(), "zh-en-everyday",
                                           src_pinyin=readings(trace.src_labels))))
    check(doc)
    older = {k: v for k, v in doc.items() if k != "src_pinyin"}  # written before the field
    check(older)
    assert D.read_document(older).raw.get("src_pinyin") is None
    with pytest.raises(jsonschema.ValidationError):
        check({**doc, "src_pinyin": [1] * len(trace.src_labels)})
    with pytest.raises(ValueError, match="src_pinyin"):
        D.read_document({**doc, "src_pinyin": ["wǒ"]})
    with pytest.raises(ValueError, match="src_pinyin"):
        D.to_document(trace, _display(), src_pinyin=["wǒ"])


def _display() -> dict:
    from viz.convention import display_settings

    return display_settings()


def test_the_source_line_glosses_and_escapes_a_chinese_sentence():
    known = {"我们": "we; us", "工作": "to work; job"}
    out = glossed_html("我们<b>工作", known, True, heading=False)
    assert out.startswith('<p class="gloss-source"') and "<h3" not in out
    assert "<b>" not in out and "&lt;b&gt;" in out
    assert 'title="we; us"' in out and "<rt>wǒ men</rt>" in out
    assert not source_line("why do we work ?", with_pinyin=True)  # no Chinese: nothing drawn


def _source_ticks(at: AppTest) -> list[str]:
    """Every x-axis tick label of the page's charts (source keys of the default cross view)."""
    return [label for f in charts(at) for name, axis in f["layout"].items()
            if name.startswith("xaxis") for label in axis.get("ticktext", [])]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_page_of_a_chinese_source_runs_in_either_language(zh_en, lang):
    at = AppTest.from_file(APP, default_timeout=180)
    at.query_params.update({"model": "zh-en-everyday", "sentence": ZH_SENTENCE, "lang": lang})
    at.run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]  # the page's own "unexpected error"
    assert at.text_input(key="sentence").label == STRINGS["sentence_zh"][lang]
    output = zh_en.generate(ZH_SENTENCE).output_text
    assert heading(at) == output  # the translation, plain Markdown
    ticks = _source_ticks(at)
    # pinyin on by default in either language: the sentence's words with pinyin over them
    (line,) = [h.value for h in at.html if "gloss-source" in h.value]
    assert "<rt>wǒ men</rt>" in line and "title=" in line
    assert any("wǒ" in tick for tick in ticks)  # under the source tokens of the charts
