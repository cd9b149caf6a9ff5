"""viz.panel: the one layout of a heatmap on token axes, and the builders that use it."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
import pytest
from viz_helpers import SRC, SRC_ESC, TGT, TGT_ESC, roundtrip, sinusoid, softmax_rows

import viz
from viz.axes import FONT, axis_title, figure, margins, token_axis
from viz.colors import ATTENTION_SCALE
from viz.panel import check_panel, heatmap_panel
from viz.validate import check_mask

ROWS, COLS = ["a", "&lt;s&gt;"], ["x", "y", "&amp;"]
Z = np.arange(6, dtype=np.float32).reshape(2, 3) / 6


def test_heatmap_panel_is_the_layout_the_builders_wrote_by_hand():
    """The figure is the one attention_heatmap, mask_heatmap and score_heatmap each built by
    hand before the helper (kept here as the reference)."""
    fig = heatmap_panel(Z, ROWS, COLS, dict(colorscale=ATTENTION_SCALE, zmin=0.0, zmax=1.0),
                        title="<b>T</b>", row_title="Query <q>", col_title="Key",
                        width=300, height=200, showlegend=False)
    hand = figure(
        data=[go.Heatmap(z=Z, x=[0, 1, 2], y=[0, 1], colorscale=ATTENTION_SCALE, zmin=0.0,
                         zmax=1.0)],
        layout=dict(
            title=dict(text="&lt;b&gt;T&lt;/b&gt;"), font=FONT, width=300, height=200,
            margin=margins(ROWS, COLS, colorbar=True),
            xaxis=token_axis(COLS) | dict(constrain="domain"),
            yaxis=token_axis(ROWS, reverse=True) | dict(scaleanchor="x", scaleratio=1,
                                                       constrain="domain"),
            annotations=[axis_title("Key", COLS, "x"), axis_title("Query <q>", ROWS, "y")],
            plot_bgcolor="white", showlegend=False,
        ),
    )
    assert roundtrip(fig) == roundtrip(hand)


def test_heatmap_panel_numbered_axes_overrides_and_traces_over():
    over = go.Scatter(x=[1], y=[0], mode="markers")
    fig = heatmap_panel(Z, None, None, {}, title="", row_title="Pos<", col_title="Dim",
                        width=400, height=300, square=False, over=[over],
                        xaxis=dict(dtick=2), yaxis=dict(tickmode="linear"))
    assert [t.type for t in fig.data] == ["heatmap", "scatter"]
    xa, ya = fig.layout.xaxis, fig.layout.yaxis
    assert (xa.title.text, ya.title.text) == ("Dim", "Pos&lt;")  # Plotly titles, escaped
    assert ya.autorange == "reversed" and xa.autorange is None  # first row on top
    assert (xa.dtick, ya.tickmode) == (2, "linear")
    assert ya.scaleanchor is None and xa.constrain is None  # not square
    assert fig.layout.annotations == ()  # no token axis, no annotation title
    assert fig.layout.margin.l == margins(None, None, colorbar=True)["l"]


@pytest.mark.parametrize(
    ("z", "rows", "cols", "match"),
    [(Z[0], None, None, r"2-D"), (Z, ["a"], None, r"rows has 1 labels for 2"),
     (Z, None, ["x"], r"cols has 1 labels for 3")],
)
def test_heatmap_panel_errors(z, rows, cols, match):
    with pytest.raises(ValueError, match=match):
        heatmap_panel(z, rows, cols, {}, title="", row_title="", col_title="", width=1,
                      height=1)


def test_check_panel_checks_tokens_first_and_escapes_the_labels():
    z, rows, cols = check_panel(softmax_rows((5, 6)), TGT, SRC, "weights")
    assert z.dtype == np.float32 and (rows, cols) == (TGT_ESC, SRC_ESC)
    z, rows, cols = check_panel([[1, 2]], None, None, "values")
    assert z.shape == (1, 2) and rows is None and cols is None
    blocked, _, _ = check_panel(np.array([[0, 1]]), ["q"], ["a", "b"], "mask", check=check_mask)
    assert blocked.dtype == np.bool_ and blocked.tolist() == [[False, True]]
    with pytest.raises(ValueError, match=r"key_tokens must be a list.*single string"):
        check_panel(np.zeros(3), TGT, "the cat", "weights")  # before the array's own error
    with pytest.raises(ValueError, match=r"needs 6 col_labels.*got 5"):
        check_panel(np.zeros((5, 6)), TGT, TGT, "values", col_name="col_labels")


def _panels() -> dict[str, go.Figure]:
    """A figure of every builder that lays out its heatmap with ``heatmap_panel``."""
    mask = np.triu(np.ones((5, 5), bool), 1)
    return {
        "attention": viz.attention_heatmap(softmax_rows((5, 6)), TGT, SRC, "<T>"),
        "mask": viz.mask_heatmap(mask, TGT, TGT, "<T>"),
        "scores": viz.score_heatmap(np.zeros((5, 5)), TGT, TGT, mask, title="<T>"),
        "matrix": viz.matrix_heatmap(softmax_rows((5, 5)), TGT, TGT, "<T>"),
        "head grid": viz.head_grid(np.ones((2, 3)), "<T>", row_label="L", col_label="H",
                                   value_label="V"),
        "positional": viz.positional_heatmap(sinusoid(5, 8), TGT, "<T>"),
    }


def test_every_panel_builder_lays_its_heatmap_out_alike():
    square = {"attention", "mask", "scores", "head grid"}
    for name, fig in _panels().items():
        heatmap, sent = fig.data[0], roundtrip(fig)["layout"]
        rows, cols = np.shape(heatmap.z)
        assert (list(heatmap.x), list(heatmap.y)) == (list(range(cols)), list(range(rows)))
        ya, xa = fig.layout.yaxis, fig.layout.xaxis
        assert ya.autorange == "reversed" and list(ya.tickvals) == list(range(rows)), name
        assert fig.layout.title.text == "&lt;T&gt;" and sent["plot_bgcolor"] == "white", name
        titles = [a for a in fig.layout.annotations if str(a.xref).endswith(" domain")]
        x_title = [] if xa.ticktext is None else [None]  # a token axis: its title, first
        assert [a.textangle for a in titles] == [*x_title, -90], name  # then the y title
        expected = margins(list(ya.ticktext), None if xa.ticktext is None
                           else list(xa.ticktext), colorbar=True)
        assert sent["margin"] == expected, name
        if name in square:
            assert (ya.scaleanchor, ya.scaleratio, xa.constrain) == ("x", 1, "domain"), name
        else:
            assert ya.scaleanchor is None, name
