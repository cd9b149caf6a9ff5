"""The text that the figure builders write themselves, as one argument: ``VizText``.

Every public builder takes ``text: VizText = ENGLISH`` and writes its axis, colour-bar and
legend titles, legend entries, subplot titles and hover templates from it, so a figure is
built in its reader's language instead of being translated afterwards. Titles and labels that
a caller passes in (``title=``, ``query_label=``...) are used as they are.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields

__all__ = ["ENGLISH", "VizText", "check_text"]


@dataclass(frozen=True)
class VizText:
    """Every piece of text the ``viz`` builders write, in one language (English by default).

    Plain labels are shown as they are. ``{n}`` stands for a number (``str.format(n=...)``).
    The ``hover_*`` pieces go into Plotly hover templates as they are: their ``%{...}``
    placeholders are Plotly's (``%{y}`` the row, ``%{x}`` the column), and a translation
    must keep them.

    Axis, colour-bar and legend titles:
        query: the query (row) axis of attention, mask and score heatmaps, when the caller
            names none ("Query").
        key: the key (column) axis of those heatmaps ("Key").
        token: the token axis of the probability bars and of the sequence probabilities,
            and the row axis of ``matrix_heatmap`` when the caller names none ("Token").
        dimension: the column axis of ``matrix_heatmap`` when the caller names none, and the
            legend title of ``positional_curves`` ("Dimension").
        dimension_i: the dimension axis of ``positional_heatmap`` ("Dimension i").
        position: the position axis of the positional-encoding figures ("Position").
        weight: the colour bar of the attention heatmaps ("Weight").
        value: the colour bar of ``positional_heatmap`` and the value axis of
            ``positional_curves`` ("Value").
        probability: the probability axis of the probability bars and of the sequence
            probabilities ("Probability").
        mask: the colour bar of ``mask_heatmap`` ("Mask").
        decoding_step: the x axis of ``beam_tree`` ("Decoding step").
        rank_in_step: the y axis of ``beam_tree`` ("Rank within the step").

    Default figure titles (used when the caller passes ``title=None``):
        positional_title: ``positional_heatmap`` ("Positional encoding").
        positional_curves_title: ``positional_curves`` ("Positional encoding by dimension").

    Mask states:
        allowed_false, blocked_true: the two ticks of the mask's colour bar
            ("allowed (False)", "blocked (True)").
        allowed, blocked: a mask cell's state in its hover ("allowed", "blocked").
        blocked_inf: the legend name of ``score_heatmap``'s layer of blocked cells
            ("blocked (−∞)").

    Beam search:
        selected_hypothesis: the legend name of the highlighted path ("selected hypothesis").
        kept, finished, pruned: a candidate's status, as legend entry and in its hover.

    Numbered names ("{n}" is the number):
        head: the title and hover heading of one head's panel in ``attention_grid``
            ("Head {n}").
        dim: a learned positional dimension in ``positional_curves`` ("dim {n}").
        dim_sin, dim_cos: a sinusoidal one, sine or cosine ("dim {n} (sin)", "dim {n} (cos)").
        formula_pos: after a position in the positional-encoding figures' hovers, the
            formula's own pos, which counts from 0 (" (pos = {n} in the formula)"; positions
            a person reads count from 1, ``viz.convention``).

    Hover pieces:
        hover_query: the query row of a heatmap cell ("Query %{y}"), followed by ": token";
            a builder puts the position a person reads (from 1) where ``%{y}`` stands.
        hover_key: the key column of a heatmap cell ("Key %{x}"), followed by ": token".
        hover_position_y: the position of a ``positional_heatmap`` row ("Position %{y}").
        hover_position_x: the position on a ``positional_curves`` line ("Position %{x}").
        hover_dimension: the dimension of a ``positional_heatmap`` column ("Dimension %{x}").
        hover_row: after a ``matrix_heatmap`` row's label (" (row %{y})").
        hover_column: after a ``matrix_heatmap`` column's label (" (column %{x})").
        hover_weight, hover_value, hover_probability: before a cell's or bar's number
            ("Weight: ", "Value: ", "Probability: ").
        hover_blocked: the hover of a blocked cell in ``score_heatmap``
            ("blocked by the mask: −∞ before the softmax, weight 0").
    """

    query: str = "Query"
    key: str = "Key"
    token: str = "Token"
    dimension: str = "Dimension"
    dimension_i: str = "Dimension i"
    position: str = "Position"
    weight: str = "Weight"
    value: str = "Value"
    probability: str = "Probability"
    mask: str = "Mask"
    decoding_step: str = "Decoding step"
    rank_in_step: str = "Rank within the step"
    positional_title: str = "Positional encoding"
    positional_curves_title: str = "Positional encoding by dimension"
    allowed_false: str = "allowed (False)"
    blocked_true: str = "blocked (True)"
    allowed: str = "allowed"
    blocked: str = "blocked"
    blocked_inf: str = "blocked (−∞)"
    selected_hypothesis: str = "selected hypothesis"
    kept: str = "kept"
    finished: str = "finished"
    pruned: str = "pruned"
    head: str = "Head {n}"
    dim: str = "dim {n}"
    dim_sin: str = "dim {n} (sin)"
    dim_cos: str = "dim {n} (cos)"
    formula_pos: str = " (pos = {n} in the formula)"
    hover_query: str = "Query %{y}"
    hover_key: str = "Key %{x}"
    hover_position_y: str = "Position %{y}"
    hover_position_x: str = "Position %{x}"
    hover_dimension: str = "Dimension %{x}"
    hover_row: str = " (row %{y})"
    hover_column: str = " (column %{x})"
    hover_weight: str = "Weight: "
    hover_value: str = "Value: "
    hover_probability: str = "Probability: "
    hover_blocked: str = "blocked by the mask: −∞ before the softmax, weight 0"

    def __post_init__(self) -> None:
        for f in fields(self):
            if not isinstance(getattr(self, f.name), str):
                raise ValueError(f"VizText.{f.name} must be a str, "
                                 f"got {getattr(self, f.name)!r}.")

    def token_hover(self) -> str:
        """The hover lines naming a heatmap cell's query and key tokens (``customdata``
        columns 0 and 1), each ending in ``<br>``: "Query: you". The axis's ``%{y}`` /
        ``%{x}`` is left out of ``hover_query`` / ``hover_key``: on a token axis Plotly
        writes the tick's label there, and the hover read "Key work: work"."""
        return (f"{bare(self.hover_query)}: %{{customdata[0]}}<br>"
                f"{bare(self.hover_key)}: %{{customdata[1]}}<br>")


def bare(piece: str) -> str:
    """A hover piece without its axis value (``"Key %{x}"`` -> ``"Key"``, ``"键 %{x}"`` ->
    ``"键"``): for a hover that names the token itself. Raises nothing."""
    return re.sub(r"\s*%\{[xy]\}\s*", " ", piece).strip()


ENGLISH = VizText()


def check_text(text: object) -> VizText:
    """``text`` if it is a ``VizText``; otherwise a ``ValueError`` that says what to pass."""
    if not isinstance(text, VizText):
        raise ValueError(f"text must be a viz.VizText (e.g. viz.ENGLISH), got {text!r}.")
    return text
