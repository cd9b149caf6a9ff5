"""Tests of the decoding figures of ``viz``: probability bars, the beam tree, a
sequence's probabilities and one decoding step at a glance."""

from __future__ import annotations

import numpy as np
import pytest
from viz_helpers import BEAM_STEPS, SRC, SRC_ESC, notes_of, roundtrip, softmax_rows, title_of

import viz
from viz import probability_bars
from viz.decoding import BAR_COLOR, CHOSEN_COLOR

# --- probability bars -------------------------------------------------------------------


def test_probability_bars_sorted_and_chosen_highlighted() -> None:
    tokens = ["猫", "狗", "<unk>", "猫"]  # "猫" twice: two separate bars
    probs = np.array([0.1, 0.5, 0.15, 0.2])
    fig = probability_bars(tokens, probs, chosen=3, title="step 2")
    (bar,) = fig.data
    assert bar.orientation == "h"
    np.testing.assert_allclose(bar.x, [0.5, 0.2, 0.15, 0.1], rtol=1e-6)
    assert list(bar.y) == [0, 1, 2, 3]
    ya = fig.layout.yaxis
    assert list(ya.tickvals) == [0, 1, 2, 3]
    assert list(ya.ticktext) == ["狗", "猫", "&lt;unk&gt;", "猫"]
    assert ya.autorange == "reversed"  # position 0 (highest) on top
    # chosen index 3 (p=0.2) is now at position 1; only it has the highlight colour
    assert list(bar.marker.color) == [BAR_COLOR, CHOSEN_COLOR, BAR_COLOR, BAR_COLOR]
    assert list(fig.layout.xaxis.range) == [0, 1]
    assert title_of(fig, "x") == "Probability"
    assert list(bar.customdata) == list(ya.ticktext)
    assert "%{customdata}" in bar.hovertemplate and "%{x:.1%}" in bar.hovertemplate
    roundtrip(fig)


def test_probability_bars_no_choice_and_ties_keep_input_order() -> None:
    bar = probability_bars(["a", "b", "c"], [0.3, 0.3, 0.4]).data[0]
    assert set(bar.marker.color) == {BAR_COLOR}
    assert list(bar.customdata) == ["c", "a", "b"]


@pytest.mark.parametrize(
    ("tokens", "probs", "chosen", "match"),
    [
        (["a", "b"], [0.5, 0.3, 0.2], None, r"needs 3 tokens.*got 2"),
        (["a", "b"], [[0.5, 0.5]], None, r"1-D"),
        (["a", "b"], [0.5, np.nan], None, r"non-finite"),
        (["a", "b"], [2.0, -1.0], None, r"\[0.0, 1.0\].*softmax"),
        (["a", "b"], [0.5, 0.5], 2, r"chosen must be in 0\.\.1, got 2"),
        (["a", "b"], [0.5, 0.5], 1.0, r"chosen must be an int"),
        ([], [], None, r"empty"),
    ],
)
def test_probability_bars_errors(tokens, probs, chosen, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        probability_bars(tokens, probs, chosen=chosen)


# --- beam tree ---------------------------------------------------------------------------


def test_beam_path_follows_parents_through_kept_beams():
    # Step 2 rank 0 extends step-1 kept beam 1, which is rank 2 ("好"), child of "你" (rank 1).
    assert viz.beam_path(BEAM_STEPS, (2, 0)) == [(0, 1), (1, 2), (2, 0)]
    assert viz.beam_path(BEAM_STEPS, (2, 1)) == [(0, 0), (1, 0), (2, 1)]
    with pytest.raises(ValueError):
        viz.beam_path(BEAM_STEPS, (3, 0))


def test_beam_tree_draws_every_candidate_by_status_and_the_highlighted_path():
    fig = viz.beam_tree(BEAM_STEPS, highlight=(2, 0), title="Beams")
    by_name = {t.name: t for t in fig.data if t.name}
    assert set(by_name) == {"kept", "finished", "pruned", "selected hypothesis"}
    assert list(by_name["finished"].x) == [2, 3, 3] and list(by_name["finished"].y) == [1, 0, 1]
    assert "&lt;script&gt;" in by_name["pruned"].text  # tokens are escaped
    assert list(by_name["selected hypothesis"].x) == [0, 1, 2, 3]
    assert list(by_name["selected hypothesis"].y) == [0, 1, 2, 0]
    fig.to_json()


def test_beam_tree_rejects_bad_records():
    with pytest.raises(ValueError, match="status"):
        viz.beam_tree([[(0, "a", -1.0, "alive")]])
    with pytest.raises(ValueError, match="parent"):
        viz.beam_tree([[(0, "a", -1.0, "kept")], [(3, "b", -2.0, "kept")]])
    with pytest.raises(ValueError):
        viz.beam_tree([])


def test_sequence_probabilities_keeps_order_marks_and_hatches():
    fig = viz.sequence_probabilities(["我", "们", "我", "</s>"], np.array([0.9, 0.8, 0.01, 0.7]),
                                     mark=2, forced=[True, True, False, False])
    (bar,) = fig.data
    np.testing.assert_allclose(bar.y, [0.9, 0.8, 0.01, 0.7])  # sequence order, not sorted
    assert list(fig.layout.xaxis.ticktext) == ["我", "们", "我", "&lt;/s&gt;"]
    assert bar.marker.color[2] == CHOSEN_COLOR and bar.marker.color[0] == BAR_COLOR
    assert list(bar.marker.pattern.shape) == ["/", "/", "", ""]
    with pytest.raises(ValueError):
        viz.sequence_probabilities(["a"], np.array([1.5]))
    with pytest.raises(ValueError):
        viz.sequence_probabilities(["a", "b"], np.array([0.5, 0.5]), forced=[True])


# --- one step at a glance ------------------------------------------------------------------


@pytest.mark.parametrize("title", ["Step 2", "Step 1, layer 0: the next token, and where every "
                                   "head looks, with a few more words"])
def test_step_overview_title_lines_end_above_its_panel_titles(title):
    from viz.axes import TITLE_LINE_HEIGHT

    cross, mine = softmax_rows((3, 6), seed=2), softmax_rows((3, 2), seed=3)
    fig = viz.step_overview(["a", "b", "c"], np.array([0.1, 0.6, 0.3]), 1, cross,
                            source_tokens=SRC, self_rows=mine, decoder_tokens=["<s>", "猫"],
                            head_labels=["h0", "h1", "h2"],
                            titles=("Top-10 next tokens", "Query <s> over the source",
                                    "…over the decoder input"), title=title)
    lines = fig.layout.title.text.count("<br>") + 1
    # Plotly puts a one-line title's baseline at the middle of the top margin, and a title
    # on lines anchored at the top with its first line about a line above pad.t (5 px of
    # descent below a baseline; measured in Chromium). A panel title: 14-px type, 19 px.
    bottom = (fig.layout.margin.t / 2 + 5 if lines == 1
              else fig.layout.title.pad.t + (lines - 1) * TITLE_LINE_HEIGHT + 5)
    panel_tops = [fig.layout.margin.t - a.yshift - 19
                  for a in fig.layout.annotations if a.yanchor == "bottom" and a.yref == "paper"
                  and a.y == 1]
    assert panel_tops and bottom <= min(panel_tops), (bottom, panel_tops)


def test_step_overview_puts_the_bars_beside_both_attention_blocks():
    cross, mine = softmax_rows((3, 6), seed=2), softmax_rows((3, 2), seed=3)
    probs = np.array([0.1, 0.6, 0.3])
    fig = viz.step_overview(["a", "<b>", "c"], probs, 1, cross, source_tokens=SRC,
                            self_rows=mine, decoder_tokens=["<s>", "猫"],
                            head_labels=["h0", "h1", "h2"], titles=("P", "C <x>", "S"),
                            title="Step 2")
    bar, rows = fig.data
    alone = probability_bars(["a", "<b>", "c"], probs, 1)
    assert (bar.type, bar.xaxis, bar.yaxis) == ("bar", "x", "y")
    np.testing.assert_array_equal(bar.x, alone.data[0].x)
    assert list(fig.layout.yaxis.ticktext) == list(alone.layout.yaxis.ticktext)
    assert (rows.type, rows.xaxis, rows.yaxis) == ("heatmap", "x2", "y2")
    z = np.asarray(rows.z)
    np.testing.assert_array_equal(z[:, :6], cross.astype(np.float32))
    assert np.isnan(z[:, 6]).all() and rows.hoverongaps is False  # the gap between blocks
    np.testing.assert_array_equal(z[:, 7:], mine.astype(np.float32))
    xa = fig.layout.xaxis2
    assert list(xa.ticktext) == [*SRC_ESC, "&lt;s&gt;", "猫"]
    assert list(xa.tickvals) == [0, 1, 2, 3, 4, 5, 7, 8]  # each label over its own column
    assert list(fig.layout.yaxis2.ticktext) == ["h0", "h1", "h2"]
    cells = np.asarray(rows.customdata)
    # each key's position as people count it, from 1, in its own block: <s> the decoder's 1st
    assert cells[1, 7, 0] == "h1" and cells[1, 7, 1] == "&lt;s&gt;" and cells[1, 7, 2] == 1
    assert cells[2, 3, 1] == "the" and cells[2, 3, 2] == 4
    a, b = fig.layout.xaxis.domain, fig.layout.xaxis2.domain
    assert 0 <= a[0] < a[1] < b[0] < b[1] <= 1  # in order, apart
    titles = {t.text: t.x for t in notes_of(fig)}
    assert list(titles) == ["P", "C &lt;x&gt;", "S"]
    assert a[0] < titles["P"] < a[1] and b[0] < titles["C &lt;x&gt;"] < titles["S"] < b[1]
    assert fig.layout.title.text == "Step 2"


def test_step_overview_validates_like_its_panels():
    ok = dict(top_tokens=["a"], top_probs=np.array([1.0]), chosen=0,
              cross_rows=softmax_rows((2, 3)), source_tokens=["x", "y", "z"],
              self_rows=softmax_rows((2, 1)), decoder_tokens=["a"], head_labels=["h0", "h1"])
    viz.step_overview(**ok)
    for bad, match in ((dict(top_probs=np.array([1.5])), "softmax"),
                       (dict(cross_rows=softmax_rows((3, 3))), "head_labels"),
                       (dict(self_rows=np.full((2, 1), 2.0)), "softmax"),
                       (dict(decoder_tokens=["a", "b"]), "keys"),
                       (dict(cross_rows=np.full((2, 3), np.nan)), "non-finite")):
        with pytest.raises(ValueError, match=match):
            viz.step_overview(**(ok | bad))
