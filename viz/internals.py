"""Figures for the inside of one attention head: signed matrices (Q, K, V, embeddings,
positional encodings) and score matrices whose blocked cells show as -inf."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from .axes import (
    FONT,
    axis_title,
    cell_px,
    colorbar,
    figure,
    label_px,
    margins,
    pair_customdata,
    token_axis,
)
from .text import ENGLISH, VizText, check_text
from .validate import check_mask, check_matrix, check_tokens, escape_html

__all__ = ["BLOCKED_COLOR", "matrix_heatmap", "score_heatmap"]

BLOCKED_COLOR = "#636363"


def _size(rows: list[str], cols: list[str], max_cell: int = 44) -> tuple[int, int]:
    cell = min(cell_px(max(len(rows), len(cols))), max_cell)
    return len(cols) * cell + label_px(rows) + 200, len(rows) * cell + label_px(cols) + 150


def matrix_heatmap(
    values: np.ndarray,
    row_tokens: Sequence[str],
    col_labels: Sequence[str] | None = None,
    title: str = "",
    row_label: str | None = None,
    col_label: str | None = None,
    symmetric: bool = True,
    *,
    text: VizText = ENGLISH,
) -> go.Figure:
    """Heatmap of a real-valued matrix, e.g. Q (T, d_k) or PE (T, D).

    Args:
        values: (R, C) finite numbers (any units).
        row_tokens: R labels of the rows (repeats keep their own row).
        col_labels: C column labels; None numbers the columns 0..C-1.
        row_label, col_label: y- and x-axis titles; None: ``text.token``, ``text.dimension``.
        symmetric: a diverging colour scale centred on 0 with limits ±max|value| (for signed
            data); False uses a sequential scale from min to max.
        text: the figure's own labels (default axis titles, hover).

    Returns:
        One ``go.Heatmap`` with integer axes and the escaped labels as ticks, the first row
        on top, and hover giving row, column and value (4 decimals).

    Raises:
        ValueError: not a finite 2-D array matching the labels.
    """
    text = check_text(text)
    row_label = text.token if row_label is None else row_label
    col_label = text.dimension if col_label is None else col_label
    rows = check_tokens(row_tokens, "row_tokens")
    n_cols = np.shape(values)[1] if np.ndim(values) == 2 else 0
    cols = [str(c) for c in range(n_cols)] if col_labels is None else check_tokens(
        col_labels, "col_labels")
    z = check_matrix(values, rows, cols, "values", row_name="row_tokens", col_name="col_labels")
    r_txt, c_txt = [escape_html(t) for t in rows], [escape_html(t) for t in cols]
    limit = float(np.abs(z).max()) or 1.0
    scale = dict(colorscale="RdBu", reversescale=True, zmin=-limit, zmax=limit, zmid=0.0) \
        if symmetric else dict(colorscale="Viridis")
    width, height = _size(r_txt, c_txt, max_cell=24 if len(cols) > 16 else 44)
    trace = go.Heatmap(
        z=z, x=list(range(len(cols))), y=list(range(len(rows))), **scale, colorbar=colorbar(),
        customdata=pair_customdata(r_txt, c_txt),
        hovertemplate=f"%{{customdata[0]}}{text.hover_row}<br>"
                      f"%{{customdata[1]}}{text.hover_column}<br>"
                      f"{text.hover_value}%{{z:.4f}}<extra></extra>",
    )
    x_axis = token_axis(c_txt) if col_labels is not None else dict(
        title=dict(text=escape_html(col_label)), showgrid=False, zeroline=False)
    titles = [axis_title(row_label, r_txt, "y")]
    if col_labels is not None:
        titles.append(axis_title(col_label, c_txt, "x"))
    return figure(data=[trace], layout=dict(
        title=dict(text=escape_html(title)), font=FONT, width=width, height=height,
        xaxis=x_axis, yaxis=token_axis(r_txt, reverse=True), annotations=titles,
        plot_bgcolor="white",
        margin=margins(r_txt, c_txt if col_labels is not None else None, colorbar=True),
    ))


def score_heatmap(
    scores: np.ndarray,
    query_tokens: Sequence[str],
    key_tokens: Sequence[str],
    mask: np.ndarray | None = None,
    title: str = "",
    details: dict[str, np.ndarray] | None = None,
    probabilities: bool = False,
    *,
    text: VizText = ENGLISH,
) -> go.Figure:
    """Heatmap of attention scores (or weights) with blocked cells drawn apart as −∞.

    Args:
        scores: (Tq, Tk) values; entries under ``mask`` are ignored (they may be -inf).
        mask: (Tq, Tk) bool, True = blocked; those cells are grey and labelled "−∞".
        details: extra (Tq, Tk) arrays named for the hover, e.g. {"q·k": raw, "q·k/√d_k":
            scaled, "weight": weights}, so hovering a cell shows the numbers behind it.
        probabilities: colour 0..1 (softmax weights) instead of a diverging scale.
        text: the figure's own labels (axis titles ``text.query``, ``text.key``; hover; the
            blocked layer's name ``text.blocked_inf`` and hover ``text.hover_blocked``).

    Returns:
        A heatmap of the allowed cells plus a grey layer of the blocked ones with "−∞" text;
        integer token axes (queries are rows, first on top).

    Raises:
        ValueError: shapes that do not match the tokens, or NaN in an allowed cell.
    """
    text = check_text(text)
    q_tok = check_tokens(query_tokens, "query_tokens")
    k_tok = check_tokens(key_tokens, "key_tokens")
    blocked = (np.zeros((len(q_tok), len(k_tok)), bool) if mask is None else
               check_mask(mask, q_tok, k_tok, "mask", row_name="query_tokens",
                          col_name="key_tokens"))
    raw = np.asarray(scores, dtype=np.float64)
    visible = np.where(blocked, 0.0, raw)
    z = check_matrix(visible, q_tok, k_tok, "scores", row_name="query_tokens",
                     col_name="key_tokens")
    shown = np.where(blocked, np.nan, z).astype(np.float32)  # gaps where blocked
    q_txt, k_txt = [escape_html(t) for t in q_tok], [escape_html(t) for t in k_tok]
    names = list(details or {})
    extra = [np.where(blocked, np.nan, np.asarray(details[n], np.float64)) for n in names]
    hover = text.token_hover() + "".join(
        f"{escape_html(n)}: %{{customdata[{i + 2}]:.4f}}<br>" for i, n in enumerate(names))
    if probabilities:
        scale = dict(colorscale="Blues", zmin=0.0, zmax=1.0)
    else:
        limit = float(np.abs(z[~blocked]).max()) if (~blocked).any() else 1.0
        scale = dict(colorscale="RdBu", reversescale=True, zmin=-limit, zmax=limit, zmid=0.0)
    traces = [go.Heatmap(
        z=shown, x=list(range(len(k_tok))), y=list(range(len(q_tok))), **scale,
        colorbar=colorbar(), customdata=pair_customdata(q_txt, k_txt, *extra), hoverongaps=False,
        hovertemplate=hover + (text.hover_weight if probabilities else text.hover_value) +
        "%{z:.4f}<extra></extra>",
    )]
    if blocked.any():
        qi, ki = np.nonzero(blocked)
        traces.append(go.Scatter(
            x=ki.tolist(), y=qi.tolist(), mode="markers+text", text=["−∞"] * len(qi),
            textfont=dict(color="white", size=11), name=text.blocked_inf,
            marker=dict(symbol="square", size=cell_px(max(len(q_tok), len(k_tok))) - 2,
                        color=BLOCKED_COLOR),
            hovertemplate=text.hover_blocked + "<extra></extra>",
        ))
    width, height = _size(q_txt, k_txt)
    return figure(data=traces, layout=dict(
        title=dict(text=escape_html(title)), font=FONT, width=width, height=height,
        xaxis=token_axis(k_txt) | dict(constrain="domain"),
        yaxis=token_axis(q_txt, reverse=True) | dict(
            scaleanchor="x", scaleratio=1, constrain="domain"),
        annotations=[axis_title(text.key, k_txt, "x"), axis_title(text.query, q_txt, "y")],
        margin=margins(q_txt, k_txt, colorbar=True),
        plot_bgcolor="white", showlegend=False,
    ))
