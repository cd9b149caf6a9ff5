"""One heatmap on token axes: the scaffolding that every heatmap builder shares.

A builder checks its inputs and escapes its labels with :func:`check_panel`, works out what
its cells show (colour scale, hover, extra marks), and hands that to :func:`heatmap_panel`,
which lays the heatmap out the same way for all of them: integer axes whose ticks show the
labels (``viz.axes.token_axis``), the first row on top, axis titles as annotations
(``viz.axes.axis_title``), margins that hold the labels and a colour bar, the escaped figure
title, ``viz.axes.FONT``, and the figure made by ``viz.axes.figure``.

Shape letters: R rows, C columns of one panel: (Tq, Tk) attention, scores or masks (Tq
queries, Tk keys), (T, D) embeddings or positional encodings (T tokens, D d_model), (L, H) a
statistic per head (L layers, H heads).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go

from .axes import FONT, axis_title, cell_px, figure, margins, token_axis
from .colors import BLOCKED_COLOR, BLOCKED_TEXT_COLOR
from .text import VizText
from .validate import check_matrix, check_tokens, escape_html, escape_tokens

__all__ = ["blocked_layer", "check_marked", "check_panel", "heatmap_panel"]


def check_panel(
    values: Any,
    row_tokens: Sequence[str] | None,
    col_tokens: Sequence[str] | None,
    name: str,
    *,
    row_name: str = "query_tokens",
    col_name: str = "key_tokens",
    check: Callable[..., np.ndarray] = check_matrix,
) -> tuple[np.ndarray, list[str] | None, list[str] | None]:
    """A heatmap's inputs checked, tokens first, and its labels escaped for Plotly.

    Args:
        values: (R, C) array-like: what the cells show.
        row_tokens: R row labels, or None (the rows are numbered; no count to check).
        col_tokens: C column labels, or None (likewise).
        name, row_name, col_name: the arguments' names in error messages.
        check: the array's checker, called as ``check(values, rows, cols, name,
            row_name=..., col_name=...)``: ``viz.validate.check_matrix`` (finite numbers;
            the default) or ``viz.validate.check_mask`` (a boolean mask, True = blocked).

    Returns:
        ``(z, rows, cols)``: what ``check`` returns (float32 (R, C) for ``check_matrix``, bool
        (R, C) for ``check_mask``) and the labels as lists of escaped strings
        (``viz.validate.escape_html``), None where none were given.

    Raises:
        ValueError: if a token list is not a list of strings (``check_tokens``), or as
            ``check`` raises (wrong dimensions, counts that do not match the tokens, ...).
    """
    rows = None if row_tokens is None else check_tokens(row_tokens, row_name)
    cols = None if col_tokens is None else check_tokens(col_tokens, col_name)
    z = check(values, rows, cols, name, row_name=row_name, col_name=col_name)
    return (z, None if rows is None else escape_tokens(rows),
            None if cols is None else escape_tokens(cols))


def _numbered_axis(title: str) -> dict:
    """A plain numeric axis titled ``title`` (escaped), for rows or columns without labels."""
    return dict(title=dict(text=escape_html(title)), showgrid=False, zeroline=False)


def heatmap_panel(
    z: np.ndarray,
    rows: list[str] | None,
    cols: list[str] | None,
    heatmap: dict,
    *,
    title: str,
    row_title: str,
    col_title: str,
    width: int,
    height: int,
    square: bool = True,
    over: Sequence[go.Scatter] = (),
    xaxis: dict | None = None,
    yaxis: dict | None = None,
    **layout: Any,
) -> go.Figure:
    """A figure of one heatmap with row i at y = i (first row on top) and column j at x = j.

    Args:
        z: (R, C) the cells' values as the heatmap shows them (NaN: a gap, not drawn).
        rows: R row labels, already escaped (:func:`check_panel`), shown as the y ticks of a
            token axis (a repeated label keeps its own row) titled ``row_title``; None: a
            numbered axis with ``row_title`` as its Plotly title.
        cols: C column labels, likewise for the x axis and ``col_title``.
        heatmap: the ``go.Heatmap``'s own properties (colour scale and range, colour bar,
            hover template and ``customdata``, gaps...); not ``z``, ``x`` or ``y``.
        title: the figure title, shown literally (escaped here); row_title, col_title: the
            axis titles (escaped by ``viz.axes.axis_title``, or here for a numbered axis).
        width, height: the figure's size in px.
        square: square cells (``scaleanchor``), each axis shrunk to its domain; False: the
            cells fill the plot area.
        over: traces drawn over the heatmap, on the same axes (outlined cells, blocked
            cells).
        xaxis, yaxis: properties that override or add to the axes built here (e.g. the
            ticks of a numbered axis).
        **layout: further layout properties (e.g. ``showlegend=False``).

    Returns:
        A ``go.Figure`` (``viz.axes.figure``) whose first trace is the heatmap: ``x`` =
        0..C-1, ``y`` = 0..R-1; the margins hold the labels, the axis titles and a colour
        bar (``viz.axes.margins``); the axis titles of token axes are annotations, x first;
        white plot background.

    Raises:
        ValueError: if ``z`` is not 2-D or a label list's length differs from its side of
            ``z``.
    """
    n_rows, n_cols = _check_labels(z, rows, cols)
    x_axis, y_axis, notes = _panel_axes(rows, cols, row_title=row_title, col_title=col_title,
                                        square=square)
    trace = go.Heatmap(z=z, x=list(range(n_cols)), y=list(range(n_rows)), **heatmap)
    return figure(data=[trace, *over], layout=dict(
        title=dict(text=escape_html(title)), font=FONT, width=width, height=height,
        margin=margins(rows, cols, colorbar=True), xaxis=x_axis | (xaxis or {}),
        yaxis=y_axis | (yaxis or {}), annotations=notes, plot_bgcolor="white",
    ) | layout)


def _check_labels(z: np.ndarray, rows: list[str] | None, cols: list[str] | None
                  ) -> tuple[int, int]:
    """``(R, C)``, the shape of :func:`heatmap_panel`'s ``z``. Raises as it does."""
    if np.ndim(z) != 2:
        raise ValueError(f"z must be a 2-D (rows, columns) array, got shape {np.shape(z)}.")
    n_rows, n_cols = np.shape(z)
    for labels, n, side in ((rows, n_rows, "rows"), (cols, n_cols, "cols")):
        if labels is not None and len(labels) != n:
            raise ValueError(f"{side} has {len(labels)} labels for {n} {side} of z.")
    return n_rows, n_cols


def _panel_axes(rows: list[str] | None, cols: list[str] | None, *, row_title: str,
                col_title: str, square: bool) -> tuple[dict, dict, list[dict]]:
    """:func:`heatmap_panel`'s ``(x axis, y axis, annotations)`` (arguments as there): a
    token axis for labels, else a numbered one titled by Plotly; square cells if
    ``square``; the token axes' titles as annotations, x first."""
    x_axis = _numbered_axis(col_title) if cols is None else token_axis(cols)
    y_axis = (_numbered_axis(row_title) | dict(autorange="reversed") if rows is None
              else token_axis(rows, reverse=True))
    if square:
        x_axis |= dict(constrain="domain")
        y_axis |= dict(scaleanchor="x", scaleratio=1, constrain="domain")
    notes = [axis_title(text, labels, axis) for text, labels, axis
             in ((col_title, cols, "x"), (row_title, rows, "y")) if labels is not None]
    return x_axis, y_axis, notes


def check_marked(marked: Sequence[tuple[int, int]], shape: tuple[int, int], name: str) -> None:
    """Raise ``ValueError`` unless every ``(row, column)`` cell of ``marked`` (cells to
    outline) lies inside a (R, C) ``shape``; ``name`` names the array in the message."""
    rows, cols = shape
    for cell in marked:
        if not (len(cell) == 2 and 0 <= cell[0] < rows and 0 <= cell[1] < cols):
            raise ValueError(f"marked cell {cell!r} is outside the ({rows}, {cols}) {name}.")


def blocked_layer(blocked: np.ndarray, text: VizText) -> list[go.Scatter]:
    """The blocked cells of a (Tq, Tk) bool mask (True = blocked) as a layer of squares in
    ``BLOCKED_COLOR`` labelled "−∞" (named ``text.blocked_inf``, hover
    ``text.hover_blocked``), drawn over a heatmap as ``viz.mask_heatmap`` draws them; none:
    []."""
    if not blocked.any():
        return []
    qi, ki = np.nonzero(blocked)
    return [go.Scatter(
        x=ki.tolist(), y=qi.tolist(), mode="markers+text", text=["−∞"] * len(qi),
        textfont=dict(color=BLOCKED_TEXT_COLOR, size=11), name=text.blocked_inf,
        marker=dict(symbol="square", size=cell_px(max(blocked.shape)) - 2,
                    color=BLOCKED_COLOR),
        hovertemplate=text.hover_blocked + "<extra></extra>",
    )]
