"""Layout helpers shared by the figure builders (token axes, sizes, hover data)."""

from __future__ import annotations

import html
import unicodedata

import numpy as np
import plotly.graph_objects as go

from .colors import HIGHLIGHT_COLOR
from .validate import escape_html

# Simplified-Chinese faces first: Debian names Noto's "Noto Sans CJK SC"; without it Chromium
# falls back to the Japanese variant, which draws some characters in Japanese forms.
FONT = dict(
    family="Noto Sans SC, Noto Sans CJK SC, Source Han Sans SC, Microsoft YaHei, PingFang SC, "
    "Arial, sans-serif",
    size=13,
)


def tick_font_size(n: int) -> int:
    """Tick-label font size (px) that stays readable for ``n`` ticks."""
    return 13 if n <= 20 else 11 if n <= 40 else 9


def cell_px(n: int) -> int:
    """Side of one heatmap cell in pixels for ``n`` rows/columns."""
    return int(np.clip(640 // max(n, 1), 12, 44))


def text_px(text: str, narrow: int, wide: int) -> int:
    """Pixels an (escaped) text takes at ``narrow`` px a character, ``wide`` a wide (CJK) one."""
    return sum(wide if unicodedata.east_asian_width(c) in "WF" else narrow
               for c in html.unescape(text))


def label_px(ticktext: list[str]) -> int:
    """Pixel room that the longest (escaped) tick label needs at 13 px: 8 px a character,
    14 px a wide (CJK) one; a label with a second line (``"我\nwǒ"``, ``token_axis``) is
    measured as one line (as a y axis shows it; an x axis needs less); capped at 200 px."""
    return min(max((text_px(_tick_lines(t, False), 8, 14) for t in ticktext), default=8),
               200)


def _tick_lines(label: str, stacked: bool) -> str:
    """A token label's second line (after ``\n``: its pinyin) under it (``stacked``, on an
    x axis) or beside it (a y axis, whose rows are too low for two lines)."""
    return label.replace("\n", "<br>" if stacked else " ")


def title_px(title: str) -> int:
    """Width (px) of a figure that shows the (escaped) ``title`` whole: 11 px a character,
    20 px a wide (CJK) one, at Plotly's title size (1.4 x ``FONT``'s 13 px), and 80 px of
    room either side together."""
    return text_px(title, 11, 20) + 80


TITLE_LINE_PX = 640  # a title wider than this (``title_px``) is written on several lines:
# a figure beside another on a laptop's page (about 820 px) keeps it whole
TITLE_LINE_HEIGHT = 22  # px a further line of a title takes (Plotly's 18-px title font)
MODEBAR_PX = 30  # Plotly's toolbar (modebar) over a chart's top right: 2 px down, 26 px tall
#: A title starts under the toolbar (``MODEBAR_PX``; centred in the top margin, a title sat
#: under it) and a title on several lines grows down into the room added for its lines
#: (centred, its last line met the panel titles). (plotly.js puts the first line's top about a
#: line above ``pad.t``: 26 px draws it 5 px down.)
TITLE_TOP = dict(yref="container", y=1, yanchor="top",
                 pad=dict(t=MODEBAR_PX + TITLE_LINE_HEIGHT + 4))
TITLE_ROOM_PX = MODEBAR_PX + 2 * TITLE_LINE_HEIGHT - 4  # the top margin a one-line title needs
_BREAK_AFTER = " ，、：；。）"  # a title line may end after these (and before a wide character)


def title_lines(title: str, px: int = TITLE_LINE_PX) -> list[str]:
    """An (escaped) title in lines of at most ``px`` (``title_px``) each, broken after a
    space or Chinese punctuation, or before a wide (CJK) character; a piece that fits no
    line alone (a very long word) is a line of its own. The lines joined are the title (a
    space at a break ends its line, where a browser does not show it)."""
    if title_px(title) <= px:  # most titles: one line (every figure built asks)
        return [title]
    pieces, piece = [], ""
    for c in title:
        if piece and unicodedata.east_asian_width(c) in "WF" and c not in _BREAK_AFTER:
            pieces.append(piece)
            piece = ""
        piece += c
        if c in _BREAK_AFTER:
            pieces.append(piece)
            piece = ""
    pieces += [piece] if piece else []
    lines = [""]
    for piece in pieces:
        if lines[-1] and title_px((lines[-1] + piece).rstrip()) > px:
            lines.append("")
        lines[-1] += piece
    return [line for line in lines if line] or [title]


#: Room (px) for an axis title beside its tick labels, a figure title, a colour bar.
AXIS_TITLE_PX, TITLE_PX, COLORBAR_PX = 56, 80, 120


def margins(rows: list[str] | None = None, cols: list[str] | None = None, *,
            colorbar: bool = False) -> dict:
    """Margins (px) that already hold the (escaped) tick labels ``rows`` on the left and
    ``cols`` at the bottom (as if turned upright), the axis titles, the figure title and a
    colour bar on the right.

    Token axes leave Plotly's ``automargin`` off: it measures every tick label and draws a
    chart a second time whenever they push a margin out, about half of what a heatmap cost
    to redraw in Chromium (benchmarks/clicks.py).
    """
    return dict(l=label_px(rows or ["0.0"]) + AXIS_TITLE_PX,
                b=label_px(cols or ["0.0"]) + AXIS_TITLE_PX,
                t=TITLE_PX, r=COLORBAR_PX if colorbar else 40)


def token_axis(ticktext: list[str], *, reverse: bool = False) -> dict:
    """Integer axis 0..n-1 whose ticks show the (already escaped) tokens. It has no title of
    its own: give it one with :func:`axis_title`. A label may carry a second line after
    ``\n`` (the pinyin of a Chinese token, ``ui.pinyin``): under the token on an x axis,
    beside it on a reversed (y) axis."""
    n = len(ticktext)
    return dict(
        tickmode="array",
        tickvals=list(range(n)),
        ticktext=[_tick_lines(t, stacked=not reverse) for t in ticktext],
        tickfont=dict(size=tick_font_size(n)),
        autorange="reversed" if reverse else True,
        showgrid=False,
        zeroline=False,
        automargin=False,  # the figure's margins(): measuring every label is slow
        ticklabeloverflow="allow",  # "hide..." measures every label too
    )


def axis_title(title: str, labels: list[str], axis: str = "x") -> dict:
    """The title of token axis ``axis`` ("x", "y", "x2", ...) as an annotation: centred
    along the axis (on its domain, so it follows ``constrain="domain"``), just past the room
    :func:`margins` keeps for its (escaped) tick ``labels``; the y title reads upwards.

    A Plotly axis title would do the same, but Plotly places it by measuring every tick
    label of its axis (to push the title clear of them) each time the chart is drawn: about
    a tenth of a step click's drawing time in Chromium (benchmarks/clicks.py). The
    annotation is measured once, by itself.
    """
    other = ("y" if axis.startswith("x") else "x") + axis[1:]
    room = label_px(labels or ["0.0"]) + 10
    note = dict(text=escape_html(title), showarrow=False, font=dict(size=14))
    if axis.startswith("x"):
        return note | dict(xref=f"{axis} domain", x=0.5, yref=f"{other} domain", y=0,
                           xanchor="center", yanchor="top", yshift=-room)
    return note | dict(xref=f"{other} domain", x=0, yref=f"{axis} domain", y=0.5,
                       xanchor="right", yanchor="middle", xshift=-room, textangle=-90)


def cell_outlines(cells, size: int, width: int = 2):
    """A ``go.Scatter`` of red open squares of ``size`` px over the (row, column) ``cells``
    of a heatmap on integer axes (x = column, y = row); no hover, no legend entry."""
    return go.Scatter(x=[c[1] for c in cells], y=[c[0] for c in cells], mode="markers",
                      marker=dict(symbol="square-open", size=size, color=HIGHLIGHT_COLOR,
                                  line=dict(width=width)),
                      hoverinfo="skip", showlegend=False)


def row_outline(row: int, n_cols: int, width: int = 3):
    """A ``go.Scatter`` drawing a red rectangle around row ``row`` of a heatmap on integer
    axes (x = column 0..n_cols-1, y = row): the row a lesson asks the reader to look at;
    no hover, no legend entry."""
    left, right, top, bottom = -0.5, n_cols - 0.5, row - 0.5, row + 0.5
    return go.Scatter(x=[left, right, right, left, left], y=[top, top, bottom, bottom, top],
                      mode="lines", line=dict(color=HIGHLIGHT_COLOR, width=width),
                      hoverinfo="skip", showlegend=False)


def colorbar(title: str | None = None, **extra) -> dict:
    """A colour bar titled ``title`` (None: untitled) that does not measure its tick labels
    (``ticklabeloverflow``, as :func:`token_axis`)."""
    return dict(title=dict(text=title), ticklabeloverflow="allow") | extra


#: ``layout.datarevision`` of every figure: a figure's data arrays never change once it is
#: built (a new figure is a new chart in the page: Streamlit's element id hashes the figure).
DATA_REVISION = 0
_LIST_PROPS = ("x", "y", "text", "customdata")  # trace properties that may hold a 1-D array


def figure(data: list, layout: dict) -> go.Figure:
    """``go.Figure(data=data, layout=layout)``, the form every builder returns, made cheap
    for plotly.js to draw a second time; its title under the toolbar, from the top
    (``TITLE_TOP``), and one wider than ``TITLE_LINE_PX`` on several lines
    (:func:`title_lines`; the top margin and height grown to hold them), and, when the
    layout sets a width, at least as wide as its title's lines need (:func:`title_px`: the
    page draws such a figure at its own width).

    Streamlit's chart draws each figure, then calls ``Plotly.react`` again with a deep copy
    of it (its theme and size effects). That second call redrew the whole chart (~15 ms a
    chart in Chromium, twice per step click, benchmarks/clicks.py) because plotly.js found
    three "changes" in the copy, all removed here:

    - the layout's ``template``, which plotly.js compares by identity (any template, even
      an empty one): the figure has none, so plotly.js's own defaults style it;
    - data arrays of a new identity: ``layout.datarevision`` is set (``DATA_REVISION``), so
      plotly.js compares it instead of the arrays (plotly.js ``Plotly.react`` docs);
    - 1-D numeric numpy arrays, which plotly.py sends as base64 typed arrays that plotly.js
      decodes afresh each time and never treats as data arrays: they are sent as lists
      (float32 values at their shortest decimal form). 2-D arrays stay typed (compact).
    """
    title = (layout.get("title") or {}).get("text") or ""
    lines = title_lines(title) if title else []
    if lines:  # under the toolbar, a long title on several lines: the top margin grown
        margin = dict(layout.get("margin") or {})
        before = margin.get("t", 100)  # plotly.js's default top margin: 100
        margin["t"] = max(before, TITLE_ROOM_PX) + TITLE_LINE_HEIGHT * (len(lines) - 1)
        if len(lines) > 1:  # such a title started at the top (5 px), now under the toolbar
            margin["t"] += MODEBAR_PX
        layout = layout | {"title": layout["title"] | {"text": "<br>".join(lines)} | TITLE_TOP,
                           "margin": margin}
        if layout.get("height"):  # the plot keeps its height
            layout["height"] += margin["t"] - before
    if layout.get("width") and title:  # drawn at its own width (ui.charts): room for the title
        layout = layout | {"width": max(layout["width"], *map(title_px, lines))}
    fig = go.Figure(data=data, layout=layout | {"datarevision": DATA_REVISION})
    fig.layout.template = None
    for trace in fig.data:
        for name in _LIST_PROPS:
            value = trace[name] if name in trace else None
            if isinstance(value, np.ndarray) and value.ndim == 1 and value.dtype.kind in "fiub":
                trace[name] = None  # plotly.py keeps the array if given equal values
                trace[name] = ([float(str(v)) for v in value] if value.dtype == np.float32
                               else value.tolist())
    return fig


def pair_customdata(rows: list[str], cols: list[str], *extra: np.ndarray) -> np.ndarray:
    """Object array (R, C, 2 + len(extra)): [row token, column token, *extra] per cell (a
    token's second line, its pinyin, on the same line)."""
    data = np.empty((len(rows), len(cols), 2 + len(extra)), dtype=object)
    data[..., 0] = np.array([_tick_lines(r, False) for r in rows], dtype=object)[:, None]
    data[..., 1] = np.array([_tick_lines(c, False) for c in cols], dtype=object)[None, :]
    for i, values in enumerate(extra):
        data[..., 2 + i] = values
    return data


def nice_step(n: int, max_ticks: int) -> int:
    """Smallest step from 1, 2, 5, 10, 20, 50, ... giving at most ``max_ticks`` ticks."""
    step = 1
    while n / step > max_ticks:
        for factor in (2, 2.5, 2):
            step = int(step * factor)
            if n / step <= max_ticks:
                break
    return step


def side_by_side(panels: list[dict], widths: list[float], *, title: str = "",
                 gap: float = 0.06) -> dict:
    """The traces and layout of one figure showing ``panels`` left to right.

    Each panel is ``dict(data=[trace dicts], layout={...})`` of one pair of axes (``x`` and
    ``y``), as :func:`viz.decoding.bars_panel` makes: plain dicts, so that only the joined
    figure is built (and validated by Plotly) once. Panel n (from 1) gets axes ``x{n}`` /
    ``y{n}`` over its share of the width (``widths`` are relative), its axes' settings (a
    ``scaleanchor`` follows its axis), and its title as a panel title above it (the first
    ``len(panels)`` annotations), and its annotations referred to its new axes. Only the
    last panel's colour bars are kept: callers put side by side panels that share one
    colour scale, or none.

    Returns:
        ``dict(data=[...], layout={...})`` for :func:`figure`: the figure title ``title``
        (escaped), the first panel's font, the margins wide enough for the first panel's
        row labels, every panel's column labels and the last's colour bar, and the height
        of the tallest panel.

    Raises:
        ValueError: if ``widths`` is not one positive number per panel.
    """
    if len(widths) != len(panels) or min(widths, default=0) <= 0:
        raise ValueError(f"widths must be one positive number per panel, got {widths!r}.")
    share = (1 - gap * (len(panels) - 1)) / sum(widths)
    data, layout, titles, notes, x0 = [], {}, [], [], 0.0
    for n, (panel, width) in enumerate(zip(panels, widths, strict=True), start=1):
        dom = [x0, min(x0 + width * share, 1.0)]
        traces, axes, own_notes = _moved_panel(panel, n, dom, last=n == len(panels))
        data += traces
        layout |= axes
        notes += own_notes
        titles.append(dict(text=panel["layout"].get("title", {}).get("text") or "",
                           x=(dom[0] + dom[1]) / 2, y=1, xref="paper", yref="paper",
                           xanchor="center", yanchor="bottom", yshift=8, showarrow=False,
                           font=dict(size=14)))
        x0 = dom[1] + gap
    first, last_panel = panels[0]["layout"], panels[-1]["layout"]
    bottom = max(p["layout"].get("margin", {}).get("b") or 0 for p in panels)
    return dict(data=data, layout=layout | dict(
        title=dict(text=escape_html(title)),
        font=first.get("font"),
        annotations=titles + notes,
        margin=dict(l=first["margin"]["l"], r=last_panel["margin"]["r"], b=bottom,
                    t=TITLE_PX + 30),
        height=max(p["layout"].get("height") or 0 for p in panels) or None,
        plot_bgcolor="white",
        showlegend=False,
    ))


def _moved_panel(panel: dict, n: int, dom: list[float], *, last: bool
                 ) -> tuple[list[dict], dict, list[dict]]:
    """Panel ``n`` (from 1) of :func:`side_by_side` moved onto axes ``x{n}`` / ``y{n}`` over
    the domain ``dom`` (paper x): ``(traces, axes, notes)``, its traces on those axes (a
    heatmap's colour bar hidden unless it is the ``last`` panel), its layout's axes under
    their new names, and its annotations referred to its new axes."""
    x, y = ("x", "y") if n == 1 else (f"x{n}", f"y{n}")
    own = panel["layout"]
    traces = []
    for trace in panel["data"]:
        trace = trace | dict(xaxis=x, yaxis=y)
        if trace.get("type") == "heatmap" and not last:
            trace["showscale"] = False
        traces.append(trace)
    y_axis = dict(own.get("yaxis", {}))
    if y_axis.get("scaleanchor") == "x":
        y_axis["scaleanchor"] = x
    axes = {"xaxis" if n == 1 else f"xaxis{n}": own.get("xaxis", {}) | dict(domain=dom,
                                                                          anchor=y),
            "yaxis" if n == 1 else f"yaxis{n}": y_axis | dict(anchor=x)}
    notes = []
    for note in own.get("annotations", []):  # axis titles and other notes, on new axes
        note = dict(note)
        for ref, name in (("xref", x), ("yref", y)):
            if note.get(ref, "paper") != "paper":
                note[ref] = name + note[ref][1:].lstrip("0123456789")
        notes.append(note)
    return traces, axes, notes
