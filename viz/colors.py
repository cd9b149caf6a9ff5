"""The figures' colours, one per meaning, defined here once: every builder imports its
colours from this module (``tests/test_viz_colors.py`` checks that no other viz module writes
a colour of its own), so that "blocked", "chosen" or "positive" look the same in every figure.

A scale is named by what its values mean, not by the figure that first used it.
"""

from __future__ import annotations

__all__ = [
    "AFTER_COLOR",
    "ALLOWED_COLOR",
    "ATTENTION_SCALE",
    "BAR_COLOR",
    "BEAM_COLORS",
    "BEFORE_COLOR",
    "BLOCKED_COLOR",
    "BLOCKED_TEXT_COLOR",
    "EDGE_COLOR",
    "HEAD_COLORS",
    "HIGHLIGHT_COLOR",
    "SEQUENTIAL_SCALE",
    "SIGNED_SCALE",
    "START_COLOR",
]

# --- colour scales (heatmaps) ------------------------------------------------------------

#: Attention weights and other probabilities on a fixed 0..1 axis: white (0) to dark blue (1).
ATTENTION_SCALE = "Blues"
#: Signed values centred on 0 (Q, K, V, embeddings, positional encodings, raw scores), as
#: trace properties: blue negative, white 0, red positive. Callers add zmid=0 and a range
#: symmetric about 0.
SIGNED_SCALE = dict(colorscale="RdBu", reversescale=True)
#: Values of one sign in any units, low to high (similarities, a statistic per head).
SEQUENTIAL_SCALE = "Viridis"

# --- masks ---------------------------------------------------------------------------------

#: A key the query may attend to (mask False).
ALLOWED_COLOR = "#deebf7"
#: A key the mask blocks (mask True; -inf before the softmax, weight 0): in the mask figure
#: and over a score heatmap's blocked cells alike.
BLOCKED_COLOR = "#404040"
#: Text written on a ``BLOCKED_COLOR`` cell ("−∞").
BLOCKED_TEXT_COLOR = "white"

# --- marks and bars ------------------------------------------------------------------------

#: What the reader should look at: the chosen token's bar, outlined cells (gold alignment
#: links, the best head of a layer), the selected beam hypothesis.
HIGHLIGHT_COLOR = "#d62728"
#: A probability bar that is not highlighted.
BAR_COLOR = "#9ecae1"
#: The model as it is, and after a change (heads switched off): the two bars of a step.
BEFORE_COLOR, AFTER_COLOR = BAR_COLOR, "#e6550d"

#: Series side by side (``viz.grouped_bars``): the residual stream in grey, then what each
#: sublayer adds (attention, feed-forward), then any further series.
SERIES_COLORS = ("#bdbdbd", "#3182bd", "#e6550d", "#31a354", "#756bb1")
#: The band behind the group a reader should look at (``viz.grouped_bars``'s ``mark``).
MARK_BAND_COLOR = "rgba(255, 200, 0, 0.18)"

# --- beam search ---------------------------------------------------------------------------

#: A beam-search candidate by status.
BEAM_COLORS = {"kept": "#3182bd", "finished": "#31a354", "pruned": "#bdbdbd"}
#: The lines from each candidate to its parent.
EDGE_COLOR = "#d9d9d9"
#: The start token ``<s>`` that every hypothesis grows from.
START_COLOR = "#636363"

# --- heads ---------------------------------------------------------------------------------

#: One colour per head (Plotly's D3 palette, as BertViz uses), repeated past ten heads.
HEAD_COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
               "#7f7f7f", "#bcbd22", "#17becf")
