"""Grouped bars: a few named series of numbers side by side for each group (e.g. what
each sublayer adds to a token's vector, layer by layer)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from .axes import FONT, figure
from .colors import MARK_BAND_COLOR, SERIES_COLORS
from .text import ENGLISH, VizText, check_text
from .validate import check_index, check_tokens, check_vector, escape_html

__all__ = ["grouped_bars"]


def grouped_bars(
    groups: Sequence[str],
    series: Mapping[str, np.ndarray],
    title: str = "",
    *,
    group_label: str,
    value_label: str,
    mark: int | None = None,
    text: VizText = ENGLISH,
) -> go.Figure:
    """One bar per series in each group, the groups along x.

    Args:
        groups: G group names (x ticks, escaped).
        series: legend name -> (G,) finite numbers, drawn in order, one colour each
            (``viz.colors.SERIES_COLORS``; at most as many series as colours).
        title, group_label, value_label: the figure's and the axes' titles (escaped).
        mark: a group drawn on a pale highlight band (the one a reader should look at);
            None: none.
        text: the figure's own labels (checked; this figure writes none of its own).

    Returns:
        A figure of one ``go.Bar`` per series (``barmode="group"``), x = 0..G-1 with the
        group names as ticks, hover giving group, series and value; with ``mark`` a
        rectangle shape behind that group.

    Raises:
        ValueError: no series, too many series, a series that is not G finite numbers, or
            ``mark`` outside 0..G-1.
    """
    check_text(text)
    names = check_tokens(groups, "groups")
    if not series or len(series) > len(SERIES_COLORS):
        raise ValueError(f"series must hold 1 to {len(SERIES_COLORS)} arrays, got {len(series)}")
    values = {name: check_vector(v, names, f"series {name!r}") for name, v in series.items()}
    ticks = [escape_html(g) for g in names]
    x = list(range(len(names)))
    data = [go.Bar(x=x, y=v, name=escape_html(name), marker=dict(color=color),
                   customdata=ticks, hovertemplate="%{customdata}<br>%{y:.2f}<extra>"
                   + escape_html(name) + "</extra>")
            for (name, v), color in zip(values.items(), SERIES_COLORS, strict=False)]
    shapes = []
    if mark is not None:
        g = check_index(mark, len(names), "mark")
        shapes.append(dict(type="rect", xref="x", yref="paper", x0=g - 0.5, x1=g + 0.5, y0=0,
                           y1=1, fillcolor=MARK_BAND_COLOR, line=dict(width=0),
                           layer="below"))
    return figure(data=data, layout=dict(
        title=dict(text=escape_html(title)), font=FONT, barmode="group", shapes=shapes,
        xaxis=dict(tickmode="array", tickvals=x, ticktext=ticks,
                   title=dict(text=escape_html(group_label))),
        yaxis=dict(title=dict(text=escape_html(value_label)), rangemode="tozero"),
        height=360, plot_bgcolor="white",
        legend=dict(orientation="h", y=1.02, x=1, xanchor="right", yanchor="bottom"),
    ))
