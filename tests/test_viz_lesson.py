"""The highlights the lesson draws (viz): an outlined row of the positional table, outlined
cells of a mask, grouped bars with a marked group."""

from __future__ import annotations

import numpy as np
import pytest
from viz_helpers import roundtrip, sinusoid

from viz import grouped_bars, mask_heatmap, positional_heatmap


@pytest.mark.parametrize("row", [0, 3, 5])
def test_positional_heatmap_outlines_the_marked_row(row):
    pe = sinusoid(6, 16)
    fig = positional_heatmap(pe, [f"w{i}" for i in range(6)], mark_row=row)
    heat, outline = fig.data
    np.testing.assert_allclose(np.asarray(heat.z), pe, atol=1e-6)
    assert (min(outline.y), max(outline.y)) == (row - 0.5, row + 0.5)
    assert (min(outline.x), max(outline.x)) == (-0.5, 15.5)  # the whole row
    assert outline.hoverinfo == "skip" and not outline.showlegend
    roundtrip(fig)
    assert len(positional_heatmap(pe).data) == 1  # nothing marked: the heatmap alone


@pytest.mark.parametrize("row", [-1, 6, 2.5])
def test_positional_heatmap_refuses_a_row_outside(row):
    with pytest.raises(ValueError):
        positional_heatmap(sinusoid(6, 16), mark_row=row)


def test_mask_heatmap_outlines_the_marked_cells():
    blocked = np.triu(np.ones((4, 4), dtype=bool), 1)
    cells = [(2, 0), (2, 1), (2, 2)]
    fig = mask_heatmap(blocked, list("abcd"), list("abcd"), marked=cells)
    heat, outline = fig.data
    np.testing.assert_array_equal(np.asarray(heat.z), blocked.astype(np.int8))
    assert list(zip(outline.y, outline.x, strict=True)) == cells
    with pytest.raises(ValueError):
        mask_heatmap(blocked, list("abcd"), list("abcd"), marked=[(4, 0)])


def test_grouped_bars_draw_each_series_and_mark_one_group():
    series = {"x <b>": np.array([1.0, 2.0, 3.0]), "attention": np.array([0.5, 0.1, 4.0])}
    fig = grouped_bars(["L0", "L1", "<i>L2</i>"], series, "t", group_label="layer",
                       value_label="norm", mark=2)
    assert [bar.name for bar in fig.data] == ["x &lt;b&gt;", "attention"]  # escaped
    for bar, values in zip(fig.data, series.values(), strict=True):
        np.testing.assert_allclose(np.asarray(bar.y, dtype=np.float64), values)
    assert "<i>" not in fig.layout.xaxis.ticktext[2]
    (band,) = fig.layout.shapes
    assert (band.x0, band.x1) == (1.5, 2.5)
    roundtrip(fig)


@pytest.mark.parametrize("bad", [
    dict(series={}),
    dict(series={"a": np.array([1.0, np.nan, 2.0])}),
    dict(series={"a": np.array([1.0, 2.0])}),
    dict(series={"a": np.ones(3)}, mark=3),
])
def test_grouped_bars_refuse_bad_input(bad):
    with pytest.raises(ValueError):
        grouped_bars(["a", "b", "c"], group_label="g", value_label="v", **bad)
