"""Real-browser fixtures: one ``streamlit run app.py`` per test session, Debian's Chromium
driven by Playwright, and ``AppPage``, a thin driver that acts like a user and waits until
the app has finished rerunning and Plotly has drawn before anything is asserted.

The server launcher and the in-page JavaScript are shared with the benchmarks
(``testkit/harness.py``).
Chromium is never downloaded: without ``/usr/bin/chromium`` every browser test fails and
says to ``apt-get install chromium fonts-noto-cjk``.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from testkit.harness import (
    CHROMIUM,
    CHROMIUM_ARGS,
    CJK,
    GLYPH_JS,
    INJECTION_JS,
    READY_JS,
    ROOT,
    SNAPSHOT_JS,
    VIEW_OPTIONS,
    VIEW_PANEL,
    VIEWPORT,
    RunCounter,
    Server,
    chart,
    chromium_problem,
    page_problems,
    streamlit_server,
    view_option,
)

SCREENSHOTS = ROOT / "screenshots" / "browser"
TIMEOUT_S = 90  # one rerun, model loading included, on a busy 2-core machine


@pytest.fixture(scope="session")
def app_server() -> Iterator[Server]:
    """A ``streamlit run app.py`` started for this test session on a free loopback port
    (cwd: repository root), its health endpoint answering; terminated when the session ends.
    Fails with the server's output if it does not come up within 60 s."""
    try:
        with streamlit_server(timeout=60) as server:
            yield server
    except RuntimeError as exc:
        pytest.fail(str(exc), pytrace=False)


@pytest.fixture(scope="session")
def app_url(app_server) -> str:
    """The test server's URL, ``http://127.0.0.1:<port>``."""
    return app_server.url


class _Chromium:
    """One headless Debian Chromium (Playwright sync API) for a run of browser tests in a
    row: launched by the first test that asks for it, closed after the last browser test
    before a test of another folder (``pytest_runtest_teardown`` below), so that Playwright's
    event loop in the main thread is gone when the other tests run; launched again if a
    browser test comes later."""

    def __init__(self):
        self.playwright = self.chromium = None

    def get(self):
        """The running Chromium, launched now if none is. Fails, naming the package to
        install, when ``/usr/bin/chromium`` is missing."""
        if self.chromium is None:
            problem = chromium_problem()
            if problem:
                pytest.fail(problem, pytrace=False)
            from playwright.sync_api import sync_playwright

            self.playwright = sync_playwright().start()
            self.chromium = self.playwright.chromium.launch(executable_path=CHROMIUM,
                                                            args=CHROMIUM_ARGS)
        return self.chromium

    def close(self) -> None:
        """Close Chromium and stop Playwright, if they run."""
        if self.chromium is not None:
            self.chromium.close()
            self.playwright.stop()
            self.playwright = self.chromium = None


_CHROMIUM = _Chromium()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item, nextitem):
    """After a browser test's fixtures are torn down: close Chromium if the next test is not
    a browser test (or there is none)."""
    result = yield
    if nextitem is None or "browser" not in nextitem.path.parts:
        _CHROMIUM.close()
    return result


def pytest_sessionfinish(session, exitstatus):
    """Close Chromium if it still runs (a run stopped in a browser test, or with -x)."""
    _CHROMIUM.close()


@pytest.fixture
def browser():
    """Headless Debian Chromium, shared by the browser tests (launched once, not per module:
    ``_Chromium``). Every test opens its own browser context (``app``, ``open_link``), so no
    cookie, storage or page is shared between tests; a context a test leaves open is closed
    after it (with its Streamlit session). Fails, naming the package to install, when
    ``/usr/bin/chromium`` is missing."""
    chromium = _CHROMIUM.get()
    yield chromium
    for context in list(chromium.contexts):
        context.close()


@pytest.fixture
def app(browser, app_server) -> Iterator[AppPage]:
    """The app open in a fresh browser context (its own Streamlit session), first run
    drawn. Fails the test if a JavaScript dialog opened or the page threw an error."""
    context = browser.new_context(viewport=VIEWPORT)
    page = context.new_page()
    driver = AppPage(page, app_server)
    driver.open()
    yield driver
    context.close()
    assert not driver.dialogs, f"JavaScript dialogs opened: {driver.dialogs}"
    assert not driver.page_errors, f"uncaught errors in the page: {driver.page_errors}"


def open_link(browser, server: Server, url: str, **ready) -> AppPage:
    """``url`` (a link into the app) in a fresh browser context, its first run drawn and the
    page showing ``ready`` (``AppPage.wait_ready``'s keys). Close it with
    ``page.context.close()``."""
    page = browser.new_context(viewport=VIEWPORT).new_page()
    opened = AppPage(page, server)
    before = opened.runs.done
    page.goto(url)
    opened.wait_ready(before, **ready)
    return opened


class AppPage:
    """Drives the app in one page like a user and reads what the page shows.

    Every action waits until the server has reported the script run it triggered as
    finished (``RunCounter``, on the page's websocket), then until the page is idle and
    shows what the caller expects (``READY_JS``: ``stApp``'s ``data-test-script-state`` is
    ``notRunning``, no stale elements, no widget still a loading skeleton, the expected
    number of Plotly charts each with its SVG, and optionally a step label, source tokens,
    an alert, the chosen view, a chart title), and finally asserts that no exception box or
    error alert is shown. ``snapshot()`` returns the page's state as a dict (see
    ``SNAPSHOT_JS``).
    """

    def __init__(self, page, server: Server):
        self.page, self.server, self.url = page, server, server.url
        self.dialogs: list[str] = []
        self.page_errors: list[str] = []
        self.runs = RunCounter(page)
        page.on("dialog", self._on_dialog)
        page.on("pageerror", lambda err: self.page_errors.append(str(err)))

    def _on_dialog(self, dialog) -> None:
        self.dialogs.append(f"{dialog.type}: {dialog.message}")
        dialog.dismiss()

    # -- waiting and reading -----------------------------------------------------------------

    def open(self) -> dict:
        """Load the app and wait for its first run: step 1 with the next-token chart. It
        opens with ``pinyin=false``, so that tick labels read as the model's tokens
        (pinyin, on by default, is tested by ``test_pinyin_labels.py`` and,
        with every label measured, in Present mode by ``test_labels.py``)."""
        self.page.goto(f"{self.url}/?pinyin=false")
        return self.wait_ready(0, stepOf="Step 1 of ", titles=["Step 1, layer"])

    def wait_ready(self, after: int | None = None, **want) -> dict:
        """Wait until the server has finished more than ``after`` runs (if given) and the
        page is idle and shows ``want`` (keys of ``READY_JS``: charts, minCharts,
        panelCharts, panelMin, titles, step, stepOf, source, alert, tab, rows, slider), then
        assert no exception box or error alert is shown. Returns the snapshot."""
        deadline = time.monotonic() + TIMEOUT_S
        while after is not None and self.runs.done <= after:
            if time.monotonic() > deadline:
                self.fail_not_ready(want, f"the server finished no run after the {after}th")
            self.page.wait_for_timeout(20)  # lets Playwright deliver websocket events
        try:
            self.page.wait_for_function(READY_JS, arg=want, polling="raf",
                                        timeout=max(deadline - time.monotonic(), 1) * 1000)
        except Exception as exc:
            self.fail_not_ready(want, type(exc).__name__)
        return self.assert_clean()

    def fail_not_ready(self, want: dict, why: str):
        """Raise AssertionError describing the page and the server's output."""
        snap = self.snapshot()
        charts = [(c["title"], c["drawn"]) for c in snap["charts"]]
        raise AssertionError(
            f"page not ready for {want}: {why}; problems {page_problems(snap)}; state "
            f"{snap['state']}, runs {self.runs.done}, stale {snap['stale']}, sentence "
            f"{(snap['sentence'] or '')[:80]!r}, charts {charts}, "
            f"step {snap['step']!r}, tab {snap['tab']!r}, alerts {snap['alerts']}; "
            f"server output:\n{self.server.output(3000)}") from None

    def act(self, action: Callable[[], object], **want) -> dict:
        """Do ``action`` (something that reruns the script) and ``wait_ready`` for it."""
        before = self.runs.done
        action()
        return self.wait_ready(before, **want)

    def snapshot(self) -> dict:
        """The page's state now (see ``testkit.harness.SNAPSHOT_JS``)."""
        return self.page.evaluate(SNAPSHOT_JS)

    def assert_clean(self) -> dict:
        """Assert no Streamlit exception box and no error alert; returns the snapshot."""
        snap = self.snapshot()
        assert not page_problems(snap), page_problems(snap)
        return snap

    def chart_count(self) -> int:
        """How many Plotly charts are on the page with their SVG drawn."""
        return sum(c["drawn"] for c in self.snapshot()["charts"])

    def ticks(self, title: str) -> tuple[list[str], list[str]]:
        """(x, y) tick labels of the one chart whose title starts with ``title``."""
        found = chart(self.snapshot(), title)
        return found["x"], found["y"]

    def wait_ticks(self, title: str, check: Callable[[list[str], list[str]], bool],
                   timeout: float = 15.0) -> tuple[list[str], list[str]]:
        """Poll until ``check(x, y)`` holds for chart ``title`` (Plotly redraws a chart in
        place after the rerun has ended); AssertionError with the labels if it never does."""
        deadline = time.monotonic() + timeout
        while True:
            x, y = self.ticks(title)
            if check(x, y):
                return x, y
            if time.monotonic() > deadline:
                raise AssertionError(f"chart {title!r} ticks never passed the check: "
                                     f"x={x}, y={y}")
            self.page.wait_for_timeout(100)

    def injected_markup(self) -> list[str]:
        """User text that became live markup: scripts, handlers, links, LaTeX, colours."""
        return self.page.evaluate(INJECTION_JS)

    def assert_cjk_renders(self, labels: list[str], where: str) -> None:
        """Assert ``labels`` contain CJK characters and each one draws as a real glyph (not
        a missing-glyph box) in the font the tick labels actually use."""
        chars = sorted({ch for label in labels for ch in CJK.findall(label)})
        assert chars, f"no Chinese characters among the {where} tick labels: {labels}"
        tick = self.page.locator("[data-testid='stPlotlyChart'] .ytick text").first
        font = tick.evaluate("e => { const s = getComputedStyle(e); "
                             "return `${s.fontWeight} 40px ${s.fontFamily}`; }")
        tofu = [ch for ch in chars[:12]
                if self.page.evaluate(GLYPH_JS, [ch, font])["isTofu"]]
        assert not tofu, (f"{where}: {tofu} draw as missing-glyph boxes in {font!r}; "
                          "install fonts-noto-cjk")

    # -- user actions ------------------------------------------------------------------------

    def enter_sentence(self, text: str, box_label: str = "English sentence", **ready) -> dict:
        """Type ``text`` into the sidebar's sentence box labelled ``box_label`` (the language
        the model reads: "English sentence", "Chinese sentence", or "Sentence to translate"
        for a model whose languages are not known) and press Enter."""
        box = self.page.get_by_role("textbox", name=box_label, exact=True)

        def type_it():
            box.fill(text)
            box.press("Enter")

        return self.act(type_it, **ready)

    def click_button(self, name: str, **ready) -> dict:
        """Click the button labelled ``name``."""
        button = self.page.get_by_role("button", name=name, exact=True)
        return self.act(button.click, **ready)

    def view_option(self, name: str):
        """The view picker's option ``name`` (a button with the role "radio")."""
        return view_option(self.page, name)

    def panel(self):
        """The container that holds the chosen view."""
        return self.page.locator(VIEW_PANEL)

    def open_view(self, name: str, **ready) -> dict:
        """Choose view ``name`` in the view picker (the chosen one is left as it is: no
        rerun)."""
        option = self.view_option(name)
        snap = (self.snapshot() if option.get_attribute("aria-checked") == "true"
                else self.act(option.click, **{"tab": name, **ready}))
        assert snap["tab"] == name, snap["tab"]
        return snap

    def views(self) -> list[str]:
        """The view picker's options, as the page shows them."""
        return [v.strip() for v in self.page.locator(VIEW_OPTIONS).all_inner_texts()]

    def each_view(self) -> Iterator[tuple[str, dict]]:
        """Choose every view in turn (whatever the interface language); each must draw at
        least one chart in its panel with no error. Yields (view name, snapshot)."""
        for name in self.views():
            option = self.view_option(name)
            if option.get_attribute("aria-checked") != "true":
                self.act(option.click, tab=name, panelMin=1)
            snap = self.assert_clean()
            drawn = self.panel().locator("[data-testid='stPlotlyChart'] svg.main-svg")
            assert drawn.count() >= 1, name
            assert not snap["exceptions"]
            yield name, snap

    def combobox(self, label: str, in_tab: bool = False):
        """The select box labelled ``label`` (in the chosen view's panel if ``in_tab``)."""
        scope = (self.panel() if in_tab
                 else self.page.locator("[data-testid='stSidebar']"))
        return scope.get_by_role("combobox", name=label, exact=True)

    def open_combobox(self, label: str, in_tab: bool = False):
        """Open select box ``label``'s list and return the listbox. Clicks it and, if the
        list stays shut (a click right after a viewport resize can be lost), presses
        ArrowDown, which opens it from the keyboard."""
        box = self.combobox(label, in_tab)
        box.click()
        if box.get_attribute("aria-expanded") != "true":
            box.press("ArrowDown")
        listbox = self.page.get_by_role("listbox")
        listbox.wait_for()
        return listbox

    def options(self, label: str, in_tab: bool = False) -> list[str]:
        """The option texts of select box ``label`` (opens it, reads, closes it)."""
        listbox = self.open_combobox(label, in_tab)
        names = listbox.get_by_role("option").all_inner_texts()
        self.combobox(label, in_tab).press("Escape")
        listbox.wait_for(state="hidden")
        return [n.strip() for n in names]

    def select(self, label: str, option: str, in_tab: bool = False, **ready) -> dict:
        """Pick ``option`` in select box ``label``."""
        box = self.combobox(label, in_tab)

        def pick():
            self.open_combobox(label, in_tab).get_by_role("option", name=option,
                                                          exact=True).click()

        snap = self.act(pick, **ready)
        assert box.input_value() == option, box.input_value()
        return snap

    def slider_key(self, key: str, **ready) -> dict:
        """Focus the "Decoding step" slider and press ``key`` (Home, End, ArrowLeft, ...)."""
        thumb = self.page.locator(".st-key-step [data-testid='stSlider'] input[type='range']")
        return self.act(lambda: thumb.press(key), **ready)

    def screenshot(self, name: str) -> Path | None:
        """With ``SCREENSHOTS=1`` in the environment, save the whole page as
        ``screenshots/browser/<name>.png`` and return the path; otherwise do nothing and
        return None (a shot asserts nothing and takes about a second: some 40 a run).

        Streamlit scrolls inside its main container, so the viewport is made as tall as
        that container's content for the shot, then restored."""
        if os.environ.get("SCREENSHOTS") != "1":
            return None
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        path = SCREENSHOTS / f"{re.sub(r'[^a-z0-9]+', '-', name.lower()).strip('-')}.png"
        size = self.page.viewport_size
        height = self.page.evaluate(
            "() => Math.max(...[...document.querySelectorAll(\"[data-testid='stMain'], "
            "[data-testid='stAppViewContainer'], [data-testid='stSidebarContent']\")]"
            ".map(e => e.scrollHeight), innerHeight)")
        self.page.set_viewport_size({"width": size["width"], "height": min(height, 8000)})
        try:
            self.page.wait_for_timeout(300)  # let the layout settle at the new height
            self.page.screenshot(path=str(path), full_page=True)
        finally:
            self.page.set_viewport_size(size)
        print(f"screenshot: {path}")
        return path
