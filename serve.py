"""Serve the app with everything slow done before the first visitor arrives:

    streamlit run serve.py

``streamlit run app.py`` works too, but then the first visit after the server starts pays for
importing torch and the app's modules and reading the default model. Here Streamlit's
``st.App`` starts the same app (``app.py``) and its ``lifespan`` hook does that work
(``warm_up``) before the server answers anyone. Streamlit binds the port before the
lifespan runs, so a browser that opens the page meanwhile is not refused: its request waits
in the socket's queue and is answered once the warm-up is done (``tests/test_serving.py``:
four first visits at once behind nginx). Nothing else runs while the warm-up does, so no
visitor's script imports a module or builds a figure at the same time as it.
"""

from __future__ import annotations

import asyncio
import logging
from contextlib import asynccontextmanager

import streamlit as st

log = logging.getLogger("attention_app")


def _import_app():
    """Import what ``app.py`` imports (torch, plotly, the model, every panel) and build one
    figure of each kind the app draws (``ui.charts.load_plotly``: plotly's validators).
    Returns the modules ``warm_up`` uses, as a namespace: (``viz``, ``state``, ``cache``,
    ``pinyin``, the models folder's ``load`` module, and the dictionaries' readers)."""
    import viz
    from model.analysis import cedict, lemmas, lexicon
    from model.backends import load
    from ui import (  # noqa: F401  (every module app.py imports)
        cache,
        charts,
        confidence,
        controls,
        document,
        export,
        gloss,
        i18n,
        lesson,
        link,
        models,
        pinyin,
        state,
        stepper,
        text,
        verdict,
    )
    from ui.player import in_browser, take_home  # noqa: F401
    from ui.views import attribution, compare, heads, panels, side_by_side, teaching  # noqa: F401

    charts.load_plotly()
    return viz, state, cache, pinyin, load, (lexicon.lexicon, cedict.gloss_dictionary,
                                             lemmas.lemma_table)


def warm_up():
    """What the first visit would otherwise wait for: import torch, plotly and the app's
    modules, load the default model into the app's own cache (``ui.cache.load_model``),
    decode the default sentence into that cache too (``ui.cache.decode``), read the
    prebuilt CC-CEDICT index (the glosses and the verdict's dictionary,
    ``model.analysis.cedict``), the English lemmas (``model.analysis.lemmas``), pypinyin's
    phrases (``ui.pinyin.phrase_map``) and jieba's word segmenter (``ui.pinyin.segmenter``),
    and build the first figure (loading the model freezes the heap: ``ui.cache.load_model``).

    Returns:
        The default model (a ``model.Translator``), or None when there is none or it could
        not be loaded: failures are logged, never raised (the app reports them to the
        visitor in its own words).
    """
    # Streamlit warns that this thread has no session; it needs none (ui.cache works without).
    logging.getLogger("streamlit.runtime.scriptrunner_utils.script_run_context").setLevel(
        logging.ERROR)
    try:
        viz, state, cache, pinyin, load, dictionaries = _import_app()
        name = load.default_model(load.available_models())
        translator = trace = None
        if name is not None:
            key = cache.model_key(load.pretrained_root() / name)
            translator = cache.load_model(*key)
            # As app.py asks for it (Streamlit keys a cache by the arguments as passed).
            trace = cache.decode(key, state.DEFAULT_SENTENCE, cache.GREEDY)
        for read in (*dictionaries, pinyin.phrase_map):
            read()
        pinyin.segmenter()("我们")
        if trace is not None:
            viz.attention_heatmap(trace.cross_attentions[0, 0], trace.decoder_input_tokens,
                                  trace.src_labels)
        return translator
    except Exception:  # a broken model folder must not stop the server
        log.exception("warm-up failed; the first visit will load the model itself")
        return None


@asynccontextmanager
async def lifespan(_app):
    """Warm up (``warm_up``, in a worker thread so that the event loop stays free), then
    serve."""
    await asyncio.to_thread(warm_up)
    yield


app = st.App("app.py", lifespan=lifespan)
