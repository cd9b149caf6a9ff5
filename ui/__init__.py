"""Streamlit panels of the app. Each function draws one part of the page from a
``DecodeTrace`` and returns the user's choices; app.py only wires them together."""
