"""Hostile text, table-driven over ``HOSTILE_INPUTS``: through the page (AppTest running the
real ``app.py`` with the real shipped model, no mocks) and through the public API.

One AppTest serves the whole module: each case types the hostile text, checks the page,
then types ``GOOD`` and checks that it still translates, which also resets the page for the
next case.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from apptest_helpers import (
    DEFAULT_CHARTS,
    GRAMMAR_MODEL,
    charts,
    enter,
    heading,
    markdown_sources,
    message_list,
    run_app,
    split_code_spans,
    unescape,
)
from hostile_inputs import GOOD, GOOD_ZH, HOSTILE_INPUTS, for_model

from model import InputError
from ui.text import clip, code_span

MAX_MESSAGE_CHARS = 300
IDS = [name for name, *_ in HOSTILE_INPUTS]
# What the API itself refuses (InputError); "vocabulary" cases decode to <unk>s in the API
# and are refused by the page only.
API_REFUSES = ("empty", "characters long", "tokens", "no words")

# Pieces of typed text that Markdown (or Streamlit's directives) would act on if they were
# put into a message raw: HTML tags, character references, emphasis, links, colour and icon
# directives, emoji shortcodes, LaTeX, headings, block quotes and bare URLs.
_ACTIVE = re.compile(
    r"<[A-Za-z/!?][^<>\s]*"
    r"|&[A-Za-z#][A-Za-z0-9]*;"
    r"|\*\*?[^*\s][^*]*\*"
    r"|(?<![A-Za-z0-9])_[^_\s]+_"
    r"|\[[^\]]*\]\("
    r"|:[a-z]+\["
    r"|:[a-z_/+-]+:"
    r"|\$[^$\s]+"
    r"|^\s*#+\s+\S+|^\s*>\s*\S+"
    r"|(?:https?://|www\.)\S+"
)


def active_fragments(text: str) -> list[str]:
    """The Markdown-active pieces of what the user typed (stripped of outer spaces)."""
    return [f.strip() for f in _ACTIVE.findall(text) if f.strip()]


def raw_fragments(sources: list[str], text: str) -> list[tuple[str, str]]:
    """(fragment, source) for each active fragment of ``text`` that occurs in a source
    outside code spans and unescaped, i.e. that Streamlit would render as Markdown."""
    found = []
    for src in sources:
        _, outside = split_code_spans(src)
        found += [(f, src) for f in active_fragments(text) if f in outside]
    return found


def test_the_markdown_scanner_finds_raw_fragments_and_passes_safe_ones():
    """The scanner used below is not vacuous: raw HTML, emphasis, links, directives and
    LaTeX are caught; the same text in code spans or backslash-escaped is not."""
    text = '# <img src=x> **why** [click](x) :red[a] :smile: $\\frac{a}{b}$ _we_ www.x.cn'
    frags = active_fragments(text)
    assert {"# <img", "**why*", "[click](", ":red[", ":smile:", "$\\frac{a}{b}", "_we_",
            "www.x.cn"} <= set(frags), frags
    assert len(raw_fragments([f"Unknown: {text}"], text)) == len(frags)
    escaped = re.sub(r"([\\`*_{}\[\]()#+\-.!|<>~$:&=])", r"\\\1", text)
    assert raw_fragments([f"Unknown: {escaped}"], text) == []
    assert raw_fragments(["Tokens: " + " ".join(f"`{t}`" for t in text.split())], text) == []
    assert split_code_spans("a `` ` `` b ```x``y``` \\`c`")[0] == ["`", "x``y"]


@pytest.mark.parametrize("token", ["`", "``", "a``b", "```x", "**x**", "<b>", "a\nb", "$x$"])
def test_code_span_shows_any_token_literally(token):
    """A token (or a folder name) with backtick runs or a line break still makes exactly one
    code span whose content is the token (line breaks as spaces): nothing leaks out of it.
    (The old fence of two backticks let ``a``b`` close the span early.)"""
    spans, outside = split_code_spans(f"x {code_span(token)} y")
    assert spans == [token.replace("\n", " ")] and outside == "x \0 y"


@pytest.fixture(scope="module")
def at():
    """One AppTest of the real app for the whole module (each case leaves GOOD typed), on
    the word-level grammar model, whose vocabulary checks the table's outcomes are about
    (the default subword model's page is driven by the browser test with ``for_model``)."""
    return run_app(GRAMMAR_MODEL)


@pytest.mark.parametrize(("name", "text", "outcome", "expected"), HOSTILE_INPUTS, ids=IDS)
def test_hostile_text_through_the_page(at, en_zh, name, text, outcome, expected):
    """``message``: a short info/warning containing ``expected``, no chart, no error box.
    ``decode``: charts drawn; unknown words (if any) listed in a warning, the source-token
    caption shows exactly the model's tokens. ``exact``: the heading is ``expected``.
    Always: no exception, nothing typed reaches Markdown raw, and GOOD then translates."""
    enter(at, text)
    msgs = message_list(at)
    assert not at.error, [e.value for e in at.error]  # errors mean a failure, not input
    for msg in msgs:
        assert len(msg) < MAX_MESSAGE_CHARS, (len(msg), msg)
    assert raw_fragments(markdown_sources(at), text) == []
    if outcome == "message":
        assert any(expected in unescape(m) for m in msgs), msgs
        assert not charts(at) and heading(at) is None
    else:
        assert len(charts(at)) == DEFAULT_CHARTS and heading(at) is not None
        src = en_zh.source(text)
        unknown = src.unknown_words
        if unknown:
            (warning,) = at.warning
            listed = split_code_spans(warning.value)[0]
            assert all(clip(word, 20) in listed for word in unknown[:5]), (unknown, listed)
            assert (f"and {len(unknown) - 5} more" in warning.value) == (len(unknown) > 5)
        else:
            assert not msgs
        (caption,) = [c.value for c in at.caption if c.value.startswith("Source tokens:")]
        assert split_code_spans(caption)[0] == list(src.tokens)
        if outcome == "exact":
            assert heading(at) == expected
    enter(at, GOOD)
    assert len(charts(at)) == DEFAULT_CHARTS and not message_list(at)
    assert heading(at) == GOOD_ZH


@pytest.mark.parametrize("model_name", ["en-zh", "en-zh-everyday"])
@pytest.mark.parametrize(("name", "text", "outcome", "expected"), HOSTILE_INPUTS, ids=IDS)
def test_hostile_text_through_the_api(request, model_name, name, text, outcome, expected):
    """``decode`` either raises InputError (only for the message cases the API refuses, with
    ``expected`` in its message) or returns a trace with finite attentions whose rows sum to
    1; any other exception fails the test. The subword model's outcomes are ``for_model``'s."""
    model = request.getfixturevalue("en_zh" if model_name == "en-zh" else "everyday")
    outcome, expected = for_model(text, outcome, expected, model.info.subword)
    if (model.info.subword and outcome != "message"
            and len(model._source_side.tokenize(text)) > model.info.max_source_words):  # its pieces
        outcome, expected = "message", "tokens"  # long words make many pieces
    if outcome == "message" and expected in API_REFUSES:
        with pytest.raises(InputError, match=expected):
            model.generate(text)
        return
    trace = model.generate(text)
    assert trace.src_tokens[-1] == "</s>" and len(trace.src_tokens) <= model.config.max_len
    for arr in (trace.encoder_attentions, trace.decoder_attentions, trace.cross_attentions):
        assert np.isfinite(arr).all()
        np.testing.assert_allclose(arr.sum(-1), 1.0, atol=1e-5)
    if outcome == "message":  # "vocabulary": the API decodes, but no word is known
        assert expected == "vocabulary"
        words = [t for t in trace.src_tokens[:-1] if t.isalnum()]
        assert words and set(words) <= set(trace.unknown_words)
    assert not model.info.subword or not trace.unknown_words
    if outcome == "exact":
        assert trace.output_text == expected


def test_the_table_covers_enough_inputs():
    """The shared table keeps at least 25 entries with unique names and known outcomes."""
    assert len(HOSTILE_INPUTS) >= 25 and len(set(IDS)) == len(IDS)
    assert {o for _, _, o, _ in HOSTILE_INPUTS} == {"message", "decode", "exact"}
