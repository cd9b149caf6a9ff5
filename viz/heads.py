"""Figures about heads as a whole: a statistic for every head of a layer stack, how a
translation's probabilities change with heads switched off, and translation quality as heads
are pruned (Michel et al., 2019, figure 3).

Shape letters: L layers, H heads, T decoder steps, P points of a curve.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from .axes import FONT, axis_title, cell_outlines, colorbar, figure, margins, token_axis
from .colors import AFTER_COLOR, BEFORE_COLOR, SEQUENTIAL_SCALE
from .convention import head_number, layer_number
from .panel import heatmap_panel
from .text import ENGLISH, VizText, check_text
from .validate import check_tokens, check_vector, escape_html

__all__ = ["head_grid", "probability_change", "pruning_plot"]


def head_grid(
    values: np.ndarray,
    title: str = "",
    *,
    row_label: str,
    col_label: str,
    value_label: str,
    marked: Sequence[tuple[int, int]] = (),
    zmin: float | None = None,
    zmax: float | None = None,
    text: VizText = ENGLISH,
) -> go.Figure:
    """One statistic for every head: a layer x head heatmap with each value written in its
    cell.

    Args:
        values: (L, H) finite numbers (NaN: not defined for that head, drawn blank).
        title: figure title (shown literally; HTML is escaped).
        row_label, col_label, value_label: the layer axis, the head axis and the colour
            bar's titles (escaped).
        marked: (layer, head) cells outlined, e.g. the best head of each layer.
        zmin, zmax: the colour scale's range; None: the values' own.
        text: the figure's own labels (hover).

    Returns:
        A figure with one float32 ``go.Heatmap`` (y = layer index 0..L-1, first on top,
        labelled ``layer_number``; x = head index 0..H-1, labelled ``head_number``) and,
        if ``marked``, one ``go.Scatter`` of open squares over those cells.

    Raises:
        ValueError: values not a 2-D array of finite numbers or NaN, or a marked cell
            outside it.
    """
    text = check_text(text)
    z = np.asarray(values, dtype=np.float64)
    if z.ndim != 2 or 0 in z.shape:
        raise ValueError(f"values must be a non-empty (L, H) array, got shape {z.shape}.")
    if np.isinf(z).any():
        raise ValueError("values must be finite numbers (NaN for an undefined head).")
    L, H = z.shape
    for cell in marked:
        if not (len(cell) == 2 and 0 <= cell[0] < L and 0 <= cell[1] < H):
            raise ValueError(f"marked cell {cell!r} is outside the ({L}, {H}) grid.")
    rows = [str(layer_number(i)) for i in range(L)]  # what a person reads: from 1
    cols = [str(head_number(h)) for h in range(H)]
    numbers = np.stack(np.meshgrid(rows, cols, indexing="ij"), axis=-1)  # (L, H, 2) labels
    hover = (f"{escape_html(row_label)} %{{customdata[0]}}, {escape_html(col_label)} "
             f"%{{customdata[1]}}<br>{escape_html(value_label)}: %{{z:.3f}}<extra></extra>")
    cell = 56
    return heatmap_panel(
        z.astype(np.float32), rows, cols,
        dict(zmin=zmin, zmax=zmax, colorscale=SEQUENTIAL_SCALE,
             colorbar=colorbar(escape_html(value_label)), texttemplate="%{z:.2f}",
             customdata=numbers, hovertemplate=hover, hoverongaps=False),
        title=title, row_title=row_label, col_title=col_label,
        width=H * cell + 260, height=L * cell + 200,
        over=[cell_outlines(marked, 34, width=3)] if marked else (),
    )


def probability_change(
    tokens: Sequence[str],
    before: np.ndarray,
    after: np.ndarray,
    title: str = "",
    *,
    names: tuple[str, str],
    step_label: str,
    text: VizText = ENGLISH,
) -> go.Figure:
    """The probability the model gives each token of a translation, step by step, before
    and after a change (e.g. heads switched off): two bars per step.

    Args:
        tokens: T tokens, one per decoding step (the translation being scored).
        before, after: (T,) probabilities in [0, 1] of those tokens.
        title: figure title; names: the two bars' legend names; step_label: the token axis
            title (all shown literally; HTML is escaped).
        text: the figure's own labels (the probability axis, hover).

    Raises:
        ValueError: a probability outside [0, 1] or not T of them.
    """
    text = check_text(text)
    toks = check_tokens(tokens, "tokens")
    p0, p1 = (check_vector(v, toks, name) for v, name in ((before, "before"), (after, "after")))
    for p, name in ((p0, "before"), (p1, "after")):
        if (p < 0).any() or (p > 1).any():
            raise ValueError(f"{name} must hold probabilities in [0, 1].")
    txt = [escape_html(t) for t in toks]
    x = list(range(len(toks)))
    data = [go.Bar(x=x, y=p, name=escape_html(name), marker=dict(color=color), customdata=txt,
                   hovertemplate="%{customdata}<br>" + text.hover_probability
                   + "%{y:.1%}<extra>" + escape_html(name) + "</extra>")
            for p, name, color in ((p0, names[0], BEFORE_COLOR), (p1, names[1], AFTER_COLOR))]
    return figure(data=data, layout=dict(
        title=dict(text=escape_html(title)), font=FONT, barmode="group",
        xaxis=token_axis(txt),
        yaxis=dict(title=dict(text=text.probability), range=[0, 1.05], tickformat=".0%"),
        annotations=[axis_title(step_label, txt, "x")],
        margin=margins(None, txt) | dict(t=60), height=340, plot_bgcolor="white",
        legend=dict(orientation="h", y=1.02, x=1, xanchor="right", yanchor="bottom"),
    ))


def pruning_plot(
    pruned: np.ndarray,
    score: np.ndarray,
    total: int,
    title: str = "",
    *,
    x_label: str,
    y_label: str,
    text: VizText = ENGLISH,
) -> go.Figure:
    """A score (e.g. BLEU) against the number of heads switched off, as Michel et al.'s
    figure 3.

    Args:
        pruned: (P,) increasing head counts from 0 to ``total``.
        score: (P,) the score at each count.
        total: how many heads the model has (the x axis ends there).
        title, x_label, y_label: shown literally (HTML is escaped).

    Raises:
        ValueError: mismatched or non-finite arrays, counts not increasing within
            0..total.
    """
    check_text(text)
    x, y = np.asarray(pruned), np.asarray(score, dtype=np.float64)
    if x.ndim != 1 or x.shape != y.shape or len(x) == 0 or not np.isfinite(y).all():
        raise ValueError("pruned and score must be equal-length 1-D arrays of finite numbers.")
    if (np.diff(x) <= 0).any() or x[0] < 0 or x[-1] > total:
        raise ValueError(f"pruned must increase within 0..{total}.")
    share = [f"{k / total:.0%}" for k in x]
    return figure(data=[go.Scatter(
        x=x.tolist(), y=y, mode="lines+markers", customdata=share,
        hovertemplate=f"{escape_html(x_label)}: %{{x}} (%{{customdata}})<br>"
                      f"{escape_html(y_label)}: %{{y:.1f}}<extra></extra>")],
        layout=dict(title=dict(text=escape_html(title)), font=FONT, height=340,
                    xaxis=dict(title=dict(text=escape_html(x_label)), range=[-0.5, total + 0.5]),
                    yaxis=dict(title=dict(text=escape_html(y_label)), rangemode="tozero"),
                    plot_bgcolor="white", margin=dict(t=60)))
