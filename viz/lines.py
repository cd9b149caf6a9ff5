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
from .convention import head_number, position_number
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
        head_names: H legend names (default "Head 1", ... from ``text.head`` and
            ``viz.convention.head_number``).
        text: the figure's own labels.

    Returns:
        A figure whose first two traces are the token columns (``go.Scatter`` text,
        ``customdata`` ["query"|"key", index, position] so a click can name the token by
        its 0-based index, and the hover reads its position from 1), then one
        line trace per (head, opacity band) that has lines, legend-grouped by head.

    Raises:
        ValueError: weights not (H, Tq, Tk) in [0, 1] for the tokens, an unknown head, or
            a focus outside the tokens.
    """
    text = check_text(text)
    w, q_tok, k_tok = _check_lines(weights, query_tokens, key_tokens)
    H, Tq, Tk = w.shape
    chosen = list(range(H)) if heads is None else [int(h) for h in heads]
    if any(not 0 <= h < H for h in chosen):
        raise ValueError(f"heads must be in 0..{H - 1}, got {list(heads or [])}.")
    names = list(head_names) if head_names is not None else [
        text.head.format(n=head_number(h)) for h in range(H)]
    keep = _focus_cells(focus, Tq, Tk)
    rows = max(Tq, Tk)
    y_q = np.linspace(0, -(rows - 1), Tq) if Tq > 1 else np.zeros(1)  # query rows, top down
    y_k = np.linspace(0, -(rows - 1), Tk) if Tk > 1 else np.zeros(1)
    data = _token_columns(q_tok, k_tok, (y_q, y_k), text)
    for h in chosen:
        data += _head_lines(w[h], keep, (y_q, y_k), color=HEAD_COLORS[h % len(HEAD_COLORS)],
                            name=escape_html(names[h]), group=f"h{h}",
                            legend=not any(d.legendgroup == f"h{h}" for d in data[2:]))
    return figure(data=data, layout=dict(
        title=dict(text=escape_html(title)), font=FONT, height=max(rows * 26 + 140, 260),
        xaxis=dict(visible=False, range=[-0.9, 1.9], fixedrange=True),
        yaxis=dict(visible=False, range=[-(rows - 1) - 0.8, 0.8], fixedrange=True),
        plot_bgcolor="white", margin=dict(l=20, r=20, t=60, b=20), hovermode="closest",
        legend=dict(orientation="h", y=-0.02, yanchor="top"),
    ))


def _check_lines(weights: np.ndarray, query_tokens: Sequence[str], key_tokens: Sequence[str]
                 ) -> tuple[np.ndarray, list[str], list[str]]:
    """:func:`attention_lines`'s weights and tokens checked: ``(w, q_tok, k_tok)``, the
    (H, Tq, Tk) float32 weights in [0, 1] and the token lists."""
    q_tok = check_tokens(query_tokens, "query_tokens")
    k_tok = check_tokens(key_tokens, "key_tokens")
    w = check_heads(weights, q_tok, k_tok, "weights")  # (H, Tq, Tk) float32
    check_range(w, 0.0, 1.0, "weights", hint="Pass softmax attention weights.")
    return w, q_tok, k_tok


def _focus_cells(focus: tuple[str, int] | None, Tq: int, Tk: int) -> np.ndarray:
    """(Tq, Tk) bool: the (query, key) pairs whose lines are drawn, every pair without a
    ``focus``, else only the focused token's.

    Raises:
        ValueError: a focus that is not ("query", 0..Tq-1) or ("key", 0..Tk-1).
    """
    if focus is not None and not (focus[0] in ("query", "key")
                                  and 0 <= focus[1] < (Tq if focus[0] == "query" else Tk)):
        raise ValueError(f"focus must be ('query', 0..{Tq - 1}) or ('key', 0..{Tk - 1}), "
                         f"got {focus!r}.")
    keep = np.ones((Tq, Tk), dtype=bool)
    if focus is not None:
        keep[:] = False
        if focus[0] == "query":
            keep[focus[1], :] = True
        else:
            keep[:, focus[1]] = True
    return keep


def _token_columns(q_tok: list[str], k_tok: list[str], ys: tuple[np.ndarray, np.ndarray],
                   text: VizText) -> list[go.Scatter]:
    """The two token columns, queries at x = 0 and keys at x = 1 at their rows ``ys``
    (queries', keys'), each with ``customdata`` ["query"|"key", index, position] (the
    0-based index; the position a person reads, from 1) and a hover that names the position
    and the token. A token's second line (its pinyin, ``"我\\nwǒ"``) stands beside it, as
    on a y axis (``axes.token_axis``): one row per token."""
    q_txt, k_txt = ([escape_html(t).replace("\n", " ") for t in toks] for toks in (q_tok, k_tok))
    y_q, y_k = ys
    return [
        go.Scatter(x=[0.0] * len(q_txt), y=y_q, mode="text", text=q_txt,
                   textposition="middle left",
                   customdata=[["query", i, position_number(i)] for i in range(len(q_txt))],
                   showlegend=False,
                   hovertemplate=text.hover_query.replace("%{y}", "%{customdata[2]}")
                   + ": %{text}<extra></extra>"),
        go.Scatter(x=[1.0] * len(k_txt), y=y_k, mode="text", text=k_txt,
                   textposition="middle right",
                   customdata=[["key", j, position_number(j)] for j in range(len(k_txt))],
                   showlegend=False,
                   hovertemplate=text.hover_key.replace("%{x}", "%{customdata[2]}")
                   + ": %{text}<extra></extra>"),
    ]


def _head_lines(wh: np.ndarray, keep: np.ndarray, ys: tuple[np.ndarray, np.ndarray], *,
                color: str, name: str, group: str, legend: bool) -> list[go.Scatter]:
    """One head's lines, query row to key row (``ys``), for the ``keep`` pairs of its (Tq, Tk)
    weights ``wh`` of at least ``MIN_WEIGHT``: one trace per opacity band that has lines,
    in ``color``, named ``name`` in legend group ``group``; the first in the legend if
    ``legend``."""
    y_q, y_k = ys
    edges = np.linspace(MIN_WEIGHT, 1.0, LEVELS + 1)  # band b: edges[b] <= w < edges[b+1]
    band = np.clip(np.searchsorted(edges, wh, side="right") - 1, 0, LEVELS - 1)
    traces = []
    for b in range(LEVELS):
        i, j = np.nonzero((band == b) & (wh >= MIN_WEIGHT) & keep)
        if len(i) == 0:
            continue
        xs = np.tile([0.02, 0.98, np.nan], len(i))
        y_lines = np.column_stack([y_q[i], y_k[j], np.full(len(i), np.nan)]).ravel()
        traces.append(go.Scatter(
            x=xs, y=y_lines, mode="lines", hoverinfo="skip", opacity=float(edges[b + 1]),
            line=dict(color=color, width=2), name=name, legendgroup=group,
            showlegend=legend and not traces))
    return traces
