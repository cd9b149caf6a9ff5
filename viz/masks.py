"""Attention-mask figure: which query may attend to which key."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from .axes import cell_outlines, cell_px, colorbar, label_px, pair_customdata
from .colors import ALLOWED_COLOR, BLOCKED_COLOR
from .panel import check_marked, check_panel, heatmap_panel
from .text import ENGLISH, VizText, check_text
from .validate import check_mask, check_px

__all__ = ["ALLOWED_COLOR", "BLOCKED_COLOR", "mask_heatmap"]


def mask_heatmap(
    mask: np.ndarray,
    query_tokens: Sequence[str],
    key_tokens: Sequence[str],
    title: str = "",
    *,
    query_label: str | None = None,
    key_label: str | None = None,
    width: int | None = None,
    marked: Sequence[tuple[int, int]] = (),
    text: VizText = ENGLISH,
) -> go.Figure:
    """Two-colour heatmap of a boolean attention mask (True = blocked).

    Args:
        mask: (Tq, Tk) bool array (or 0/1 numbers); True means the query (row) may not
            attend to the key (column), as in ``torch.nn.MultiheadAttention``.
        query_tokens: Tq token strings labelling the rows.
        key_tokens: Tk token strings labelling the columns.
        title: figure title (shown literally; HTML is escaped).
        query_label, key_label: y- and x-axis titles; None: ``text.query``, ``text.key``.
        width: the width (px) the figure will be drawn at, e.g. a narrow column's: the cells
            shrink to fit it and the height follows; None: cells of ``cell_px``.
        marked: (row, column) cells outlined in red (a second trace), e.g. the keys one
            query may see.
        text: the figure's own labels (colour bar, cell states, hover).

    Returns:
        A figure with one ``go.Heatmap`` whose z is the mask as int8 (1 = blocked): a
        dark colour for blocked and a light one for allowed cells (``viz.colors``
        ``BLOCKED_COLOR``, ``ALLOWED_COLOR``), a colour bar labelled
        "blocked (True)" / "allowed (False)" (``text.blocked_true``, ``text.allowed_false``),
        hover "blocked"/"allowed" (``text.blocked``, ``text.allowed``; ``customdata[..., 2]``)
        with both tokens, and the integer token axes of
        :func:`viz.attention.attention_heatmap`.

    Raises:
        ValueError: if mask is not 2-D, not boolean-like (e.g. an additive 0/-inf float
            mask), or does not match the token counts, width is not a positive int, or a
            marked cell is outside the mask.
    """
    text = check_text(text)
    blocked, q_txt, k_txt = check_panel(mask, query_tokens, key_tokens, "mask",
                                        check=check_mask)
    check_marked(marked, blocked.shape, "mask")
    cell, room = _mask_cell(blocked.shape, q_txt, width)
    return heatmap_panel(
        blocked.astype(np.int8), q_txt, k_txt, _mask_cells(blocked, q_txt, k_txt, text),
        title=title,
        row_title=text.query if query_label is None else query_label,
        col_title=text.key if key_label is None else key_label,
        width=width or round(blocked.shape[1] * cell) + room,
        height=round(blocked.shape[0] * cell) + label_px(k_txt) + 160,
        over=[cell_outlines(marked, max(round(cell) - 4, 6))] if marked else (),
    )


def _mask_cell(shape: tuple[int, int], q_txt: list[str], width: int | None
               ) -> tuple[float, int]:
    """``(cell, room)``: a cell's side in px for a (Tq, Tk) mask (``cell_px``, shrunk to fit
    ``width`` if given) and the px beside the cells (row labels, axis title, colour bar).

    Raises:
        ValueError: ``width`` not a positive int or None.
    """
    tq, tk = shape
    cell = cell_px(max(tq, tk))
    room = label_px(q_txt) + 240  # row labels, axis title, colour bar
    if check_px(width, "width") is not None:
        cell = min(cell, max((width - room) / tk, 4))
    return cell, room


def _mask_cells(blocked: np.ndarray, q_txt: list[str], k_txt: list[str], text: VizText
                ) -> dict:
    """The mask heatmap's own properties: two colours (allowed, blocked) with a colour bar
    that names them, thin gaps between the cells up to 40 tokens, and a hover giving both
    tokens and the cell's state (``customdata[..., 2]``)."""
    state = np.where(blocked, text.blocked, text.allowed).astype(object)
    gap = 1 if max(blocked.shape) <= 40 else 0
    return dict(
        zmin=0,
        zmax=1,
        colorscale=[
            [0.0, ALLOWED_COLOR],
            [0.5, ALLOWED_COLOR],
            [0.5, BLOCKED_COLOR],
            [1.0, BLOCKED_COLOR],
        ],
        colorbar=colorbar(
            text.mask,
            tickmode="array",
            tickvals=[0.25, 0.75],
            ticktext=[text.allowed_false, text.blocked_true],
            lenmode="pixels",  # readable beside a one-row mask too
            len=90,
        ),
        xgap=gap,
        ygap=gap,
        customdata=pair_customdata(q_txt, k_txt, state),
        hovertemplate=text.token_hover() + "%{customdata[2]}<extra></extra>",
    )
