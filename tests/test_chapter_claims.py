"""The lesson's claims that tests/test_chapters.py leaves to this module, on the same shipped
models and sentences: every chapter's title (its heading's number, its figure's title) says
what the chapter shows, by the numbers of its values and its chart; chapter 2 outlines a row
where the position table's waves show, and its look names where they end and what they swing
between, as the table on screen has them (issue 54)."""

from __future__ import annotations

import re

import numpy as np
import pytest
from test_chapter_one_stack import assert_says_the_numbers
from test_chapters import CASES, live, rightly_unbuilt, visible

from model.analysis.picks import is_content
from ui import cache
from ui.i18n import t
from ui.lesson import chapters
from ui.lesson.chapter import fill
from ui.lesson.chapters import BUILDERS
from ui.lesson.picks import wave_row
from ui.text import code_span
from viz.convention import FIRST_NUMBER


@pytest.fixture(scope="module", params=CASES, ids=lambda c: f"{c[0]}:{c[1][:12]}")
def built(request):
    """Every chapter built on one of tests/test_chapters.py's models and sentences."""
    lv = live(*request.param)
    return lv, {cid: BUILDERS[cid](lv, 0) for cid in BUILDERS}


#: What each chapter's figure title says (English), filled from the chapter's values.
TITLE_SAYS = {"positions": "(d_model = {d_model})",
              "one_head": "layer {layer}, head {head}",
              "cross": "layer {layer}, head {head}",
              "heads": "Three encoder heads",
              "sublayers": "“{word}”",
              "heads_off": "switching off one head ({kind}, {head})",
              "minimal_pair": "encoder layer {layer}, mean of the heads",
              "attention_story": "Step {k}, layer {layer}:",
              "one_stack": "layer {layer}, the mean of the heads"}


def _title(fig) -> str:
    """A figure's title as a reader reads it: the lines Plotly broke it into joined again."""
    return re.sub(r"\s*<br>\s*", " ", fig.layout.title.text)


def test_every_title_says_what_its_chapter_shows(built):
    """The titles are claims, checked against the numbers as the texts are: each chapter's
    heading carries its number in the lesson, and each figure's title names only numbers of
    the chapter's own values, and says what its chart draws: the layer and head whose
    weights the heatmap holds, the step and the word followed, how many heads the bars
    compare, the size of the table, and (chapter 9) the one head switched off, named as its
    text names it, not "the heads"."""
    lv, made = built
    for number, chapter in enumerate(chapters(), start=1):
        for lang in ("en", "zh"):
            assert chapter["title"][lang].startswith(f"{number}. "), chapter["title"]
        c = made[chapter["id"]]
        if c.figure is None:
            assert rightly_unbuilt(chapter["id"], c, lv.translator.info)
            continue
        title, v = _title(c.figure), c.values
        known = set(re.findall(r"\d+", " ".join(map(str, v.values()))))
        assert set(re.findall(r"\d+", title)) <= known, (chapter["id"], title)
        said = TITLE_SAYS.get(chapter["id"], "").format(
            **{k: visible(str(x)) for k, x in v.items()})
        assert said in title, (chapter["id"], said, title)
    assert np.asarray(made["positions"].figure.data[0].z).shape[1] == (
        made["positions"].values["d_model"])
    assert len(made["heads"].figure.layout.xaxis.ticktext) == 3
    off = made["heads_off"]
    assert [bar.name for bar in off.figure.data] == [t("heads_off_before"),
                                                     t("lesson_heads_off_after")]
    text = next(ch for ch in chapters() if ch["id"] == "heads_off")["text"]["en"]
    assert off.values["head"] in fill(text, off.values)  # the head the text names
    assert "the heads off" not in _title(off.figure)
    layer, head = (made["one_head"].values[n] - FIRST_NUMBER for n in ("layer", "head"))
    np.testing.assert_allclose(np.asarray(made["one_head"].figure.data[0].z),
                               lv.trace.encoder_attentions[layer, head], atol=1e-6)


def test_positions_outline_a_row_where_the_waves_show_and_say_so_from_its_numbers(built):
    """Chapter 2 outlines the row of a content token after the first (pos = 0, whose row is a
    flat stripe: sin 0 = 0, cos 0 = 1) that has moved away from position 1's over the widest
    span of dimensions, and its look names that span's end and the values the row swings
    between, as the table on screen has them; the row is named by its position from 1 (as its
    tick reads) and by the formula's pos (whose sine and cosine it holds)."""
    lv, made = built
    c = made["positions"]
    shown = cache.decode(lv.key, c.sentence)  # the sentence the chapter shows
    pe = lv.translator.positional_encoding(len(shown.src_tokens)).astype(np.float64)  # (S, D)
    fig = c.figure
    np.testing.assert_allclose(np.asarray(fig.data[0].z), pe, atol=1e-6)
    labels, outline = shown.src_labels, fig.data[1]
    pos = round((min(outline.y) + max(outline.y)) / 2)  # the outlined row's index
    assert max(outline.y) - min(outline.y) == 1  # one row
    # Named as a person counts, from 1, with the formula's pos beside it: the pos whose
    # sine and cosine the row holds (dimensions 0 and 1 of the paper's interleaved table, as
    # our shipped models have it: sin(pos), cos(pos)); the row's tick names the position too
    shown_pos, pe_pos = c.values["pos"], c.values["pe_pos"]
    assert fig.layout.yaxis.ticktext[pos].startswith(f"{shown_pos}: ")
    assert (shown_pos, c.values["first"]) == (pos + 1, 1)
    np.testing.assert_allclose(pe[pos, 0], np.sin(pe_pos), atol=1e-6)
    np.testing.assert_allclose(pe[pos, 1], np.cos(pe_pos), atol=1e-6)
    np.testing.assert_allclose(pe[0, :2], [np.sin(c.values["first_pe_pos"]),
                                           np.cos(c.values["first_pe_pos"])], atol=1e-6)
    assert c.values["word"] == code_span(labels[pos])
    np.testing.assert_array_equal(np.unique(pe[0]), [0.0, 1.0])  # position 1 (pos 0): 0 or 1
    within = float(c.values["within"])

    def still_from(row: int) -> int:  # one past the last dimension that has moved
        moved = np.flatnonzero(np.abs(pe[row] - pe[0]) > within)
        return int(moved[-1]) + 1 if moved.size else 0

    content = [i for i in range(1, len(labels)) if is_content(labels[i])]
    assert pos != 0 and (pos in content or not content)
    assert all(still_from(i) <= still_from(pos) for i in content)
    assert all(still_from(i) < still_from(pos) for i in content if i < pos)  # the first
    end = c.values["still_from"]
    assert end == still_from(pos) and 0 < end < pe.shape[1]
    assert np.abs(pe[pos, end:] - pe[0, end:]).max() <= within  # still, right of it
    assert c.values["low"] == f"{pe[pos, :end].min():.1f}".replace("-0.0", "0.0")
    assert c.values["high"] == f"{pe[pos, :end].max():.1f}"
    assert float(c.values["low"]) < 0 < float(c.values["high"])  # waves, left of it
    chapter = next(ch for ch in chapters() if ch["id"] == "positions")
    for lang in ("en", "zh"):
        look = fill(chapter["look"][lang], c.values)
        for said in (c.values["low"], c.values["high"], str(end), str(shown_pos),
                     f"pos = {c.values['first_pe_pos']}"):
            assert said in look, (said, look)
        assert f"pos = {pe_pos}" in fill(chapter["text"][lang], c.values)


def test_the_row_chapter_2_outlines_is_not_position_0s_even_when_the_word_is_there():
    lv = live("en-zh-everyday", "Hello, how are you?")
    c = BUILDERS["positions"](lv, 0)
    shown = cache.decode(lv.key, c.sentence)
    row = c.values["pos"] - FIRST_NUMBER  # the row of the position the text names
    assert row == c.values["pe_pos"] != 0 and is_content(shown.src_labels[row])
    assert wave_row(np.zeros((1, 4)), ["x"]).row == 0  # one token: nothing else
    with pytest.raises(ValueError):
        wave_row(np.zeros((2, 4)), ["x"])


def test_one_stack_says_what_the_decoder_only_models_numbers_say(built):
    """Chapter 12 on the shipped decoder-only model: its share, weights, sink and figure are
    the numbers of that model's decoding of the sentence (issue 55)."""
    lv, made = built
    c = made["one_stack"]
    if c.why is None:
        assert_says_the_numbers(c, lv)
    else:
        assert rightly_unbuilt("one_stack", c, lv.translator.info)
