"""Drawing a Plotly figure in the page: one place for the chart settings."""

from __future__ import annotations

import streamlit as st

PLOTLY_CONFIG = {"displaylogo": False}


def chart(fig, key: str) -> None:
    """Draw a Plotly figure at the container's width."""
    st.plotly_chart(fig, width="stretch", config=PLOTLY_CONFIG, key=key)
