"""Drawing a Plotly figure in the page: one place for the chart settings.

The figures come from the ``viz`` builders already in the session's language: every call
passes ``text=viz_labels()`` (``ui.i18n``)."""

from __future__ import annotations

import streamlit as st

PLOTLY_CONFIG = {"displaylogo": False}


def chart(fig, key: str) -> None:
    """Draw a Plotly figure at the container's width."""
    st.plotly_chart(fig, width="stretch", config=PLOTLY_CONFIG, key=key)
