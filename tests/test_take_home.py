"""The take-home page (ui.player.take_home): one HTML file whose trace document reads back equal to
the decoding, with pinyin; within 8 MB at 40 tokens; a sentence's markup stays text; every
string the player asks for is there in both languages; the command line writes it."""

from __future__ import annotations

import dataclasses
import html
import re
from html.parser import HTMLParser

import numpy as np
import pytest
from shipped import model_of

from model.analysis.verdict import judge, judge_trace
from model.decoding.document import KINDS, read_document
from ui.pinyin import readings
from ui.player import take_home

SENTENCE = "why do we work ?"


class _Scripts(HTMLParser):
    """The page's script elements (their ids and text), its <title> and <html lang>."""

    def __init__(self):
        super().__init__()
        self.scripts, self.title, self.lang, self._in = {}, "", None, None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "html":
            self.lang = attrs.get("lang")
        if tag in ("script", "title"):
            self._in = (tag, attrs.get("id", f"#{len(self.scripts)}"))
            if tag == "script":
                self.scripts[self._in[1]] = ""

    def handle_data(self, data):
        if self._in and self._in[0] == "script":
            self.scripts[self._in[1]] += data
        elif self._in:
            self.title += data

    def handle_endtag(self, tag):
        self._in = None


def _parse(page: str) -> _Scripts:
    p = _Scripts()
    p.feed(page)
    return p


@pytest.fixture(scope="module")
def everyday():
    return model_of("en-zh-everyday")


def test_the_page_holds_the_decoding_with_its_pinyin(everyday):
    trace = everyday.generate(SENTENCE)
    page = _parse(take_home.page_html(trace, "en-zh-everyday", "en"))
    back = read_document(page.scripts["trace-document"])
    for kind in KINDS:
        np.testing.assert_allclose(getattr(back, f"{kind}_attentions"),
                                   getattr(trace, f"{kind}_attentions"), atol=5e-5 + 1e-7)
    assert back.raw["tgt_pinyin"] == readings(trace.tgt_labels)
    assert any(back.raw["tgt_pinyin"])  # the translation is Chinese: it has readings
    assert back.raw["model"] == "en-zh-everyday" and page.lang == "en"


def test_a_forty_token_sentence_fits_in_8_mb(everyday):
    words = ("the students in our class read a long book about the history of the old city "
             "and wrote what they learned in their notebooks before the teacher came back "
             "to the room at four o'clock with the results of the test").split()
    trace = everyday.generate(" ".join(words))
    assert len(trace.src_tokens) >= 40
    page = take_home.page_html(trace, "en-zh-everyday", "zh")
    assert len(page.encode("utf-8")) <= take_home.MAX_BYTES


def test_markup_in_a_sentence_stays_text(everyday):
    sentence = "I like <b>cats</b> </script><script>alert(1)</script> <!-- a"
    page_text = take_home.page_html(everyday.generate(sentence), "x", "en")
    page = _parse(page_text)
    template = (take_home.PLAYER / "page.html").read_text(encoding="utf-8")
    assert len(page.scripts) == len(re.findall("<script", template))  # no element added
    assert read_document(page.scripts["trace-document"]).raw["src_text"] == sentence
    assert sentence in page.title  # the title: escaped text, read back as the sentence
    assert "default-src 'none'" in page_text  # the page may request nothing


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_string_the_player_reads_is_there(lang):
    strings = take_home.page_strings(lang)
    js = (take_home.PLAYER / "player.js").read_text(encoding="utf-8")
    html = (take_home.PLAYER / "page.html").read_text(encoding="utf-8")
    asked = set(re.findall(r"\bS\.(\w+)", js)) | set(re.findall(r'data-s="(\w+)"', html))
    asked |= {f"{p}_{kind}" for p in ("view", "explain") for kind in take_home.VIEW_KINDS}
    assert asked <= set(strings)
    assert all(isinstance(strings[k], str) and strings[k] for k in asked - {"legend"})
    assert [len(item["texts"]) for item in strings["legend"]] == [2, 2, 2]  # both languages
    assert (re.search(r"[\u4e00-\u9fff]", strings["home_next"]) is not None) == (lang == "zh")


def test_the_command_line_writes_the_page_and_names_a_bad_model(tmp_path, capsys):
    out = tmp_path / "why.html"
    assert take_home.main([SENTENCE, "--out", str(out), "--model", "en-zh-small",
                           "--lang", "zh"]) == 0
    page = _parse(out.read_text(encoding="utf-8"))
    assert page.lang == "zh-Hans"
    assert read_document(page.scripts["trace-document"]).raw["src_text"] == SENTENCE
    assert take_home.main([SENTENCE, "--out", str(out), "--model", "no-such-model"]) == 2
    assert "no-such-model" in capsys.readouterr().err


def test_the_in_app_player_names_what_the_server_view_adds():
    """Every view the player does not draw is named under it (from the catalogue), and
    none that it draws."""
    from ui.i18n import VIEWS, view_label
    from ui.player import in_browser

    said = in_browser.server_adds()
    for view in VIEWS:
        assert (view_label(view) in said) == (view not in take_home.VIEW_KINDS), view


def _verdict_of(page: str) -> tuple[str, list[str]]:
    """The page's verdict section: its class (flagged or confident) and its lines, as text."""
    found = re.search(r'<section id="verdict" class="verdict (\w+)">(.*?)</section>', page, re.S)
    assert found, "no verdict section"
    return found[1], [html.unescape(p) for p in re.findall(r"<p>(.*?)</p>", found[2], re.S)]


def _judged(sentence: str, output: str):
    """The verdict (``verdict.judge``, the app's function) of a one-step decoding of
    ``sentence``'s single word that looked at it, written as ``output``."""
    attn = np.array([[[[1.0, 0.0]]]])  # (L, H, T, S): one step, all on the word
    return judge(sentence, ["▁" + sentence, "</s>"], [0, 1], attn, probs=[0.9], forced=[False],
                 output_text=output, finished=True, counts=None)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_page_names_a_missing_city_with_its_dictionary_hint(everyday, lang):
    trace = everyday.generate(SENTENCE)
    missing = _judged("Chengdu", "上海")
    assert missing.flagged and missing.untranslated[0].word == "Chengdu"
    kind, lines = _verdict_of(take_home.page_html(trace, "x", lang, verdict=missing))
    assert kind == "flagged" and lines == take_home.verdict_lines(missing, lang)
    assert "Chengdu" in lines[1] and "成都" in lines[1]  # the word and the dictionary's hint
    assert ("Check this translation" in lines[0]) == (lang == "en")
    kind, lines = _verdict_of(take_home.page_html(trace, "x", lang, verdict=_judged("Chengdu",
                                                                                   "成都")))
    assert kind == "confident" and len(lines) == 1 and "Chengdu" not in lines[0]


def test_the_page_judges_the_decoding_as_the_app_does(everyday):
    """No verdict given (the command line): the page judges the trace with the model's
    counts and source language, as ``ui.verdict.trace_verdict`` does in the app."""
    trace = everyday.generate("We flew from Chengdu to Lhasa.")
    app = judge_trace(trace, everyday.info.train_counts, everyday.info.source_language)
    kind, lines = _verdict_of(take_home.page_html(trace, "en-zh-everyday", "en",
                                                  info=everyday.info))
    assert lines == take_home.verdict_lines(app, "en")
    assert kind == ("flagged" if app.flagged else "confident")
    assert all(m.word in " ".join(lines) for m in app.untranslated)


def test_words_in_the_verdict_line_stay_text(everyday):
    trace = everyday.generate(SENTENCE)
    word = "<b>x</b></section><script>alert(1)</script>"
    v = dataclasses.replace(_judged("Chengdu", "上海"), left_out=((0, word, 0.0),))
    page = take_home.page_html(trace, "x", "en", verdict=v)
    _, lines = _verdict_of(page)
    assert word in lines[-1]  # shown as typed, read back as text
    template = (take_home.PLAYER / "page.html").read_text(encoding="utf-8")
    assert len(_parse(page).scripts) == len(re.findall("<script", template))


def test_a_paragraph_goes_home_with_the_one_sentence_note(everyday):
    paragraph = "My name is Li Ming. I live in Chengdu. I like pandas."
    trace = everyday.generate(paragraph)
    for lang, said in (("en", "3 sentences typed"), ("zh", "输入了 3 个句子")):
        kind, lines = _verdict_of(take_home.page_html(trace, "x", lang, info=everyday.info))
        assert kind == "flagged" and said in lines[1]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_page_carries_a_dropped_negation_and_a_word_said_twice(lang):
    src, output = "他不是老师。", "He is a teacher and a teacher."
    attn = np.full((1, 1, 1, 2), 0.5)  # (L, H, T, S): one step on both tokens
    v = judge(src, [src, "</s>"], [0, 1], attn, probs=[0.9], forced=[False],
              output_text=output, finished=True, counts=None, source_language="zh")
    assert v.negation and v.repeated
    lines = take_home.verdict_lines(v, lang)
    negation = next(ln for ln in lines if "不是老师 → teacher" in ln)
    repeated = next(ln for ln in lines if ln.count("teacher") == 1 and "2" in ln)
    assert negation != repeated and "*" not in negation + repeated and "`" not in negation
