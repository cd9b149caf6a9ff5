"""Tick labels that never overlap at any sentence length, and the projector's larger type.

A builder sizes its figure for the tokens it shows (``viz.axes.cell_px``,
``viz.axes.tick_font_size``); with 40 tokens a cell can be smaller than a label is tall.
:func:`fit_layout` reads a built figure's size, margins, axis domains and token ticks and
returns the layout changes (for ``fig.update_layout``) under which no two tick labels of an
axis overlap: every k-th label is shown where they would (the hover still names every
token), and an x axis whose labels are wider than their columns turns them upright (a label's
lines joined into one: Plotly draws a turned label's second line over its first) unless
level labels thinned show more of them (a lone Chinese character stays level). With
``font_px`` (Present mode: ``PRESENT_FONT_PX``) it also enlarges the type, draws the figure
at the column's width and makes its plot as tall as every token's label needs (up to
``MAX_GROW`` times), so that labels are thinned only where the column is too narrow.

The label sizes are estimates made in Python, as the margins are (``viz.axes.label_px``):
Plotly is never asked to measure them (``automargin`` stays off). A tick label's box in
Chromium is ``LINE_EM`` of its font size tall (Noto Sans CJK: ascent + descent = 1.45 em;
a label with pinyin tone marks measured 1.55 em)
and at most ``viz.axes.label_px``'s width scaled to its font size.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import plotly.graph_objects as go

from .axes import FONT, TITLE_LINE_HEIGHT, text_px, title_lines

__all__ = ["LINE_EM", "PAGE_PX", "PRESENT_FONT_PX", "PRESENT_PAGE_PX", "fit_layout"]

LINE_EM = 1.6  # a line of tick text in Chromium, in units of its font size (pinyin marks: 1.55)
BOX_EM = 1.45  # a line's box outside Present mode (Noto Sans CJK's ascent + descent): a label
# with tone marks may reach past it by a pixel, less than a browser test's overlap allows
INK_EM = 1.15  # the ink of a line (Chinese characters fill about 1 em): outside Present mode,
# lines whose ink is apart are all kept; closer ones are thinned to a box apart
GAP_PX = 4  # room between two neighbouring labels
PRESENT_FONT_PX = 16  # Present mode's smallest type (px): readable from the back of a room
PAGE_PX = 1000  # the page's main column (px) assumed for a chart drawn at the column's width
PRESENT_PAGE_PX = 1460  # the same in Present mode before the browser reports it (ui.document):
# the main column of a 1920-px-wide window with the sidebar open, as measured in Chromium
MAX_GROW = 6.0  # Present mode makes a plot at most this many times taller for its labels
_PLOTLY_MARGIN = dict(l=80, r=80, t=100, b=80)  # plotly.js's defaults
_PLOTLY_HEIGHT = 450
_AXIS = re.compile(r"^[xy]axis\d*$")
_BREAK = re.compile(r"<br\s*/?>")


def _label_size(label: str, font: float) -> tuple[float, int]:
    """(width in px of the widest line, number of lines) of an escaped tick label at
    ``font`` px (``viz.axes.text_px``'s 8 px a character and 14 px a wide one at 13 px)."""
    lines = _BREAK.split(label)
    widest = max(text_px(line, 8, 14) for line in lines)
    return widest * font / FONT["size"], len(lines)


def _units(axes: dict[str, dict], plot_w: float, plot_h: float, tie: bool = True
           ) -> dict[str, float]:
    """Pixels per data unit of each token axis (``tickvals`` and ``ticktext``) in a plot area of
    ``plot_w`` x ``plot_h`` px: its domain's share of the area over its range (``range``, or
    half a unit past its first and last tick, as a heatmap's cells reach); with ``tie``, an
    axis tied to another by ``scaleanchor`` (square cells) gets the smaller of the two."""
    units = {}
    for name, axis in axes.items():
        vals, text = axis.get("tickvals"), axis.get("ticktext")
        if vals is None or text is None or len(vals) == 0 or len(text) == 0:
            continue
        lo, hi = axis.get("range") or (min(vals) - 0.5, max(vals) + 0.5)
        d0, d1 = axis.get("domain") or (0.0, 1.0)
        length = (d1 - d0) * (plot_w if name.startswith("x") else plot_h)
        units[name] = length / max(abs(hi - lo), 1e-9)
    for name, partner in _ties(axes) if tie else ():
        if name in units and partner in units:
            units[name] = units[partner] = min(units[name], units[partner])
    return units


def _ties(axes: dict[str, dict]) -> list[tuple[str, str]]:
    """(axis, the axis it is tied to by ``scaleanchor``) pairs, by layout names."""
    pairs = []
    for name, axis in axes.items():
        other = axis.get("scaleanchor")
        if other:
            pairs.append((name, other.replace("x", "xaxis").replace("y", "yaxis")))
    return pairs


def _step(axis: dict) -> float:
    """Data units between neighbouring ticks of a token axis (1 for consecutive tokens)."""
    ordered = sorted(axis["tickvals"])
    return min((b - a for a, b in zip(ordered, ordered[1:], strict=False)), default=1) or 1


def _x_room(text, font: float) -> float:
    """Pixels between neighbouring ticks that an x axis's labels ``text`` at ``font`` px
    need level: the widest label's widest line and a gap."""
    return max((_label_size(t, font)[0] for t in text), default=0.0) + GAP_PX


def _need_px(name: str, axis: dict, font: float, line: float) -> float:
    """Pixels between neighbouring ticks that token axis ``name``'s labels at ``font`` px need
    in Present mode: a line (``line`` px) on a y axis; on an x axis the widest label side by
    side or, turned upright with its lines joined (``_fit_ticks``), one line."""
    return min(_x_room(axis["ticktext"], font), line) if name.startswith("x") else line


def _taller(axes: dict[str, dict], plot_w: float, plot_h: float, fonts: dict[str, float]
            ) -> float:
    """How many times taller (at least 1, at most ``MAX_GROW``) a plot area of ``plot_w`` x
    ``plot_h`` px must be for every token label of ``axes`` to have its room
    (``_need_px``): each y axis's rows a line apart, and an x axis tied to a y axis by
    ``scaleanchor`` (square cells) as wide as its labels need where its width allows."""
    free = _units(axes, plot_w, plot_h, tie=False)
    need = {n: _need_px(n, axes[n], fonts[n], LINE_EM * fonts[n]) / _step(axes[n]) for n in free}
    factor = max([need[n] / free[n] for n in free if n.startswith("y")], default=1.0)
    for a, b in _ties(axes):
        if a in free and b in free and a[0] != b[0]:
            x, y = (a, b) if a.startswith("x") else (b, a)
            factor = max(factor, min(need[x], free[x]) / free[y])
    return min(max(factor, 1.0), MAX_GROW)


def _fit_ticks(name: str, axis: dict, unit: float, font: float, *, present: bool) -> dict:
    """The changes to token axis ``name`` (ticks ``tickvals`` / ``ticktext``, ``unit`` px per
    data unit) under which no two of its labels at ``font`` px overlap.

    A label that has no room is left out (every k-th is shown); outside Present mode, lines
    (y labels, upright x labels) closer than their boxes but not their ink are all kept, and
    closer ones thinned to a box (``BOX_EM``) apart. An x axis whose labels do
    not fit side by side turns them upright with their lines joined ("学 xué": a column then
    needs one line's width, not one per line, and Plotly draws a turned label's lines over
    one another), so that a projector's column labels every one of 40 tokens (at 16 px,
    26 px a token); it stays level where level labels, thinned, show at least as many (a
    lone Chinese character is about as wide as a line is tall). Its angle is always set:
    Plotly's own turning measures every label and turns a two-line label into a blot."""
    vals, text = list(axis["tickvals"]), list(axis["ticktext"])
    spacing = unit * _step(axis)  # px between neighbouring ticks
    line = (LINE_EM if present else BOX_EM) * font
    changes: dict = {"tickfont": dict(size=font)} if present else {}
    need = line
    if name.startswith("x"):
        level = _x_room(text, font)
        need, angle = (level, 0) if level <= max(spacing, line + GAP_PX) else (line, -90)
        changes["tickangle"] = angle
        if angle and any(_BREAK.search(t) for t in text):
            text = changes["ticktext"] = [_BREAK.sub(" ", t) for t in text]
    # exactly the room fits, and half a pixel less (a plot's size is whole pixels)
    every = max(1, math.ceil((need - 0.5) / max(spacing, 1e-9) - 1e-6))
    if not present and need == line and spacing >= INK_EM * font:
        every = 1  # lines whose boxes meet but whose ink does not: every label kept
    if every > 1:
        changes |= dict(tickvals=vals[::every], ticktext=text[::every])
    return changes


def fit_layout(fig: go.Figure, *, font_px: int | None = None, page_px: int = PAGE_PX) -> dict:
    """Layout changes that keep ``fig``'s token tick labels apart, and with ``font_px`` make
    its type at least that large.

    Args:
        fig: a figure from a ``viz`` builder (token axes from ``viz.axes.token_axis``:
            ``tickvals`` and ``ticktext`` arrays); it is not changed.
        font_px: the smallest font size (px) of every tick label and of the figure's text
            (Present mode, ``PRESENT_FONT_PX``); None: the sizes as built. The margins and
            the annotations' fonts and offsets grow by ``font_px`` / the figure's font size
            (at least 1); the figure takes the column's width (``width`` None) and its plot
            grows taller until each token axis's labels have their room (``_taller``).
        page_px: the width (px) of the page's column: the most a figure may take, and what
            a figure drawn at the column's width is assumed to get.

    Returns:
        A dict for ``fig.update_layout``: per token axis that needs it ``tickvals`` /
        ``ticktext`` (every k-th tick; in Present mode labels joined on one line when turned),
        ``tickangle`` (0 when the labels fit side by side, else -90) and ``tickfont``; with
        ``font_px`` also ``font``, ``width`` (None: the column's), ``height``, ``margin``,
        ``annotations`` and, for a title on several lines, the ``title`` on as few as the
        column's width needs. Empty when nothing changes.

    Raises:
        ValueError: ``font_px`` or ``page_px`` not a positive number.
    """
    for value, what in ((font_px, "font_px"), (page_px, "page_px")):
        if value is not None and not value > 0:
            raise ValueError(f"{what} must be a positive number of pixels, got {value!r}.")
    built = _Built.read(fig.layout.to_plotly_json(), font_px)
    plot_w, plot_h = _plot_area(built, page_px)
    units = _units(built.axes, plot_w, plot_h)
    changes: dict = {}
    for name, axis in built.axes.items():
        if name in units:
            axis_changes = _fit_ticks(name, axis, units[name], built.fonts[name],
                                      present=bool(font_px))
            if axis_changes:
                changes[name] = axis_changes
        elif font_px:  # a numeric axis: Plotly spaces its ticks itself
            changes[name] = {"tickfont": dict(size=built.fonts[name])}
    if font_px:
        changes |= _present_layout(built, plot_w, plot_h, page_px)
    return changes


@dataclass(frozen=True)
class _Built:
    """What :func:`fit_layout` reads from a built figure's layout ``lay``, for ``font_px``."""

    lay: dict
    font_px: int | None
    base: float  # the figure's font size
    scale: float  # font_px / base, at least 1 (1 without font_px)
    margin: dict  # as built (plotly.js's defaults where unset)
    grown: dict  # margin, scale times as large
    axes: dict[str, dict]  # every axis by its layout name
    fonts: dict[str, float]  # each axis's tick font size (at least font_px)

    @classmethod
    def read(cls, lay: dict, font_px: int | None) -> _Built:
        base = (lay.get("font") or {}).get("size") or FONT["size"]
        scale = max(1.0, font_px / base) if font_px else 1.0
        margin = {k: (lay.get("margin") or {}).get(k, v) for k, v in _PLOTLY_MARGIN.items()}
        axes = {k: v for k, v in lay.items() if _AXIS.match(k)}
        fonts = {name: max((axis.get("tickfont") or {}).get("size") or base, font_px or 0)
                 for name, axis in axes.items()}
        return cls(lay, font_px, base, scale, margin,
                   {k: round(v * scale) for k, v in margin.items()}, axes, fonts)

    @property
    def square(self) -> bool:
        """Whether an axis is tied to another by ``scaleanchor`` (square cells)."""
        return any(a.get("scaleanchor") for a in self.axes.values())


def _plot_area(built: _Built, page_px: int) -> tuple[float, float]:
    """(width, height) in px of the plot area the figure is drawn with: its own width at
    most ``page_px`` (square cells shrink with it) or, without a width or in Present mode,
    the column's; in Present mode as tall as its labels need (``_taller``)."""
    lay, margin, grown, axes, fonts = (built.lay, built.margin, built.grown, built.axes,
                                       built.fonts)
    width, height = lay.get("width"), lay.get("height") or _PLOTLY_HEIGHT
    if width and not built.font_px:
        sides = margin["l"] + margin["r"]
        plot_w = max(min(width, page_px), sides + 40) - sides
        grow = plot_w / max(width - sides, 1)
        plot_h = (height - margin["t"] - margin["b"]) * (grow if built.square else 1.0)
    else:  # the column's width (Present mode: every figure), as tall as its labels need
        plot_w = page_px - grown["l"] - grown["r"]
        plot_h = (height - margin["t"] - margin["b"]) * built.scale
        if built.font_px:
            plot_h *= _taller(axes, plot_w, plot_h, fonts)
    return plot_w, plot_h


def _present_layout(built: _Built, plot_w: float, plot_h: float, page_px: int) -> dict:
    """Present mode's changes to the figure as a whole: a title broken for a laptop on as
    few lines as the column needs, the font, the grown margins, the width (None: the
    column's) and height that hold the plot area, and the annotations grown."""
    lay, grown, scale = built.lay, dict(built.grown), built.scale
    changes: dict = {}
    title = (lay.get("title") or {}).get("text") or ""
    lines = title.count("<br>") + 1  # viz.axes.figure broke a long title for a laptop
    if lines > 1:  # the column's width: as few lines as its larger type needs there
        fitted = title_lines(title.replace("<br>", ""), round(page_px / scale))
        grown["t"] -= round(TITLE_LINE_HEIGHT * scale * (lines - len(fitted)))
        changes["title"] = dict(lay["title"], text="<br>".join(fitted))
    changes |= dict(font=dict(size=max(built.base, built.font_px)), margin=grown, width=None,
                    height=math.ceil(plot_h + grown["t"] + grown["b"]))
    changes["annotations"] = [_grown_note(note, scale) for note in lay.get("annotations", [])]
    return changes


def _grown_note(note: dict, scale: float) -> dict:
    """An annotation with its font and its offsets (``xshift``, ``yshift``: the axis titles
    past their tick labels) ``scale`` times as large."""
    note = dict(note)
    size = (note.get("font") or {}).get("size")
    if size:
        note["font"] = dict(note["font"], size=round(size * scale))
    for shift in ("xshift", "yshift"):
        if note.get(shift):
            note[shift] = note[shift] * scale
    return note
