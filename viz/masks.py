"""Attention-mask figure: which query may attend to which key."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from ._layout import FONT, TOKEN_HOVER, cell_px, label_px, pair_customdata, token_axis
from .validate import check_mask, check_tokens, escape_html

__all__ = ["ALLOWED_COLOR", "BLOCKED_COLOR", "mask_heatmap"]

ALLOWED_COLOR = "#deebf7"
BLOCKED_COLOR = "#404040"


def mask_heatmap(
    mask: np.ndarray,
    query_tokens: Sequence[str],
    key_tokens: Sequence[str],
    title: str = "",
    query_label: str = "Query",
    key_label: str = "Key",
) -> go.Figure:
    """Two-colour heatmap of a boolean attention mask (True = blocked).

    Args:
        mask: (Tq, Tk) bool array (or 0/1 numbers); True means the query (row) may not
            attend to the key (column), as in ``torch.nn.MultiheadAttention``.
        query_tokens: Tq token strings labelling the rows.
        key_tokens: Tk token strings labelling the columns.
        title: figure title (shown literally; HTML is escaped).
        query_label, key_label: y- and x-axis titles.

    Returns:
        A figure with one ``go.Heatmap`` whose z is the mask as int8 (1 = blocked): a
        dark colour for blocked and a light one for allowed cells, a colour bar labelled
        "blocked (True)" / "allowed (False)", hover "blocked"/"allowed" with both tokens,
        and the integer token axes of :func:`viz.attention.attention_heatmap`.

    Raises:
        ValueError: if mask is not 2-D, not boolean-like (e.g. an additive 0/-inf float
            mask), or does not match the token counts.
    """
    q_tok = check_tokens(query_tokens, "query_tokens")
    k_tok = check_tokens(key_tokens, "key_tokens")
    blocked = check_mask(mask, q_tok, k_tok, "mask")
    q_txt, k_txt = [escape_html(t) for t in q_tok], [escape_html(t) for t in k_tok]
    tq, tk = blocked.shape
    state = np.where(blocked, "blocked", "allowed").astype(object)
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
            colorbar=dict(
                title=dict(text="Mask"),
                tickmode="array",
                tickvals=[0.25, 0.75],
                ticktext=["allowed (False)", "blocked (True)"],
                len=0.4,
            ),
            xgap=gap,
            ygap=gap,
            customdata=pair_customdata(q_txt, k_txt, state),
            hovertemplate=TOKEN_HOVER + "%{customdata[2]}<extra></extra>",
        )
    ]
    cell = cell_px(max(tq, tk))
    return go.Figure(
        data=traces,
        layout=dict(
            title=dict(text=escape_html(title)),
            font=FONT,
            width=tk * cell + label_px(q_txt) + 240,
            height=tq * cell + label_px(k_txt) + 160,
            xaxis=token_axis(k_txt, key_label) | dict(constrain="domain"),
            yaxis=token_axis(q_txt, query_label, reverse=True)
            | dict(scaleanchor="x", scaleratio=1, constrain="domain"),
            plot_bgcolor="white",
        ),
    )
