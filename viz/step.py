"""One decoding step at a glance: the next-token probabilities beside this step's attention
rows for every head of one layer."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from .axes import (
    axis_title,
    colorbar,
    figure,
    margins,
    pair_customdata,
    side_by_side,
    token_axis,
)
from .colors import ATTENTION_SCALE
from .convention import WEIGHT_FORMAT, position_numbers
from .decoding import bars_panel
from .text import ENGLISH, VizText, check_text
from .validate import check_matrix, check_px, check_range, check_tokens, escape_html

__all__ = ["step_overview"]

BARS_SHARE = 0.3  # of the width, for the probability bars; the heatmaps share the rest
ROW_PX = 20  # a bar's or a head's row: a 13-px label's box (viz.fit.BOX_EM) and a pixel
PANEL_TITLE_LINE_PX = 20  # a line of a panel title (14 px type): the source block's goes up one


def step_overview(
    top_tokens: Sequence[str], top_probs: np.ndarray, chosen: int | None,
    cross_rows: np.ndarray, *, source_tokens: Sequence[str], self_rows: np.ndarray,
    decoder_tokens: Sequence[str], head_labels: Sequence[str],
    titles: tuple[str, str, str] = ("", "", ""), axis_titles: tuple[str, str] | None = None,
    title: str = "", width: int | None = None, height: int | None = None,
    text: VizText = ENGLISH,
) -> go.Figure:
    """Step k of decoding in one figure: the top-K next-token probabilities
    (:func:`viz.probability_bars`) beside one heatmap, a row per head, of the cross-attention
    of query k over the source and, after a blank column, its decoder self-attention over
    the decoder input so far, on one 0-1 colour scale.

    One figure, and the two attention blocks as one trace on one pair of axes: the browser
    redraws each figure and each pair of axes at a cost, and a step click redraws this one
    (benchmarks/clicks.py).

    Args:
        top_tokens, top_probs, chosen: K candidates, their (K,) probabilities and the index
            of the chosen one (None: none), as :func:`viz.probability_bars`.
        cross_rows: (H, S) cross-attention weights of this step's query, one row per head
            (S may be source words rather than tokens).
        source_tokens: S column labels of ``cross_rows``.
        self_rows: (H, k) decoder self-attention weights of this step's query over the
            decoder input so far.
        decoder_tokens: k column labels of ``self_rows``.
        head_labels: H row labels ("head 0", ...).
        titles: the titles over the bars, the cross-attention block and the self-attention
            block (shown literally; HTML is escaped).
        axis_titles: the source keys and the decoder keys (the key axis is titled "source
            keys | decoder keys"); None: ``text.key`` twice. The head axis and the bars'
            token axis have no title: their tick labels and the panel titles say what they
            are, and each title is a text Plotly measures on every step click.
        title: the figure's title (escaped).
        width, height: the figure's size in px; None: as wide as the page's column, as tall as
            the taller panel.
        text: the figure's own labels.

    Returns:
        A figure with one ``go.Bar`` (axes x, y) and one float32 ``go.Heatmap`` (x2, y2)
        whose z is ``[cross_rows | NaN | self_rows]`` (H, S + 1 + k), x ticks at columns
        0..S-1 and S+1..S+k showing the escaped key tokens, y ticks the head labels (first
        head on top); a cell's hover names its head, key (position and token) and weight.

    Raises:
        ValueError: as :func:`viz.probability_bars` for the candidates; if either block is
            not a finite (H, ·) array in [0, 1] matching its labels; if ``width`` or
            ``height`` is not a positive int or None.
    """
    text = check_text(text)
    width, height = check_px(width, "width"), check_px(height, "height")
    src_key, dec_key = axis_titles or (text.key, text.key)
    bars = _step_bars(top_tokens, top_probs, chosen, title=titles[0], text=text)
    heads, blocks = _check_blocks(head_labels, (cross_rows, source_tokens),
                                  (self_rows, decoder_tokens))
    rows = _rows_panel(heads, blocks, title=titles[1], keys_title=f"{src_key}  |  {dec_key}",
                       text=text)
    sizes = [len(keys) for _, keys in blocks]
    return figure(**_joined(bars, rows, sizes, title=title, self_title=titles[2],
                            size=(width, height), n_rows=max(len(top_tokens), len(heads))))


def _step_bars(top_tokens: Sequence[str], top_probs: np.ndarray, chosen: int | None, *,
               title: str, text: VizText) -> dict:
    """The candidates' bars (:func:`viz.decoding.bars_panel`), with room right of them for
    the label of a bar near 100% and no token axis title (see ``step_overview``'s
    ``axis_titles``)."""
    bars = bars_panel(top_tokens, top_probs, chosen, title=title, text=text)
    # Room right of the bars for the label of a bar near 100%, before the heads' labels.
    bars["layout"]["xaxis"] |= dict(range=[0, 1.3], tickvals=[0, 0.5, 1])
    bars["layout"]["annotations"] = []  # the token axis's title (see axis_titles)
    return bars


def _check_blocks(head_labels: Sequence[str], *blocks: tuple[np.ndarray, Sequence[str]]
                  ) -> tuple[list[str], list[tuple[np.ndarray, list[str]]]]:
    """``(heads, [(z, keys), ...])``: the head labels and each (rows, key tokens) block
    (cross-attention, then self-attention) checked as a finite float32 (H, ·) array in
    [0, 1] matching its labels, its keys escaped. Raises ``ValueError`` otherwise."""
    heads = check_tokens(head_labels, "head_labels")
    checked = []
    for (rows, keys), name in zip(blocks, ("cross_rows", "self_rows"), strict=True):
        keys = check_tokens(keys, f"{name} keys")
        z = check_matrix(rows, heads, keys, name, row_name="head_labels", col_name="keys")
        check_range(z, 0.0, 1.0, name, hint="Pass softmax attention weights.")
        checked.append((z, [escape_html(t) for t in keys]))
    return heads, checked


def _rows_panel(heads: list[str], blocks: list[tuple[np.ndarray, list[str]]], *, title: str,
                keys_title: str, text: VizText) -> dict:
    """The attention blocks as one heatmap panel for ``side_by_side``: z ``[cross | NaN |
    self]`` (H, S + 1 + k), the key tokens as x ticks (none on the blank column), the
    heads as y ticks, a hover naming head, key (its position, from 1, and token) and
    weight."""
    (cross, src), (mine, dec) = blocks
    S, n_heads = len(src), len(heads)
    z = np.hstack([cross, np.full((n_heads, 1), np.nan, np.float32), mine])  # (H, S+1+k)
    keys = [*src, "", *dec]
    positions = [*position_numbers(S), 0, *position_numbers(len(dec))]  # read from 1; 0: gap
    head_txt = [escape_html(h) for h in heads]
    cells = pair_customdata(head_txt, keys, np.broadcast_to(positions, z.shape))
    hover = (f"%{{customdata[0]}}<br>{text.hover_key.replace('%{x}', '%{customdata[2]}')}: "
             f"%{{customdata[1]}}<br>{text.hover_weight}%{{z:{WEIGHT_FORMAT}}}<extra></extra>")
    tickvals = [*range(S), *range(S + 1, S + 1 + len(dec))]
    return dict(  # a panel for side_by_side, like bars
        data=[dict(type="heatmap", z=z, x=list(range(z.shape[1])), y=list(range(n_heads)),
                   zmin=0.0, zmax=1.0, colorscale=ATTENTION_SCALE,
                   colorbar=colorbar(text.weight), customdata=cells, hovertemplate=hover,
                   hoverongaps=False)],
        layout=dict(
            title=dict(text=escape_html(title)),
            xaxis=token_axis([*src, *dec]) | dict(tickvals=tickvals),
            yaxis=token_axis(head_txt, reverse=True),
            annotations=[axis_title(keys_title, keys, "x")],
            margin=margins(head_txt, keys, colorbar=True),
        ),
    )


def _joined(bars: dict, rows: dict, sizes: list[int], *, title: str, self_title: str,
            size: tuple[int | None, int | None], n_rows: int) -> dict:
    """The bars and the attention blocks side by side (``side_by_side``), the blocks sized
    by their columns (``sizes``: S source keys, k decoder keys), with the self-attention
    block's own title (``self_title``, escaped) over its columns and the cross-attention
    block's over its own, a line higher; the figure ``size`` (width, height) px (None: the
    column's width, the taller panel's height), at least tall enough for ``n_rows`` rows (bars
    or heads) of ``ROW_PX`` each: a label's box apart."""
    S, n_dec = sizes
    n_cols = S + 1 + n_dec
    columns = max(S, 4) + 1 + max(n_dec, 8)  # the self block gets room for its labels
    parts = side_by_side([bars, rows], [columns * BARS_SHARE / (1 - BARS_SHARE), columns],
                         title=title, gap=0.09)
    # The self-attention block's own title, over its columns (paper x of the heatmap's axis);
    # the source block's a line higher, so that two long titles over narrow blocks never
    # run into each other (or into the bars' title) at any width the figure is drawn at
    x0, x1 = parts["layout"]["xaxis2"]["domain"]
    centre = x0 + (x1 - x0) * (S + 1 + n_dec / 2) / n_cols
    cross_title = parts["layout"]["annotations"][1]
    parts["layout"]["annotations"].append(
        cross_title | dict(text=escape_html(self_title), x=centre))
    cross_title |= dict(x=x0 + (x1 - x0) * (S / 2) / n_cols,
                        yshift=cross_title["yshift"] + PANEL_TITLE_LINE_PX)
    width, height = size
    margin = parts["layout"]["margin"]
    least = margin["t"] + margin["b"] + n_rows * ROW_PX
    parts["layout"] |= {"width": width,
                        "height": max(height or parts["layout"]["height"] or 0, least)}
    return parts
