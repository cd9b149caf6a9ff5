"""What one person waits for: click-to-settled times of the real app in headless Chromium.

    python -m benchmarks.clicks                # prints the figures
    python -m benchmarks.clicks --clicks 10    # fewer clicks per action (default 30)
    python -m benchmarks.clicks --write        # also writes them into benchmarks/RESULTS.md

Starts ``streamlit run app.py`` (``benchmarks.classroom.streamlit_server``) and drives it as
one user in one context of Debian's headless Chromium (Playwright's async API), with the
model the app preselects. Measured:

* the first visit: from ``page.goto`` until the first heatmap is in the page and until the
  page has settled, once on the fresh server (the model loads then) and then on new pages;
* for each of two sentences (the app's default and a ~20-token one), ``--clicks`` times
  each: "Next ▶" (walking through the sentence; going back to step 1 with the "First" button
  at the end is not counted), a head change and a layer change in the Cross-attention tab,
  a tab change (cycling through the tabs) and a language change (English <-> 简体中文).

A click's time runs from the click's ``pointerdown`` in the page until, in the page, the
server has reported the run it started as finished (a ``script_finished`` message on the
websocket), the app shows no running indicator and no stale element, every Plotly chart
has its SVG, and the new content is drawn: the new step label, chart titles naming the new
step / layer / head / language, the cross-attention chart with one row per step so far, the
new tab open with its charts. Both ends are ``performance.now()`` in the page (polled every
animation frame), so Playwright's own overhead is not counted. A click that does not settle
within ``--timeout`` seconds is recorded as an error and the page is brought back.

Per click it also reads the server's CPU time (utime + stime of the Streamlit process and
any children, ``/proc/<pid>/stat``), the browser's (Chromium's processes; Playwright's
driver apart), the page's main-thread time by kind (Chrome's ``Performance.getMetrics``),
the websocket bytes both ways (payload lengths, from ``page.on("websocket")``), what the
server sent (whole-script or fragment runs, elements, Plotly charts) and how many charts
Plotly drew again. The server's RSS is read at the start, after the first visit and at the
end; the load average at the start (a warning above 1.0) and the CPU other processes used
during the run are reported with the figures. Only figures are printed; nothing is asserted
about them.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import os
import string
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.classroom import (
    CHROMIUM,
    CHROMIUM_ARGS,
    READY_JS,
    VIEWPORT,
    Watcher,
    chromium_problem,
    machine,
    percentile,
    publish,
    streamlit_server,
)

HEADING = "## Clicks in Chromium (benchmarks/clicks.py)"
SENTENCES = ("why do we work ?",
             "My little brother wants to read three new books about old trains before he "
             "goes to bed tonight.")
ACTIONS = ("next step", "head change", "layer change", "tab change", "language change")
LANGS = {"English": "en", "简体中文": "zh"}  # the language radio's options (ui.i18n.LANGUAGES)
CROSS = "Cross-attention"  # the view (its id names its pickers' keys) the clicks happen in
#: The widget keys of the charts that show the current step: a step or language change must
#: redraw each of them that the page has.
STEP_CHARTS = ("step_chart", f"{CROSS}_chart")
CLK_TCK = os.sysconf("SC_CLK_TCK")

# ---------------------------------------------------------------------------------------------
# In-page JavaScript
# ---------------------------------------------------------------------------------------------

#: Runs in every document before the app's own scripts: remembers when the last pointer was
#: pressed and when the first heatmap (a Plotly heatmap's image) entered the page.
INIT_JS = """
(() => {
  window.__pressAt = null;
  window.__firstHeatmapAt = null;
  addEventListener('pointerdown', () => { window.__pressAt = performance.now(); }, true);
  const heatmap = "[data-testid='stPlotlyChart'] .heatmaplayer image";
  const seen = new MutationObserver(() => {
    if (document.querySelector(heatmap)) {
      window.__firstHeatmapAt = performance.now();
      seen.disconnect();
    }
  });
  seen.observe(document, {childList: true, subtree: true});
})();
"""

#: ``() => n``: before a click: forgets the last press and marks every Plotly chart's current
#: layout object (Plotly makes a new one whenever it draws a chart again), so that
#: ``SETTLED_JS`` can count the charts the click made Plotly draw.
MARK_JS = """
() => {
  window.__pressAt = null;
  const mark = window.__chartMark = {};
  const plots = [...document.querySelectorAll("[data-testid='stPlotlyChart'] .js-plotly-plot")];
  plots.forEach((gd) => { if (gd._fullLayout) gd._fullLayout.__chartMark = mark; });
  return plots.length;
}
"""

#: ``(want) => false | {now, pressAt, charts, replotted}``: ``READY_JS`` (the app idle, no
#: stale element, every chart drawn, and what ``want`` asks for), and every chart whose widget
#: key is in ``want.redrawn`` drawn again since ``MARK_JS`` (if the page has it); when that
#: holds, the page's clock now and at the last pointer press, how many charts the page has
#: and how many of them Plotly has drawn since ``MARK_JS``.
SETTLED_JS = f"""
(want) => {{
  const ready = {READY_JS.strip()};
  if (!ready(want)) return false;
  const stale = (gd) => gd._fullLayout && gd._fullLayout.__chartMark === window.__chartMark;
  if ((want.redrawn || []).some((key) => {{
    const gd = document.querySelector(`.st-key-${{key}} .js-plotly-plot`);
    return gd && stale(gd);
  }})) return false;
  const plots = [...document.querySelectorAll(
    "[data-testid='stPlotlyChart'] .js-plotly-plot")];
  return {{now: performance.now(), pressAt: window.__pressAt, charts: plots.length,
           replotted: plots.filter((gd) => !gd._fullLayout
             || !stale(gd)).length}};
}}
"""

#: ``() => {...}``: the controls' state, read before each click to choose what to expect.
STATE_JS = """
() => {
  const slider = document.querySelector(".st-key-step input[type='range']");
  const tab = document.querySelector("[data-testid='stTab'][aria-selected='true']");
  const lang = document.querySelector(".st-key-lang [data-testid='stRadioOption']"
                                      + "[data-selected='true']");
  const box = (key) => {
    const input = document.querySelector(`.st-key-${key} input[role='combobox']`);
    return input ? input.value : null;
  };
  const app = document.querySelector("[data-testid='stApp']");
  return {
    step: slider ? +slider.value : null,
    steps: slider ? +slider.max : null,
    tab: tab ? tab.innerText.trim() : null,
    tabs: [...document.querySelectorAll("[data-testid='stTab']")].map((t) => t.innerText.trim()),
    lang: lang ? lang.innerText.trim() : null,
    layer: box('Cross-attention_layer'),
    head: box('Cross-attention_head'),
    source: (() => {
      const md = [...document.querySelectorAll("[data-testid='stCaptionContainer']")]
        .find((e) => e.innerText.trim().startsWith('Source tokens:'));
      return md ? md.querySelectorAll('code').length : null;
    })(),
    script: app ? app.getAttribute('data-test-script-state') : null,
    charts: [...document.querySelectorAll("[data-testid='stPlotlyChart'] .gtitle")]
      .map((e) => e.textContent),
  };
}
"""

# ---------------------------------------------------------------------------------------------
# Processes: CPU time and memory from /proc
# ---------------------------------------------------------------------------------------------


def _stat(pid: int) -> list[str] | None:
    """The fields of ``/proc/<pid>/stat`` after the command name (field 3 is item 0), or
    None if the process is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text.rsplit(")", 1)[1].split()


def _comm(pid: int) -> str:
    """A process's command name (``/proc/<pid>/comm``), "" if it is gone."""
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def children() -> dict[int, list[int]]:
    """Every live process's children: parent pid -> child pids."""
    tree: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            fields = _stat(int(entry.name))
            if fields:
                tree.setdefault(int(fields[1]), []).append(int(entry.name))
    return tree


def descendants(root: int, tree: dict[int, list[int]] | None = None) -> set[int]:
    """``root`` and every process below it (children, grandchildren...), alive now
    (``tree``: a ``children()`` map to reuse)."""
    tree = children() if tree is None else tree
    found, todo = {root}, [root]
    while todo:
        for child in tree.get(todo.pop(), ()):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def cpu_seconds(pids: set[int]) -> float:
    """CPU seconds (user + system: ``/proc/<pid>/stat`` fields 14 and 15) used so far by
    ``pids``, and by the finished children each of them has waited for (fields 16, 17:
    Chromium's closed renderers, a reaped Playwright driver)."""
    ticks = 0
    for pid in pids:
        fields = _stat(pid)
        if fields:
            ticks += sum(int(x) for x in fields[11:15])
    return ticks / CLK_TCK


def rss_mib(pids: set[int]) -> float:
    """Resident memory of ``pids`` together (``VmRSS`` of ``/proc/<pid>/status``), MiB."""
    kib = 0
    for pid in pids:
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    kib += int(line.split()[1])
        except OSError:
            pass
    return kib / 1024


def machine_busy_seconds() -> float:
    """CPU seconds all processes of the machine have used (``/proc/stat``, every core)."""
    fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(x) for x in fields[:8])
    return (user + nice + system + irq + softirq + steal) / CLK_TCK


def process_cpu() -> dict[int, tuple[str, float]]:
    """Every live process: pid -> (its command line, shortened; CPU seconds so far)."""
    found = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            pid = int(entry.name)
            fields = _stat(pid)
            try:
                args = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if fields:
                line = " ".join(a.decode(errors="replace") for a in args if a) or _comm(pid)
                found[pid] = (line[:70], (int(fields[11]) + int(fields[12])) / CLK_TCK)
    return found


def top_others(before: dict[int, tuple[str, float]], after: dict[int, tuple[str, float]],
               ours: set[int], n: int = 3) -> list[str]:
    """The ``n`` processes outside ``ours`` that used the most CPU between two
    ``process_cpu`` readings (at least a second each), as "`command` (seconds)"."""
    used = sorted(((cpu - before.get(pid, ("", 0.0))[1], line)
                   for pid, (line, cpu) in after.items() if pid not in ours), reverse=True)
    return [f"`{line}` ({cpu:.0f} s)" for cpu, line in used[:n] if cpu >= 1.0]


class Meters:
    """CPU clocks of the server (its process tree) and of the browser: Chromium's processes
    and Playwright's driver (every other process below this one, told apart by name)."""

    def __init__(self, server_pid: int):
        self.server_pid = server_pid

    def read(self) -> dict[str, float]:
        """CPU seconds used so far: ``server``, ``chromium``, ``driver``."""
        tree = children()
        server = descendants(self.server_pid, tree)
        browser = descendants(os.getpid(), tree) - server - {os.getpid()}
        driver = {pid for pid in browser if _comm(pid).startswith("node")}
        return {"server": cpu_seconds(server),
                "chromium": cpu_seconds(browser - driver), "driver": cpu_seconds(driver)}

    def ours(self) -> float:
        """CPU seconds of this process and everything below it (server, browser) so far."""
        return cpu_seconds(descendants(os.getpid()))

    def server_rss(self) -> float:
        """The server's resident memory now, MiB."""
        return rss_mib(descendants(self.server_pid))


# ---------------------------------------------------------------------------------------------
# The websocket
# ---------------------------------------------------------------------------------------------


class Wire:
    """Counts one page's websocket traffic and decodes what the server sends.

    Bytes both ways (payload lengths: ``len`` of bytes, of the UTF-8 encoding of text), the
    script runs the server reported finished (``script_finished``: whole script or one
    fragment), and the elements it sent (``delta.new_element``, or by reference to one the
    browser has cached: ``ref_hash``), Plotly charts apart. A run
    of a few milliseconds can leave the page's ``data-test-script-state`` untouched, so a
    click waits for a finished run here before it looks at the page.
    """

    COUNTERS = ("bytes_in", "bytes_out", "runs", "fragment_runs", "elements", "cached",
                "charts", "chart_bytes")

    def __init__(self, page):
        for name in self.COUNTERS:
            setattr(self, name, 0)
        self._kinds: dict[str, str] = {}  # hash of a cacheable message -> element type
        self._finished = asyncio.Event()
        page.on("websocket", self._socket)

    def _socket(self, ws) -> None:
        ws.on("framereceived", self._received)
        ws.on("framesent", self._sent)

    @staticmethod
    def _size(payload) -> int:
        return len(payload) if isinstance(payload, bytes) else len(payload.encode())

    def _sent(self, payload) -> None:
        self.bytes_out += self._size(payload)

    def _received(self, payload) -> None:
        self.bytes_in += self._size(payload)
        if isinstance(payload, str):
            return
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        msg = ForwardMsg()
        try:
            msg.ParseFromString(payload)
        except Exception:  # not a ForwardMsg: bytes only
            return
        kind = msg.WhichOneof("type")
        if kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
            element = msg.delta.new_element.WhichOneof("type")
            if msg.hash:
                self._kinds[msg.hash] = element
            self.elements += 1
            if element == "plotly_chart":
                self.charts += 1
                self.chart_bytes += len(payload)
        elif kind == "ref_hash":  # an element the browser has cached: sent by reference
            self.elements += 1
            self.cached += 1
            self.charts += self._kinds.get(msg.ref_hash) == "plotly_chart"
        elif kind == "script_finished" and msg.script_finished in (
                ForwardMsg.FINISHED_SUCCESSFULLY, ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY):
            self.runs += 1
            self.fragment_runs += msg.script_finished == \
                ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY
            self._finished.set()

    def counters(self) -> dict[str, int]:
        """Every counter now."""
        return {name: getattr(self, name) for name in self.COUNTERS}

    async def wait_run(self, after: int, deadline: float) -> None:
        """Until more than ``after`` runs have finished; TimeoutError at ``deadline``
        (``time.monotonic``)."""
        while self.runs <= after:
            self._finished.clear()
            await asyncio.wait_for(self._finished.wait(), max(deadline - time.monotonic(), 0))


# ---------------------------------------------------------------------------------------------
# Expected page content, from the app's own string table
# ---------------------------------------------------------------------------------------------


def _strings() -> dict[str, dict[str, str]]:
    from ui.i18n import STRINGS

    return STRINGS


def text(key: str, lang: str, **fmt) -> str:
    """String ``key`` of the app's table in ``lang`` ("en"/"zh") as the page shows it:
    formatted with ``fmt`` and cut before the first field ``fmt`` does not fill (a title
    prefix); markdown bold markers removed."""
    entry = _strings()[key]
    template = entry.get(lang, entry["en"])
    out = []
    for literal, name, spec, _conv in string.Formatter().parse(template):
        out.append(literal)
        if name is None:
            continue
        if name not in fmt:
            break
        out.append(format(fmt[name], spec or ""))
    return "".join(out).replace("**", "")


def view_title(lang: str, layer: int, head: int | None) -> str:
    """The Cross-attention tab's chart title for ``layer`` and ``head`` (None: all heads)."""
    view = text("tab_cross", lang)
    if head is None:
        return text("view_all_heads_title", lang, view=view, layer=layer)
    return text("view_head_title", lang, view=view, layer=layer, head=head)


def step_want(lang: str, k: int, steps: int, layer: int, head: int | None) -> dict:
    """``SETTLED_JS`` expectations at step ``k`` of ``steps`` with the Cross-attention tab
    open: the step label, the step panel's charts for step k, the tab's chart with k rows, and
    every chart that shows the step drawn again."""
    cross = view_title(lang, layer, head)
    return {"step": text("step_of", lang, k=k, n=steps), "panelCharts": 1,
            "redrawn": list(STEP_CHARTS),
            "tab": text("tab_cross", lang),
            "titles": [text("step_overview_title", lang, k=k, layer=0), cross],
            "rows": {"title": cross, "n": k}}


# ---------------------------------------------------------------------------------------------
# One user
# ---------------------------------------------------------------------------------------------


@dataclass
class Click:
    """One measured click (or visit): what the user waited and what it cost."""

    label: str = ""  # what was clicked (a tab's name...)
    seconds: float | None = None  # press -> settled, in the page; None: error
    wall: float | None = None  # the same from Python, Playwright's overhead included
    cost: dict[str, float] = field(default_factory=dict)  # increase of ``User.readings``
    replotted: int = 0  # charts Plotly drew anew (or first) for this click
    charts: int = 0  # charts on the page once settled
    error: str | None = None
    first_heatmap: float | None = None  # visits only: navigation -> first heatmap
    started: float = 0.0  # time.perf_counter() at the start


@dataclass
class SentenceRun:
    """Every measured click on one sentence, by action."""

    sentence: str
    source_tokens: int | None
    steps: int | None
    clicks: dict[str, list[Click]] = field(
        default_factory=lambda: {action: [] for action in ACTIONS})


class User:
    """One person in one page: acts, waits for the page to settle, records each click."""

    def __init__(self, page, url: str, meters: Meters, timeout: float):
        self.page, self.url, self.meters, self.timeout = page, url, meters, timeout
        self.wire = Wire(page)
        self.cdp = None
        self.sentence = ""  # the sentence being measured, to bring back after a reload
        self.errors: list[str] = []
        self.page_errors: list[str] = []
        page.on("pageerror", lambda err: self.page_errors.append(str(err)[:300]))
        page.on("dialog", lambda d: asyncio.ensure_future(d.dismiss()))

    async def readings(self) -> dict[str, float]:
        """Everything a click is charged for, so far: CPU seconds (``Meters.read``), the
        websocket's counters (``Wire``) and the page's main thread (Chrome DevTools
        ``Performance.getMetrics``: ``TaskDuration``, ``ScriptDuration``, ``LayoutDuration``
        and ``RecalcStyleDuration``, seconds)."""
        if self.cdp is None:
            self.cdp = await self.page.context.new_cdp_session(self.page)
            await self.cdp.send("Performance.enable")
        metrics = {m["name"]: m["value"]
                   for m in (await self.cdp.send("Performance.getMetrics"))["metrics"]}
        return {**self.meters.read(), **self.wire.counters(),
                "task": metrics.get("TaskDuration", 0.0),
                "script": metrics.get("ScriptDuration", 0.0),
                "layout": metrics.get("LayoutDuration", 0.0)
                + metrics.get("RecalcStyleDuration", 0.0)}

    async def charge(self, click: Click, before: dict[str, float]) -> None:
        """Set ``click.cost`` to what the readings rose by since ``before``."""
        after = await self.readings()
        click.cost = {k: after[k] - before[k] for k in after}

    async def state(self) -> dict:
        """The controls' state now (``STATE_JS``)."""
        return await self.page.evaluate(STATE_JS)

    async def settle(self, want: dict, deadline: float) -> dict:
        """Until the page is idle and shows ``want``; returns ``SETTLED_JS``'s answer."""
        remaining = max(deadline - time.monotonic(), 0.001) * 1000
        handle = await self.page.wait_for_function(SETTLED_JS, arg=want, polling="raf",
                                                   timeout=remaining)
        return await handle.json_value()

    async def act(self, do: Callable[[], Awaitable[object]], want: dict,
                  record: list[Click] | None = None, label: str = "") -> Click:
        """Do ``do`` (one click that reruns the app), wait until a run has finished and the
        page shows ``want``, and measure it; appended to ``record`` if given. A click that
        does not settle within the timeout is recorded as an error and the page is waited
        for (or reloaded)."""
        click = Click(label)
        await self.page.evaluate(MARK_JS)
        before = await self.readings()
        start = click.started = time.perf_counter()
        deadline = time.monotonic() + self.timeout
        try:
            await do()
            await self.wire.wait_run(int(before["runs"]), deadline)
            settled = await self.settle(want, deadline)
            click.wall = time.perf_counter() - start
            click.replotted, click.charts = settled["replotted"], settled["charts"]
            if settled["pressAt"] is not None:
                click.seconds = (settled["now"] - settled["pressAt"]) / 1000
            else:  # no press seen (keyboard?): Python's figure
                click.seconds = click.wall
        except Exception as exc:
            try:
                state = await self.state()
            except Exception as gone:  # the page itself is broken
                state = f"unreadable ({type(gone).__name__})"
            click.error = (f"{type(exc).__name__} waiting for {want}: "
                           f"{str(exc).splitlines()[0][:200]}; page: {state}")
            self.errors.append(click.error)
        await self.charge(click, before)
        if record is not None:
            record.append(click)
        if click.error:
            await self.recover()
        return click

    async def recover(self) -> None:
        """After a click that did not settle: wait for the page to be idle; if it does not
        get there, reload it and bring back the sentence and the Cross-attention tab."""
        try:
            await self.settle({}, time.monotonic() + self.timeout)
        except Exception:
            await self.page.goto(self.url)
            await self.settle({"titles": [text("step_overview_title", "en", k=1, layer=0)]},
                              time.monotonic() + self.timeout)
            if self.sentence:
                await self.prepare(self.sentence)

    @staticmethod
    def stuck(record: list[Click]) -> bool:
        """Whether the last three clicks of ``record`` all failed (the action gives up)."""
        return len(record) >= 3 and all(c.error for c in record[-3:])

    # -- the page's controls -----------------------------------------------------------------

    def button(self, key: str):
        """The button with widget key ``key`` (any language)."""
        return self.page.locator(f".st-key-{key} button")

    async def pick(self, key: str, option: str) -> None:
        """Open select box ``key`` and click ``option``."""
        box = self.page.locator(f".st-key-{key} input[role='combobox']")
        await box.click()
        if await box.get_attribute("aria-expanded") != "true":
            await box.press("ArrowDown")  # a click right after a rerun can be lost
        await self.page.get_by_role("option", name=option, exact=True).click()

    async def options(self, key: str) -> list[str]:
        """The options of select box ``key`` (opens it, reads, closes it)."""
        box = self.page.locator(f".st-key-{key} input[role='combobox']")
        await box.click()
        if await box.get_attribute("aria-expanded") != "true":
            await box.press("ArrowDown")
        listbox = self.page.get_by_role("listbox")
        await listbox.wait_for()
        names = await listbox.get_by_role("option").all_inner_texts()
        await box.press("Escape")
        await listbox.wait_for(state="hidden")
        return [n.strip() for n in names]

    async def open_tab(self, label: str, record: list[Click] | None = None) -> None:
        """Open the view tab labelled ``label`` (nothing if it is open)."""
        if (await self.state())["tab"] != label:
            tab = self.page.get_by_role("tab", name=label, exact=True)
            await self.act(tab.click, {"tab": label, "panelMin": 1}, record)

    async def choose_language(self, option: str, want: dict,
                              record: list[Click] | None = None) -> None:
        """Click the language radio's ``option`` ("English" / "简体中文")."""
        radio = self.page.locator(".st-key-lang [data-testid='stRadioOption']")
        await self.act(radio.filter(has_text=option).click, want, record)

    # -- the session -------------------------------------------------------------------------

    async def visit(self, record: list[Click], timeout: float | None = None) -> Click:
        """Load the app (``page.goto``) and time the first heatmap and the settled page,
        both from the start of the navigation (``timeout``: seconds, default the clicks')."""
        before = await self.readings()
        click = Click("visit", started=time.perf_counter())
        deadline = time.monotonic() + (timeout or self.timeout)
        try:
            await self.page.goto(self.url, wait_until="commit")
            handle = await self.page.wait_for_function(
                "() => window.__firstHeatmapAt", polling="raf",
                timeout=max(deadline - time.monotonic(), 0.001) * 1000)
            click.first_heatmap = await handle.json_value() / 1000
            await self.wire.wait_run(0, deadline)
            settled = await self.settle(
                {"titles": [text("step_overview_title", "en", k=1, layer=0)],
                 "stepOf": "Step 1 of "}, deadline)
            click.seconds = settled["now"] / 1000
            click.wall = time.perf_counter() - click.started
            click.replotted = click.charts = settled["charts"]  # every chart is new
        except Exception as exc:
            click.error = f"visit: {type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
            self.errors.append(click.error)
        await self.charge(click, before)
        record.append(click)
        return click

    async def prepare(self, sentence: str) -> dict:
        """English, ``sentence`` typed, the Cross-attention tab open at step 1 with its
        first layer and all heads (none of it measured). Returns the page's state."""
        en = text("tab_cross", "en")
        state = await self.state()
        if state["lang"] != "English":
            await self.choose_language("English", {})
        box = self.page.get_by_role("textbox", name=text("sentence", "en"), exact=True)
        if await box.input_value() != sentence:
            async def type_it():
                await box.fill(sentence)
                await box.press("Enter")

            await self.act(type_it, {"stepOf": "Step 1 of ", "panelMin": 1})
        await self.open_tab(en)
        state = await self.state()
        if state["step"] != 1:
            await self.act(self.button("first_step").click,
                           step_want("en", 1, state["steps"], *self.layer_head(state)))
        layers = await self.options(f"{CROSS}_layer")
        if state["layer"] != layers[0]:
            await self.act(lambda: self.pick(f"{CROSS}_layer", layers[0]),
                           {"titles": [view_title("en", 0, self.layer_head(state)[1])]})
        heads = await self.options(f"{CROSS}_head")
        if state["head"] != heads[0]:
            await self.act(lambda: self.pick(f"{CROSS}_head", heads[0]),
                           {"titles": [view_title("en", 0, None)]})
        return await self.state()

    @staticmethod
    def layer_head(state: dict) -> tuple[int, int | None]:
        """The Cross-attention tab's layer and head (None: all heads) from the pickers'
        texts ("Layer 2", "Head 3" or their Chinese forms: the first number in the text)."""
        def number(label: str | None) -> int | None:
            digits = "".join(c if c.isdigit() else " " for c in label or "").split()
            return int(digits[0]) if digits else None

        return number(state["layer"]) or 0, number(state["head"])

    def rounds(self, clicks: int, record: list[Click]):
        """Loop ``while`` an action still has clicks to make: until ``record`` has
        ``clicks`` clicks or is ``stuck``, and at most ``2 * clicks + 10`` rounds (a round
        may make a click that is not counted)."""
        for _ in range(2 * clicks + 10):
            if len(record) >= clicks or self.stuck(record):
                return
            yield

    async def next_steps(self, clicks: int, record: list[Click]) -> None:
        """Press "Next ▶" ``clicks`` times, back to step 1 with "First" (not counted) at the
        end of the sentence."""
        for _ in self.rounds(clicks, record):
            state = await self.ensure_cross()
            layer, head = self.layer_head(state)
            lang = LANGS.get(state["lang"], "en")
            if state["step"] >= state["steps"]:
                await self.act(self.button("first_step").click,
                               step_want(lang, 1, state["steps"], layer, head))
                continue
            await self.act(self.button("next_step").click,
                           step_want(lang, state["step"] + 1, state["steps"], layer, head),
                           record)

    async def cycle_picker(self, which: str, clicks: int, record: list[Click]) -> None:
        """Pick the next option of the Cross-attention tab's ``which`` ("layer"/"head")
        picker, ``clicks`` times, each waiting for the chart titled with the new choice."""
        key = f"{CROSS}_{which}"
        await self.ensure_cross()
        options = await self.options(key)
        for _ in self.rounds(clicks, record):
            state = await self.ensure_cross()
            layer, head = self.layer_head(state)
            lang = LANGS.get(state["lang"], "en")
            i = options.index(state[which]) if state[which] in options else -1
            option = options[(i + 1) % len(options)]
            if which == "layer":
                layer = options.index(option)
            else:
                head = None if options.index(option) == 0 else options.index(option) - 1
            await self.act(lambda option=option: self.pick(key, option),
                           {"titles": [view_title(lang, layer, head)], "panelCharts": 1,
                            "redrawn": [f"{CROSS}_chart"],
                            "step": text("step_of", lang, k=state["step"], n=state["steps"])},
                           record)

    async def cycle_tabs(self, clicks: int, record: list[Click]) -> None:
        """Open the next tab ``clicks`` times, round the tab bar."""
        for _ in self.rounds(clicks, record):
            state = await self.state()
            tabs = state["tabs"]
            label = tabs[(tabs.index(state["tab"]) + 1) % len(tabs)]
            tab = self.page.get_by_role("tab", name=label, exact=True)
            await self.act(tab.click, {"tab": label, "panelMin": 1}, record, label)

    async def switch_languages(self, clicks: int, record: list[Click]) -> None:
        """Switch English <-> 简体中文 ``clicks`` times in the Cross-attention tab, then back
        to English if need be (not counted)."""
        for _ in self.rounds(clicks, record):
            state = await self.ensure_cross()
            target = "English" if state["lang"] != "English" else "简体中文"
            await self.choose_language(target, step_want(
                LANGS[target], state["step"], state["steps"], *self.layer_head(state)), record)
        state = await self.state()
        if state["lang"] != "English":
            await self.choose_language("English", step_want(
                "en", state["step"], state["steps"], *self.layer_head(state)))

    async def to_last_step(self) -> None:
        """Go to the sentence's last step with the "Last" button (not measured)."""
        state = await self.state()
        if state["step"] != state["steps"]:
            await self.act(self.button("last_step").click,
                           step_want(LANGS.get(state["lang"], "en"), state["steps"],
                                     state["steps"], *self.layer_head(state)))

    async def ensure_cross(self) -> dict:
        """The Cross-attention tab open (opened if need be, not measured); the page's state."""
        state = await self.state()
        label = text("tab_cross", LANGS.get(state["lang"], "en"))
        if state["tab"] != label:
            await self.open_tab(label)
            state = await self.state()
        return state

    async def session(self, sentence: str, clicks: int,
                      actions: tuple[str, ...] = ACTIONS) -> SentenceRun:
        """The measured ``actions`` on ``sentence``, ``clicks`` times each. An action that
        fails beyond its clicks' errors is reported and the next one goes on."""
        self.sentence = sentence
        state = await self.prepare(sentence)
        done = SentenceRun(sentence, state["source"], state["steps"])
        steps = {
            "next step": self.next_steps,
            "head change": lambda n, rec: self.cycle_picker("head", n, rec),
            "layer change": lambda n, rec: self.cycle_picker("layer", n, rec),
            "tab change": self.cycle_tabs,
            "language change": self.switch_languages,
        }
        for action in actions:
            try:
                if action == "head change":
                    await self.to_last_step()
                await steps[action](clicks, done.clicks[action])
            except Exception as exc:
                self.errors.append(f"{action}: stopped by {type(exc).__name__}: "
                                   f"{str(exc).splitlines()[0][:200]}")
                await self.recover()
        return done


async def run(url: str, meters: Meters, sentences: tuple[str, ...], clicks: int, visits: int,
              timeout: float, actions: tuple[str, ...] = ACTIONS) -> dict:
    """The whole measurement in one browser context; returns the raw figures, with how long
    it took (``seconds``), the CPU seconds the whole machine used meanwhile
    (``machine_cpu``) and of them this process, the server and the browser (``our_cpu``,
    read while the browser is still open: its processes' time goes when it closes)."""
    from playwright.async_api import async_playwright

    out: dict = {"rss_start": meters.server_rss(), "visits_cold": [], "visits_warm": [],
                 "sentences": [], "errors": [], "page_errors": []}
    busy, ours, procs, start = (machine_busy_seconds(), meters.ours(), process_cpu(),
                                time.perf_counter())
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            context = await browser.new_context(viewport=VIEWPORT)
            await context.add_init_script(INIT_JS)
            context.set_default_timeout(timeout * 1000)
            user = User(await context.new_page(), url, meters, timeout)
            # The server's first session: the model loads (allow for a busy machine).
            await user.visit(out["visits_cold"], timeout=max(timeout, 120.0))
            out["rss_loaded"] = meters.server_rss()
            for _ in range(visits):
                other = User(await context.new_page(), url, meters, timeout)
                await other.visit(out["visits_warm"])
                out["errors"] += other.errors
                out["page_errors"] += other.page_errors
                await other.page.close()
            for sentence in sentences:
                try:
                    out["sentences"].append(await user.session(sentence, clicks, actions))
                except Exception as exc:  # the sentence could not be set up: say so, go on
                    user.errors.append(f"{sentence!r}: {type(exc).__name__}: "
                                       f"{str(exc).splitlines()[0][:200]}")
            out["errors"] += user.errors
            out["page_errors"] += user.page_errors
            out["seconds"] = time.perf_counter() - start
            out["machine_cpu"] = machine_busy_seconds() - busy
            out["our_cpu"] = meters.ours() - ours
            out["top_others"] = top_others(procs, process_cpu(), descendants(os.getpid()))
            await context.close()
        finally:
            await browser.close()
    out["rss_end"] = meters.server_rss()
    return out


# ---------------------------------------------------------------------------------------------
# Figures and report
# ---------------------------------------------------------------------------------------------


def _ms(x: float | None) -> str:
    return "–" if x is None else f"{x * 1000:.0f}"


def _kib(x: float | None) -> str:
    return "–" if x is None else f"{x / 1024:.1f}"


def figures(clicks: list[Click]) -> dict:
    """Summary of clicks that settled: n and errors; p50 / p95 / max wait and median first
    heatmap (s); the median of each cost (``Click.cost``) and its mean (``mean_<name>``);
    mean charts replotted and on the page."""
    good = [c for c in clicks if c.seconds is not None]
    out: dict = {"n": len(good), "errors": len(clicks) - len(good)}
    waits = [c.seconds for c in good]
    out["p50"] = percentile(waits, 50) if waits else None
    out["p95"] = percentile(waits, 95) if waits else None
    out["max"] = max(waits) if waits else None
    heat = [c.first_heatmap for c in good if c.first_heatmap is not None]
    out["first_heatmap"] = percentile(heat, 50) if heat else None
    for name in good[0].cost if good else ():
        values = [c.cost.get(name, 0.0) for c in good]
        out[name] = percentile(values, 50)
        out[f"mean_{name}"] = sum(values) / len(values)
    out["replotted"] = sum(c.replotted for c in good) / len(good) if good else None
    out["charts"] = sum(c.charts for c in good) / len(good) if good else None
    return out


def tables(raw: dict) -> str:
    """The markdown tables: waits, then costs, per sentence and action; then visits."""
    rows_wait, rows_cost, by_tab = [], [], []
    for done in raw["sentences"]:
        name = f"{done.source_tokens} tokens, {done.steps} steps"
        for action in ACTIONS:
            f = figures(done.clicks[action])
            rows_wait.append(f"| {name} | {action} | {f['n']} | {_ms(f['p50'])} | "
                             f"{_ms(f['p95'])} | {_ms(f['max'])} | {f['errors']} |")
            if not f["n"]:
                continue
            rows_cost.append(
                f"| {name} | {action} | {_ms(f['mean_server'])} | {_ms(f['mean_chromium'])} | "
                f"{_ms(f['mean_task'])} ({_ms(f['mean_script'])} / {_ms(f['mean_layout'])} / "
                f"{_ms(f['mean_task'] - f['mean_script'] - f['mean_layout'])}) | "
                f"{_kib(f['bytes_in'])} / {_kib(f['bytes_out'])} | "
                f"{f['mean_runs']:.1f} ({f['mean_fragment_runs']:.1f}) | "
                f"{f['mean_elements']:.0f} ({f['mean_cached']:.0f}) | "
                f"{f['mean_charts']:.1f} ({_kib(f['mean_chart_bytes'])}) | "
                f"{f['replotted']:.1f} of {f['charts']:.1f} |")
        tabs: dict[str, list[float]] = {}
        for c in done.clicks["tab change"]:
            if c.seconds is not None:
                tabs.setdefault(c.label, []).append(c.seconds)
        by_tab.append(f"{name}: " + ", ".join(
            f"{tab} {_ms(percentile(v, 50))}" for tab, v in tabs.items()))
    visits = []
    for label, record in (("cold server (the model loads)", raw["visits_cold"]),
                          ("warm server, a new page", raw["visits_warm"])):
        f = figures(record)
        if f["n"]:
            visits.append(
                f"| {label} | {f['n']} | {_ms(f['first_heatmap'])} | {_ms(f['p50'])} | "
                f"{_ms(f['p95'])} | {_ms(f['mean_server'])} | {_ms(f['mean_chromium'])} | "
                f"{_kib(f['bytes_in'])} | {f['charts']:.0f} | {f['errors']} |")
    nl = "\n"
    return f"""| Sentence | Action | n | p50 ms | p95 ms | max ms | errors |
| --- | --- | --- | --- | --- | --- | --- |
{nl.join(rows_wait)}

Median wait of a tab change by the tab opened (ms): {"; ".join(by_tab)}.

What a click costs (means, websocket bytes as medians):

| Sentence | Action | server CPU ms | Chromium CPU ms | page main thread ms (JS / \
layout + style / the rest) | WS KiB in / out | runs (of them fragment runs) | elements sent (by \
reference) | Plotly charts sent (KiB sent in full) | charts Plotly redrew, of those on the page |
| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |
{nl.join(rows_cost)}

| First visit, from `page.goto` | n | first heatmap ms (median) | settled p50 ms | \
settled p95 ms | server CPU ms | Chromium CPU ms | WS KiB in | charts | errors |
| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |
{nl.join(visits)}"""


def default_model() -> str:
    """The model the app preselects: its folder name and size, from its card."""
    from model.translator import available_models, default_model, pretrained_root

    name = default_model(available_models())
    try:
        card = json.loads((pretrained_root() / name / "card.json").read_text("utf-8"))
        return f"pretrained/{name} ({card.get('parameters', '?'):,} parameters)"
    except (OSError, ValueError, TypeError):
        return str(name)


def driver_cpu(raw: dict) -> float | None:
    """Mean CPU seconds of Playwright's driver per measured click."""
    clicks = [c for done in raw["sentences"] for record in done.clicks.values() for c in record]
    return sum(c.cost.get("driver", 0.0) for c in clicks) / len(clicks) if clicks else None


def report(raw: dict, info: dict, args, others: set[str]) -> str:
    """RESULTS.md's section for one run (``others``: test runs, servers, trainings seen)."""
    nan = float("nan")
    seconds, machine_cpu = raw.get("seconds", nan), raw.get("machine_cpu", nan)
    other_cpu = max(machine_cpu - raw.get("our_cpu", nan), 0.0)
    when = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    busy = "; ".join(f"`{p}`" for p in sorted(others)) if others else "none seen"
    software = (f"Python {info['python']}, torch {info['torch']}, Streamlit "
                f"{info['streamlit']}, Playwright {info['playwright']}, {info['chromium']}")
    sentences = "\n".join(f"- `{s.sentence}`: {s.source_tokens} source tokens, {s.steps} "
                          "decoding steps" for s in raw["sentences"])
    problems = raw["errors"] + [f"page error: {e}" for e in raw["page_errors"]]
    listed = ("\n\n" + "\n".join(f"- {p[:300]}" for p in problems[:10])
              + (f"\n- ... and {len(problems) - 10} more" if len(problems) > 10 else "")
              if problems else " none.")
    load_note = (" (above 1.0: the machine was, or had just been, busy; the figures may be "
                 "pessimistic)" if info["load_1min"] > 1.0 else "")
    return f"""{HEADING}

`python -m benchmarks.clicks --clicks {args.clicks}`, {when}, {seconds:.0f} s in all. One
`streamlit run app.py` and one headless Chromium (one context, one user) on the same machine,
with the model the app preselects, {default_model()}. Sentences:

{sentences}

A click's wait runs from the click (the page's `pointerdown`) until the server has reported
the run finished and the page is idle with the new content drawn: the new step label, the
chart titles of the new step, layer, head or language, the cross-attention chart with one
row per step so far, the new tab with its charts. Both ends are read from the page's clock,
polled every animation frame. "Next ▶" walks through the sentence in the Cross-attention
tab (the "First" click at the end is not counted); head and layer changes cycle through the
Cross-attention tab's pickers at the last step; tab changes go round the tab bar; language
changes alternate English and 简体中文 in the Cross-attention tab.

Costs: server CPU is utime + stime of the Streamlit process (10 ms clock ticks: read the
mean); Chromium CPU is all its processes (renderer, GPU, browser); the page's main thread
is Chrome's `TaskDuration` (of it JavaScript, `ScriptDuration`, which includes this
benchmark's polling; layout and style recalculation; the rest: painting, decoding the
heatmaps' images, garbage collection...); WS is the websocket's payload bytes; a run is a
whole-script run or a fragment run; elements are what the server sent for the run, some
only as a reference to one the browser has cached; "charts Plotly redrew" counts the charts
whose Plotly layout object is new after the click.

{tables(raw)}

| Run | |
| --- | --- |
| Server RSS: start, after the first visit, end | {raw['rss_start']:.0f} MiB, \
{raw.get('rss_loaded', float('nan')):.0f} MiB, {raw['rss_end']:.0f} MiB |
| Errors (clicks that did not settle in {args.timeout:.0f} s, page errors) | {len(problems)} |
| Playwright's driver (node), CPU per click | {_ms(driver_cpu(raw))} ms |
| CPU used during the run: the whole machine; this benchmark, the server and the browser; \
the rest | {machine_cpu:.0f} s; {raw.get('our_cpu', nan):.0f} s; {other_cpu:.0f} s \
({other_cpu / seconds / (info['cores'] or 1):.0%} of the machine's {seconds:.0f} s) |
| Other test runs, servers or trainings during the run | {busy} |
| Other processes that used the most CPU during the run | \
{"; ".join(raw.get("top_others", [])) or "none above 1 s"} |

| Machine | |
| --- | --- |
| CPU | {info['cpu']} |
| Cores (`os.cpu_count()`) | {info['cores']} |
| RAM | {info['ram']} |
| Load average at the start (1, 5, 15 min) | {info['load']}{load_note} |
| Software | {software} |
| App version | git {info['commit']} |

Problems:{listed}

The browser runs on the same machine as the server and takes CPU from it (see the Chromium
CPU column), which a real user's computer would not.
"""


def main(argv: list[str] | None = None) -> int:
    """Measure once, print the figures and (with --write) write RESULTS.md's section."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clicks", type=int, default=30, help="clicks per action and sentence")
    parser.add_argument("--visits", type=int, default=None,
                        help="first visits on new pages after the cold one (default: "
                             "min(clicks, 10))")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds per click")
    parser.add_argument("--actions", nargs="+", choices=ACTIONS, default=list(ACTIONS),
                        metavar="ACTION", help=f"only these actions (default: all of {ACTIONS})")
    parser.add_argument("--sentences", nargs="+", type=int, choices=range(len(SENTENCES)),
                        default=list(range(len(SENTENCES))), metavar="I",
                        help="only these sentences, by index (0: the default, 1: 20 tokens)")
    parser.add_argument("--write", action="store_true", help="write benchmarks/RESULTS.md")
    args = parser.parse_args(argv)
    if args.write and (len(args.actions) < len(ACTIONS) or len(args.sentences) < len(SENTENCES)):
        parser.error("--write records the whole measurement: leave out --actions/--sentences")
    problem = chromium_problem()
    if problem:
        raise SystemExit(problem)
    info = machine()
    info["load_1min"] = os.getloadavg()[0]
    if info["load_1min"] > 1.0:
        print(f"WARNING: the load average is {info['load']} at the start (above 1.0): the "
              "machine is, or has just been, busy, so the figures may be pessimistic; the "
              "report says how much CPU other processes used during the run.",
              file=sys.stderr)
    visits = min(args.clicks, 10) if args.visits is None else args.visits
    with streamlit_server() as server, Watcher({os.getpid(), server.pid}) as watcher:
        meters = Meters(server.pid)
        sentences = tuple(SENTENCES[i] for i in args.sentences)
        raw = asyncio.run(run(server.url, meters, sentences, args.clicks, visits,
                              args.timeout, tuple(args.actions)))
    publish(report(raw, info, args, watcher.seen), HEADING, args.write)
    return 0


if __name__ == "__main__":
    sys.exit(main())
