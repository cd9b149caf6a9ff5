"""Tests for the pure Plotly figure builders in ``viz``."""

from __future__ import annotations

import dataclasses
import json
import re
import subprocess
import sys
from dataclasses import fields
from pathlib import Path

import numpy as np
import plotly.graph_objects as go
import pytest

import viz
from viz import (
    ENGLISH,
    VizText,
    attention_grid,
    attention_heatmap,
    check_heads,
    check_mask,
    check_matrix,
    escape_html,
    escape_tokens,
    mask_heatmap,
    positional_curves,
    positional_heatmap,
    probability_bars,
)
from viz.decoding import BAR_COLOR, CHOSEN_COLOR

ROOT = Path(__file__).resolve().parents[1]

SRC = ["<s>", "the", "cat", "the", "<script>", "</s>"]  # repeated "the", HTML-like tokens
TGT = ["<s>", "猫", "猫", "&", "</s>"]  # repeated Chinese character
SRC_ESC = ["&lt;s&gt;", "the", "cat", "the", "&lt;script&gt;", "&lt;/s&gt;"]
TGT_ESC = ["&lt;s&gt;", "猫", "猫", "&amp;", "&lt;/s&gt;"]


def title_of(fig: go.Figure, axis: str = "x") -> str | None:
    """The title of ``axis`` ("x", "y2", ...): its own, or the annotation that titles it on
    its domain (``viz.axes.axis_title``: token axes); None if it has neither."""
    own = fig.layout[axis[0] + "axis" + axis[1:]].title.text
    if own is not None:
        return own
    ref = "xref" if axis.startswith("x") else "yref"
    found = [a.text for a in fig.layout.annotations if a[ref] == f"{axis} domain"
             and (a.textangle == -90) == axis.startswith("y")]
    assert len(found) <= 1, found
    return found[0] if found else None


def notes_of(fig: go.Figure) -> list:
    """The figure's annotations other than axis titles (head and panel titles)."""
    return [a for a in fig.layout.annotations if not str(a.xref).endswith(" domain")]


def softmax_rows(shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    """Random attention with rows summing to 1, as float64 (builders must cast)."""
    x = np.random.default_rng(seed).normal(size=shape)
    e = np.exp(x)
    return e / e.sum(-1, keepdims=True)


def sinusoid(t: int, d: int) -> np.ndarray:
    pos = np.arange(t)[:, None]
    div = 10000 ** (np.arange(0, d, 2) / d)
    pe = np.zeros((t, d))
    pe[:, 0::2], pe[:, 1::2] = np.sin(pos / div), np.cos(pos / div)
    return pe


def roundtrip(fig: go.Figure) -> dict:
    """Serialise like the app does and parse back, so the JSON path is exercised."""
    assert isinstance(fig, go.Figure)
    return json.loads(fig.to_json())


# --- escaping ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "escaped"),
    [
        ("<s>", "&lt;s&gt;"),
        ("</s>", "&lt;/s&gt;"),
        ("<pad>", "&lt;pad&gt;"),
        ("<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;"),
        ("a & b", "a &amp; b"),
        ("&lt;", "&amp;lt;"),  # already-escaped text is shown literally, not decoded
        ("猫", "猫"),
        ('"quoted"', '"quoted"'),
    ],
)
def test_escape_html(raw: str, escaped: str) -> None:
    assert escape_html(raw) == escaped


def test_escape_tokens_keeps_order_and_repeats() -> None:
    assert escape_tokens(SRC) == SRC_ESC


# --- validators -------------------------------------------------------------------------


def test_check_matrix_returns_float32_copy_of_values() -> None:
    m = softmax_rows((5, 6))
    out = check_matrix(m, TGT, SRC, "weights")
    assert out.dtype == np.float32 and out.shape == (5, 6)
    np.testing.assert_allclose(out, m.astype(np.float32))


def test_check_matrix_accepts_none_tokens() -> None:
    assert check_matrix([[1, 2, 3]], None, None).shape == (1, 3)


@pytest.mark.parametrize(
    ("matrix", "rows", "cols", "match"),
    [
        (np.zeros(6), TGT, SRC, r"2-D.*got shape \(6,\)"),
        (np.zeros((2, 5, 6)), TGT, SRC, r"2-D.*got shape \(2, 5, 6\)"),
        (np.zeros((4, 6)), TGT, SRC, r"needs 4 query_tokens.*got 5"),
        (np.zeros((5, 7)), TGT, SRC, r"needs 7 key_tokens.*got 6"),
        (np.full((5, 6), np.nan), TGT, SRC, r"non-finite"),
        (np.zeros((0, 0)), [], [], r"empty"),
        ([["a", "b"]], None, None, r"numeric"),
    ],
)
def test_check_matrix_errors(matrix, rows, cols, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        check_matrix(matrix, rows, cols, "weights", row_name="query_tokens", col_name="key_tokens")


def test_check_matrix_reports_nan_position() -> None:
    m = np.zeros((5, 6))
    m[2, 3] = np.inf
    with pytest.raises(ValueError, match=r"1 non-finite.*\(2, 3\)"):
        check_matrix(m, TGT, SRC)


def test_check_heads_shape_and_layer_hint() -> None:
    assert check_heads(softmax_rows((3, 5, 6)), TGT, SRC).dtype == np.float32
    with pytest.raises(ValueError, match=r"3-D.*select one layer"):
        check_heads(softmax_rows((2, 3, 5, 6)), TGT, SRC)
    with pytest.raises(ValueError, match=r"needs 6 key_tokens.*got 5"):
        check_heads(softmax_rows((3, 5, 6)), TGT, TGT)


def test_check_mask_accepts_bool_and_01() -> None:
    assert check_mask(np.array([[0, 1]]), None, None).dtype == np.bool_
    assert check_mask(np.array([[0.0, 1.0]]), None, None).tolist() == [[False, True]]


@pytest.mark.parametrize(
    ("mask", "match"),
    [
        (np.array([[0.0, 0.5]]), r"boolean.*0/1"),
        (np.array([[0.0, -np.inf]]), r"additive float mask"),
        (np.array([["a", "b"]]), r"boolean"),
        (np.array([True, False]), r"2-D"),
    ],
)
def test_check_mask_errors(mask: np.ndarray, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        check_mask(mask, None, None)


@pytest.mark.parametrize(
    ("tokens", "match"),
    [("the cat", r"single string"), (["a", 3], r"\[1\] must be a str"), (5, r"list of token")],
)
def test_tokens_must_be_a_list_of_strings(tokens, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        attention_heatmap(np.eye(2), tokens, ["a", "b"])


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
    assert [a.text for a in notes_of(fig)] == [f"Head {h}" for h in range(6)]
    cells = np.asarray(trace.customdata)
    drawn = np.zeros(z.shape, bool)
    for h, (r, c) in enumerate(_panels(fig, 6, 5, 6)):
        np.testing.assert_array_equal(z[r : r + 5, c : c + 6], w[h].astype(np.float32))
        drawn[r : r + 5, c : c + 6] = True
        block = cells[r : r + 5, c : c + 6]
        assert (block[..., 0] == h).all()
        assert (block[..., 1] == np.arange(5)[:, None]).all()
        assert (block[..., 2] == np.arange(6)[None, :]).all()
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
    assert list(ya.ticktext) == [f"{i}: {t}" for i, t in enumerate(TGT_ESC)]
    assert hm.customdata.shape == (5, 16) and hm.customdata[3, 7] == "&amp;"
    for part in ("%{y}", "%{customdata}", "%{x}", "%{z:.3f}"):
        assert part in hm.hovertemplate
    assert roundtrip(fig)["data"][0]["colorscale"]  # RdBu expanded to a list


def test_positional_heatmap_without_tokens_uses_integer_ticks() -> None:
    fig = positional_heatmap(sinusoid(50, 64))
    assert fig.data[0].customdata is None and "customdata" not in fig.data[0].hovertemplate
    assert fig.layout.yaxis.dtick == 2 and fig.layout.xaxis.dtick == 5
    assert float(fig.layout.yaxis.dtick).is_integer()
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
        assert list(trace.x) == list(range(30))
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


# --- package hygiene --------------------------------------------------------------------


def test_package_exports_and_no_heavy_imports() -> None:
    for name in (
        "attention_heatmap",
        "attention_grid",
        "positional_heatmap",
        "positional_curves",
        "mask_heatmap",
        "probability_bars",
        "check_matrix",
        "check_heads",
        "escape_html",
    ):
        assert name in viz.__all__ and callable(getattr(viz, name))
    code = (
        "import sys, viz; "
        "bad = [m for m in ('torch', 'streamlit') if m in sys.modules]; "
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)


# --- beam tree ---------------------------------------------------------------------------

BEAM_STEPS = [
    [(0, "我", -0.1, "kept"), (0, "你", -2.0, "kept"), (0, "<script>", -3.0, "pruned")],
    [(0, "们", -0.2, "kept"), (1, "</s>", -2.5, "finished"), (1, "好", -2.6, "kept"),
     (0, "的", -4.0, "pruned")],
    [(1, "</s>", -2.7, "finished"), (0, "</s>", -0.3, "finished")],
]


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


# --- one step at a glance ------------------------------------------------------------------


def test_step_overview_puts_the_bars_beside_both_attention_blocks():
    cross, mine = softmax_rows((3, 6), seed=2), softmax_rows((3, 2), seed=3)
    probs = np.array([0.1, 0.6, 0.3])
    fig = viz.step_overview(["a", "<b>", "c"], probs, 1, cross, SRC, mine, ["<s>", "猫"],
                            ["h0", "h1", "h2"], titles=("P", "C <x>", "S"), title="Step 2")
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
    assert cells[1, 7, 0] == "h1" and cells[1, 7, 1] == "&lt;s&gt;" and cells[1, 7, 2] == 0
    assert cells[2, 3, 1] == "the" and cells[2, 3, 2] == 3
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


def test_margins_hold_the_labels():
    from viz.axes import label_px, margins
    assert label_px(["猫猫"]) > label_px(["ab"])  # a wide character takes more room
    assert label_px(["&lt;s&gt;"]) == label_px(["<s>"])  # escaped as shown
    assert label_px(["x" * 500]) == 200
    m = margins(["a", "longer token"], ["猫"], colorbar=True)
    assert m["l"] > label_px(["longer token"]) and m["b"] > label_px(["猫"])
    assert m["r"] > margins(["a"])["r"]


# --- the builders' own text ----------------------------------------------------------------


def _shout(s: str) -> str:
    """``s`` upper-cased outside its placeholders ("{n}", Plotly's "%{y}")."""
    parts = re.split(r"(%?\{[^}]*\})", s)
    return "".join(p if i % 2 else p.upper() for i, p in enumerate(parts))


SHOUT = VizText(**{f.name: _shout(getattr(ENGLISH, f.name)) for f in fields(VizText)})
MASK = np.array([[False, True, True], [False, False, True], [False, False, False]])


def _every_figure(text: VizText | None) -> dict[str, go.Figure]:
    """One figure of every builder, each branch that writes text of its own, with ``text``
    (None: the builders' default)."""
    kw = {} if text is None else {"text": text}
    w = softmax_rows((3, 3))
    return {
        "heatmap": attention_heatmap(w, ["a", "b", "c"], ["x", "y", "z"], **kw),
        "grid": attention_grid(softmax_rows((3, 3, 3)), ["a", "b", "c"], ["x", "y", "z"],
                               ncols=2, **kw),
        "mask": mask_heatmap(MASK, ["a", "b", "c"], ["a", "b", "c"], **kw),
        "bars": probability_bars(["a", "b"], np.array([0.3, 0.7]), chosen=1, **kw),
        "beam": viz.beam_tree(BEAM_STEPS, highlight=(2, 0), **kw),
        "sequence": viz.sequence_probabilities(["a", "b"], np.array([0.3, 0.7]), **kw),
        "matrix": viz.matrix_heatmap(w, ["a", "b", "c"], **kw),
        "scores": viz.score_heatmap(w, ["a", "b", "c"], ["x", "y", "z"], MASK, **kw),
        "weights": viz.score_heatmap(w, ["a", "b", "c"], ["x", "y", "z"], MASK,
                                     probabilities=True, **kw),
        "pe": positional_heatmap(sinusoid(4, 6), **kw),
        "pe_tokens": positional_heatmap(sinusoid(4, 6), ["a", "b", "c", "d"], **kw),
        "curves": positional_curves(sinusoid(4, 6), [0, 1, 4], **kw),
        "halves": positional_curves(sinusoid(4, 6), [0, 3], layout="halves", **kw),
        "learned": positional_curves(sinusoid(4, 6), [2], layout="learned", **kw),
        "step": viz.step_overview(["a", "b"], np.array([0.3, 0.7]), 1, softmax_rows((2, 3)),
                                  ["x", "y", "z"], softmax_rows((2, 1)), ["a"], ["h0", "h1"],
                                  **kw),
    }


def _own_text(fig: go.Figure) -> list[str]:
    """The text in a figure that is not a token: titles (figure, axes, colour bars, legend),
    subplot titles, colour-bar ticks, trace names, hover templates, and the string cells of
    the mask's states."""
    data = roundtrip(fig)
    layout = data["layout"]
    out = [(layout.get("title") or {}).get("text", "")]
    for value in layout.values():
        if isinstance(value, dict):
            out.append((value.get("title") or {}).get("text", ""))
            out.append(((value.get("colorbar") or {}).get("title") or {}).get("text", ""))
    out += [a["text"] for a in layout.get("annotations", [])]
    for trace in data["data"]:
        out += [trace.get("name") or "", trace.get("hovertemplate") or ""]
        bar = trace.get("colorbar") or {}
        out += [(bar.get("title") or {}).get("text", ""), *bar.get("ticktext", [])]
    if fig.data and fig.data[0].type == "heatmap" and fig.data[0].customdata is not None:
        cells = np.asarray(fig.data[0].customdata)
        if cells.ndim == 3 and cells.shape[-1] == 3 and cells.dtype == object:
            out += sorted(set(cells[..., 2].ravel().tolist()))  # the mask's per-cell state
    return [t for t in out if t]


def test_a_builder_writes_exactly_the_labels_it_is_given():
    figs = _every_figure(SHOUT)
    f = figs["heatmap"]
    assert (title_of(f, "y"), title_of(f, "x")) == ("QUERY", "KEY")
    assert f.data[0].colorbar.title.text == "WEIGHT"
    assert f.data[0].hovertemplate == ("QUERY %{y}: %{customdata[0]}<br>KEY %{x}: "
                                       "%{customdata[1]}<br>WEIGHT: %{z:.3f}<extra></extra>")
    f = figs["grid"]
    assert [a.text for a in notes_of(f)] == ["HEAD 0", "HEAD 1", "HEAD 2"]
    assert f.data[0].hovertemplate.startswith("HEAD %{customdata[0]}<br>QUERY %{customdata[1]}: ")
    assert "<br>KEY %{customdata[2]}: %{hovertext}<br>" in f.data[0].hovertemplate
    assert f.data[0].colorbar.title.text == "WEIGHT"
    assert (title_of(f, "y"), title_of(f, "x")) == ("QUERY", "KEY")
    f = figs["mask"]
    assert f.data[0].colorbar.title.text == "MASK"
    assert list(f.data[0].colorbar.ticktext) == ["ALLOWED (FALSE)", "BLOCKED (TRUE)"]
    assert f.data[0].customdata[0, 1, 2] == "BLOCKED" and f.data[0].customdata[1, 0, 2] == "ALLOWED"
    assert f.data[0].hovertemplate.endswith("<br>%{customdata[2]}<extra></extra>")
    f = figs["bars"]
    assert (title_of(f, "x"), title_of(f, "y")) == ("PROBABILITY", "TOKEN")
    assert f.data[0].hovertemplate == "%{customdata}<br>PROBABILITY: %{x:.1%}<extra></extra>"
    f = figs["beam"]
    by_name = {t.name: t for t in f.data if t.name}
    assert set(by_name) == {"KEPT", "FINISHED", "PRUNED", "SELECTED HYPOTHESIS"}
    for status in ("KEPT", "FINISHED", "PRUNED"):  # each status's hover names it
        assert by_name[status].hovertemplate == (
            f"%{{customdata[0]}}<br>log p = %{{customdata[1]:.3f}}<br>{status}<extra></extra>")
    assert title_of(f, "x") == "DECODING STEP"
    assert title_of(f, "y") == "RANK WITHIN THE STEP"
    f = figs["sequence"]
    assert (title_of(f, "x"), title_of(f, "y")) == ("TOKEN", "PROBABILITY")
    assert f.data[0].hovertemplate == "%{customdata}<br>PROBABILITY: %{y:.1%}<extra></extra>"
    f = figs["matrix"]
    assert (title_of(f, "y"), title_of(f, "x")) == ("TOKEN", "DIMENSION")
    assert f.data[0].hovertemplate == ("%{customdata[0]} (ROW %{y})<br>%{customdata[1]} "
                                       "(COLUMN %{x})<br>VALUE: %{z:.4f}<extra></extra>")
    f = figs["scores"]
    assert (title_of(f, "y"), title_of(f, "x")) == ("QUERY", "KEY")
    assert f.data[0].hovertemplate.endswith("<br>VALUE: %{z:.4f}<extra></extra>")
    assert f.data[1].name == "BLOCKED (−∞)"
    assert f.data[1].hovertemplate == (
        "BLOCKED BY THE MASK: −∞ BEFORE THE SOFTMAX, WEIGHT 0<extra></extra>")
    assert figs["weights"].data[0].hovertemplate.endswith("<br>WEIGHT: %{z:.4f}<extra></extra>")
    f = figs["pe"]
    assert f.layout.title.text == "POSITIONAL ENCODING"
    assert (title_of(f, "x"), title_of(f, "y")) == ("DIMENSION I", "POSITION")
    assert f.data[0].colorbar.title.text == "VALUE"
    assert f.data[0].hovertemplate == (
        "POSITION %{y}<br>DIMENSION %{x}<br>VALUE: %{z:.3f}<extra></extra>")
    assert figs["pe_tokens"].data[0].hovertemplate == (
        "POSITION %{y}: %{customdata}<br>DIMENSION %{x}<br>VALUE: %{z:.3f}<extra></extra>")
    f = figs["curves"]
    assert f.layout.title.text == "POSITIONAL ENCODING BY DIMENSION"
    assert [t.name for t in f.data] == ["DIM 0 (SIN)", "DIM 1 (COS)", "DIM 4 (SIN)"]
    assert f.data[1].hovertemplate == (
        "DIM 1 (COS)<br>POSITION %{x}<br>VALUE: %{y:.3f}<extra></extra>")
    assert (title_of(f, "x"), title_of(f, "y")) == ("POSITION", "VALUE")
    assert f.layout.legend.title.text == "DIMENSION"
    assert [t.name for t in figs["halves"].data] == ["DIM 0 (SIN)", "DIM 3 (COS)"]
    assert [t.name for t in figs["learned"].data] == ["DIM 2"]
    # ...and nothing of the English is left anywhere in any of them
    english = {p.strip(" :()") for f in fields(VizText)
               for p in re.split(r"%?\{[^}]*\}", getattr(ENGLISH, f.name))}
    english = sorted((p for p in english if re.search(r"[A-Za-z]{3,}", p)), key=len,
                     reverse=True)
    for name, fig in figs.items():
        for text in _own_text(fig):
            left = [p for p in english if re.search(rf"(?<![A-Za-z]){re.escape(p)}"
                                                    rf"(?![A-Za-z])", text)]
            assert not left, (name, text, left)


def test_labels_in_another_language_and_callers_labels_win():
    chinese = dataclasses.replace(ENGLISH, query="查询", key="键", weight="权重",
                                  hover_query="查询 %{y}", hover_key="键 %{x}",
                                  hover_weight="权重：", head="第 {n} 个头")
    f = attention_heatmap(softmax_rows((2, 2)), ["a", "b"], ["x", "y"], text=chinese)
    assert (title_of(f, "y"), title_of(f, "x")) == ("查询", "键")
    assert f.data[0].colorbar.title.text == "权重"
    assert f.data[0].hovertemplate == ("查询 %{y}: %{customdata[0]}<br>键 %{x}: "
                                       "%{customdata[1]}<br>权重：%{z:.3f}<extra></extra>")
    g = attention_grid(softmax_rows((2, 2, 2)), ["a", "b"], ["x", "y"], text=chinese)
    assert [a.text for a in notes_of(g)] == ["第 0 个头", "第 1 个头"]
    assert g.data[0].hovertemplate.startswith("第 %{customdata[0]} 个头<br>查询 %{customdata[1]}: ")
    assert "<br>键 %{customdata[2]}: %{hovertext}<br>" in g.data[0].hovertemplate
    # a caller's own titles and axis labels are used as they are
    f = mask_heatmap(MASK, ["a", "b", "c"], ["a", "b", "c"], title="T", query_label="Rows",
                     key_label="Cols", text=SHOUT)
    assert (f.layout.title.text, title_of(f, "y"), title_of(f, "x")) == (
        "T", "Rows", "Cols")
    f = viz.matrix_heatmap(np.eye(2), ["a", "b"], row_label="R", col_label="C", text=SHOUT)
    assert (title_of(f, "y"), title_of(f, "x")) == ("R", "C")
    assert positional_heatmap(sinusoid(2, 2), title="PE", text=SHOUT).layout.title.text == "PE"


def test_the_default_text_is_english():
    assert VizText() == ENGLISH and viz.ENGLISH is ENGLISH and "VizText" in viz.__all__
    default, english = _every_figure(None), _every_figure(ENGLISH)
    for name, fig in default.items():
        assert fig.to_json() == english[name].to_json(), name
    f = default["heatmap"]
    assert (title_of(f, "y"), title_of(f, "x")) == ("Query", "Key")
    assert f.data[0].colorbar.title.text == "Weight"
    assert f.data[0].hovertemplate == ("Query %{y}: %{customdata[0]}<br>Key %{x}: "
                                       "%{customdata[1]}<br>Weight: %{z:.3f}<extra></extra>")
    assert {t.name for t in default["beam"].data if t.name} == {
        "kept", "finished", "pruned", "selected hypothesis"}
    assert list(default["mask"].data[0].colorbar.ticktext) == ["allowed (False)",
                                                               "blocked (True)"]
    assert [t.name for t in default["curves"].data] == ["dim 0 (sin)", "dim 1 (cos)",
                                                        "dim 4 (sin)"]
    assert default["pe"].layout.title.text == "Positional encoding"
    with pytest.raises(ValueError, match="VizText"):
        attention_heatmap(softmax_rows((2, 2)), ["a", "b"], ["x", "y"], text={"query": "Q"})
    with pytest.raises(ValueError, match="str"):
        VizText(query=None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        ENGLISH.query = "Q"


def test_mask_heatmap_fits_the_width_it_is_drawn_at():
    mask = np.triu(np.ones((12, 12), dtype=bool), 1)
    toks = [f"t{i}" for i in range(12)]
    wide, narrow = mask_heatmap(mask, toks, toks), mask_heatmap(mask, toks, toks, width=340)
    assert narrow.layout.width == 340 and wide.layout.width > 340
    assert narrow.layout.height < wide.layout.height  # the height follows the cells
    for bad in (0, -5, 2.5, True, "340"):
        with pytest.raises(ValueError, match="width"):
            mask_heatmap(mask, toks, toks, width=bad)


def test_every_axis_title_sits_in_the_margin_kept_for_it():
    """viz.axes.axis_title: past the tick labels' room, inside the figure's margin."""
    for name, fig in _every_figure(None).items():
        for note in fig.layout.annotations:
            if not str(note.xref).endswith(" domain"):
                continue  # a head or panel title
            if note.textangle == -90:  # a y title: left of the row labels
                assert -note.xshift + 20 <= fig.layout.margin.l, name
            else:
                assert -note.yshift + 20 <= fig.layout.margin.b, name


def _typed_1d(node) -> list:
    """Every 1-D base64 typed-array spec (``{"bdata": ..., no 2-D "shape"}``) in a figure's
    JSON."""
    if isinstance(node, dict):
        if "bdata" in node:
            return [node] if "," not in str(node.get("shape", "")) else []
        return [spec for value in node.values() for spec in _typed_1d(value)]
    if isinstance(node, list):
        return [spec for value in node for spec in _typed_1d(value)]
    return []


def test_every_figure_is_cheap_to_draw_again():
    """What plotly.js needs to skip redrawing a deep copy of a figure (viz.axes.figure): no
    template, a data revision, and no 1-D array sent as base64 (which it decodes anew)."""
    from viz.axes import DATA_REVISION

    figs = _every_figure(None) | {
        "lines": viz.attention_lines(softmax_rows((2, 3, 3)), ["a", "b", "c"], ["x", "y", "z"]),
        "head grid": viz.head_grid(np.random.default_rng(0).random((2, 3)), row_label="L",
                                   col_label="H", value_label="V"),
        "change": viz.probability_change(["a", "b"], np.array([0.2, 0.9], np.float32),
                                         np.array([0.5, 0.1], np.float32), names=("on", "off"),
                                         step_label="step"),
        "pruning": viz.pruning_plot(np.array([0, 2, 4]), np.array([30.0, 20.5, 0.25],
                                                                  np.float32), 4,
                                    x_label="pruned", y_label="BLEU"),
    }
    for name, fig in figs.items():
        sent = roundtrip(fig)
        assert "template" not in sent["layout"], name
        assert sent["layout"]["datarevision"] == DATA_REVISION, name
        assert not _typed_1d(sent["data"]), (name, _typed_1d(sent["data"]))
    # the lists carry the float32 values exactly (shortest decimals read back as float32)
    bars = roundtrip(figs["bars"])["data"][0]["x"]
    assert np.float32(bars).tolist() == np.float32([0.7, 0.3]).tolist()
    assert roundtrip(figs["pruning"])["data"][0]["y"] == [30.0, 20.5, 0.25]


def test_a_figure_with_its_own_width_has_room_for_its_title():
    """The page draws a figure that sets its width at that width (ui.charts.chart), so a
    long title must not be cut off by a narrow figure (two tokens, a one-row head grid)."""
    from viz.axes import title_px

    long = "Decoder self-attention: entropy of every head (this sentence); outlined: the highest"
    for fig in (attention_heatmap(softmax_rows((2, 2)), ["a", "b"], ["x", "y"], title=long),
                viz.head_grid(np.ones((1, 2)), long, row_label="L", col_label="H",
                              value_label="V"),
                attention_heatmap(softmax_rows((2, 2)), ["a", "b"], ["x", "y"], title="注意" * 30)):
        assert fig.layout.width >= title_px(fig.layout.title.text) > 80
    short = attention_heatmap(softmax_rows((2, 2)), ["a", "b"], ["x", "y"], title="T")
    assert short.layout.width == 2 * 44 + 8 + 200  # a short title leaves the width alone
    assert title_px("注意") > title_px("ab") and title_px("&lt;") == title_px("<")
