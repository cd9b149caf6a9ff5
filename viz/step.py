"""One decoding step at a glance: the next-token probabilities beside this step's attention
rows for every head of one layer."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from .attention import attention_heatmap
from .axes import side_by_side
from .decoding import probability_bars
from .text import ENGLISH, VizText, check_text

__all__ = ["step_overview"]

BARS_SHARE = 0.3  # of the width, for the probability bars; the heatmaps share the rest


def step_overview(
    top_tokens: Sequence[str],
    top_probs: np.ndarray,
    chosen: int | None,
    cross_rows: np.ndarray,
    source_tokens: Sequence[str],
    self_rows: np.ndarray,
    decoder_tokens: Sequence[str],
    head_labels: Sequence[str],
    *,
    titles: tuple[str, str, str] = ("", "", ""),
    axis_titles: tuple[str, str, str] | None = None,
    title: str = "",
    text: VizText = ENGLISH,
) -> go.Figure:
    """Step k of decoding in one figure of three panels: the top-K next-token probabilities
    (:func:`viz.probability_bars`), the cross-attention of query k over the source and the
    decoder self-attention of query k over the decoder input so far, one row per head
    (:func:`viz.attention_heatmap`), sharing one 0-1 colour bar.

    One figure instead of three: the browser redraws a figure at a fixed cost on top of its
    content, and a step click redraws all three (benchmarks/clicks.py).

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
        titles: the three panels' titles (shown literally; HTML is escaped).
        axis_titles: the head axis and the two key axes; None: ``text.query`` and
            ``text.key``.
        title: the figure's title (escaped).
        text: the figure's own labels.

    Returns:
        A figure whose traces are one ``go.Bar`` (axes x, y) and two ``go.Heatmap``
        (x2/y2, x3/y3; only the last with a colour bar), each as its builder makes it.

    Raises:
        ValueError: as :func:`viz.probability_bars` and :func:`viz.attention_heatmap` for
            their inputs, or if the two heatmaps do not have one row per head label.
    """
    text = check_text(text)
    heads, src_key, dec_key = axis_titles or (text.query, text.key, text.key)
    bars = probability_bars(top_tokens, top_probs, chosen, title=titles[0], text=text)
    cross = attention_heatmap(cross_rows, head_labels, source_tokens, title=titles[1],
                              query_label=heads, key_label=src_key, text=text)
    mine = attention_heatmap(self_rows, head_labels, decoder_tokens, title=titles[2],
                             query_label="", key_label=dec_key, text=text)
    mine.update_yaxes(showticklabels=False, ticks="")  # the same heads as the middle panel
    # Room right of the bars for the label of a bar near 100%, before the next panel's rows.
    bars.update_xaxes(range=[0, 1.3], tickvals=[0, 0.5, 1])
    columns = max(len(source_tokens), 4), max(len(decoder_tokens), 8)  # room for labels
    widths = [sum(columns) * BARS_SHARE / (1 - BARS_SHARE), *columns]  # heatmaps by columns
    # Cells fill the panels' height: with square cells a long sentence left every head's row
    # a few pixels high.
    return go.Figure(**side_by_side([bars, cross, mine], widths, title=title, gap=0.09,
                                    square=False))
