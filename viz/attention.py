"""Attention-weight heatmaps: one head, or every head of one layer as small multiples."""

from __future__ import annotations

import math
from collections.abc import Sequence
from numbers import Integral

import numpy as np
import plotly.graph_objects as go

from .axes import ATTENTION_SCALE, FONT, cell_px, label_px, pair_customdata, token_axis
from .text import ENGLISH, VizText, check_text
from .validate import check_heads, check_matrix, check_range, check_tokens, escape_html

__all__ = ["attention_grid", "attention_heatmap"]

_RANGE_HINT = "Pass softmax attention weights, not raw scores or logits."


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
        text: the figure's own labels (colour bar, hover, default axis titles).

    Returns:
        A figure with one ``go.Heatmap``: float32 z, integer axes x = 0..Tk-1 and
        y = 0..Tq-1 (first query on top) whose ticks show the escaped tokens, a fixed
        0-1 colour scale titled ``text.weight``, and hover text giving query token, key
        token and weight.

    Raises:
        ValueError: if weights is not a finite 2-D (Tq, Tk) array matching the token
            counts, has values outside [0, 1], or the tokens are not strings.
    """
    text = check_text(text)
    q_tok = check_tokens(query_tokens, "query_tokens")
    k_tok = check_tokens(key_tokens, "key_tokens")
    z = check_matrix(
        weights, q_tok, k_tok, "weights", row_name="query_tokens", col_name="key_tokens"
    )
    check_range(z, 0.0, 1.0, "weights", _RANGE_HINT)
    q_txt, k_txt = [escape_html(t) for t in q_tok], [escape_html(t) for t in k_tok]
    tq, tk = z.shape

    traces = [
        go.Heatmap(
            z=z,
            x=list(range(tk)),
            y=list(range(tq)),
            zmin=0.0,
            zmax=1.0,
            colorscale=ATTENTION_SCALE,
            colorbar=dict(title=dict(text=text.weight)),
            customdata=pair_customdata(q_txt, k_txt),
            hovertemplate=_hover(text),
        )
    ]
    cell = cell_px(max(tq, tk))
    return go.Figure(
        data=traces,
        layout=dict(
            title=dict(text=escape_html(title)),
            font=FONT,
            width=tk * cell + label_px(q_txt) + 200,
            height=tq * cell + label_px(k_txt) + 160,
            xaxis=token_axis(k_txt, text.key if key_label is None else key_label)
            | dict(constrain="domain"),
            yaxis=token_axis(q_txt, text.query if query_label is None else query_label,
                             reverse=True)
            | dict(scaleanchor="x", scaleratio=1, constrain="domain"),
            plot_bgcolor="white",
        ),
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
        A ``make_subplots`` figure with H heatmaps titled "Head 0", "Head 1", ...
        (``text.head``); each uses ``coloraxis="coloraxis"`` and ``layout.coloraxis`` is
        fixed to 0-1, so colours compare across heads. Axes, ticks and hover follow
        :func:`attention_heatmap` (query tick labels only on the first column).

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
    ncols = int(ncols)
    q_txt, k_txt = [escape_html(t) for t in q_tok], [escape_html(t) for t in k_tok]
    n_heads, tq, tk = z.shape
    ncols = min(ncols, n_heads)
    nrows = math.ceil(n_heads / ncols)

    # Lay the panels out by hand and build the figure in one constructor call: Plotly's
    # make_subplots + per-panel update_xaxes walk every axis on each call (4x slower).
    h_gap = min(0.06, 0.9 / max(ncols - 1, 1))
    v_gap = min(0.12, 0.9 / max(nrows - 1, 1))
    width_frac = (1 - h_gap * (ncols - 1)) / ncols
    height_frac = (1 - v_gap * (nrows - 1)) / nrows
    customdata = pair_customdata(q_txt, k_txt)
    hover = _hover(text)
    data, layout, titles = [], {}, []
    for cell in range(nrows * ncols):
        row, col = cell // ncols, cell % ncols
        n = "" if cell == 0 else str(cell + 1)
        x0 = col * (width_frac + h_gap)
        y1 = 1 - row * (height_frac + v_gap)
        x_dom = [max(x0, 0.0), min(x0 + width_frac, 1.0)]  # clip float round-off
        y_dom = [max(y1 - height_frac, 0.0), min(y1, 1.0)]
        if cell >= n_heads:  # hide the empty panels of the last row
            layout[f"xaxis{n}"] = dict(domain=x_dom, anchor=f"y{n}", visible=False)
            layout[f"yaxis{n}"] = dict(domain=y_dom, anchor=f"x{n}", visible=False)
            continue
        data.append(
            dict(
                type="heatmap",
                z=z[cell],
                x=list(range(tk)),
                y=list(range(tq)),
                xaxis=f"x{n}",
                yaxis=f"y{n}",
                coloraxis="coloraxis",
                customdata=customdata,
                hovertemplate=text.head.format(n=cell) + "<br>" + hover,
            )
        )
        x_title = key_label if cell + ncols >= n_heads else ""  # bottom panel of its column
        y_title = query_label if col == 0 else ""
        layout[f"xaxis{n}"] = token_axis(k_txt, x_title) | dict(
            domain=x_dom,
            anchor=f"y{n}",
            constrain="domain",
            showticklabels=cell + ncols >= n_heads,  # key labels under each column only
        )
        layout[f"yaxis{n}"] = token_axis(q_txt, y_title, reverse=True) | dict(
            domain=y_dom,
            anchor=f"x{n}",
            scaleanchor=f"x{n}",
            scaleratio=1,
            constrain="domain",
            showticklabels=col == 0,
        )
        titles.append(
            dict(
                text=text.head.format(n=cell),
                x=x0 + width_frac / 2,
                y=y1,
                xref="paper",
                yref="paper",
                xanchor="center",
                yanchor="bottom",
                showarrow=False,
                font=dict(size=16),
            )
        )

    panel = int(np.clip(max(tq, tk) * 16, 160, 320))
    traces = data
    return go.Figure(
        data=traces,
        layout=layout
        | dict(annotations=titles)
        | dict(
            title=dict(text=escape_html(title)),
            font=FONT,
            coloraxis=dict(
                colorscale=ATTENTION_SCALE,
                cmin=0.0,
                cmax=1.0,
                colorbar=dict(title=dict(text=text.weight)),
            ),
            width=ncols * (panel + 40) + label_px(q_txt) + 160,
            height=nrows * (panel + label_px(k_txt) + 40) + 120,
            plot_bgcolor="white",
        ),
    )
