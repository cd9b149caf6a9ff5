"""Serve the app with the slow start-up work begun as soon as the server starts:

    streamlit run serve.py

Streamlit's ``st.App`` starts the same app (``app.py``), and its ``lifespan`` hook starts
the warm-up (``ui.warm.warm_up``: the imports, the default model, the default sentence's
decoding, the dictionaries) in a thread of its own, then lets the server answer. The warm-up
runs while the first visitor's browser starts and loads the page; that visit's script waits
for it under Streamlit's spinner (``app.py`` calls ``warm_up`` before anything else), so no
visitor's script imports a module or builds a figure at the same time as it.

``streamlit run app.py`` works too, but then the first visit starts the warm-up itself, and
the browser's start and the warm-up do not overlap.
"""

from __future__ import annotations

import logging
import threading
from contextlib import asynccontextmanager

import streamlit as st

from ui import warm


def _warm_up() -> None:
    """``warm.warm_up`` in a thread with no Streamlit session (it needs none)."""
    logging.getLogger("streamlit.runtime.scriptrunner_utils.script_run_context").setLevel(
        logging.ERROR)
    warm.warm_up()


@asynccontextmanager
async def lifespan(_app):
    """Start the warm-up in a thread of its own, then serve."""
    threading.Thread(target=_warm_up, name="warm-up", daemon=True).start()
    yield


app = st.App("app.py", lifespan=lifespan)
