"""serve.py and ui/warm.py: the app started by Streamlit's ``st.App``, its warm-up started
with the server in a thread, and app.py waiting for it before it imports anything else."""

from __future__ import annotations

import ast
import json
import logging
import shutil
import sys
import threading

import pytest

import serve
from model import GenerationSettings
from model.backends.load import DEFAULT_MODELS, pretrained_root
from testkit.harness import ROOT, fresh_python
from ui import warm
from ui.cache import load_model, model_key


@pytest.fixture
def warm_up():
    """``warm.warm_up`` with its once-per-process cache emptied before and after."""
    warm.warm_up.clear()
    yield warm.warm_up
    warm.warm_up.clear()


def test_warm_up_loads_the_default_model_into_the_apps_own_cache(warm_up):
    translator = warm_up()
    assert translator is not None
    folder = pretrained_root() / DEFAULT_MODELS[0]
    # The app's first run asks the same cache for the same folder: no second load.
    assert load_model(*model_key(folder)) is translator


def test_warm_up_decodes_a_first_visits_sentence_through_the_apps_cache(monkeypatch, warm_up):
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
    translator = warm_up()
    assert translator is not None
    # Positionally, as app.py's decode_or_explain asks (Streamlit keys its cache by the
    # arguments as passed: decode(key, s) and decode(key, s, GREEDY) are two entries), with
    # the settings a first visit's sidebar gives.
    assert [(a[1:], k) for a, k in asked] == [((state.DEFAULT_SENTENCE, GenerationSettings()), {})]
    assert asked[0][0][0] == model_key(pretrained_root() / DEFAULT_MODELS[0])


# After warm.warm_up() in a fresh Python: the modules app.py imports that are still not
# imported (none may be: two first visits importing one package at once can deadlock), then
# torch's thread count.
AFTER_WARM_UP = """
import ast, importlib.util, sys
import torch
from ui import warm
warm.warm_up()
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


@pytest.mark.slow  # over ~5 s: run in CI, not in the quick tier
def test_the_warm_up_imports_what_app_py_imports_and_computes_on_one_thread():
    # The warm-up lists app.py's imports again (warm._import_app): every module app.py
    # imports is imported by the time its first run goes on. And the warm-up loads the model
    # before app.py runs: the one-thread rule must already hold (ui.cache sets it), or every
    # torch operation waits on a second, busy core (a fresh torch process here uses 2).
    missing, threads = fresh_python(AFTER_WARM_UP).strip().splitlines()[-2:]
    assert missing == "[]", missing
    assert threads == "1"


def test_warm_up_logs_a_broken_default_model_and_returns(tmp_path, monkeypatch, caplog,
                                                         warm_up):
    broken = tmp_path / "broken"
    shutil.copytree(pretrained_root() / "en-zh-small", broken)
    config = json.loads((broken / "config.json").read_text())
    (broken / "config.json").write_text(json.dumps(config | {"d_model": "wide"}))
    monkeypatch.setenv("ATTENTION_PRETRAINED_DIR", str(tmp_path))
    with caplog.at_level(logging.ERROR, logger="attention_app"):
        assert warm_up() is None
    assert "warm-up failed" in caplog.text and "config.json" in caplog.text


def test_warm_up_without_any_model_returns_none(tmp_path, monkeypatch, warm_up):
    monkeypatch.setenv("ATTENTION_PRETRAINED_DIR", str(tmp_path))
    assert warm_up() is None


def test_the_lifespan_starts_the_warm_up_and_serves_at_once(monkeypatch):
    # st.App serves once the lifespan has yielded: it must yield while the warm-up still
    # runs (in a thread of its own), so that a browser starts meanwhile.
    import asyncio

    started, release, done = threading.Event(), threading.Event(), threading.Event()

    def slow_warm_up():
        started.set()
        release.wait(10)
        done.set()

    monkeypatch.setattr(warm, "warm_up", slow_warm_up)

    async def start():
        async with serve.lifespan(None):
            return started.wait(10), done.is_set()

    assert asyncio.run(start()) == (True, False)  # started, and not finished
    release.set()
    assert done.wait(10)


def test_a_second_caller_waits_for_the_running_warm_up_and_shares_its_result(monkeypatch,
                                                                               warm_up):
    # What a first visit's run does while serve.py's thread warms up: it waits (on
    # Streamlit's cache lock) instead of importing and loading again at the same time.
    calls, release = [], threading.Event()

    def import_app():
        calls.append(threading.current_thread().name)
        release.wait(10)
        raise RuntimeError("no app here")  # warm_up logs it and returns None

    monkeypatch.setattr(warm, "_import_app", import_app)
    first = threading.Thread(target=warm_up, name="warm-up")
    first.start()
    while not calls:
        threading.Event().wait(0.01)
    second = threading.Thread(target=warm_up, name="first visit")
    second.start()
    second.join(0.3)
    assert second.is_alive()  # waiting for the first run, not running its own
    release.set()
    first.join(10)
    second.join(10)
    assert calls == ["warm-up"]


def _top_level_imports(path) -> list[tuple[int, str]]:
    """(line, module) of each import statement at the top level of ``path``."""
    found = []
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            found.append((node.lineno, node.module))
    return found


def test_app_py_waits_for_the_warm_up_before_it_imports_the_app():
    # app.py's first statement that is not an import of Streamlit, the standard library or
    # ui.warm is the call of warm_up(), and ui/warm.py imports nothing of the app's at its
    # top, so the first run never imports what the warm-up's thread is importing.
    tree = ast.parse((ROOT / "app.py").read_text(encoding="utf-8"))
    call = next(n for n in tree.body if isinstance(n, ast.Expr)
                and isinstance(n.value, ast.Call) and getattr(n.value.func, "id", "") == "warm_up")
    light = set(sys.stdlib_module_names) | {"__future__", "streamlit", "ui.warm"}
    before = [m for line, m in _top_level_imports(ROOT / "app.py") if line < call.lineno]
    assert before and set(before) <= light, before
    assert {m.split(".")[0] for _, m in _top_level_imports(ROOT / "ui" / "warm.py")} <= light


def test_the_warm_up_spinner_speaks_both_languages():
    from ui.i18n import STRINGS

    assert all(text in warm.STARTING for text in STRINGS["spinner_starting"].values())
