"""Attention-weight heatmaps: one head, or every head of one layer as small multiples."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
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
from .convention import WEIGHT_FORMAT, head_number, position_numbers
from .panel import blocked_layer, check_marked, check_panel, heatmap_panel
from .text import ENGLISH, VizText, check_text
from .validate import check_heads, check_mask, check_range, check_tokens, escape_html

__all__ = ["attention_grid", "attention_heatmap"]

_RANGE_HINT = "Pass softmax attention weights, not raw scores or logits."
#: The width (px) a grid of heads is expected to get in the page: its height follows from it,
#: so that square cells fill the chart instead of leaving it mostly blank.
GRID_WIDTH_PX = 900


def _hover(text: VizText) -> str:
    """A cell's hover: query token, key token and weight."""
    return text.token_hover() + text.hover_weight + f"%{{z:{WEIGHT_FORMAT}}}<extra></extra>"


def attention_heatmap(
    weights: np.ndarray,
    query_tokens: Sequence[str],
    key_tokens: Sequence[str],
    title: str = "",
    *,
    query_label: str | None = None,
    key_label: str | None = None,
    marked: Sequence[tuple[int, int]] = (),
    blocked: np.ndarray | None = None,
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
        blocked: (Tq, Tk) bool, True where a mask blocks the key (a decoder-only model's
            look-ahead mask): drawn as ``viz.mask_heatmap`` draws a mask; None: none.
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
    check_range(z, 0.0, 1.0, "weights", hint=_RANGE_HINT)
    tq, tk = z.shape
    check_marked(marked, z.shape, "weights")
    mask = (np.zeros(z.shape, bool) if blocked is None else
            check_mask(blocked, q_txt, k_txt, "blocked", row_name="query_tokens",
                       col_name="key_tokens"))
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
        over=[*blocked_layer(mask, text),
              *([cell_outlines(marked, max(cell - 4, 6))] if marked else [])],
        **({"showlegend": False} if mask.any() else {}),
    )


def attention_grid(
    weights: np.ndarray,
    query_tokens: Sequence[str],
    key_tokens: Sequence[str],
    title: str = "",
    *,
    ncols: int = 4,
    query_label: str | None = None,
    key_label: str | None = None,
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
        (rows, cols, 3) uint8 (uint16 past 254) holds each cell's head number, query
        position and key position as a person reads them (from 1, ``viz.convention``),
        ``text`` (rows, cols) its query token and ``hovertext`` (rows, cols) its key token.

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
    z, q_txt, k_txt = _check_grid(weights, query_tokens, key_tokens, ncols)
    grid = _Grid(*z.shape, ncols=min(int(ncols), z.shape[0]))
    mosaic, where, q_words, k_words = _mosaic(z, q_txt, k_txt, grid)
    trace = go.Heatmap(z=mosaic, zmin=0.0, zmax=1.0, colorscale=ATTENTION_SCALE,
                       colorbar=colorbar(text.weight), customdata=where, text=q_words,
                       hovertext=k_words, hoverongaps=False, hovertemplate=_grid_hover(text))
    notes = [*_head_titles(grid, text), axis_title(key_label, k_txt, "x"),
             axis_title(query_label, q_txt, "y")]
    return figure(data=[trace], layout=_grid_layout(grid, q_txt, k_txt, title=title,
                                                    annotations=notes))


def _check_grid(
    weights: np.ndarray, query_tokens: Sequence[str], key_tokens: Sequence[str], ncols: int
) -> tuple[np.ndarray, list[str], list[str]]:
    """:func:`attention_grid`'s inputs checked: ``(z, q_txt, k_txt)``, the (H, Tq, Tk)
    float32 weights and the escaped tokens. Raises as :func:`attention_grid`."""
    q_tok = check_tokens(query_tokens, "query_tokens")
    k_tok = check_tokens(key_tokens, "key_tokens")
    z = check_heads(weights, q_tok, k_tok, "weights")
    check_range(z, 0.0, 1.0, "weights", hint=_RANGE_HINT)
    if isinstance(ncols, bool) or not isinstance(ncols, Integral) or ncols < 1:
        raise ValueError(f"ncols must be a positive int, got {ncols!r}.")
    return z, [escape_html(t) for t in q_tok], [escape_html(t) for t in k_tok]


_COL_GAP = 1  # cells between panels side by side (no labels there)


@dataclass(frozen=True)
class _Grid:
    """Where the panels of :func:`attention_grid` sit in its mosaic of cells: ``n_heads``
    panels of (``tq``, ``tk``) cells, ``ncols`` to a row, ``_COL_GAP`` cells apart side by
    side and ``row_gap`` cells apart (room for a panel's title) one under the other."""

    n_heads: int
    tq: int
    tk: int
    ncols: int

    @property
    def nrows(self) -> int:
        return math.ceil(self.n_heads / self.ncols)

    @property
    def panel(self) -> int:
        """A panel's side in px, as the panels are drawn."""
        return int(np.clip(max(self.tq, self.tk) * 16, 160, 320))

    @property
    def cell(self) -> float:
        """A cell's side in px."""
        return self.panel / max(self.tq, self.tk)

    @property
    def row_gap(self) -> int:
        """Cells above a panel, for its title."""
        return max(1, math.ceil(24 / self.cell))

    @property
    def step_x(self) -> int:
        return self.tk + _COL_GAP

    @property
    def step_y(self) -> int:
        return self.tq + self.row_gap

    @property
    def shape(self) -> tuple[int, int]:
        """(rows, cols) of the whole mosaic."""
        return (self.nrows * self.step_y - self.row_gap,
                self.ncols * self.step_x - _COL_GAP)

    def origin(self, h: int) -> tuple[int, int]:
        """(row, column) of head ``h``'s panel's top-left cell."""
        return (h // self.ncols) * self.step_y, (h % self.ncols) * self.step_x


def _mosaic(
    z: np.ndarray, q_txt: list[str], k_txt: list[str], grid: _Grid
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The grid's cells: ``(mosaic, where, q_words, k_words)``, each head's (Tq, Tk) weights
    in its panel of the float32 (rows, cols) mosaic (NaN in the gaps) and, per cell, for the
    hover: head, query position and key position as the numbers a person reads, from 1
    (``where``, (rows, cols, 3); 0 in the gaps), the query token and the key token
    ((rows, cols) objects; "" in the gaps). Numbers in a numeric array, two strings a cell,
    not five objects: plotly.py copies every object of a figure's arrays (twice on the way
    to the page), ~5 ms a step click for a 20-token sentence."""
    mosaic = np.full(grid.shape, np.nan, dtype=np.float32)  # (rows, cols) of the whole grid
    small = np.uint8 if max(grid.n_heads, grid.tq, grid.tk) < 255 else np.uint16  # bytes
    where = np.zeros(mosaic.shape + (3,), dtype=small)  # (rows, cols, 3); 0 in the gaps
    q_words = np.full(mosaic.shape, "", dtype=object)  # (rows, cols)
    k_words = np.full(mosaic.shape, "", dtype=object)  # (rows, cols)
    q_col, k_row = (np.array([_one_line(t) for t in txt], dtype=object)
                    for txt in (q_txt, k_txt))  # a token and its pinyin on one line
    q_col, k_row = q_col[:, None], k_row[None]
    for h in range(grid.n_heads):
        y0, x0 = grid.origin(h)
        rows, cols = slice(y0, y0 + grid.tq), slice(x0, x0 + grid.tk)
        mosaic[rows, cols] = z[h]
        where[rows, cols, 0] = head_number(h)  # the hover's head number
        where[rows, cols, 1] = position_numbers(grid.tq)[:, None]  # as people count: from 1
        where[rows, cols, 2] = position_numbers(grid.tk)
        q_words[rows, cols], k_words[rows, cols] = q_col, k_row
    return mosaic, where, q_words, k_words


def _head_titles(grid: _Grid, text: VizText) -> list[dict]:
    """Each panel's title (``text.head``) as an annotation centred above it."""
    titles = []
    for h in range(grid.n_heads):
        y0, x0 = grid.origin(h)
        titles.append(dict(text=text.head.format(n=head_number(h)),
                           x=x0 + (grid.tk - 1) / 2, y=y0 - 0.5,
                           xref="x", yref="y", xanchor="center", yanchor="bottom",
                           showarrow=False, font=dict(size=14)))
    return titles


def _grid_hover(text: VizText) -> str:
    """A grid cell's hover: its head, query and key (position and token), and weight, from
    ``customdata`` (head, query position, key position), ``text`` (the query token) and
    ``hovertext`` (the key token)."""
    query = text.hover_query.replace("%{y}", "%{customdata[1]}")
    key = text.hover_key.replace("%{x}", "%{customdata[2]}")
    return (text.head.format(n="%{customdata[0]}") + "<br>"
            + f"{query}: %{{text}}<br>{key}: %{{hovertext}}<br>"
            + text.hover_weight + f"%{{z:{WEIGHT_FORMAT}}}<extra></extra>")


def _grid_layout(grid: _Grid, q_txt: list[str], k_txt: list[str], *, title: str,
                 annotations: list[dict]) -> dict:
    """The grid's layout: its title (escaped), axes (:func:`_grid_axes`) and ``annotations``,
    margins that hold the tokens and the colour bar, and a size that gives every panel its
    width and square cells their height at ``GRID_WIDTH_PX``."""
    x_axis, y_axis = _grid_axes(q_txt, k_txt, grid)
    return dict(
        title=dict(text=escape_html(title)),
        font=FONT,
        annotations=annotations,
        xaxis=x_axis,
        yaxis=y_axis,
        margin=margins(q_txt, k_txt, colorbar=True),
        width=grid.ncols * (grid.panel + 40) + label_px(q_txt) + 160,
        height=int(grid.shape[0] * min(grid.cell, GRID_WIDTH_PX / grid.shape[1]))
        + sum(margins(q_txt, k_txt)[side] for side in "tb") + 40,
        plot_bgcolor="white",
    )


def _one_line(label: str) -> str:
    """A token label with its second line (its pinyin, ``"我\nwǒ"``) beside it."""
    return label.replace("\n", " ")


def _grid_axes(q_txt: list[str], k_txt: list[str], grid: _Grid) -> tuple[dict, dict]:
    """The grid's x axis (the key tokens under each column of panels, without their pinyin:
    a lone character stands upright in a cell's width, where the character over its pinyin
    was turned into a blot; the hover reads it) and y axis (the query tokens beside each
    row, with their pinyin, first on top, square cells, room above for the titles)."""
    x_axis = token_axis([t.split("\n")[0] for t in k_txt] * grid.ncols) | dict(
        tickvals=[c * grid.step_x + j for c in range(grid.ncols) for j in range(grid.tk)],
        constrain="domain")
    y_axis = token_axis(q_txt * grid.nrows, reverse=True) | dict(
        tickvals=[r * grid.step_y + i for r in range(grid.nrows) for i in range(grid.tq)],
        range=[grid.shape[0] - 0.5, -0.5 - grid.row_gap], autorange=False,  # titles' room
        scaleanchor="x", scaleratio=1, constrain="domain")
    return x_axis, y_axis
