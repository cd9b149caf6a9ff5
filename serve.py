"""Serve the app with everything slow done before the first visitor arrives:

    streamlit run serve.py

``streamlit run app.py`` works too, but then the first visit after the server starts pays for
importing torch and the app's modules and reading the default model (about 1.5 s on a
2-core laptop). Here Streamlit's ``st.App`` starts the same app (``app.py``) and its
``lifespan`` hook does that work in a background thread (when: below), so the server
answers at once and a visitor who arrives before the warm-up has finished waits for the rest
of it (the imports' lock, the app's caches).

A visitor who arrives during the warm-up first gets the default page's top and first chart
from a snapshot (``ui/first_page.py``), drawn without torch; the page then reruns into the app
once the warm-up has finished. To leave the two cores to the browser while it draws that
page, the warm-up starts once a first visit has drawn it (or begun, with a link), or after
``ui.startup.FIRST_VISIT_WAIT_S`` when no visitor came: a first heatmap about as soon as a
trivial app's (benchmarks/clicks.py).

Its page also starts loading Streamlit's Plotly chart code (a 4.7 MB script) at once, beside
the rest of the page's code, instead of when the first chart arrives (``PreloadCharts``): a
first visit then draws its first heatmap about 0.4 s sooner (benchmarks/clicks.py, cold visits).
"""

from __future__ import annotations

import logging
import threading
from contextlib import asynccontextmanager
from pathlib import Path

import streamlit as st
from starlette.middleware import Middleware

from ui import startup  # first: the heap's policy before the server's threads allocate

log = logging.getLogger("attention_app")


def warm_up():
    """What the first visit would otherwise wait for: import torch, plotly and the app's
    modules, load the default model into the app's own cache (``ui.cache.load_model``),
    decode a first visit's sentence into that cache too (``ui.cache.decode``), read the
    prebuilt CC-CEDICT index (the glosses and the verdict's dictionary,
    ``model.analysis.cedict``), the English lemmas (``model.analysis.lemmas``), pypinyin's
    phrases (``ui.pinyin.phrase_map``) and jieba's word segmenter (``ui.pinyin.segmenter``),
    build one figure, then tidy the heap as the app does after every run. This is the
    order a first visit needs them in; a visit that arrives meanwhile waits for the work
    under way (the imports' lock, ``ui.startup``; the caches, which compute each thing
    once) instead of doing it a second time.

    Returns:
        The default model (a ``model.Translator``), or None when there is none or it could
        not be loaded: failures are logged, never raised (the app reports them to the
        visitor in its own words).
    """
    # Streamlit warns that this thread has no session; it needs none (ui.cache works without).
    logging.getLogger("streamlit.runtime.scriptrunner_utils.script_run_context").setLevel(
        logging.ERROR)
    try:
        with startup.IMPORTS:  # not at the same time as a first visit's app.py (ui/startup.py)
            import viz
            from model.analysis.cedict import gloss_dictionary
            from model.analysis.lemmas import lemma_table
            from model.analysis.lexicon import lexicon
            from model.backends.load import available_models, default_model, pretrained_root
            from ui import (  # noqa: F401  (every panel app.py imports)
                charts,
                confidence,
                controls,
                export,
                i18n,
                link,
                models,
                state,
                stepper,
            )
            from ui.cache import decode, load_model, model_key, tidy_heap
            from ui.pinyin import phrase_map, segmenter
            from ui.views import compare, heads, panels, teaching  # noqa: F401

            charts.load_plotly()  # plotly's validators, before any figure (ui/charts.py)

        # In the order a first visit needs them, so that one arriving meanwhile waits for
        # work under way (the caches compute each thing once) rather than repeating it.
        name = default_model(available_models())
        translator = trace = None
        if name is not None:
            key = model_key(pretrained_root() / name)
            translator = load_model(*key)
            trace = decode(key, state.DEFAULT_SENTENCE)  # the app's own cache
        # The header's verdict needs the prebuilt CC-CEDICT index and the English lemmas;
        # its Chinese words need the segmenter, their pinyin the phrases.
        lexicon(), gloss_dictionary(), lemma_table(), phrase_map(), segmenter()("我们")
        if trace is not None:  # then its first figure
            viz.attention_heatmap(trace.cross_attentions[0, 0], trace.decoder_input_tokens,
                                  trace.src_labels)
        tidy_heap()
        return translator
    except Exception:  # a broken model folder must not stop the server
        log.exception("warm-up failed; the first visit will load the model itself")
        return None


def plotly_chunk() -> str | None:
    """The file name of the frontend's Plotly chart module in Streamlit's static folder
    (``PlotlyChart.<hash>.js``), or None unless there is exactly one."""
    found = sorted((Path(st.__file__).parent / "static" / "static" / "js").glob(
        "PlotlyChart.*.js"))
    return found[0].name if len(found) == 1 else None


class PreloadCharts:
    """ASGI middleware: Streamlit's page (its ``index.html``) gets one more module script,
    Streamlit's own Plotly chart module, so the browser fetches and runs it while it loads
    the rest of the page and waits for the app's first run. Streamlit imports the same
    module (same URL) when the first chart arrives, and then finds it loaded.

    Only the uncompressed ``text/html`` answer to a GET is changed (the tag goes before its
    ``</head>``, once; its ``Content-Length`` follows); everything else passes through as it
    is. Without the chunk (``plotly_chunk`` is None, as with another Streamlit build)
    nothing is changed. Raises nothing of its own.
    """

    def __init__(self, app, chunk: str | None = None):
        self.app = app
        name = chunk or plotly_chunk()
        self.tag = (f'<script type="module" crossorigin src="./static/js/{name}"></script>'
                    .encode() if name else None)

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope.get("method") != "GET" or self.tag is None:
            return await self.app(scope, receive, send)
        start: dict = {}
        body: list[bytes] = []

        async def send_html(message):
            if message["type"] == "http.response.start":
                headers = {k.lower(): v for k, v in message.get("headers", [])}
                if (headers.get(b"content-type", b"").startswith(b"text/html")
                        and b"content-encoding" not in headers):
                    start.update(message)  # held back until the body is complete
                    return
            if not start or message["type"] != "http.response.body":
                return await send(message)
            body.append(message.get("body", b""))
            if message.get("more_body"):
                return
            html = b"".join(body)
            if self.tag not in html:
                html = html.replace(b"</head>", self.tag + b"</head>", 1)
            headers = [(k, v) for k, v in start.get("headers", [])
                       if k.lower() != b"content-length"]
            headers.append((b"content-length", str(len(html)).encode()))
            await send({**start, "headers": headers})
            await send({"type": "http.response.body", "body": html})

        await self.app(scope, receive, send_html)


def warm_up_after_first_page() -> None:
    """``warm_up`` once a first visit has drawn what it draws before its imports
    (``startup.FIRST_VISIT``: the snapshot page of ``ui.first_page``, or nothing with a
    link), or once ``startup.FIRST_VISIT_WAIT_S`` have passed without one; then
    ``ui.startup.WARM`` is set (also when the warm-up failed: the waiting visits rerun and
    the app reports the problem)."""
    try:
        startup.FIRST_VISIT.wait(startup.FIRST_VISIT_WAIT_S)
        warm_up()
    finally:
        startup.WARM.set()


@asynccontextmanager
async def lifespan(_app):
    """Start the warm-up (``warm_up_after_first_page``) and serve at once."""
    startup.WARMING.set()
    threading.Thread(target=warm_up_after_first_page, name="warm-up", daemon=True).start()
    yield


app = st.App("app.py", lifespan=lifespan, middleware=[Middleware(PreloadCharts)])
