"""Attention-mask figure: which query may attend to which key."""

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
from .validate import check_mask, check_px, check_tokens, escape_html

__all__ = ["ALLOWED_COLOR", "BLOCKED_COLOR", "mask_heatmap"]

ALLOWED_COLOR = "#deebf7"
BLOCKED_COLOR = "#404040"


def mask_heatmap(
    mask: np.ndarray,
    query_tokens: Sequence[str],
    key_tokens: Sequence[str],
    title: str = "",
    query_label: str | None = None,
    key_label: str | None = None,
    *,
    width: int | None = None,
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
        text: the figure's own labels (colour bar, cell states, hover).

    Returns:
        A figure with one ``go.Heatmap`` whose z is the mask as int8 (1 = blocked): a
        dark colour for blocked and a light one for allowed cells, a colour bar labelled
        "blocked (True)" / "allowed (False)" (``text.blocked_true``, ``text.allowed_false``),
        hover "blocked"/"allowed" (``text.blocked``, ``text.allowed``; ``customdata[..., 2]``)
        with both tokens, and the integer token axes of
        :func:`viz.attention.attention_heatmap`.

    Raises:
        ValueError: if mask is not 2-D, not boolean-like (e.g. an additive 0/-inf float
            mask), or does not match the token counts, or width is not a positive int.
    """
    text = check_text(text)
    q_tok = check_tokens(query_tokens, "query_tokens")
    k_tok = check_tokens(key_tokens, "key_tokens")
    blocked = check_mask(mask, q_tok, k_tok, "mask")
    q_txt, k_txt = [escape_html(t) for t in q_tok], [escape_html(t) for t in k_tok]
    tq, tk = blocked.shape
    state = np.where(blocked, text.blocked, text.allowed).astype(object)
    gap = 1 if max(tq, tk) <= 40 else 0

    traces = [
        go.Heatmap(
            z=blocked.astype(np.int8),
            x=list(range(tk)),
            y=list(range(tq)),
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
    ]
    cell = cell_px(max(tq, tk))
    room = label_px(q_txt) + 240  # row labels, axis title, colour bar
    if check_px(width, "width") is not None:
        cell = min(cell, max((width - room) / tk, 4))
    return figure(
        data=traces,
        layout=dict(
            title=dict(text=escape_html(title)),
            font=FONT,
            width=width or round(tk * cell) + room,
            height=round(tq * cell) + label_px(k_txt) + 160,
            margin=margins(q_txt, k_txt, colorbar=True),
            xaxis=token_axis(k_txt) | dict(constrain="domain"),
            yaxis=token_axis(q_txt, reverse=True)
            | dict(scaleanchor="x", scaleratio=1, constrain="domain"),
            annotations=[
                axis_title(text.key if key_label is None else key_label, k_txt, "x"),
                axis_title(text.query if query_label is None else query_label, q_txt, "y"),
            ],
            plot_bgcolor="white",
        ),
    )
