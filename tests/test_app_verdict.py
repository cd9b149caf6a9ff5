"""The header's verdict in the app (ui.verdict), on the shipped default model: Chinese typed
into the English box is named, an English sentence is not; a typo's correction goes into the
sentence box in one click; the dictionary line names exactly the nouns the output lacks (an
English source, and a Chinese one with the Chinese -> English model);
the verdict's lines come in the interface's language; a stronger
model in the Hugging Face cache is offered in one click, and how to get it is said otherwise."""

from __future__ import annotations

import pytest
from apptest_helpers import enter, markdown_sources, run_app
from shipped import model_of, trace_of

from model.analysis.lexicon import untranslated
from model.analysis.lexicon_zh import untranslated_zh
from model.analysis.verdict import chinese_function_words, judge_trace
from testkit.hf_tiny import tiny_folder, to_hf_cache
from ui.models import STRONGER
from ui.text import md_literal

CHINESE = "我们为什么工作？"


def _page(at) -> str:
    return "\n".join(markdown_sources(at))


def test_chinese_in_the_english_box_is_named_and_english_is_not():
    at = enter(run_app(), CHINESE)
    assert "Not English" in _page(at) and "Chinese characters" in _page(at)
    assert not any("Confident" in c.value for c in at.caption)
    enter(at, "Why do we work?")
    assert "Not English" not in _page(at)


def test_the_verdict_speaks_the_interface_language():
    at = run_app()
    at.radio(key="lang").set_value("简体中文").run()
    enter(at, CHINESE)
    page = _page(at)
    assert "不是英文" in page and "Not English" not in page and "Chinese characters" not in page


@pytest.mark.parametrize(("model", "sentence"), [
    ("en-zh-everyday", "My grandmother was born in Beijing in 1956."),
    ("en-zh-everyday", "Zhang Wei lives in Hangzhou with his parents."),
    ("en-zh-everyday", "The museum has a dinosaur skeleton."),
    ("zh-en-everyday", "我们暑假去成都看熊猫。"),
    ("zh-en-everyday", "赵磊和黄晓明是好朋友。"),
    ("zh-en-everyday", "现在是下午三点。")])
def test_the_dictionary_line_names_exactly_the_nouns_missing_from_the_output(model, sentence):
    output = trace_of(model, sentence).output_text
    missing = (untranslated_zh(sentence, output, skip=chinese_function_words())
               if model.startswith("zh") else untranslated(sentence, output))
    at = run_app(None if model == "en-zh-everyday" else model)
    at.radio(key="lang").set_value("简体中文").run()
    page = _page(enter(at, sentence))
    line = next((ln for ln in page.splitlines() if "译文里找不到" in ln), None)
    assert (line is not None) == bool(missing), (output, missing)
    left = next((ln for ln in page.splitlines() if "**可能漏译**" in ln), "")
    for m_ in missing:
        shown = m_.translations[0] if m_.translations else " ".join(m_.pinyin)
        assert f"`{m_.word}`" in line and shown in line
        assert f"`{m_.word}`" not in left  # named once, by the dictionary line


def test_a_typo_is_corrected_in_one_click():
    sentence = "I beleive my freind will come tommorow."  # slips the model never saw
    m = model_of("en-zh-everyday")
    fixes = judge_trace(m.generate(sentence), m.info.train_counts).typos
    assert ("freind", "friend") in fixes
    at = enter(run_app(), sentence)
    assert "Likely typos" in _page(at)
    at.button(key="use_corrected").click().run()
    assert not at.exception
    assert at.text_input(key="sentence").value == "I believe my friend will come tomorrow."


def test_a_stronger_model_in_the_cache_is_offered_in_one_click(tmp_path_factory, tmp_path,
                                                               monkeypatch):
    at = enter(run_app(), CHINESE)  # the test's cache is empty: how to get one is said
    assert any("hf download" in c.value for c in at.sidebar.caption)
    assert not [b for b in at.button if b.key == "open_stronger"]
    cache = tmp_path / "hub"
    to_hf_cache(tiny_folder("marian", tmp_path_factory), cache, STRONGER)
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    at = enter(run_app(), CHINESE)
    assert not any("hf download" in c.value for c in at.sidebar.caption)
    at.button(key="open_stronger").click().run()
    assert not at.exception
    assert at.selectbox(key="model").value == STRONGER
    assert at.text_input(key="sentence").value == CHINESE
    assert "Not English" in _page(at)  # the cached opus-mt-en-zh reads English too


def test_present_mode_keeps_each_verdict_line_to_its_headline():
    """Present mode: each line of the verdict box is its headline, the explanation in its
    tooltip; off, the explanation follows the headline."""
    from ui.charts import PRESENT_KEY
    from ui.i18n import t

    at = enter(run_app(), CHINESE)
    why = t("verdict_not_english_why")
    line = next(m for m in at.markdown if "Not English" in m.value)
    assert line.value.endswith(why)
    at.toggle(key=PRESENT_KEY).set_value(True).run()
    line = next(m for m in at.markdown if "Not English" in m.value)
    assert why not in line.value and line.help == why


def test_a_paragraph_is_offered_one_sentence_at_a_time():
    paragraph = "My name is Li Ming. I live in Chengdu. I like pandas."
    at = enter(run_app(), paragraph)
    page = _page(at)
    assert "3 sentences typed" in page and "one sentence at a time" in page
    labels = [b.label for b in at.button if (b.key or "").startswith("one_sentence_")]
    sentences = ["My name is Li Ming.", "I live in Chengdu.", "I like pandas."]
    assert labels == [f"Sentence {k}: {md_literal(s)}" for k, s in enumerate(sentences, 1)]
    at.button(key="one_sentence_2").click().run()
    assert not at.exception
    assert at.text_input(key="sentence").value == "I live in Chengdu."
    assert "sentences typed" not in _page(at)  # one sentence: no such line


@pytest.mark.parametrize("sentence", ["我们不去公园了。", "我们学校的学生很多。"])
def test_a_dropped_negation_and_a_word_said_twice_are_named_as_the_checks_find_them(sentence):
    """The Chinese -> English model's own output: each line shows exactly when its check
    (``faithful_zh``) finds something, naming what it found, in the Chinese interface too."""
    from model.analysis.faithful_zh import negation_dropped, said_twice

    output = trace_of("zh-en-everyday", sentence).output_text
    negations = negation_dropped(sentence, output, skip=chinese_function_words())
    repeats = said_twice(sentence, output)
    at = run_app("zh-en-everyday")
    at.radio(key="lang").set_value("简体中文").run()
    lines = _page(enter(at, sentence)).splitlines()
    negation = next((ln for ln in lines if "可能漏了否定" in ln), None)
    repeated = next((ln for ln in lines if "说了两遍" in ln), None)
    assert (negation is not None) == bool(negations) and (repeated is not None) == bool(repeats)
    for n in negations:
        assert f"`{n.negated}`" in negation and all(w in negation for w in n.english)
    for r in repeats:
        assert f"*{r.word}*（译文 {r.times} 次，原句 {r.sources} 次）" in repeated
    assert negations or repeats  # the sentences were chosen for this model's slips
