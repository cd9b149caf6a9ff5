"""Tick labels that never overlap at any sentence length, and the projector's larger type.

A builder sizes its figure for the tokens it shows (``viz.axes.cell_px``,
``viz.axes.tick_font_size``); with 40 tokens a cell can be smaller than a label is tall.
:func:`fit_layout` reads a built figure's size, margins, axis domains and token ticks and
returns the layout changes (for ``fig.update_layout``) under which no two tick labels of an
axis overlap: every k-th label is shown where they would (the hover still names every
token), and an x axis whose labels are wider than their columns turns them upright. With
``font_px`` (Present mode: ``PRESENT_FONT_PX``) it also enlarges the type and the figure.

The label sizes are estimates made in Python, as the margins are (``viz.axes.label_px``):
Plotly is never asked to measure them (``automargin`` stays off). A tick label's box in
Chromium is ``LINE_EM`` of its font size tall (Noto Sans CJK: ascent + descent = 1.45 em)
and at most ``viz.axes.label_px``'s width scaled to its font size.
"""

from __future__ import annotations

import math
import re

import plotly.graph_objects as go

from .axes import FONT, text_px

__all__ = ["LINE_EM", "PAGE_PX", "PRESENT_FONT_PX", "fit_layout"]

LINE_EM = 1.45  # a line of tick text in Chromium, in units of its font size
INK_EM = 1.15  # the ink of a line (Chinese characters fill about 1 em): outside Present mode,
# labels closer than their boxes but not their ink are left as they are
GAP_PX = 4  # room between two neighbouring labels
PRESENT_FONT_PX = 16  # Present mode's smallest type (px): readable from the back of a room
PAGE_PX = 1000  # the page's main column (px) assumed for a chart drawn at the column's width
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


def _units(axes: dict[str, dict], plot_w: float, plot_h: float) -> dict[str, float]:
    """Pixels per data unit of each token axis (``tickvals`` and ``ticktext``) in a plot area of
    ``plot_w`` x ``plot_h`` px: its domain's share of the area over its range (``range``, or
    half a unit past its first and last tick, as a heatmap's cells reach); an axis tied to
    another by ``scaleanchor`` (square cells) gets the smaller of the two."""
    units = {}
    for name, axis in axes.items():
        vals, text = axis.get("tickvals"), axis.get("ticktext")
        if vals is None or text is None or len(vals) == 0 or len(text) == 0:
            continue
        lo, hi = axis.get("range") or (min(vals) - 0.5, max(vals) + 0.5)
        d0, d1 = axis.get("domain") or (0.0, 1.0)
        length = (d1 - d0) * (plot_w if name.startswith("x") else plot_h)
        units[name] = length / max(abs(hi - lo), 1e-9)
    for name, axis in axes.items():
        other = axis.get("scaleanchor")
        if other and name in units:
            partner = other.replace("x", "xaxis").replace("y", "yaxis")
            if partner in units:
                units[name] = units[partner] = min(units[name], units[partner])
    return units


def _fit_ticks(name: str, axis: dict, unit: float, font: float, present: bool) -> dict:
    """The changes to token axis ``name`` (ticks ``tickvals`` / ``ticktext``, ``unit`` px per
    data unit) under which no two of its labels at ``font`` px overlap."""
    vals, text = list(axis["tickvals"]), list(axis["ticktext"])
    ordered = sorted(vals)
    step = min((b - a for a, b in zip(ordered, ordered[1:], strict=False)), default=1) or 1
    spacing = unit * step  # px between neighbouring ticks
    sizes = [_label_size(t, font) for t in text] or [(0.0, 1)]
    line = (LINE_EM if present else INK_EM) * font
    changes: dict = {"tickfont": dict(size=font)} if present else {}
    if name.startswith("x"):
        widest = max(w for w, _ in sizes)
        if widest + GAP_PX <= spacing:  # side by side, level
            need, angle = widest + GAP_PX, 0
        else:  # upright: as many lines across as a label has
            need, angle = max(n for _, n in sizes) * line, -90
        if present or need > spacing:
            changes["tickangle"] = angle
    else:
        need = line
    every = max(1, math.ceil(need / max(spacing, 1e-9)))
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
            (Present mode, ``PRESENT_FONT_PX``); None: the sizes as built. The figure, its
            margins and its annotations' fonts and offsets grow by ``font_px`` / the
            figure's font size (at least 1), a figure of its own width no wider than
            ``page_px``.
        page_px: the width (px) of the page's column: the most a figure may take, and what
            a figure without a width of its own is drawn at (at least).

    Returns:
        A dict for ``fig.update_layout``: per token axis that needs it ``tickvals`` /
        ``ticktext`` (every k-th tick), ``tickangle`` (0 when the labels fit side by side,
        else -90) and ``tickfont``; with ``font_px`` also ``font``, ``width``, ``height``,
        ``margin`` and ``annotations``. Empty when nothing changes.

    Raises:
        ValueError: ``font_px`` or ``page_px`` not a positive number.
    """
    for value, what in ((font_px, "font_px"), (page_px, "page_px")):
        if value is not None and not value > 0:
            raise ValueError(f"{what} must be a positive number of pixels, got {value!r}.")
    lay = fig.layout.to_plotly_json()
    base = (lay.get("font") or {}).get("size") or FONT["size"]
    scale = max(1.0, font_px / base) if font_px else 1.0
    margin = {k: (lay.get("margin") or {}).get(k, v) for k, v in _PLOTLY_MARGIN.items()}
    grown = {k: round(v * scale) for k, v in margin.items()}
    width, height = lay.get("width"), lay.get("height") or _PLOTLY_HEIGHT
    axes = {k: v for k, v in lay.items() if _AXIS.match(k)}
    square = any(a.get("scaleanchor") for a in axes.values())
    if width:
        new_width = max(min(round(width * scale), page_px), grown["l"] + grown["r"] + 40)
        plot_w = new_width - grown["l"] - grown["r"]
        grow = plot_w / max(width - margin["l"] - margin["r"], 1)
    else:
        new_width, plot_w, grow = None, page_px - grown["l"] - grown["r"], scale
    plot_h = (height - margin["t"] - margin["b"]) * (grow if square else scale)
    units = _units(axes, plot_w, plot_h)
    changes: dict = {}
    for name, axis in axes.items():
        if name in units:
            font = max((axis.get("tickfont") or {}).get("size") or base, font_px or 0)
            axis_changes = _fit_ticks(name, axis, units[name], font, bool(font_px))
            if axis_changes:
                changes[name] = axis_changes
        elif font_px:  # a numeric axis: Plotly spaces its ticks itself
            changes[name] = {"tickfont": dict(size=max(
                (axis.get("tickfont") or {}).get("size") or base, font_px))}
    if font_px:
        changes |= dict(font=dict(size=max(base, font_px)), margin=grown,
                        height=round(plot_h + grown["t"] + grown["b"]))
        if new_width is not None:
            changes["width"] = new_width
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
