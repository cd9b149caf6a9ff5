"""Tests of the heatmap builders of ``viz``: attention (one head, a grid of heads),
positional encodings, masks, and the inside of one head (matrices, scores)."""

from __future__ import annotations

import json

import numpy as np
import plotly.graph_objects as go
import pytest
from viz_helpers import (
    SRC,
    SRC_ESC,
    TGT,
    TGT_ESC,
    notes_of,
    roundtrip,
    sinusoid,
    softmax_rows,
    title_of,
)

import viz
from viz import (
    attention_grid,
    attention_heatmap,
    mask_heatmap,
    positional_curves,
    positional_heatmap,
)

# --- attention_heatmap ------------------------------------------------------------------


def test_attention_heatmap_data_axes_and_colours() -> None:
    w = softmax_rows((5, 6))
    fig = attention_heatmap(
        w, TGT, SRC, title="<b>x</b>", query_label="Query: decoder", key_label="Key: source"
    )
    (hm,) = fig.data
    assert isinstance(hm, go.Heatmap)
    assert hm.z.dtype == np.float32
    np.testing.assert_array_equal(hm.z, w.astype(np.float32))
    assert list(hm.x) == list(range(6)) and list(hm.y) == list(range(5))
    assert (hm.zmin, hm.zmax) == (0.0, 1.0)
    xa, ya = fig.layout.xaxis, fig.layout.yaxis
    assert list(xa.tickvals) == list(range(6)) and list(ya.tickvals) == list(range(5))
    assert list(xa.ticktext) == SRC_ESC and list(ya.ticktext) == TGT_ESC
    assert ya.autorange == "reversed"  # first query on top
    assert xa.autorange is not False and xa.autorange != "reversed"
    assert ya.scaleanchor == "x"  # square cells
    assert title_of(fig, "x") == "Key: source" and title_of(fig, "y") == "Query: decoder"
    assert fig.layout.title.text == "&lt;b&gt;x&lt;/b&gt;"


def test_attention_heatmap_default_axis_titles() -> None:
    fig = attention_heatmap(softmax_rows((5, 6)), TGT, SRC)
    assert title_of(fig, "x").startswith("Key")
    assert title_of(fig, "y").startswith("Query")


def test_attention_heatmap_repeated_tokens_keep_distinct_cells() -> None:
    # Rows 1 and 2 are both "猫" and columns 1 and 3 both "the": each keeps its own weights.
    w = np.zeros((5, 6))
    w[:, 0] = 1.0
    w[1] = [0, 1, 0, 0, 0, 0]
    w[2] = [0, 0, 0, 1, 0, 0]
    fig = attention_heatmap(w, TGT, SRC)
    hm = fig.data[0]
    assert hm.z[1, 1] == 1 and hm.z[1, 3] == 0
    assert hm.z[2, 3] == 1 and hm.z[2, 1] == 0
    assert len(set(hm.y)) == 5 and len(set(hm.x)) == 6


def test_attention_heatmap_hover_has_tokens_and_weight() -> None:
    fig = attention_heatmap(softmax_rows((5, 6)), TGT, SRC)
    hm = fig.data[0]
    assert hm.customdata.shape == (5, 6, 2)
    assert list(hm.customdata[4, 2]) == ["&lt;/s&gt;", "cat"]  # [query token, key token]
    assert list(hm.customdata[3, 4]) == ["&amp;", "&lt;script&gt;"]
    for part in ("%{customdata[0]}", "%{customdata[1]}", "%{z:.3f}"):
        assert part in hm.hovertemplate


def test_attention_heatmap_serialises_with_literal_tokens() -> None:
    data = roundtrip(attention_heatmap(softmax_rows((5, 6)), TGT, SRC))
    assert data["layout"]["xaxis"]["ticktext"][4] == "&lt;script&gt;"
    texts = json.dumps(data["layout"]["xaxis"]["ticktext"] + data["data"][0]["customdata"])
    assert "<script>" not in texts and "<s>" not in texts


def test_attention_heatmap_accepts_all_zero_blocked_row() -> None:
    w = softmax_rows((5, 6))
    w[0] = 0.0
    assert attention_heatmap(w, TGT, SRC).data[0].z[0].sum() == 0


@pytest.mark.parametrize(
    ("weights", "match"),
    [
        (np.zeros((5,)), r"2-D"),
        (np.zeros((6, 5)), r"needs 6 query_tokens.*got 5"),
        (np.full((5, 6), np.nan), r"non-finite"),
        (np.full((5, 6), 3.0), r"\[0.0, 1.0\].*softmax"),
        (np.full((5, 6), -0.5), r"\[0.0, 1.0\]"),
    ],
)
def test_attention_heatmap_errors(weights: np.ndarray, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        attention_heatmap(weights, TGT, SRC)


def test_attention_heatmap_token_mismatch_message_names_both_counts() -> None:
    with pytest.raises(ValueError, match=r"shape \(5, 6\).*needs 6 key_tokens.*got 5"):
        attention_heatmap(softmax_rows((5, 6)), TGT, TGT)


# --- attention_grid ---------------------------------------------------------------------


def _panels(fig: go.Figure, n_heads: int, tq: int, tk: int) -> list[tuple[int, int]]:
    """The (row, column) of each head's top-left cell in a grid's mosaic, found from the
    figure's own tick positions: the first query row of each row of panels and the first
    key column of each column of panels."""
    xs = list(fig.layout.xaxis.tickvals)[::tk]
    ys = list(fig.layout.yaxis.tickvals)[::tq]
    return [(ys[h // len(xs)], xs[h % len(xs)]) for h in range(n_heads)]


def test_attention_grid_is_one_mosaic_of_the_heads() -> None:
    w = softmax_rows((6, 5, 6), seed=1)
    fig = attention_grid(w, TGT, SRC, title="Layer 0", ncols=4)
    assert len(fig.data) == 1
    (trace,) = fig.data
    z = np.asarray(trace.z)
    assert z.dtype == np.float32 and (trace.zmin, trace.zmax) == (0.0, 1.0)
    assert [a.text for a in notes_of(fig)] == [f"Head {h + 1}" for h in range(6)]  # from 1
    cells = np.asarray(trace.customdata)
    drawn = np.zeros(z.shape, bool)
    for h, (r, c) in enumerate(_panels(fig, 6, 5, 6)):
        np.testing.assert_array_equal(z[r : r + 5, c : c + 6], w[h].astype(np.float32))
        drawn[r : r + 5, c : c + 6] = True
        block = cells[r : r + 5, c : c + 6]
        assert (block[..., 0] == h + 1).all()  # the head as the title numbers it
        assert (block[..., 1] == np.arange(1, 6)[:, None]).all()  # positions, from 1
        assert (block[..., 2] == np.arange(1, 7)[None, :]).all()
        queries = np.asarray(trace.text)[r : r + 5, c : c + 6]
        keys = np.asarray(trace.hovertext)[r : r + 5, c : c + 6]
        assert (queries == np.array(TGT_ESC, dtype=object)[:, None]).all()
        assert (keys == np.array(SRC_ESC, dtype=object)[None, :]).all()
        title = fig.layout.annotations[h]
        assert (title.xref, title.yref) == ("x", "y") and c <= title.x <= c + 5 and title.y < r
    assert np.isnan(z[~drawn]).all() and trace.hoverongaps is False  # the gaps between panels
    assert cells.dtype == np.uint8 and (cells[~drawn] == 0).all()  # numbers, not objects
    assert trace.hovertemplate == ("Head %{customdata[0]}<br>Query %{customdata[1]}: %{text}<br>"
                                   "Key %{customdata[2]}: %{hovertext}<br>"
                                   "Weight: %{z:.3f}<extra></extra>")


def test_attention_grid_axes_follow_heatmap_rules() -> None:
    fig = attention_grid(softmax_rows((6, 5, 6)), TGT, SRC, ncols=4)
    xa, ya = fig.layout.xaxis, fig.layout.yaxis
    # 6 heads in 4 columns -> 2 rows of panels: keys under each column, queries by each row
    assert list(xa.ticktext) == SRC_ESC * 4 and list(ya.ticktext) == TGT_ESC * 2
    assert len(set(xa.tickvals)) == 24 and len(set(ya.tickvals)) == 10
    assert ya.range[0] > ya.range[1]  # first query on top
    assert ya.scaleanchor == "x"
    roundtrip(fig)


def test_attention_grid_ncols_capped_and_validated() -> None:
    fig = attention_grid(softmax_rows((3, 5, 6)), TGT, SRC, ncols=np.int64(2))
    assert list(fig.layout.xaxis.ticktext) == SRC_ESC * 2 and len(notes_of(fig)) == 3
    fig = attention_grid(softmax_rows((2, 5, 6)), TGT, SRC, ncols=4)
    assert list(fig.layout.xaxis.ticktext) == SRC_ESC * 2  # capped at the 2 heads
    assert list(fig.layout.yaxis.ticktext) == TGT_ESC
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="ncols"):
            attention_grid(softmax_rows((2, 5, 6)), TGT, SRC, ncols=bad)


@pytest.mark.parametrize(
    ("weights", "match"),
    [
        (softmax_rows((5, 6)), r"3-D"),
        (softmax_rows((2, 6, 5, 6)), r"select one layer"),
        (softmax_rows((6, 4, 6)), r"needs 4 query_tokens.*got 5"),
        (np.full((2, 5, 6), np.nan), r"non-finite"),
        (np.full((2, 5, 6), 2.0), r"softmax"),
    ],
)
def test_attention_grid_errors(weights: np.ndarray, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        attention_grid(weights, TGT, SRC)


# --- positional -------------------------------------------------------------------------


def test_positional_heatmap_values_scale_and_axes() -> None:
    pe = sinusoid(5, 16)
    fig = positional_heatmap(pe, tokens=TGT)
    hm = fig.data[0]
    assert hm.z.dtype == np.float32
    np.testing.assert_array_equal(hm.z, pe.astype(np.float32))
    assert (hm.zmin, hm.zmax) == (-1.0, 1.0) and hm.zmid == 0.0
    assert title_of(fig, "x") == "Dimension i"
    ya = fig.layout.yaxis
    assert list(ya.tickvals) == list(range(5)) and ya.autorange == "reversed"
    assert list(ya.ticktext) == [f"{i}: {t}" for i, t in enumerate(TGT_ESC, start=1)]
    assert hm.text.shape == hm.customdata.shape == (5, 16)  # position: token; formula's pos
    assert (hm.text[3, 7], hm.customdata[3, 7]) == ("4: &amp;", 3)  # row 3: position 4, pos 3
    assert hm.customdata.dtype.kind == "u"  # numbers, sent as a typed array
    for part in ("%{text}", "%{customdata}", "%{x}", "%{z:.3f}"):
        assert part in hm.hovertemplate
    assert "%{y}" not in hm.hovertemplate  # the tick's label: the token said twice
    assert roundtrip(fig)["data"][0]["colorscale"]  # RdBu expanded to a list


def test_positional_heatmap_without_tokens_uses_integer_ticks() -> None:
    fig = positional_heatmap(sinusoid(50, 64))
    ya = fig.layout.yaxis  # positions as people count them: 1, then every 2nd, up to 50
    assert list(ya.ticktext) == ["1", *map(str, range(2, 51, 2))]
    assert list(ya.tickvals) == [0, *range(1, 50, 2)]  # each on its row (index = position - 1)
    assert fig.layout.xaxis.dtick == 5 and fig.layout.xaxis.tick0 == 0  # dimensions: from 0
    assert (fig.data[0].text[49, 0], fig.data[0].customdata[49, 0]) == ("50", 49)  # pos 49
    roundtrip(fig)


def test_positional_heatmap_errors() -> None:
    with pytest.raises(ValueError, match=r"needs 5 tokens.*got 6"):
        positional_heatmap(sinusoid(5, 8), tokens=SRC)
    with pytest.raises(ValueError, match=r"2-D"):
        positional_heatmap(np.zeros(8))
    with pytest.raises(ValueError, match=r"non-finite"):
        positional_heatmap(np.full((2, 2), np.nan))


def test_positional_curves_one_trace_per_dim() -> None:
    pe = sinusoid(30, 16)
    fig = positional_curves(pe, [4, 5, 0])
    assert [t.name for t in fig.data] == ["dim 4 (sin)", "dim 5 (cos)", "dim 0 (sin)"]
    for trace, d in zip(fig.data, [4, 5, 0], strict=True):
        assert list(trace.x) == list(range(1, 31))  # positions as people count them
        assert list(trace.customdata) == list(range(30))  # the formula's pos of each
        # a list of the float32 values' shortest decimals: each reads back as that float32
        assert isinstance(trace.y, tuple)
        np.testing.assert_array_equal(np.float32(trace.y), pe[:, d].astype(np.float32))
    assert title_of(fig, "x") == "Position"
    roundtrip(fig)


def test_positional_curves_accepts_numpy_ints() -> None:
    assert len(positional_curves(sinusoid(4, 8), np.array([1, 7])).data) == 2


@pytest.mark.parametrize(
    ("dims", "match"),
    [
        ([], r"empty"),
        ([16], r"0\.\.15, got 16"),
        ([-1], r"0\.\.15, got -1"),
        ([1.0], r"must be an int"),
        ([True], r"must be an int"),
        ([3, 3], r"repeated"),
        ("4", r"list of dimension"),
    ],
)
def test_positional_curves_bad_dims(dims, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        positional_curves(sinusoid(10, 16), dims)


# --- masks ------------------------------------------------------------------------------


def test_mask_heatmap_marks_blocked_cells() -> None:
    causal = np.triu(np.ones((5, 5), dtype=bool), k=1)  # True above the diagonal
    fig = mask_heatmap(causal, TGT, TGT, title="causal")
    hm = fig.data[0]
    np.testing.assert_array_equal(hm.z, causal.astype(int))
    assert hm.customdata[0, 1, 2] == "blocked" and hm.customdata[1, 0, 2] == "allowed"
    assert hm.customdata[2, 2, 2] == "allowed"
    assert sum(c == "blocked" for c in hm.customdata[..., 2].ravel()) == 10
    assert "%{customdata[2]}" in hm.hovertemplate
    # two discrete colours: 0 -> allowed colour, 1 -> blocked colour
    scale = [tuple(s) for s in hm.colorscale]
    assert {c for v, c in scale if v < 0.5} == {viz.masks.ALLOWED_COLOR}
    assert {c for v, c in scale if v > 0.5} == {viz.masks.BLOCKED_COLOR}
    assert (hm.zmin, hm.zmax) == (0, 1)
    bar = hm.colorbar
    assert dict(zip(bar.tickvals, bar.ticktext, strict=True)) == {
        0.25: "allowed (False)",
        0.75: "blocked (True)",
    }
    assert list(fig.layout.xaxis.tickvals) == list(range(5))
    assert list(fig.layout.yaxis.ticktext) == TGT_ESC
    assert fig.layout.yaxis.autorange == "reversed"
    roundtrip(fig)


def test_mask_heatmap_padding_mask_columns() -> None:
    pad = np.zeros((5, 6), dtype=bool)
    pad[:, 4:] = True  # last two source keys are padding
    hm = mask_heatmap(pad, TGT, SRC).data[0]
    assert (hm.customdata[:, 4:, 2] == "blocked").all()
    assert (hm.customdata[:, :4, 2] == "allowed").all()


@pytest.mark.parametrize(
    ("mask", "match"),
    [
        (np.full((5, 6), 0.5), r"boolean"),
        (np.where(np.eye(5, 6, dtype=bool), -np.inf, 0.0), r"additive"),
        (np.zeros((5, 5), dtype=bool), r"shape \(5, 5\).*needs 5 key_tokens.*got 6"),
        (np.zeros(6, dtype=bool), r"2-D"),
    ],
)
def test_mask_heatmap_errors(mask: np.ndarray, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        mask_heatmap(mask, TGT, SRC)


# --- inside one head ---------------------------------------------------------------------

def test_matrix_heatmap_is_centred_on_zero_and_labels_rows():
    values = np.array([[1.0, -3.0], [0.5, 2.0], [0.0, 0.0]])
    fig = viz.matrix_heatmap(values, ["我", "<s>", "我"], title="Q")
    (hm,) = fig.data
    np.testing.assert_array_equal(hm.z, values.astype(np.float32))
    assert (hm.zmin, hm.zmax, hm.zmid) == (-3.0, 3.0, 0.0)
    assert list(fig.layout.yaxis.ticktext) == ["我", "&lt;s&gt;", "我"]
    assert hm.customdata[1, 0, 0] == "&lt;s&gt;"
    with pytest.raises(ValueError):
        viz.matrix_heatmap(values, ["a", "b"])


def test_score_heatmap_draws_blocked_cells_as_minus_infinity():
    scores = np.array([[1.0, -np.inf], [0.5, 2.0]])
    mask = np.array([[False, True], [False, False]])
    weights = np.array([[1.0, 0.0], [0.18, 0.82]])
    fig = viz.score_heatmap(scores, ["a", "b"], ["a", "b"], mask,
                            details={"weight": weights})
    hm, blocked = fig.data
    assert np.isnan(hm.z[0, 1]) and hm.z[1, 1] == 2.0  # a gap where blocked
    assert list(blocked.x) == [1] and list(blocked.y) == [0] and list(blocked.text) == ["−∞"]
    assert hm.customdata[1, 1, 2] == pytest.approx(0.82)  # hover shows the weight too
    assert "weight" in hm.hovertemplate
    probs = viz.score_heatmap(weights, ["a", "b"], ["a", "b"], mask, probabilities=True)
    assert (probs.data[0].zmin, probs.data[0].zmax) == (0.0, 1.0)
    with pytest.raises(ValueError):
        viz.score_heatmap(np.array([[np.nan, 1.0]]), ["a"], ["a", "b"])


def test_grid_prefers_sc_fonts():
    fig = attention_grid(softmax_rows((8, 3, 4)), ["a", "b", "c"], ["w", "x", "y", "z"],
                         ncols=4)
    assert fig.layout.font.family.split(", ")[1] == "Noto Sans CJK SC"


def test_mask_heatmap_fits_the_width_it_is_drawn_at():
    mask = np.triu(np.ones((12, 12), dtype=bool), 1)
    toks = [f"t{i}" for i in range(12)]
    wide, narrow = mask_heatmap(mask, toks, toks), mask_heatmap(mask, toks, toks, width=340)
    assert narrow.layout.width == 340 and wide.layout.width > 340
    assert narrow.layout.height < wide.layout.height  # the height follows the cells
    for bad in (0, -5, 2.5, True, "340"):
        with pytest.raises(ValueError, match="width"):
            mask_heatmap(mask, toks, toks, width=bad)
