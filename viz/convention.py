"""The display convention, decided once: how a person reads layer and head numbers, attention
weights and the attention colour scale, in every renderer (the Plotly views, the lesson, the
exports, and through the trace document the in-browser player and the take-home page).

Layers and heads are counted from 1, as the Transformer paper's readers count them
(Vaswani et al. 2017 and the Annotated Transformer say "layer 1"; BertViz's 0 is Python's
index, not a reader's number). Arrays, session state and code keep 0-based indices; only
``layer_number`` / ``head_number`` turn an index into what a person reads.
"""

from __future__ import annotations

from functools import lru_cache

from .colors import ATTENTION_SCALE

__all__ = [
    "FIRST_NUMBER",
    "WEIGHT_FORMAT",
    "display_settings",
    "head_number",
    "layer_number",
]

#: The number a person reads for index 0 of a layer or head axis.
FIRST_NUMBER = 1
#: An attention weight in a hover text: a d3-format (Plotly's ``%{z:.3f}``), three decimals.
WEIGHT_FORMAT = ".3f"


def layer_number(index: int) -> int:
    """The layer number a person reads for the 0-based layer ``index``: ``index + 1``.

    Raises ValueError for a negative index (a mean over layers has no number)."""
    if index < 0:
        raise ValueError(f"a layer index is 0 or more, got {index}")
    return int(index) + FIRST_NUMBER


def head_number(index: int) -> int:
    """The head number a person reads for the 0-based head ``index``: ``index + 1``.

    Raises ValueError for a negative index (the mean over heads has no number)."""
    if index < 0:
        raise ValueError(f"a head index is 0 or more, got {index}")
    return int(index) + FIRST_NUMBER


@lru_cache(maxsize=1)
def display_settings() -> dict:
    """What every renderer of a trace needs to draw it as ``viz`` does, as plain JSON:
    ``first_number`` (the number of layer and head index 0), ``colorscale`` (the attention
    colour scale as [[position in 0..1, "rgb(r, g, b)"], ...] stops, Plotly's own for
    ``ATTENTION_SCALE``), ``zmin`` / ``zmax`` (the attention weights' fixed axis, 0 and 1),
    ``weight_format`` (a hover's d3-format), and Present mode's label rules
    (``viz.fit``): ``present_font_px`` (the smallest label, px), ``line_em`` (a label's
    line in units of its font size: a turned label's column needs that much). The trace
    document carries it (``model.decoding.document``'s ``display``), so the in-browser
    player and the take-home page never keep copies of their own. One dict per process: do
    not change it."""
    import plotly.colors  # noqa: PLC0415  (plotly is viz's dependency, imported on use)

    from .fit import LINE_EM, PRESENT_FONT_PX  # noqa: PLC0415

    stops = plotly.colors.get_colorscale(ATTENTION_SCALE)
    return {"first_number": FIRST_NUMBER,
            "colorscale": [[float(p), c] for p, c in stops],
            "zmin": 0.0, "zmax": 1.0, "weight_format": WEIGHT_FORMAT,
            "present_font_px": PRESENT_FONT_PX, "line_em": LINE_EM}
