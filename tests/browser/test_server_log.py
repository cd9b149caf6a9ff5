"""The server's log stays quiet through a session: ``streamlit run serve.py`` as README says
to run it (every setting from ``.streamlit/config.toml``, the file watcher's included, none
from the command line), 30 clicks in Chromium and links with every decoding setting, and not
one warning, traceback or file-watcher line in what the server printed; nor after the
verdict's button that opens Chinese typed for the English -> Chinese model with the
Chinese -> English model (tests/test_quiet_log.py presses every other button and switch in
AppTest and reads Streamlit's loggers).

A checkout that holds its virtual environment (README's first step makes ``.venv`` in the
repository's folder, and so does CI's ``.ci/run``) has some 5,000 folders beside the app.
Streamlit's file watcher, when on, watches the app's folder with all its subfolders and
floods the log with "Inotify queue overflowed" lines. So that the test can fail wherever it
runs, with or without a ``.venv`` in the checkout, it puts as many empty folders beside the
app itself (under the git-ignored ``screenshots/``) for as long as its server runs.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest

from testkit.harness import ROOT, Server, streamlit_server
from ui.i18n import STRINGS

CLICKS = 30
FOLDERS = 5000  # about as many as a .venv with the app's packages has
#: What must not be in the server's log: Python's and Streamlit's warnings, tracebacks and
#: the file watcher's complaints.
NOISE = ("Inotify", "WARNING", "Warning", "Traceback")


@pytest.fixture(scope="module")
def app_server() -> Iterator[Server]:
    """This module's own server in place of the session's (tests/browser/conftest.py, whose
    ``app`` fixture then opens this one): ``streamlit run serve.py`` with the settings of
    ``.streamlit/config.toml`` only, while ``FOLDERS`` empty folders sit in the app's folder
    (removed when the server has ended)."""
    (ROOT / "screenshots").mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory(dir=ROOT / "screenshots", prefix="folders-") as crowd:
        for i in range(FOLDERS // 50):
            for j in range(50):
                (Path(crowd) / f"{i}" / f"{j}").mkdir(parents=True)
        try:
            with streamlit_server(timeout=60, file_watcher=None) as server:
                yield server
        except RuntimeError as exc:
            pytest.fail(str(exc), pytrace=False)


def noise(log: str) -> list[str]:
    """The lines of ``log`` that contain any of ``NOISE``."""
    return [line for line in log.splitlines() if any(word in line for word in NOISE)]


def test_noise_finds_what_it_looks_for():
    """The check below is not vacuous: the lines the watcher, a library and a failure print
    are caught, the server's ordinary lines are not."""
    log = ("  You can now view your Streamlit app in your browser.\n"
           "Inotify queue overflowed; reconciling recursive watches below b'/app'\n"
           "2026-11-25 04:00:00.123 WARNING streamlit.runtime: something\n"
           "/x/site-packages/lib.py:9: DeprecationWarning: use something else\n"
           "Traceback (most recent call last):\n"
           "  URL: http://127.0.0.1:8501\n")
    assert [line[:10] for line in noise(log)] == ["Inotify qu", "2026-11-25", "/x/site-pa",
                                                  "Traceback "]


def test_thirty_clicks_leave_the_server_log_quiet(app, app_server):
    """Steps forward to the last step and back, with another view every fifth click; then
    the server's log has no warning, traceback or file-watcher line."""
    snap = app.snapshot()
    total = int(snap["step"].split()[-1])
    assert total >= 2, snap["step"]
    views = app.views()
    step, forward = 1, True
    for click in range(1, CLICKS + 1):
        if click % 5 == 0:  # the next view in the picker
            app.open_view(views[(views.index(app.snapshot()["tab"]) + 1) % len(views)],
                          panelMin=1)
            continue
        if step in (1, total):
            forward = step == 1
        step += 1 if forward else -1
        app.click_button("Next ▶" if forward else "◀ Previous", step=f"Step {step} of {total}")
    log = app_server.output(None)
    assert "You can now view your Streamlit app" in log, log[-3000:]  # the log is read
    found = noise(log)
    assert not found, f"{len(found)} noisy lines in the server's log, the first ones:\n" + \
        "\n".join(found[:20])


LINKS = ("strategy=beam&num_beams=3&length_penalty=1.2&no_repeat_ngram_size=2"
         "&repetition_penalty=1.1",
         "strategy=sampling&temperature=0.7&top_k=5&top_p=0.9&seed=3")


def test_links_with_every_setting_leave_the_server_log_quiet(app, app_server):
    """Links that set every strategy's settings (which the app puts into the widgets'
    state before drawing them) open without a warning in the server's log: Streamlit logs
    one, with a stack trace, for a widget given both a default and a state value."""
    for query in LINKS:
        app.page.goto(f"{app.url}/?pinyin=false&{query}")
        app.wait_ready(stepOf="Step 1 of ")
    found = noise(app_server.output(None))
    assert not found, f"{len(found)} noisy lines in the server's log, the first ones:\n" + \
        "\n".join(found[:20])


def test_the_switch_between_directions_leaves_the_server_log_quiet(app, app_server):
    """Chinese typed for the English -> Chinese model, the verdict's button that opens it
    with the Chinese -> English model pressed, then the page turned to Chinese: the model
    picker's value is set through the Session State API each time, which made Streamlit
    log a warning with a stack trace while the picker also had a default (issue 54)."""
    app.page.goto(f"{app.url}/?pinyin=false&sentence={quote('我们为什么工作？')}")
    app.wait_ready(stepOf="Step 1 of ")
    label = STRINGS["verdict_switch_zh"]["en"].split(":")[0]  # "Translate it from Chinese"
    app.act(app.page.get_by_role("button", name=label).click, stepOf="Step 1 of ")
    assert app.combobox("Model").input_value() == "zh-en-everyday"
    chinese = app.page.locator("[data-testid='stSidebar']").get_by_text("简体中文", exact=True)
    app.act(chinese.click, tab=STRINGS["tab_cross"]["zh"])
    assert app.combobox(STRINGS["model"]["zh"]).input_value() == "zh-en-everyday"
    found = noise(app_server.output(None))
    assert not found, f"{len(found)} noisy lines in the server's log, the first ones:\n" + \
        "\n".join(found[:20])
