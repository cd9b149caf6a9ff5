"""serve.py: the app started by Streamlit's ``st.App``, warmed up before it serves."""

from __future__ import annotations

import json
import logging
import shutil

import serve
from model import GenerationSettings
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
    # Positionally, as app.py's decode_or_explain asks (Streamlit keys its cache by the
    # arguments as passed: decode(key, s) and decode(key, s, GREEDY) are two entries), with
    # the settings a first visit's sidebar gives.
    assert [(a[1:], k) for a, k in asked] == [((state.DEFAULT_SENTENCE, GenerationSettings()), {})]
    assert asked[0][0][0] == model_key(pretrained_root() / DEFAULT_MODELS[0])


# After serve.warm_up() in a fresh Python: the modules app.py imports that are still not
# imported (none may be: two first visits importing one package at once can deadlock), then
# torch's thread count.
AFTER_WARM_UP = """
import ast, importlib.util, sys
import serve, torch
serve.warm_up()
wanted = set()
for node in ast.walk(ast.parse(open("app.py", encoding="utf-8").read())):
    if isinstance(node, ast.Import):
        wanted |= {a.name for a in node.names}
    elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
        wanted.add(node.module)
        if importlib.util.find_spec(node.module).submodule_search_locations:  # a package
            wanted |= {f"{node.module}.{a.name}" for a in node.names
                       if importlib.util.find_spec(f"{node.module}.{a.name}") is not None}
print(sorted(m for m in wanted if m not in sys.modules))
print(torch.get_num_threads())
"""


def test_the_warm_up_imports_what_app_py_imports_and_computes_on_one_thread():
    # serve.py's warm-up lists app.py's imports again (serve._import_app): every module
    # app.py imports is imported before the server answers. And the warm-up loads the model
    # before app.py runs: the one-thread rule must already hold (ui.cache sets it), or every
    # torch operation waits on a second, busy core (a fresh torch process here uses 2).
    missing, threads = fresh_python(AFTER_WARM_UP).strip().splitlines()[-2:]
    assert missing == "[]", missing
    assert threads == "1"


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


def test_the_lifespan_warms_up_before_the_server_answers(monkeypatch):
    # st.App runs the lifespan before it serves (its port already bound: requests wait):
    # the warm-up must be done by the time it yields, not started in the background.
    import asyncio

    done = []
    monkeypatch.setattr(serve, "warm_up", lambda: done.append("warm-up"))

    async def start():
        async with serve.lifespan(None):
            return list(done)

    assert asyncio.run(start()) == ["warm-up"]
