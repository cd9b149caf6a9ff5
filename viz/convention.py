"""The display convention, decided once: how a person reads layer, head and position numbers,
attention weights and the attention colour scale, in every renderer (the Plotly views, the
lesson, the tables and exports, and through the trace document the in-browser player and the
take-home page).

Every count a person reads starts at 1: layers and heads, as the Transformer paper's readers
count them (Vaswani et al. 2017 and the Annotated Transformer say "layer 1"; BertViz's 0 is
Python's index, not a reader's number), steps, and token positions (the first token, ``<s>``
or the sentence's first, is position 1). Only the positional-encoding formula keeps its own
``pos`` (Vaswani et al. 2017, section 3.5: PE(pos, 2i) = sin(pos / 10000^(2i/d_model))),
which starts at 0: position p is pos = p - 1 (``formula_pos``), said beside it wherever the
formula's pos is shown. Arrays, session state, documents and code keep 0-based indices; only
``layer_number`` / ``head_number`` / ``position_number`` turn an index into what a person
reads (the interface states the rule once, in its legend: ``home_numbering`` in
``ui/strings.toml``).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from .colors import ATTENTION_SCALE

__all__ = [
    "FIRST_NUMBER",
    "WEIGHT_FORMAT",
    "display_settings",
    "formula_pos",
    "head_number",
    "layer_number",
    "position_label",
    "position_number",
    "position_numbers",
    "rank_number",
    "step_number",
]

#: The number a person reads for index 0 of a layer, head, token position or rank.
FIRST_NUMBER = 1
#: An attention weight in a hover text: a d3-format (Plotly's ``%{z:.3f}``), three decimals.
WEIGHT_FORMAT = ".3f"


def _read(index: int, what: str) -> int:
    """What a person reads for the 0-based ``index`` of a ``what`` ("layer", ...):
    ``index + FIRST_NUMBER``. Raises ValueError for a negative index."""
    if index < 0:
        raise ValueError(f"a {what} index is 0 or more, got {index}")
    return int(index) + FIRST_NUMBER


def layer_number(index: int) -> int:
    """The layer number a person reads for the 0-based layer ``index``: ``index + 1``.

    Raises ValueError for a negative index (a mean over layers has no number)."""
    return _read(index, "layer")


def head_number(index: int) -> int:
    """The head number a person reads for the 0-based head ``index``: ``index + 1``.

    Raises ValueError for a negative index (the mean over heads has no number)."""
    return _read(index, "head")


def position_number(index: int) -> int:
    """The token position a person reads for the 0-based token ``index``: ``index + 1``
    (the first token is position 1).

    Raises ValueError for a negative index."""
    return _read(index, "token")


def step_number(index: int) -> int:
    """The decoding step a person reads for the 0-based step ``index`` (a row of a step's
    attention, ``DecodeTrace.steps[index]``): ``index + 1`` (the step that writes the first
    token is step 1).

    Raises ValueError for a negative index."""
    return _read(index, "step")


def rank_number(index: int) -> int:
    """The rank a person reads for the 0-based ``index`` of a ranked candidate (a beam
    search's candidates within a step, best first): ``index + 1`` (the best is rank 1).

    Raises ValueError for a negative index."""
    return _read(index, "rank")


def position_numbers(n: int) -> np.ndarray:
    """(n,) int64: the positions a person reads for token indices 0..n-1 (1..n).

    Raises ValueError for a negative ``n``."""
    if n < 0:
        raise ValueError(f"a token count is 0 or more, got {n}")
    return np.arange(n, dtype=np.int64) + FIRST_NUMBER


def position_label(index: int, label: str) -> str:
    """A token's label with the position a person reads: ``"1: <s>"`` for index 0 (the
    tick, table-row and picker label of a token whose label may repeat). Raises ValueError
    for a negative index."""
    return f"{position_number(index)}: {label}"


def formula_pos(index: int) -> int:
    """The positional-encoding formula's ``pos`` of the 0-based token ``index``: the index
    itself (PE(pos, 2i) = sin(pos / 10000^(2i/d_model)), Vaswani et al. 2017, 3.5), so
    position p (``position_number``) is pos = p - 1.

    Raises ValueError for a negative index."""
    _read(index, "token")  # a negative index raises
    return int(index)


@lru_cache(maxsize=1)
def display_settings() -> dict:
    """What every renderer of a trace needs to draw it as ``viz`` does, as plain JSON:
    ``first_number`` (the number of layer, head and position index 0), ``colorscale`` (the
    attention colour scale as [[position in 0..1, "rgb(r, g, b)"], ...] stops, Plotly's own for
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
