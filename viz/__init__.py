"""Pure Plotly figure builders for the attention-visualisation app.

Every builder takes numpy arrays and token lists and returns a ``plotly.graph_objects.Figure``.
Nothing here imports torch or streamlit or reads global state; inputs are validated with a
``ValueError`` that says what to fix, and every token is HTML-escaped before Plotly sees it.

Shape letters: B batch, S source length, T target length, L layers, H heads, D d_model,
V vocabulary. Attention is (L, H, Tq, Tk) or a slice of it (rows queries, columns keys);
masks are boolean with True = blocked.

Every figure is made by ``viz.axes.figure``: no template, a fixed ``layout.datarevision`` and
1-D arrays as lists, so that the browser can draw it a second time at almost no cost. The
heatmaps on token axes share one layout, ``viz.panel.heatmap_panel``, and every colour and
colour scale is defined once, by what it means, in ``viz.colors``.

The text a builder writes itself (axis, colour-bar and legend titles, legend entries, subplot
titles, hover templates) comes from its keyword argument ``text``, a ``VizText``: English
(``ENGLISH``) unless the caller passes another language's.
"""

from .attention import attention_grid, attention_heatmap
from .bars import grouped_bars
from .decoding import beam_path, beam_tree, probability_bars, sequence_probabilities
from .heads import head_grid, probability_change, pruning_plot
from .internals import matrix_heatmap, score_heatmap
from .lines import attention_lines
from .masks import mask_heatmap
from .positional import positional_curves, positional_heatmap, rope_curves
from .step import step_overview
from .text import ENGLISH, VizText
from .validate import (
    check_heads,
    check_index,
    check_mask,
    check_matrix,
    check_range,
    check_tokens,
    check_vector,
    escape_html,
    escape_tokens,
)

__all__ = [
    "ENGLISH",
    "VizText",
    "attention_grid",
    "attention_heatmap",
    "attention_lines",
    "beam_path",
    "beam_tree",
    "check_heads",
    "check_index",
    "check_mask",
    "check_matrix",
    "check_range",
    "check_tokens",
    "check_vector",
    "escape_html",
    "escape_tokens",
    "grouped_bars",
    "head_grid",
    "mask_heatmap",
    "matrix_heatmap",
    "positional_curves",
    "positional_heatmap",
    "rope_curves",
    "probability_bars",
    "probability_change",
    "pruning_plot",
    "score_heatmap",
    "sequence_probabilities",
    "step_overview",
]
