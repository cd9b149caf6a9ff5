"""Serve the app with everything slow done before the first visitor arrives:

    streamlit run serve.py

``streamlit run app.py`` works too, but then the first visit after the server starts pays for
importing torch and the app's modules and reading the default model (about 1.5 s on a
2-core laptop). Here Streamlit's ``st.App`` starts the same app (``app.py``) and its
``lifespan`` hook does that work in a background thread as soon as the server starts, so
the server answers at once and a visitor who arrives before the warm-up has finished simply
waits for the rest of it (Python's import lock).
"""

from __future__ import annotations

import logging
import threading
from contextlib import asynccontextmanager

import streamlit as st

log = logging.getLogger("attention_app")
WARM_SENTENCE = "why do we work ?"


def warm_up():
    """What the first visit would otherwise wait for: import torch, plotly and the app's
    modules, load the default model into the app's own cache (``ui.cache.load_model``), run
    it once and build one figure, then freeze the heap as the app does after its first run.

    Returns:
        The default model (a ``model.Translator``), or None when there is none or it could
        not be loaded: failures are logged, never raised (the app reports them to the
        visitor in its own words).
    """
    # Streamlit warns that this thread has no session; it needs none (ui.cache works without).
    logging.getLogger("streamlit.runtime.scriptrunner_utils.script_run_context").setLevel(
        logging.ERROR)
    try:
        import viz
        from model.translator import available_models, default_model, pretrained_root
        from ui import (  # noqa: F401  (every panel app.py imports)
            charts,
            compare,
            controls,
            export,
            heads,
            i18n,
            link,
            models,
            panels,
            stepper,
            teaching,
        )
        from ui.cache import freeze_after_first_run, load_model, model_key

        name = default_model(available_models())
        translator = None
        if name is not None:
            translator = load_model(*model_key(pretrained_root() / name))
            trace = translator.generate(WARM_SENTENCE)
            viz.attention_heatmap(trace.cross_attentions[0, 0], trace.decoder_input_tokens,
                                  trace.src_labels)
        freeze_after_first_run()
        return translator
    except Exception:  # a broken model folder must not stop the server
        log.exception("warm-up failed; the first visit will load the model itself")
        return None


@asynccontextmanager
async def lifespan(_app):
    """Start the warm-up and serve at once."""
    threading.Thread(target=warm_up, name="warm-up", daemon=True).start()
    yield


app = st.App("app.py", lifespan=lifespan)
