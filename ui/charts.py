"""Drawing a Plotly figure in the page: one place for the chart settings.

The figures come from the ``viz`` builders already in the session's language: every call
passes ``text=viz_labels()`` (``ui.i18n``)."""

from __future__ import annotations

from functools import cache
from types import MappingProxyType

import plotly.graph_objects as go
import streamlit as st

from viz.fit import PRESENT_FONT_PX, PRESENT_PAGE_PX, fit_layout

from .i18n import t

# Read-only: shared by every session, and plotly's to_html adds keys to the config it is given.
PLOTLY_CONFIG = MappingProxyType({"displaylogo": False})
PRESENT_KEY = "present"  # the Present switch (a link's ``present=true``)
_SIDEBAR_KEY = "sidebar_state"  # the sidebar state last sent (``_fold_sidebar``)
DOCUMENT_KEY = "page_document"  # ui.document's script: it reports the column's width
MIN_COLUMN_PX = 300  # a reported column narrower than this is not believed
# Present mode's page: larger text, and less empty room above the page's first line. That line
# then sits where Streamlit's bar (60 px, the sidebar's and the menu's buttons) lies over the
# page: the bar is made see-through and lets the pointer through except on its buttons, so
# the line shows and its words keep their hover glosses.
PRESENT_CSS = ("<style>[data-testid='stMain'] [data-testid='stMarkdownContainer'] p, "
               "[data-testid='stMain'] [data-testid='stMarkdownContainer'] li "
               "{font-size: 1.3rem; line-height: 1.5} "
               "[data-testid='stMainBlockContainer'] {padding-top: 2rem} "
               "[data-testid='stHeader'], [data-testid='stToolbar'] "
               "{background: transparent; pointer-events: none} "
               "[data-testid='stHeader'] button {pointer-events: auto}</style>")
IMAGE_FORMATS = ("png", "svg")  # what Plotly's camera button can save (the sidebar picks one)


@cache
def load_plotly() -> None:
    """Build a figure of each trace type the app draws (heatmap, bar, scatter), once per
    process, so that plotly has made its shared validators before two threads build figures.
    Plotly 6 makes a validator the first time a property asks for it and fills shared
    dicts as it does (``plotly.validator_cache``, no lock): two script runs drawing their
    first figures at once could see a bar validated as a scatter. ``serve.py``'s warm-up
    calls it before the server answers anyone, and ``app.py`` after its imports."""
    go.Figure([go.Heatmap(z=[[0.0]]), go.Bar(x=[0], y=[0]), go.Scatter(x=[0], y=[0])],
              layout={"xaxis2": {}, "yaxis2": {}}).to_dict()


def chart(fig, key: str, select: bool = False, *, fit_px: int | None = None):
    """Draw a Plotly figure as the builder styled it: at the width it sets (no wider than
    the container), or at the container's width when it sets none.

    A figure with a width of its own is drawn at that width rather than stretched: the
    chart first draws at the figure's width, measures its container after mounting and
    draws the whole figure again at the new width (~15 ms a chart in Chromium, on every
    step click, benchmarks/clicks.py).

    Streamlit's chart theme is left off (``theme=None``): besides colours the figures set
    themselves, it gives every axis title a ``standoff``, for which Plotly measures every
    tick label of the axis each time the chart is drawn (about 20 ms of a step click).
    With ``select``, a click on a point reruns the page and the selection is in
    ``st.session_state[key]``.

    In Present mode (``presenting()``), ``viz.fit.fit_layout`` first enlarges the type to
    ``PRESENT_FONT_PX``, sets the figure to the column's width and grows it taller until
    every token has its label (thinning them only where the column is too narrow).
    Elsewhere, with ``fit_px`` (the width in px the chart's column is assumed to have, e.g.
    ``viz.fit.PAGE_PX``), it thins the token labels that would overlap there and sets the x
    labels' angle (``fit_layout(fig, page_px=fit_px)``): the step figure and the attention
    views' heatmaps, whose labels overlapped from about 10 tokens."""
    if fit_px and not presenting():
        fig.update_layout(fit_layout(fig, page_px=fit_px))
    elif presenting():
        page_px = column_px()  # in ``meta``: what a browser test waits for
        fig.update_layout(fit_layout(fig, font_px=PRESENT_FONT_PX, page_px=page_px),
                          meta={"page_px": page_px})
    image = {"format": st.session_state.get("image_format", IMAGE_FORMATS[0]), "filename": key,
             "scale": 2}
    extra = dict(on_select="rerun", selection_mode="points") if select else {}
    width = "stretch" if fig.layout.width is None else "content"
    return st.plotly_chart(fig, width=width,
                           config=PLOTLY_CONFIG | {"toImageButtonOptions": image}, key=key,
                           theme=None, **extra)


def column_px() -> int:
    """The width (px) of the page's main column as the browser last reported it
    (``ui.document``, Present mode only), or ``PRESENT_PAGE_PX`` before it has (the first
    run) or when the value is not a plausible width."""
    px = (st.session_state.get(DOCUMENT_KEY) or {}).get("column_px")
    ok = isinstance(px, int | float) and not isinstance(px, bool) and MIN_COLUMN_PX <= px <= 8000
    return int(px) if ok else PRESENT_PAGE_PX


def image_format_picker() -> None:
    """The sidebar's choice of what Plotly's camera button saves a chart as."""
    st.sidebar.radio(t("image_format"), IMAGE_FORMATS, key="image_format", horizontal=True,
                     format_func=str.upper, help=t("image_format_help"))


def present_switch() -> bool:
    """The sidebar's Present switch (off by default; in links as ``present=true``): larger
    text in the page (``PRESENT_CSS``) and on every chart (tick labels at least
    ``PRESENT_FONT_PX``), charts one under another at the page's width (``columns``), and
    one head at a time where a view shows heads. True when on."""
    on = st.sidebar.toggle(t("present_switch"), key=PRESENT_KEY, help=t("present_help"),
                           bind="query-params")
    if on:  # the page's text larger too (a style element alone takes no room in the page)
        st.html(PRESENT_CSS)
    _fold_sidebar(on)
    return on


def _fold_sidebar(on: bool) -> None:
    """Present mode folds the sidebar away, so the projector's width goes to the charts;
    turning it off opens the sidebar again. Said to the browser only when the mode changes
    (``st.set_page_config``'s sidebar state), so a sidebar the teacher opens by hand stays
    open while they work in it."""
    state = "collapsed" if on else "expanded"
    if st.session_state.get(_SIDEBAR_KEY, "expanded") != state:
        st.set_page_config(initial_sidebar_state=state)
    st.session_state[_SIDEBAR_KEY] = state


def presenting() -> bool:
    """Whether Present mode is on in this session."""
    return bool(st.session_state.get(PRESENT_KEY))


def columns(spec, wrap: bool = False, **kwargs) -> list:
    """``st.columns(spec, **kwargs)`` for charts side by side; in Present mode as many
    containers one under another, so that each chart gets the page's width.

    With ``wrap`` (parts that are charts of their own width, and their captions): a row
    whose parts keep their content's width and go under one another where the page is
    too narrow for them side by side (``st.container(horizontal=True, wrap=True)``), where
    columns would squeeze each chart into its share of the page (at 1280 px a mask's
    labels overlapped and titles were cut)."""
    n = spec if isinstance(spec, int) else len(spec)
    if presenting():
        return [st.container() for _ in range(n)]
    if wrap:
        row = st.container(horizontal=True, wrap=True, gap="medium")
        return [row.container(width="content") for _ in range(n)]
    return st.columns(spec, **kwargs)
