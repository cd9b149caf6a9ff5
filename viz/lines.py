"""Attention as lines, like BertViz's head view (Vig, 2019, "A Multiscale Visualization of
Attention in the Transformer Model"): the query tokens in a column on the left, the key
tokens on the right, and a line from query i to key j for each head, as opaque as the weight
A[h, i, j], one colour per head.

Plotly gives a whole trace one opacity, so each head's lines are drawn in ``LEVELS`` traces by
weight (the line's opacity is its band's upper bound): a few dozen traces, not one per line.

Shape letters: H heads, Tq queries, Tk keys.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from .axes import FONT, figure
from .colors import HEAD_COLORS
from .text import ENGLISH, VizText, check_text
from .validate import check_heads, check_range, check_tokens, escape_html

__all__ = ["HEAD_COLORS", "attention_lines"]

LEVELS = 5  # opacity bands per head
MIN_WEIGHT = 0.02  # lines lighter than this are left out (invisible anyway)


def attention_lines(
    weights: np.ndarray,
    query_tokens: Sequence[str],
    key_tokens: Sequence[str],
    title: str = "",
    *,
    heads: Sequence[int] | None = None,
    focus: tuple[str, int] | None = None,
    head_names: Sequence[str] | None = None,
    text: VizText = ENGLISH,
) -> go.Figure:
    """Lines from each query token (left) to each key token (right), per head.

    Args:
        weights: (H, Tq, Tk) attention weights in [0, 1] of one layer.
        query_tokens, key_tokens: Tq and Tk token strings (the two columns).
        title: figure title (shown literally; HTML is escaped).
        heads: which heads to draw (default: all), each in its ``HEAD_COLORS`` colour.
        focus: ("query", i) or ("key", j): draw only the lines of that token (BertViz
            highlights them on hover; here the caller passes the clicked token).
        head_names: H legend names (default "head 0", ... from ``text.head``).
        text: the figure's own labels.

    Returns:
        A figure whose first two traces are the token columns (``go.Scatter`` text,
        ``customdata`` ["query"|"key", position] so a click can name the token), then one
        line trace per (head, opacity band) that has lines, legend-grouped by head.

    Raises:
        ValueError: weights not (H, Tq, Tk) in [0, 1] for the tokens, an unknown head, or
            a focus outside the tokens.
    """
    text = check_text(text)
    q_tok = check_tokens(query_tokens, "query_tokens")
    k_tok = check_tokens(key_tokens, "key_tokens")
    w = check_heads(weights, q_tok, k_tok, "weights")  # (H, Tq, Tk) float32
    check_range(w, 0.0, 1.0, "weights", "Pass softmax attention weights.")
    H, Tq, Tk = w.shape
    chosen = list(range(H)) if heads is None else [int(h) for h in heads]
    if any(not 0 <= h < H for h in chosen):
        raise ValueError(f"heads must be in 0..{H - 1}, got {list(heads or [])}.")
    names = list(head_names) if head_names is not None else [text.head.format(n=h)
                                                             for h in range(H)]
    if focus is not None and not (focus[0] in ("query", "key")
                                  and 0 <= focus[1] < (Tq if focus[0] == "query" else Tk)):
        raise ValueError(f"focus must be ('query', 0..{Tq - 1}) or ('key', 0..{Tk - 1}), "
                         f"got {focus!r}.")
    rows = max(Tq, Tk)
    y_q = np.linspace(0, -(rows - 1), Tq) if Tq > 1 else np.zeros(1)  # query rows, top down
    y_k = np.linspace(0, -(rows - 1), Tk) if Tk > 1 else np.zeros(1)
    q_txt, k_txt = [escape_html(t) for t in q_tok], [escape_html(t) for t in k_tok]
    data = [
        go.Scatter(x=[0.0] * Tq, y=y_q, mode="text", text=q_txt, textposition="middle left",
                   customdata=[["query", i] for i in range(Tq)], showlegend=False,
                   hovertemplate=text.hover_query.replace("%{y}", "%{customdata[1]}")
                   + ": %{text}<extra></extra>"),
        go.Scatter(x=[1.0] * Tk, y=y_k, mode="text", text=k_txt, textposition="middle right",
                   customdata=[["key", j] for j in range(Tk)], showlegend=False,
                   hovertemplate=text.hover_key.replace("%{x}", "%{customdata[1]}")
                   + ": %{text}<extra></extra>"),
    ]
    keep = np.ones((Tq, Tk), dtype=bool)
    if focus is not None:
        keep[:] = False
        if focus[0] == "query":
            keep[focus[1], :] = True
        else:
            keep[:, focus[1]] = True
    edges = np.linspace(MIN_WEIGHT, 1.0, LEVELS + 1)  # band b: edges[b] <= w < edges[b+1]
    for h in chosen:
        band = np.clip(np.searchsorted(edges, w[h], side="right") - 1, 0, LEVELS - 1)
        for b in range(LEVELS):
            i, j = np.nonzero((band == b) & (w[h] >= MIN_WEIGHT) & keep)
            if len(i) == 0:
                continue
            xs = np.tile([0.02, 0.98, np.nan], len(i))
            ys = np.column_stack([y_q[i], y_k[j], np.full(len(i), np.nan)]).ravel()
            data.append(go.Scatter(
                x=xs, y=ys, mode="lines", hoverinfo="skip", opacity=float(edges[b + 1]),
                line=dict(color=HEAD_COLORS[h % len(HEAD_COLORS)], width=2),
                name=escape_html(names[h]), legendgroup=f"h{h}",
                showlegend=not any(d.legendgroup == f"h{h}" for d in data[2:])))
    return figure(data=data, layout=dict(
        title=dict(text=escape_html(title)), font=FONT, height=max(rows * 26 + 140, 260),
        xaxis=dict(visible=False, range=[-0.9, 1.9], fixedrange=True),
        yaxis=dict(visible=False, range=[-(rows - 1) - 0.8, 0.8], fixedrange=True),
        plot_bgcolor="white", margin=dict(l=20, r=20, t=60, b=20), hovermode="closest",
        legend=dict(orientation="h", y=-0.02, yanchor="top"),
    ))
