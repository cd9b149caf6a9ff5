"""Positional-encoding figures: a position x dimension heatmap and per-dimension curves."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from .axes import FONT, colorbar, figure, nice_step, row_outline
from .colors import SIGNED_SCALE
from .panel import check_panel, heatmap_panel
from .text import ENGLISH, VizText, check_text
from .validate import check_index, check_matrix, escape_html

__all__ = ["positional_curves", "positional_heatmap"]


LAYOUTS = ("interleaved", "halves", "learned")  # how a table's dimensions are laid out


def _dim_name(d: int, n_dim: int, layout: str, text: VizText) -> str:
    """Legend name of dimension d: interleaved (the paper: even = sin, odd = cos), halves
    (Marian, M2M100, tensor2tensor: the first D/2 are sin, the rest cos) or learned (no
    sin or cos)."""
    if layout == "learned":
        return text.dim.format(n=d)
    sin = d % 2 == 0 if layout == "interleaved" else d < (n_dim + 1) // 2
    return (text.dim_sin if sin else text.dim_cos).format(n=d)


def _int_ticks(n: int, max_ticks: int) -> dict:
    """Whole-number ticks for an axis 0..n-1, at most ``max_ticks`` of them."""
    return dict(tickmode="linear", tick0=0, dtick=nice_step(n, max_ticks))


def _int_axis(n: int, title: str, max_ticks: int) -> dict:
    """Plain integer axis 0..n-1 with whole-number ticks."""
    return dict(title=dict(text=title), showgrid=False, zeroline=False) | _int_ticks(n, max_ticks)


def positional_heatmap(
    pe: np.ndarray,
    tokens: Sequence[str] | None = None,
    title: str | None = None,
    *,
    mark_row: int | None = None,
    text: VizText = ENGLISH,
) -> go.Figure:
    """Heatmap of a positional-encoding matrix, positions down and dimensions across.

    Args:
        pe: (T, D) encoding values (sinusoidal ones lie in [-1, 1]; larger values are
            drawn with the end colours of the scale).
        tokens: optional T token strings; when given, the y ticks read "pos: token" and
            the hover shows the token.
        title: figure title (shown literally; HTML is escaped); None:
            ``text.positional_title``.
        mark_row: a position whose row is outlined in red (``viz.axes.row_outline``, a
            second trace); None: nothing outlined.
        text: the figure's own labels (axis and colour-bar titles, hover).

    Returns:
        A figure with one float32 ``go.Heatmap``: y = positions 0..T-1 (position 0 on
        top), x = "Dimension i" 0..D-1, the signed scale ``viz.colors.SIGNED_SCALE`` (blue
        negative, white 0, red positive, as ``viz.matrix_heatmap`` draws the same table)
        fixed to -1..1, hover giving position, token, dimension and value.

    Raises:
        ValueError: if pe is not a finite 2-D array, tokens does not have T strings, or
            mark_row is not a position 0..T-1.
    """
    text = check_text(text)
    z, txt, _ = check_panel(pe, tokens, None, "pe", row_name="tokens")
    n_pos, n_dim = z.shape
    over = () if mark_row is None else [row_outline(check_index(mark_row, n_pos, "mark_row"),
                                                    n_dim)]
    rest = f"{text.hover_dimension}<br>{text.hover_value}%{{z:.3f}}<extra></extra>"
    hover = f"{text.hover_position_y}<br>{rest}"
    customdata, ticks = None, None
    if txt is not None:
        ticks = [f"{i}: {t}" for i, t in enumerate(txt)]  # the hover: "Position 5: you"
        customdata = np.repeat(np.array(ticks, dtype=object)[:, None], n_dim, axis=1)
        hover = f"{text.hover_position_y.replace('%{y}', '%{customdata}')}<br>{rest}"
    return heatmap_panel(
        z, ticks, None,
        SIGNED_SCALE | dict(zmin=-1.0, zmax=1.0, zmid=0.0, colorbar=colorbar(text.value),
                            customdata=customdata, hovertemplate=hover),
        title=text.positional_title if title is None else title,
        row_title=text.position,
        col_title=text.dimension_i,
        width=900,
        height=int(np.clip(n_pos * 16, 300, 800)) + 120,
        square=False,
        over=over,
        xaxis=_int_ticks(n_dim, 16),
        yaxis=_int_ticks(n_pos, 25) if ticks is None else None,
    )


def positional_curves(
    pe: np.ndarray, dims: Sequence[int], title: str | None = None,
    layout: str = "interleaved", *, text: VizText = ENGLISH,
) -> go.Figure:
    """Line chart of encoding value against position for a few chosen dimensions.

    Args:
        pe: (T, D) encoding values.
        dims: non-empty list of distinct dimension indices in 0..D-1. Legend entries read
            "dim 4 (sin)" / "dim 5 (cos)" as ``layout`` says (``text.dim_sin``,
            ``text.dim_cos``).
        title: figure title (shown literally; HTML is escaped); None:
            ``text.positional_curves_title``.
        layout: one of ``LAYOUTS``: ``"interleaved"`` (the paper's: even = sin, odd = cos),
            ``"halves"`` (first D/2 sin, then cos, as Marian and M2M100) or ``"learned"``
            (a trained table: legend "dim 4", ``text.dim``).
        text: the figure's own labels (axis and legend titles, legend entries, hover).

    Returns:
        A figure with one ``go.Scatter`` line per dimension, in the order given:
        x = position 0..T-1, y = pe[:, d] (float32, as a list: ``viz.axes.figure``).

    Raises:
        ValueError: if pe is not a finite 2-D array, dims is empty, a dim is not an int,
            out of range or repeated, or an unknown layout.
    """
    text = check_text(text)
    title = text.positional_curves_title if title is None else title
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {', '.join(LAYOUTS)}; got {layout!r}.")
    z = check_matrix(pe, None, None, "pe")
    n_pos, n_dim = z.shape
    chosen = _check_dims(dims, n_dim)
    traces = []
    for d in chosen:
        name = _dim_name(d, n_dim, layout, text)
        traces.append(
            go.Scatter(
                x=list(range(n_pos)),
                y=z[:, d],
                mode="lines+markers" if n_pos <= 40 else "lines",
                name=name,
                hovertemplate=f"{name}<br>{text.hover_position_x}<br>{text.hover_value}"
                "%{y:.3f}<extra></extra>",
            )
        )
    return figure(
        data=traces,
        layout=dict(
            title=dict(text=escape_html(title)),
            font=FONT,
            xaxis=_int_axis(n_pos, text.position, 20) | dict(showgrid=True),
            yaxis=dict(title=dict(text=text.value), zeroline=True),
            legend=dict(title=dict(text=text.dimension)),
            width=900,
            height=450,
        ),
    )


def _check_dims(dims: Sequence[int], n_dim: int) -> list[int]:
    """:func:`positional_curves`'s ``dims`` checked against D = ``n_dim`` dimensions: the
    indices as ints, in the order given.

    Raises:
        ValueError: dims not a list, empty, or an index not an int in 0..D-1 or repeated.
    """
    if isinstance(dims, (str, bytes)) or not isinstance(dims, Sequence | np.ndarray):
        raise ValueError(f"dims must be a list of dimension indices, got {dims!r}.")
    if len(dims) == 0:
        raise ValueError(f"dims is empty; choose at least one dimension in 0..{n_dim - 1}.")
    chosen = [check_index(d, n_dim, f"dims[{i}]") for i, d in enumerate(dims)]
    if len(set(chosen)) != len(chosen):
        raise ValueError(f"dims contains repeated dimensions: {chosen}.")
    return chosen
