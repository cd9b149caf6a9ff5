"""Subword pieces in a real browser, with the default everyday model: a sentence whose words
split into several pieces draws in every view with readable labels (never byte-level marks
such as ``Ġ``), and with the "Group subword pieces into words" switch on the source axes show
whole words, in English and in 简体中文.

The expected pieces and words come from the model's own tokenizer, never from a run.
"""

from __future__ import annotations

from urllib.parse import quote

import pytest
from shipped import model_of

from model.analysis.words import group_labels
from testkit.harness import CJK, ROOT, chart
from tests.browser.test_browser import FIRST, models_root

MODEL = "en-zh-everyday"
SENTENCE = "Unbelievably, astronauts don't sleep."
VIEWS = ("Encoder self-attention", "Cross-attention")  # the views with a source axis


@pytest.fixture(scope="module")
def pieces() -> tuple[list[str], list[str]]:
    """(the sentence's piece labels, its word labels), ``</s>`` included, from the model."""
    if not (models_root() / MODEL).is_dir():
        pytest.fail(f"{MODEL} is not in {models_root()} (ROOT {ROOT})")
    m = model_of(MODEL)
    trace = m.generate(SENTENCE, max_new_tokens=2)
    return list(trace.src_labels), group_labels(trace.src_labels, trace.src_words)


def no_byte_marks(snap: dict) -> None:
    labels = [t for c in snap["charts"] for t in c["x"] + c["y"]] + (snap["sourceTokens"] or [])
    assert not [t for t in labels if "Ġ" in t or "Ċ" in t], labels


def visit_every_tab(app, expect_source: list[str] | None) -> None:
    """Open every tab: each draws with no error and no byte-level mark; the source axis of
    the attention views shows ``expect_source`` (if given)."""
    for name, snap in app.each_view():
        no_byte_marks(snap)
        if expect_source is not None and name in VIEWS:
            found = chart(snap, f"{name}, layer 1, all heads")
            assert set(found["x"]) == set(expect_source), (name, found["x"])


def test_pieces_and_words_in_every_view(app, pieces):
    labels, words = pieces
    assert len(words) < len(labels)  # the sentence really has multi-piece words
    assert app.combobox("Model").input_value() == MODEL  # the default model
    snap = app.enter_sentence(SENTENCE, stepOf="Step 1 of ", titles=["Step 1, layer", FIRST])
    assert snap["sourceTokens"] == labels
    no_byte_marks(snap)
    sidebar = app.page.locator("[data-testid='stSidebar']").inner_text()
    assert "subword pieces" in sidebar and "Un · " in sidebar.replace("\n", " ")
    visit_every_tab(app, expect_source=labels)
    toggle = app.page.get_by_text("Group subword pieces into words", exact=True)
    app.act(toggle.click, panelMin=1)
    visit_every_tab(app, expect_source=words)
    step = chart(app.snapshot(), "Step 1, layer")["axes"]["x2"]  # source keys, then <s>
    assert step == [*words, "<s>"], step  # this step's row per head, keys grouped too
    app.screenshot("subwords-grouped")


def test_grouping_in_chinese(app, pieces):
    _, words = pieces
    page = app.page
    before = app.runs.done
    page.goto(f"{app.url}/?lang={quote('简体中文')}")
    app.wait_ready(before, minCharts=2)  # the step figure, the default view's chart
    box = page.get_by_role("textbox", name="英文句子", exact=True)

    def type_it():
        box.fill(SENTENCE)
        box.press("Enter")

    app.act(type_it, minCharts=2)  # the step figure, the default view's chart
    toggle = page.get_by_text("把子词合并成词", exact=True)
    app.act(toggle.click, minCharts=2)  # the step figure, the default view's chart
    tabs = app.views()
    assert all(CJK.search(t) for t in tabs), tabs
    visit_every_tab(app, expect_source=None)
    app.screenshot("subwords-grouped-zh")
    assert any(set(words) <= set(c["x"]) for c in app.snapshot()["charts"])
