"""Attention-weight heatmaps: one head, or every head of one layer as small multiples."""

from __future__ import annotations

import math
from collections.abc import Sequence
from numbers import Integral

import numpy as np
import plotly.graph_objects as go

from .axes import (
    FONT,
    axis_title,
    cell_outlines,
    cell_px,
    colorbar,
    figure,
    label_px,
    margins,
    pair_customdata,
    token_axis,
)
from .colors import ATTENTION_SCALE
from .panel import check_panel, heatmap_panel
from .text import ENGLISH, VizText, check_text
from .validate import check_heads, check_range, check_tokens, escape_html

__all__ = ["attention_grid", "attention_heatmap"]

_RANGE_HINT = "Pass softmax attention weights, not raw scores or logits."
#: The width (px) a grid of heads is expected to get in the page: its height follows from it,
#: so that square cells fill the chart instead of leaving it mostly blank.
GRID_WIDTH_PX = 900


def _hover(text: VizText) -> str:
    """A cell's hover: query token, key token and weight."""
    return text.token_hover() + text.hover_weight + "%{z:.3f}<extra></extra>"


def attention_heatmap(
    weights: np.ndarray,
    query_tokens: Sequence[str],
    key_tokens: Sequence[str],
    title: str = "",
    query_label: str | None = None,
    key_label: str | None = None,
    *,
    marked: Sequence[tuple[int, int]] = (),
    text: VizText = ENGLISH,
) -> go.Figure:
    """Heatmap of one head's attention: rows are queries, columns are keys.

    Args:
        weights: (Tq, Tk) attention probabilities in [0, 1]; each row is one query's
            distribution over the keys (a fully blocked row may be all zeros).
        query_tokens: Tq token strings labelling the rows (repeats allowed).
        key_tokens: Tk token strings labelling the columns (repeats allowed).
        title: figure title (shown literally; HTML is escaped).
        query_label: y-axis title, e.g. "Query: decoder position"; None: ``text.query``.
        key_label: x-axis title, e.g. "Key: source token"; None: ``text.key``.
        marked: (row, column) cells to outline, e.g. gold alignment links.
        text: the figure's own labels (colour bar, hover, default axis titles).

    Returns:
        A figure with one ``go.Heatmap`` (and a ``go.Scatter`` of open squares over the
        ``marked`` cells, if any): float32 z, integer axes x = 0..Tk-1 and
        y = 0..Tq-1 (first query on top) whose ticks show the escaped tokens, a fixed
        0-1 colour scale titled ``text.weight``, and hover text giving query token, key
        token and weight.

    Raises:
        ValueError: if weights is not a finite 2-D (Tq, Tk) array matching the token
            counts, has values outside [0, 1], or the tokens are not strings.
    """
    text = check_text(text)
    z, q_txt, k_txt = check_panel(weights, query_tokens, key_tokens, "weights")
    check_range(z, 0.0, 1.0, "weights", _RANGE_HINT)
    tq, tk = z.shape
    for cell in marked:
        if not (len(cell) == 2 and 0 <= cell[0] < tq and 0 <= cell[1] < tk):
            raise ValueError(f"marked cell {cell!r} is outside the ({tq}, {tk}) weights.")
    cell = cell_px(max(tq, tk))
    return heatmap_panel(
        z, q_txt, k_txt,
        dict(zmin=0.0, zmax=1.0, colorscale=ATTENTION_SCALE, colorbar=colorbar(text.weight),
             customdata=pair_customdata(q_txt, k_txt), hovertemplate=_hover(text)),
        title=title,
        row_title=text.query if query_label is None else query_label,
        col_title=text.key if key_label is None else key_label,
        width=tk * cell + label_px(q_txt) + 200,
        height=tq * cell + label_px(k_txt) + 160,
        over=[cell_outlines(marked, max(cell - 4, 6))] if marked else (),
    )


def attention_grid(
    weights: np.ndarray,
    query_tokens: Sequence[str],
    key_tokens: Sequence[str],
    title: str = "",
    ncols: int = 4,
    query_label: str | None = None,
    key_label: str | None = None,
    *,
    text: VizText = ENGLISH,
) -> go.Figure:
    """All heads of one layer as small multiples sharing one 0-1 colour axis.

    Args:
        weights: (H, Tq, Tk) attention probabilities in [0, 1] for one layer.
        query_tokens: Tq token strings (rows of every panel).
        key_tokens: Tk token strings (columns of every panel).
        title: figure title (shown literally; HTML is escaped).
        ncols: panels per row (>= 1); capped at H.
        query_label: y-axis title of the first column; None: ``text.query``.
        key_label: x-axis title of the bottom panel in each column; None: ``text.key``.
        text: the figure's own labels (panel titles ``text.head``, colour bar, hover).

    Returns:
        A figure with one ``go.Heatmap`` laid out as a mosaic: head h's (Tq, Tk) weights
        (float32) sit in panel h, row h // ncols and column h % ncols, panels apart by
        gaps of NaN cells (not drawn, no hover); a fixed 0-1 colour scale titled
        ``text.weight``. The one x axis repeats the key tokens under each column of panels,
        the one y axis the query tokens beside each row (first query on top, square
        cells); each panel's title ``text.head`` is an annotation above it; a cell's hover
        names its head, query and key (token and position) and its weight: ``customdata``
        (rows, cols, 3) uint8 (uint16 past 255) holds each cell's head, query position and
        key position, ``text`` (rows, cols) its query token and ``hovertext`` (rows, cols)
        its key token.

        One trace on one pair of axes rather than a subplot per head: the browser draws
        each pair of axes (ticks, labels) at a cost, and redrew this grid on every step
        click (2x faster as one trace, benchmarks/clicks.py).

    Raises:
        ValueError: if weights is not a finite (H, Tq, Tk) array matching the token
            counts, has values outside [0, 1], or ncols is not a positive int.
    """
    text = check_text(text)
    query_label = text.query if query_label is None else query_label
    key_label = text.key if key_label is None else key_label
    q_tok = check_tokens(query_tokens, "query_tokens")
    k_tok = check_tokens(key_tokens, "key_tokens")
    z = check_heads(weights, q_tok, k_tok, "weights")
    check_range(z, 0.0, 1.0, "weights", _RANGE_HINT)
    if isinstance(ncols, bool) or not isinstance(ncols, Integral) or ncols < 1:
        raise ValueError(f"ncols must be a positive int, got {ncols!r}.")
    q_txt, k_txt = [escape_html(t) for t in q_tok], [escape_html(t) for t in k_tok]
    n_heads, tq, tk = z.shape
    ncols = min(int(ncols), n_heads)
    nrows = math.ceil(n_heads / ncols)

    panel = int(np.clip(max(tq, tk) * 16, 160, 320))  # px, as the panels are drawn
    cell = panel / max(tq, tk)
    col_gap = 1  # cells between panels side by side (no labels there)
    row_gap = max(1, math.ceil(24 / cell))  # cells above a panel, for its title
    step_x, step_y = tk + col_gap, tq + row_gap
    mosaic = np.full((nrows * step_y - row_gap, ncols * step_x - col_gap), np.nan,
                     dtype=np.float32)  # (rows, cols) of the whole grid
    # Per cell, for the hover: head, query position and key position as numbers, the query
    # token (``text``) and the key token (``hovertext``). Numbers in a numeric array, two
    # strings a cell, not five objects: plotly.py copies every object of a figure's arrays
    # (twice on the way to the page), ~5 ms a step click for a 20-token sentence.
    small = np.uint8 if max(n_heads, tq, tk) <= 255 else np.uint16  # sent as bytes: fewest
    where = np.zeros(mosaic.shape + (3,), dtype=small)  # (rows, cols, 3); 0 in the gaps
    q_words = np.full(mosaic.shape, "", dtype=object)  # (rows, cols)
    k_words = np.full(mosaic.shape, "", dtype=object)  # (rows, cols)
    q_col, k_row = np.array(q_txt, dtype=object)[:, None], np.array(k_txt, dtype=object)[None]
    titles = []
    for h in range(n_heads):
        y0, x0 = (h // ncols) * step_y, (h % ncols) * step_x
        rows, cols = slice(y0, y0 + tq), slice(x0, x0 + tk)
        mosaic[rows, cols] = z[h]
        where[rows, cols, 0] = h
        where[rows, cols, 1] = np.arange(tq)[:, None]
        where[rows, cols, 2] = np.arange(tk)
        q_words[rows, cols], k_words[rows, cols] = q_col, k_row
        titles.append(dict(text=text.head.format(n=h), x=x0 + (tk - 1) / 2, y=y0 - 0.5,
                           xref="x", yref="y", xanchor="center", yanchor="bottom",
                           showarrow=False, font=dict(size=14)))
    tokens = (text.token_hover()  # the tokens first: the positions become customdata
              .replace("%{customdata[0]}", "%{text}").replace("%{customdata[1]}", "%{hovertext}"))
    hover = (text.head.format(n="%{customdata[0]}") + "<br>"
             + tokens.replace("%{y}", "%{customdata[1]}").replace("%{x}", "%{customdata[2]}")
             + text.hover_weight + "%{z:.3f}<extra></extra>")
    x_axis = token_axis(k_txt * ncols) | dict(
        tickvals=[c * step_x + j for c in range(ncols) for j in range(tk)],
        constrain="domain")
    y_axis = token_axis(q_txt * nrows, reverse=True) | dict(
        tickvals=[r * step_y + i for r in range(nrows) for i in range(tq)],
        range=[mosaic.shape[0] - 0.5, -0.5 - row_gap], autorange=False,  # room for titles
        scaleanchor="x", scaleratio=1, constrain="domain")
    trace = go.Heatmap(z=mosaic, zmin=0.0, zmax=1.0, colorscale=ATTENTION_SCALE,
                       colorbar=colorbar(text.weight), customdata=where, text=q_words,
                       hovertext=k_words, hoverongaps=False, hovertemplate=hover)
    return figure(
        data=[trace],
        layout=dict(
            title=dict(text=escape_html(title)),
            font=FONT,
            annotations=[*titles, axis_title(key_label, k_txt, "x"),
                         axis_title(query_label, q_txt, "y")],
            xaxis=x_axis,
            yaxis=y_axis,
            margin=margins(q_txt, k_txt, colorbar=True),
            width=ncols * (panel + 40) + label_px(q_txt) + 160,
            height=int(mosaic.shape[0] * min(cell, GRID_WIDTH_PX / mosaic.shape[1]))
            + sum(margins(q_txt, k_txt)[side] for side in "tb") + 40,
            plot_bgcolor="white",
        ),
    )
