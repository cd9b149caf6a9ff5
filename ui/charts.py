"""Drawing a Plotly figure in the page: one place for the chart settings.

The figures come from the ``viz`` builders already in the session's language: every call
passes ``text=viz_labels()`` (``ui.i18n``)."""

from __future__ import annotations

import streamlit as st

PLOTLY_CONFIG = {"displaylogo": False}


def chart(fig, key: str) -> None:
    """Draw a Plotly figure at the container's width, as the builder styled it.

    Streamlit's chart theme is left off (``theme=None``): besides colours the figures set
    themselves, it gives every axis title a ``standoff``, for which Plotly measures every
    tick label of the axis each time the chart is drawn (about 20 ms of a step click in
    Chromium, benchmarks/clicks.py)."""
    st.plotly_chart(fig, width="stretch", config=PLOTLY_CONFIG, key=key, theme=None)
