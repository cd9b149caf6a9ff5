"""serve.py: the app started by Streamlit's ``st.App`` with a warm-up at server start."""

from __future__ import annotations

import json
import logging
import shutil

import serve
from model.backends.load import DEFAULT_MODELS, pretrained_root
from testkit.harness import fresh_python
from ui.cache import load_model, model_key


def test_warm_up_loads_the_default_model_into_the_apps_own_cache():
    translator = serve.warm_up()
    assert translator is not None
    folder = pretrained_root() / DEFAULT_MODELS[0]
    # The app's first run asks the same cache for the same folder: no second load.
    assert load_model(*model_key(folder)) is translator


def test_warm_up_decodes_a_first_visits_sentence_through_the_apps_cache(monkeypatch):
    # What a first visit shows is decoded by the warm-up in the app's own cache (ui.cache),
    # so the visit reads it. The call is recorded, then made: the real model decodes.
    import ui.cache
    from ui import state

    asked = []
    real = ui.cache.decode

    def recorded(*args, **kwargs):
        asked.append((args, kwargs))
        return real(*args, **kwargs)

    monkeypatch.setattr(ui.cache, "decode", recorded)
    translator = serve.warm_up()
    assert translator is not None
    assert [a[1:] for a, _ in asked] == [(state.DEFAULT_SENTENCE,)]  # greedy, the default
    assert asked[0][0][0] == model_key(pretrained_root() / DEFAULT_MODELS[0])



def test_the_warm_up_computes_on_one_thread_as_the_app_does():
    # The warm-up loads the model before app.py runs: the one-thread rule must already hold
    # (ui.cache sets it), or every torch operation waits on a second, busy core.
    # (On this 2-core machine a fresh torch process uses 2.)
    code = "import serve, torch; serve.warm_up(); print(torch.get_num_threads())"
    out = fresh_python(code)
    assert out.split()[-1] == "1"


def test_warm_up_logs_a_broken_default_model_and_returns(tmp_path, monkeypatch, caplog):
    broken = tmp_path / "broken"
    shutil.copytree(pretrained_root() / "en-zh-small", broken)
    config = json.loads((broken / "config.json").read_text())
    (broken / "config.json").write_text(json.dumps(config | {"d_model": "wide"}))
    monkeypatch.setenv("ATTENTION_PRETRAINED_DIR", str(tmp_path))
    with caplog.at_level(logging.ERROR, logger="attention_app"):
        assert serve.warm_up() is None
    assert "warm-up failed" in caplog.text and "config.json" in caplog.text


def test_warm_up_without_any_model_returns_none(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTENTION_PRETRAINED_DIR", str(tmp_path))
    assert serve.warm_up() is None


def _serve_through(start: dict, chunks: list[bytes], method: str = "GET"):
    """The messages ``serve.PreloadCharts`` sends on for an app that answers with ``start``
    and then ``chunks`` of body."""
    import asyncio

    async def app(scope, receive, send):
        await send({"type": "http.response.start", "status": 200, **start})
        for i, chunk in enumerate(chunks):
            await send({"type": "http.response.body", "body": chunk,
                        "more_body": i < len(chunks) - 1})

    sent = []

    async def send(message):
        sent.append(message)

    asyncio.run(serve.PreloadCharts(app, chunk="PlotlyChart.abc.js")(
        {"type": "http", "method": method, "path": "/"}, None, send))
    return sent


HTML = [(b"content-type", b"text/html; charset=utf-8"), (b"content-length", b"40")]
PAGE = [b"<html><head><title>x</title>", b"</head><body></body></html>"]
TAG = b'<script type="module" crossorigin src="./static/js/PlotlyChart.abc.js"></script>'


def test_the_page_gets_the_chart_module_once_and_its_length_follows():
    start, body = _serve_through({"headers": HTML}, PAGE)
    html = b"".join(PAGE).replace(b"</head>", TAG + b"</head>")
    assert body["body"] == html and not body.get("more_body")
    assert dict(start["headers"])[b"content-length"] == str(len(html)).encode()
    assert [k for k, _ in start["headers"]].count(b"content-length") == 1


def test_other_answers_pass_through_unchanged():
    for headers, method in (([(b"content-type", b"application/json")], "GET"),
                            (HTML + [(b"content-encoding", b"gzip")], "GET"),
                            (HTML, "HEAD")):
        sent = _serve_through({"headers": headers}, PAGE, method)
        assert [m.get("body") for m in sent[1:]] == PAGE
        assert sent[0]["headers"] == headers


def test_the_served_page_loads_a_chart_module_the_server_has():
    import re
    import urllib.request

    from testkit.harness import streamlit_server

    with streamlit_server(script="serve.py") as server:
        with urllib.request.urlopen(server.url + "/") as page:
            html = page.read()
            assert int(page.headers["Content-Length"]) == len(html)
        src = re.search(rb'<script type="module" crossorigin src="\./(static/js/PlotlyChart'
                        rb'\.[\w-]+\.js)"></script></head>', html)
        assert src, html[-600:]
        with urllib.request.urlopen(f"{server.url}/{src[1].decode()}") as chunk:
            assert chunk.status == 200 and b"plotly" in chunk.read().lower()
