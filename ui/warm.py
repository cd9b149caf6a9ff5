"""The server's warm-up: what a first visit needs (torch, plotly and the app's modules, the
default model, the default sentence's decoding, the dictionaries), done once per process.

``serve.py`` starts ``warm_up`` in a thread when the server starts, so that it runs while
the first visitor's browser starts and loads the page; ``app.py`` calls it first, before it
imports anything else, so its first run waits for it (under Streamlit's spinner) instead of
importing the same modules at the same time (two threads importing one package at once can
deadlock, or see it half-initialised). With ``streamlit run app.py`` alone, the first visit
runs it. This module imports nothing of the app's at import time: only the standard library
and Streamlit.
"""

from __future__ import annotations

import logging
import tomllib
from pathlib import Path

import streamlit as st

log = logging.getLogger("attention_app")

# Shown to whoever waits for the warm-up: in both languages, since reading the interface
# language (ui.i18n) would import what the warm-up is importing.
_STARTING = tomllib.loads(Path(__file__).with_name("strings.toml").read_text("utf-8"))[
    "strings"]["spinner_starting"]
STARTING = f"{_STARTING['en']} · {_STARTING['zh']}"


def _import_app():
    """Import what ``app.py`` imports (torch, plotly, the model, every panel) and build one
    figure of each kind the app draws (``ui.charts.load_plotly``: plotly's validators).
    Returns the modules ``warm_up`` uses, as a tuple: (``viz``, ``state``, ``cache``,
    ``pinyin``, the models folder's ``load`` module, ``verdict``, ``models``, and the
    dictionaries' readers)."""
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
    from ui.views import (  # noqa: F401
        attribution,
        compare,
        heads,
        one_stack,
        panels,
        side_by_side,
        teaching,
    )

    charts.load_plotly()
    return viz, state, cache, pinyin, load, verdict, models, (
        lexicon.lexicon, cedict.gloss_dictionary, cedict.word_pinyin, lemmas.lemma_table)


@st.cache_resource(show_spinner=STARTING)
def warm_up():
    """Import torch, plotly and the app's modules, load the default model into the app's own
    cache (``ui.cache.load_model``, which also freezes the heap), decode the default
    sentence into that cache too (``ui.cache.decode``, keyed as a first visit asks), read
    the prebuilt CC-CEDICT index (the glosses and the verdict's dictionary,
    ``model.analysis.cedict``), the English lemmas (``model.analysis.lemmas``), pypinyin's
    phrases (``ui.pinyin.phrase_map``), the app's word segmenter (``ui.pinyin.segmenter``: jieba
    and its user dictionary) and CC-CEDICT's readings (``cedict.word_pinyin``),
    list the models (``ui.models.listed_models``), judge the default sentence's translation
    (``ui.verdict.trace_verdict``) and build the first figure. Once per process
    (``st.cache_resource``): a second caller waits for the first one's run to end and gets
    its result.

    Returns:
        The default model (a ``model.Translator``), or None when there is none or it could
        not be loaded: failures are logged, never raised (the app reports them to the
        visitor in its own words).
    """
    try:
        viz, state, cache, pinyin, load, verdict, models, dictionaries = _import_app()
        models.listed_models()  # the model picker's list (the Hugging Face cache's scan)
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
            verdict.trace_verdict(translator, trace)  # the header's verdict (its typo check)
            viz.attention_heatmap(trace.cross_attentions[0, 0], trace.decoder_input_tokens,
                                  trace.src_labels)
        return translator
    except Exception:  # a broken model folder must not stop the server
        log.exception("warm-up failed; the first visit will load the model itself")
        return None
