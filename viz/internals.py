"""Figures for the inside of one attention head: signed matrices (Q, K, V, embeddings,
positional encodings) and score matrices whose blocked cells show as -inf."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from .axes import cell_px, colorbar, label_px, pair_customdata
from .colors import (
    ATTENTION_SCALE,
    BLOCKED_COLOR,
    SEQUENTIAL_SCALE,
    SIGNED_SCALE,
)
from .convention import position_numbers
from .panel import blocked_layer, check_panel, heatmap_panel
from .text import ENGLISH, VizText, check_text
from .validate import check_mask, check_tokens, escape_html

__all__ = ["BLOCKED_COLOR", "matrix_heatmap", "score_heatmap"]


def _size(rows: list[str], cols: list[str], max_cell: int = 44) -> tuple[int, int]:
    cell = min(cell_px(max(len(rows), len(cols))), max_cell)
    return len(cols) * cell + label_px(rows) + 200, len(rows) * cell + label_px(cols) + 150


def matrix_heatmap(
    values: np.ndarray,
    row_tokens: Sequence[str],
    col_labels: Sequence[str] | None = None,
    title: str = "",
    *,
    row_label: str | None = None,
    col_label: str | None = None,
    symmetric: bool = True,
    text: VizText = ENGLISH,
) -> go.Figure:
    """Heatmap of a real-valued matrix, e.g. Q (T, d_k) or PE (T, D).

    Args:
        values: (R, C) finite numbers (any units).
        row_tokens: R labels of the rows, one per token (repeats keep their own row): the
            hover numbers a row as its position, from 1 (``viz.convention``).
        col_labels: C column labels, one per token (the hover numbers them from 1 too);
            None: the columns are dimensions, numbered 0..C-1 as the formulas index them.
        row_label, col_label: y- and x-axis titles; None: ``text.token``, ``text.dimension``.
        symmetric: the signed scale (``viz.colors.SIGNED_SCALE``: blue negative, white 0, red
            positive) with limits ±max|value|; False: ``viz.colors.SEQUENTIAL_SCALE`` from
            min to max.
        text: the figure's own labels (default axis titles, hover).

    Returns:
        One ``go.Heatmap`` with integer axes and the escaped labels as ticks, the first row
        on top, and hover giving row (its token and position), column and value (4
        decimals): ``customdata`` [row label, column label, row number, column number].

    Raises:
        ValueError: not a finite 2-D array matching the labels.
    """
    text = check_text(text)
    z, r_txt, c_txt = check_panel(values, row_tokens, col_labels, "values",
                                  row_name="row_tokens", col_name="col_labels")
    columns = [str(c) for c in range(z.shape[1])] if c_txt is None else c_txt  # for the hover
    limit = float(np.abs(z).max()) or 1.0
    scale = SIGNED_SCALE | dict(zmin=-limit, zmax=limit, zmid=0.0) \
        if symmetric else dict(colorscale=SEQUENTIAL_SCALE)
    width, height = _size(r_txt, columns, max_cell=24 if z.shape[1] > 16 else 44)
    return heatmap_panel(
        z, r_txt, c_txt,
        dict(**scale, colorbar=colorbar(),
             customdata=_numbered_cells(r_txt, columns, numbered_columns=c_txt is None),
             hovertemplate=(f"%{{customdata[0]}}"  # the row's and column's numbers, not %{y}:
                            # on a token axis Plotly writes the tick's label there
                            f"{text.hover_row.replace('%{y}', '%{customdata[2]}')}<br>"
                            f"%{{customdata[1]}}"
                            f"{text.hover_column.replace('%{x}', '%{customdata[3]}')}<br>"
                            f"{text.hover_value}%{{z:.4f}}<extra></extra>")),
        title=title,
        row_title=text.token if row_label is None else row_label,
        col_title=text.dimension if col_label is None else col_label,
        width=width, height=height, square=False,
    )


def _numbered_cells(rows: list[str], columns: list[str], *, numbered_columns: bool
                    ) -> np.ndarray:
    """:func:`matrix_heatmap`'s (R, C, 4) ``customdata``: each cell's row label, column
    label, row number and column number as the hover reads them. A row is a token: its
    position, from 1 (``viz.convention``); so is a labelled column; a ``numbered_columns``
    column is a dimension, from 0, as the formulas index it."""
    shape = (len(rows), len(columns))
    numbers = np.arange(shape[1]) if numbered_columns else position_numbers(shape[1])
    return pair_customdata(rows, columns,
                           np.broadcast_to(position_numbers(shape[0])[:, None], shape),
                           np.broadcast_to(numbers[None, :], shape))


def score_heatmap(
    scores: np.ndarray,
    query_tokens: Sequence[str],
    key_tokens: Sequence[str],
    mask: np.ndarray | None = None,
    *,
    title: str = "",
    details: dict[str, np.ndarray] | None = None,
    probabilities: bool = False,
    text: VizText = ENGLISH,
) -> go.Figure:
    """Heatmap of attention scores (or weights) with blocked cells drawn apart as −∞.

    Args:
        scores: (Tq, Tk) values; entries under ``mask`` are ignored (they may be -inf).
        mask: (Tq, Tk) bool, True = blocked; those cells are drawn in
            ``viz.colors.BLOCKED_COLOR`` (as in ``viz.mask_heatmap``) and labelled "−∞".
        details: extra (Tq, Tk) arrays named for the hover, e.g. {"q·k": raw, "q·k/√d_k":
            scaled, "weight": weights}, so hovering a cell shows the numbers behind it.
        probabilities: colour 0..1 on ``viz.colors.ATTENTION_SCALE`` (softmax weights)
            instead of the signed scale.
        text: the figure's own labels (axis titles ``text.query``, ``text.key``; hover; the
            blocked layer's name ``text.blocked_inf`` and hover ``text.hover_blocked``).

    Returns:
        A heatmap of the allowed cells plus a layer of the blocked ones with "−∞" text;
        integer token axes (queries are rows, first on top).

    Raises:
        ValueError: shapes that do not match the tokens, or NaN in an allowed cell.
    """
    text = check_text(text)
    z, blocked, q_txt, k_txt = _check_scores(scores, query_tokens, key_tokens, mask)
    shown = np.where(blocked, np.nan, z).astype(np.float32)  # gaps where blocked
    names = list(details or {})
    extra = [np.where(blocked, np.nan, np.asarray(details[n], np.float64)) for n in names]
    hover = text.token_hover() + "".join(
        f"{escape_html(n)}: %{{customdata[{i + 2}]:.4f}}<br>" for i, n in enumerate(names))
    if probabilities:
        scale = dict(colorscale=ATTENTION_SCALE, zmin=0.0, zmax=1.0)
    else:
        limit = float(np.abs(z[~blocked]).max()) if (~blocked).any() else 1.0
        scale = SIGNED_SCALE | dict(zmin=-limit, zmax=limit, zmid=0.0)
    width, height = _size(q_txt, k_txt)
    return heatmap_panel(
        shown, q_txt, k_txt,
        dict(**scale, colorbar=colorbar(), customdata=pair_customdata(q_txt, k_txt, *extra),
             hoverongaps=False,
             hovertemplate=hover + (text.hover_weight if probabilities else text.hover_value)
             + "%{z:.4f}<extra></extra>"),
        title=title, row_title=text.query, col_title=text.key, width=width, height=height,
        over=blocked_layer(blocked, text), showlegend=False,
    )


def _check_scores(
    scores: np.ndarray, query_tokens: Sequence[str], key_tokens: Sequence[str],
    mask: np.ndarray | None,
) -> tuple[np.ndarray, np.ndarray, list[str], list[str]]:
    """:func:`score_heatmap`'s inputs checked: ``(z, blocked, q_txt, k_txt)``, the float32
    (Tq, Tk) scores (0 where blocked), the bool (Tq, Tk) mask (all False for None) and the
    escaped tokens. Raises as :func:`score_heatmap`."""
    q_tok = check_tokens(query_tokens, "query_tokens")
    k_tok = check_tokens(key_tokens, "key_tokens")
    blocked = (np.zeros((len(q_tok), len(k_tok)), bool) if mask is None else
               check_mask(mask, q_tok, k_tok, "mask", row_name="query_tokens",
                          col_name="key_tokens"))
    raw = np.asarray(scores, dtype=np.float64)
    z, q_txt, k_txt = check_panel(np.where(blocked, 0.0, raw), q_tok, k_tok, "scores")
    return z, blocked, q_txt, k_txt
