"""ui/first_page.py: the default page's top and first chart, drawn from a snapshot while
serve.py warms up, then the app itself."""

from __future__ import annotations

import json
import shutil
import threading

import pytest
from streamlit.testing.v1 import AppTest

import serve
from model.backends import load
from testkit.harness import ROOT, fresh_python
from ui import first_page, startup
from ui.i18n import LANGUAGES, URL_ALIASES


@pytest.fixture(autouse=True)
def fresh_snapshot_cache():
    first_page.snapshot.cache_clear()
    yield
    first_page.snapshot.cache_clear()


def test_the_shipped_snapshot_is_what_the_app_draws_now():
    # The app itself (AppTest, a first visit with no link) against the file: a change to the
    # default model, its card, the viz builders or the strings must rebuild it.
    built = first_page.dumps(first_page.build())
    assert first_page.SNAPSHOT.read_text(encoding="utf-8") == built, (
        "ui/first_page.json is stale: run python -m ui.first_page")


def test_the_snapshot_is_the_default_models_first_step_in_each_language():
    snap = first_page.snapshot()
    assert snap is not None  # the repository's pretrained/ and the card it was built with
    assert snap["model"] == load.default_model(load.available_models())
    assert set(snap["pages"]) == set(LANGUAGES.values())
    for page in snap["pages"].values():
        figure = page["chart"]["figure"]
        assert any(trace["type"] == "heatmap" for trace in figure["data"])  # where heads look
        assert page["header"][0][0] in ("html", "markdown")  # the translation first
    assert snap["pages"]["en"]["note"] != snap["pages"]["zh"]["note"]


def test_the_language_of_a_first_visit_is_the_apps():
    # Every ?lang= value the language radio takes on a first load, and nothing else.
    snap = first_page.snapshot()
    assert first_page.page_language({}, snap) == "en"
    for raw, option in [*URL_ALIASES.items(), *((o, o) for o in LANGUAGES)]:
        for shown in (raw, raw.upper(), f" {raw} "):
            want = LANGUAGES[option] if shown.strip().lower() in URL_ALIASES or shown in (
                LANGUAGES) else None
            assert first_page.page_language({"lang": shown}, snap) == want, shown
    assert first_page.page_language({"lang": "fr"}, snap) is None
    assert first_page.page_language({"lang": "zh", "view": "cross"}, snap) is None


def test_its_paths_are_model_backends_loads():
    assert first_page.PRETRAINED_DIR == load.PRETRAINED_DIR
    assert first_page.PRETRAINED_ENV == load.PRETRAINED_ENV


def test_another_models_folder_or_card_gets_no_snapshot(tmp_path, monkeypatch):
    monkeypatch.setenv(first_page.PRETRAINED_ENV, str(tmp_path))
    assert first_page.snapshot() is None
    first_page.snapshot.cache_clear()
    monkeypatch.delenv(first_page.PRETRAINED_ENV)
    model = json.loads(first_page.SNAPSHOT.read_text(encoding="utf-8"))["model"]
    shutil.copytree(ROOT / "pretrained" / model, tmp_path / model,
                    ignore=shutil.ignore_patterns("*.safetensors"))
    monkeypatch.setattr(first_page, "PRETRAINED_DIR", tmp_path)
    assert first_page.snapshot() is not None  # the same card
    card = tmp_path / model / "card.json"
    card.write_text(card.read_text(encoding="utf-8") + " ", encoding="utf-8")
    first_page.snapshot.cache_clear()
    assert first_page.snapshot() is None  # a retrained model: its first step may differ


def test_an_unreadable_snapshot_is_none(tmp_path, monkeypatch):
    for text in ("", "{", "[]", '{"model": 3}'):
        (tmp_path / "first_page.json").write_text(text, encoding="utf-8")
        monkeypatch.setattr(first_page, "SNAPSHOT", tmp_path / "first_page.json")
        first_page.snapshot.cache_clear()
        assert first_page.snapshot() is None, text


def test_reading_and_drawing_it_imports_no_torch():
    # The point of the page: it is drawn before torch (1.3-1.9 s to import) is there.
    code = ("import sys; from ui import first_page; assert first_page.snapshot(); "
            "import plotly.graph_objects; print(sorted(m for m in ('torch', 'model', 'viz') "
            "if m in sys.modules))")
    out = fresh_python(code)
    assert out.split()[-1] == "[]"


def _draw_snapshot(language):
    from ui import first_page

    first_page.draw(first_page.snapshot()["pages"][language])


def test_the_drawn_page_is_the_snapshots(monkeypatch):
    for language, page in first_page.snapshot()["pages"].items():
        at = AppTest.from_function(_draw_snapshot, args=(language,)).run()
        assert not at.exception
        kind, body = page["header"][0]
        heading = at.get("html")[0].proto.body if kind == "html" else at.markdown[0].value
        assert heading == body
        assert [c.value for c in at.caption] == [
            b for k, b in page["header"] if k == "caption"] + [page["note"]]
        drawn = json.loads(at.get("plotly_chart")[0].proto.spec)
        assert drawn["data"] == page["chart"]["figure"]["data"]  # the same cells and labels


def test_only_a_warming_server_without_a_link_draws_it(monkeypatch):
    class Params(dict):
        def to_dict(self):
            return dict(self)

    for warming, warm, wanted in ((False, False, None), (True, True, None),
                                  (True, False, "en")):
        monkeypatch.setattr(startup, "WARMING", threading.Event())
        monkeypatch.setattr(startup, "WARM", threading.Event())
        if warming:
            startup.WARMING.set()
        if warm:
            startup.WARM.set()
        monkeypatch.setattr(first_page.st, "query_params", Params())
        assert first_page.wanted() == wanted
        monkeypatch.setattr(first_page.st, "query_params", Params(lang="简体中文"))
        assert first_page.wanted() == (wanted and "zh")
        monkeypatch.setattr(first_page.st, "query_params", Params(sentence="i like tea ."))
        assert first_page.wanted() is None  # a link opens its own page


def test_a_first_visit_while_warming_reruns_into_the_app(monkeypatch):
    # app.py as a visit during the warm-up meets it: the snapshot first, then, once the
    # warm-up says it is done, the whole app (the sidebar's sentence box, the stepper).
    monkeypatch.setattr(startup, "WARMING", threading.Event())
    monkeypatch.setattr(startup, "WARM", threading.Event())
    monkeypatch.setattr(startup, "FIRST_VISIT", threading.Event())
    drawn = []
    real_draw = first_page.draw
    monkeypatch.setattr(first_page, "draw", lambda page: drawn.append(page) or real_draw(page))
    startup.WARMING.set()
    threading.Thread(target=lambda: startup.FIRST_VISIT.wait(60) and startup.WARM.set(),
                     daemon=True).start()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300).run()
    assert not at.exception
    assert drawn == [first_page.snapshot()["pages"]["en"]]  # the snapshot was drawn first
    assert at.sidebar.text_input and at.slider  # then the app itself
    assert not any(c.value == first_page.snapshot()["pages"]["en"]["note"] for c in at.caption)


def test_the_warm_up_waits_for_a_first_visit_and_says_when_it_is_done(monkeypatch):
    order = []
    monkeypatch.setattr(startup, "WARM", threading.Event())
    monkeypatch.setattr(startup, "FIRST_VISIT", threading.Event())
    monkeypatch.setattr(serve, "warm_up", lambda: order.append("warm-up"))
    thread = threading.Thread(target=serve.warm_up_after_first_page)
    thread.start()
    thread.join(0.3)
    assert order == [] and not startup.WARM.is_set()  # waiting for a visit's first page
    startup.FIRST_VISIT.set()
    thread.join(10)
    assert order == ["warm-up"] and startup.WARM.is_set()


def test_a_failed_warm_up_still_lets_the_waiting_visits_go_on(monkeypatch):
    monkeypatch.setattr(startup, "WARM", threading.Event())
    monkeypatch.setattr(startup, "FIRST_VISIT_WAIT_S", 0.0)

    def broken():
        raise MemoryError

    monkeypatch.setattr(serve, "warm_up", broken)
    with pytest.raises(MemoryError):
        serve.warm_up_after_first_page()
    assert startup.WARM.is_set()
