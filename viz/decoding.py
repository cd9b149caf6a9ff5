"""Decoding figure: the top-k next-token probabilities at one decoding step."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from ._layout import FONT, label_px, token_axis
from .validate import check_index, check_range, check_tokens, check_vector, escape_html

__all__ = ["BAR_COLOR", "CHOSEN_COLOR", "probability_bars"]

BAR_COLOR = "#9ecae1"
CHOSEN_COLOR = "#d62728"


def probability_bars(
    tokens: Sequence[str],
    probs: np.ndarray,
    chosen: int | None = None,
    title: str = "",
) -> go.Figure:
    """Horizontal bar chart of candidate next tokens, most probable on top.

    Args:
        tokens: K candidate token strings (repeats allowed; each keeps its own bar).
        probs: (K,) probabilities in [0, 1], in the same order as ``tokens`` (any order;
            the bars are sorted descending, ties keep their input order).
        chosen: index into ``tokens``/``probs`` of the token the decoder picked, drawn in
            ``CHOSEN_COLOR``; None highlights nothing.
        title: figure title (shown literally; HTML is escaped).

    Returns:
        A figure with one horizontal ``go.Bar``: y = integer positions 0..K-1 from the
        top, ticks showing the escaped tokens, x = probability on a fixed 0-1 axis titled
        "Probability", a percentage label on each bar and hover giving token and percent.

    Raises:
        ValueError: if probs is not a finite 1-D array of K values in [0, 1], tokens are
            not K strings, or chosen is not an int in 0..K-1.
    """
    toks = check_tokens(tokens, "tokens")
    p = check_vector(probs, toks, "probs")
    check_range(p, 0.0, 1.0, "probs", "Apply softmax to the logits first.")
    pick = None if chosen is None else check_index(chosen, len(p), "chosen")

    order = np.argsort(-p, kind="stable")
    txt = [escape_html(toks[i]) for i in order]
    colors = [CHOSEN_COLOR if i == pick else BAR_COLOR for i in order]
    fig = go.Figure(
        go.Bar(
            x=p[order],
            y=list(range(len(p))),
            orientation="h",
            marker=dict(color=colors),
            text=[f"{v:.1%}" for v in p[order]],
            textposition="outside",
            cliponaxis=False,
            customdata=txt,
            hovertemplate="%{customdata}<br>Probability: %{x:.1%}<extra></extra>",
        )
    )
    fig.update_layout(
        title=dict(text=escape_html(title)),
        font=FONT,
        xaxis=dict(title=dict(text="Probability"), range=[0, 1], tickformat=".0%"),
        yaxis=token_axis(txt, "Token", reverse=True),
        width=label_px(txt) + 560,
        height=len(p) * 30 + 160,
        margin=dict(r=70),
        plot_bgcolor="white",
        showlegend=False,
    )
    return fig
