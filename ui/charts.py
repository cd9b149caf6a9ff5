"""Drawing a Plotly figure in the page: one place for the chart settings.

The figures come from the ``viz`` builders already in the session's language: every call
passes ``text=viz_labels()`` (``ui.i18n``)."""

from __future__ import annotations

import streamlit as st

from .i18n import t

PLOTLY_CONFIG = {"displaylogo": False}
IMAGE_FORMATS = ("png", "svg")  # what Plotly's camera button can save (the sidebar picks one)


def chart(fig, key: str, select: bool = False):
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
    ``st.session_state[key]``."""
    image = {"format": st.session_state.get("image_format", IMAGE_FORMATS[0]), "filename": key,
             "scale": 2}
    extra = dict(on_select="rerun", selection_mode="points") if select else {}
    width = "stretch" if fig.layout.width is None else "content"
    return st.plotly_chart(fig, width=width,
                           config=PLOTLY_CONFIG | {"toImageButtonOptions": image}, key=key,
                           theme=None, **extra)


def image_format_picker() -> None:
    """The sidebar's choice of what Plotly's camera button saves a chart as."""
    st.sidebar.radio(t("image_format"), IMAGE_FORMATS, key="image_format", horizontal=True,
                     format_func=str.upper, help=t("image_format_help"))
