"""What one person waits for: click-to-settled times of the real app in headless Chromium.

    python -m benchmarks.clicks                # prints the figures
    python -m benchmarks.clicks --clicks 10    # fewer clicks per action (default 30)
    python -m benchmarks.clicks --write        # also writes them into benchmarks/RESULTS.md
    python -m benchmarks.clicks --model decoder-only-en-zh --cold 0   # a decoder-only model

Starts ``streamlit run app.py`` (``testkit.harness.streamlit_server``) and drives it as
one user in one context of Debian's headless Chromium (Playwright's async API), with the
model the app preselects. Measured:

* the first visit: from ``page.goto`` until the first heatmap is in the page and until the
  page has settled, on the clicks' server and then on new pages of it; and from a cold start,
  ``--cold`` times: a server launched for the visit (``serve.py``, which answers once it has
  warmed up) and a browser launched for it, timed from the server's launch to the first
  heatmap, each followed by the same for the trivial app (``benchmarks/floor_app.py``, 2
  heatmaps), so that the app's first heatmap reads against the trivial app's in the same
  run (``--only-visits``: these alone);
* for each of two sentences (the app's default and a ~20-token one), ``--clicks`` times
  each: "Next ▶" (walking through the sentence; going back to step 1 with the "First" button
  at the end is not counted), a head change and a layer change in the Cross-attention view,
  a view change (cycling through the views) and a language change (English <-> 简体中文);
* the floor (``--floor``): the same kind of click on ``benchmarks/floor_app.py``, a trivial
  app whose every click redraws 1 or 2 small heatmaps, so that a day's figures can be read
  against what any Streamlit click with charts costs on the machine that day.

A click's time runs from the click's ``pointerdown`` in the page until, in the page, the
server has reported the run it started as finished (a ``script_finished`` message on the
websocket), the app shows no running indicator and no stale element, every Plotly chart
has its SVG, and the new content is drawn: the new step label, chart titles naming the new
step / layer / head / language, the cross-attention chart with one row per step so far, the
new view drawn with its charts. Both ends are ``performance.now()`` in the page (polled every
animation frame), so Playwright's own overhead is not counted. A click that does not settle
within ``--timeout`` seconds is recorded as an error and the page is brought back.

Per click it also reads the server's CPU time (utime + stime of the Streamlit process and
any children, ``/proc/<pid>/stat``), the browser's (Chromium's processes; Playwright's
driver apart), the page's main-thread time by kind (Chrome's ``Performance.getMetrics``),
the websocket bytes both ways (payload lengths, from ``page.on("websocket")``), what the
server sent (whole-script or fragment runs, elements, Plotly charts) and how many charts
Plotly drew again. The server's RSS is read at the start, after the first visit, after the
clicks (every view has been opened) and at the end, after the same page was turned to the
lesson and every chapter opened by its "Next chapter" button; the load average at the
start (a warning above 1.0) and the CPU other processes used during the run are reported
with the figures. Only figures are printed; nothing is asserted
about them.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from collections.abc import Awaitable, Callable
from urllib.parse import urlencode

from benchmarks.clicks_browser import (
    chromium,
    first_line,
    floor_clicks,
    floor_visit,
    new_context,
)
from benchmarks.clicks_page import (
    ACTIONS,
    CROSS,
    HEADING,
    LANGS,
    MARK_JS,
    ONE_STACK_VIEW,
    SENTENCES,
    SETTLED_JS,
    STATE_JS,
    Wire,
    overview_title,
    picked_index,
    step_want,
    text,
    view_label,
    view_title,
)
from benchmarks.clicks_report import Click, SentenceRun, report
from benchmarks.procs import (
    Meters,
    Watcher,
    descendants,
    machine_busy_seconds,
    process_cpu,
    top_others,
)
from benchmarks.report import machine, publish
from model.backends.load import pretrained_root
from testkit.harness import chromium_problem, streamlit_server, view_option
from ui.i18n import STRINGS
from ui.lesson import chapter_count

# ---------------------------------------------------------------------------------------------
# One user
# ---------------------------------------------------------------------------------------------


class User:
    """One person in one page: acts, waits for the page to settle, records each click."""

    def __init__(self, page, url: str, meters: Meters, timeout: float, *, view: str = CROSS):
        self.page, self.url, self.meters, self.timeout = page, url, meters, timeout
        self.view = view  # the step view: Cross-attention, or a decoder-only model's
        self.wire = Wire(page)
        self.cdp = None
        self.sentence = ""  # the sentence being measured, to bring back after a reload
        self.done: list[SentenceRun] = []  # what ``sessions`` measured
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
        return await self.page.evaluate(STATE_JS, self.view)

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
                           f"{first_line(exc)}; page: {state}")
            self.errors.append(click.error)
        await self.charge(click, before)
        if record is not None:
            record.append(click)
        if click.error:
            await self.recover()
        return click

    async def recover(self) -> None:
        """After a click that did not settle: wait for the page to be idle; if it does not
        get there, reload it and bring back the sentence and the Cross-attention view."""
        try:
            await self.settle({}, time.monotonic() + self.timeout)
        except Exception:
            await self.page.goto(self.url)
            await self.settle({"titles": [overview_title("en", 1)]},
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

    async def open_view(self, label: str, record: list[Click] | None = None) -> None:
        """Choose the view labelled ``label`` (nothing if it is the chosen one)."""
        if (await self.state())["tab"] != label:
            await self.act(view_option(self.page, label).click, {"tab": label, "panelMin": 1},
                           record)

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
                {"titles": [overview_title("en", 1)],
                 "stepOf": "Step 1 of "}, deadline)
            click.seconds = settled["now"] / 1000
            click.wall = time.perf_counter() - click.started
            click.replotted = click.charts = settled["charts"]  # every chart is new
        except Exception as exc:
            click.error = f"visit: {type(exc).__name__}: {first_line(exc)}"
            self.errors.append(click.error)
        await self.charge(click, before)
        record.append(click)
        return click

    async def prepare(self, sentence: str) -> dict:
        """English, ``sentence`` typed, the Cross-attention view open at step 1 with its
        first layer and all heads (none of it measured). Returns the page's state."""
        en = view_label("en", self.view)
        state = await self.state()
        if state["lang"] != "English":
            await self.choose_language("English", {})
        box = self.page.get_by_role("textbox", name=text("sentence", "en"), exact=True)
        if await box.input_value() != sentence:
            async def type_it():
                await box.fill(sentence)
                await box.press("Enter")

            await self.act(type_it, {"stepOf": "Step 1 of ", "panelMin": 1})
        await self.open_view(en)
        state = await self.state()
        if state["step"] != 1:
            await self.act(self.button("first_step").click,
                           step_want("en", 1, state["steps"], **self.want(state)))
        layers = await self.options(f"{self.view}_layer")
        if state["layer"] != layers[0]:
            await self.act(lambda: self.pick(f"{self.view}_layer", layers[0]), {"titles": [
                view_title("en", 0, self.layer_head(state)["head"], self.view)]})
        heads = await self.options(f"{self.view}_head")
        if state["head"] != heads[0]:
            await self.act(lambda: self.pick(f"{self.view}_head", heads[0]),
                           {"titles": [view_title("en", 0, None, self.view)]})
        return await self.state()

    @staticmethod
    def layer_head(state: dict) -> dict[str, int | None]:
        """The Cross-attention view's 0-based ``layer`` and ``head`` (None: all heads) from
        the pickers' texts (``picked_index``), as ``step_want``'s keywords."""
        return {"layer": picked_index(state["layer"]) or 0, "head": picked_index(state["head"])}

    def want(self, state: dict) -> dict:
        """``step_want``'s keywords for the page's state: its layer and head, the view."""
        return {**self.layer_head(state), "view": self.view}

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
            layer, head = self.layer_head(state).values()
            lang = LANGS.get(state["lang"], "en")
            if state["step"] >= state["steps"]:
                await self.act(self.button("first_step").click,
                               step_want(lang, 1, state["steps"], layer=layer, head=head,
                                         view=self.view))
                continue
            await self.act(self.button("next_step").click,
                           step_want(lang, state["step"] + 1, state["steps"], layer=layer,
                                     head=head, view=self.view),
                           record)

    async def cycle_picker(self, which: str, clicks: int, record: list[Click]) -> None:
        """Pick the next option of the Cross-attention view's ``which`` ("layer"/"head")
        picker, ``clicks`` times, each waiting for the chart titled with the new choice."""
        key = f"{self.view}_{which}"
        await self.ensure_cross()
        options = await self.options(key)
        for _ in self.rounds(clicks, record):
            state = await self.ensure_cross()
            layer, head = self.layer_head(state).values()
            lang = LANGS.get(state["lang"], "en")
            i = options.index(state[which]) if state[which] in options else -1
            option = options[(i + 1) % len(options)]
            if which == "layer":
                layer = options.index(option)
            else:
                head = None if options.index(option) == 0 else options.index(option) - 1
            await self.act(lambda option=option: self.pick(key, option),
                           {"titles": [view_title(lang, layer, head, self.view)],
                            "panelCharts": 1, "redrawn": [f"{self.view}_chart"],
                            "step": text("step_of", lang, k=state["step"], n=state["steps"])},
                           record)

    async def cycle_views(self, clicks: int, record: list[Click]) -> None:
        """Choose the next view ``clicks`` times, round the view picker."""
        for _ in self.rounds(clicks, record):
            state = await self.state()
            views = state["tabs"]
            label = views[(views.index(state["tab"]) + 1) % len(views)]
            await self.act(view_option(self.page, label).click, {"tab": label, "panelMin": 1},
                           record, label)

    async def switch_languages(self, clicks: int, record: list[Click]) -> None:
        """Switch English <-> 简体中文 ``clicks`` times in the Cross-attention view, then back
        to English if need be (not counted)."""
        for _ in self.rounds(clicks, record):
            state = await self.ensure_cross()
            target = "English" if state["lang"] != "English" else "简体中文"
            await self.choose_language(target, step_want(
                LANGS[target], state["step"], state["steps"], **self.want(state)), record)
        state = await self.state()
        if state["lang"] != "English":
            await self.choose_language("English", step_want(
                "en", state["step"], state["steps"], **self.want(state)))

    async def to_last_step(self) -> None:
        """Go to the sentence's last step with the "Last" button (not measured)."""
        state = await self.state()
        if state["step"] != state["steps"]:
            await self.act(self.button("last_step").click,
                           step_want(LANGS.get(state["lang"], "en"), state["steps"],
                                     state["steps"], **self.want(state)))

    async def ensure_cross(self) -> dict:
        """The Cross-attention view open (opened if need be, not measured); the page's state."""
        state = await self.state()
        label = view_label(LANGS.get(state["lang"], "en"), self.view)
        if state["tab"] != label:
            await self.open_view(label)
            state = await self.state()
        return state

    async def tour_lesson(self, chapters: int) -> None:
        """Turn this page to the lesson (its Explore / Lesson switch: chapter 1), then open
        each of the next ``chapters`` - 1 by the page's own "Next chapter" button, as a
        teacher goes through it in the same session, and wait until each run has finished
        and the page is idle (not timed: the server's memory after the lesson is what is
        read). A chapter that does not settle is an error. (A link per chapter would leave a
        session per chapter on the server for ``server.disconnectedSessionTTL``, 2 minutes.)"""
        for n in range(1, chapters + 1):
            deadline = time.monotonic() + max(self.timeout, 60.0)
            try:
                runs = int(self.wire.counters()["runs"])
                if n == 1:
                    await self.page.get_by_text(STRINGS["mode_lesson"]["en"],
                                                exact=True).click()
                else:
                    await self.page.locator(".st-key-lesson_next button").click()
                await self.wire.wait_run(runs, deadline)
                await self.settle({}, deadline)
            except Exception as exc:
                self.errors.append(f"lesson chapter {n}: {type(exc).__name__}: "
                                   f"{first_line(exc)}")

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
            "view change": self.cycle_views,
            "language change": self.switch_languages,
        }
        for action in actions:
            try:
                if action == "head change":
                    await self.to_last_step()
                await steps[action](clicks, done.clicks[action])
            except Exception as exc:
                self.errors.append(f"{action}: stopped by {type(exc).__name__}: "
                                   f"{first_line(exc)}")
                await self.recover()
        return done

    async def sessions(self, sentences: tuple[str, ...], clicks: int,
                       actions: tuple[str, ...]) -> None:
        """``session`` on each sentence, appended to ``done``; a sentence that cannot be set
        up is reported and the next one goes on."""
        for sentence in sentences:
            try:
                self.done.append(await self.session(sentence, clicks, actions))
            except Exception as exc:
                self.errors.append(f"{sentence!r}: {type(exc).__name__}: {first_line(exc)}")


async def cold_visit(timeout: float) -> tuple[Click, list[str]]:
    """One first visit to a server started for it (``serve.py``, which answers once it has
    warmed up), in a browser launched for it (nothing cached), as soon as the server
    answers: the visit's record (with ``server_start``, the seconds from launching the
    server to ``page.goto``) and its errors."""
    launched = time.perf_counter()
    with streamlit_server() as server:
        async with chromium() as browser:
            context = await new_context(browser, timeout)
            user = User(await context.new_page(), server.url, Meters(server.pid), timeout)
            record: list[Click] = []
            await user.visit(record, timeout=max(timeout, 120.0))
            await context.close()
    record[0].server_start = record[0].started - launched
    return record[0], user.errors + user.page_errors


async def run(url: str, meters: Meters, *, sentences: tuple[str, ...], clicks: int,
              visits: int, timeout: float, actions: tuple[str, ...] = ACTIONS,
              view: str = CROSS) -> dict:
    """The whole measurement in one browser context; returns the raw figures, with how long
    it took (``seconds``), the CPU seconds the whole machine used meanwhile
    (``machine_cpu``) and of them this process, the server and the browser (``our_cpu``,
    read while the browser is still open: its processes' time goes when it closes)."""
    out: dict = {"rss_start": meters.server_rss(), "visits_first": [], "visits_warm": [],
                 "sentences": [], "errors": [], "page_errors": []}
    busy, ours, procs, start = (machine_busy_seconds(), meters.ours(), process_cpu(),
                                time.perf_counter())
    async with chromium() as browser:
        context = await new_context(browser, timeout)
        user = User(await context.new_page(), url, meters, timeout, view=view)
        # The server's first session (allow for a busy machine).
        await user.visit(out["visits_first"], timeout=max(timeout, 120.0))
        out["rss_loaded"] = meters.server_rss()
        for _ in range(visits):
            other = User(await context.new_page(), url, meters, timeout, view=view)
            await other.visit(out["visits_warm"])
            out["errors"] += other.errors
            out["page_errors"] += other.page_errors
            await other.page.close()
        await user.sessions(sentences, clicks, actions)
        out["rss_views"] = meters.server_rss()
        if view == CROSS:  # the lesson opens encoder-decoders
            await user.tour_lesson(chapter_count())
        out["errors"] += user.errors
        out["page_errors"] += user.page_errors
        out["seconds"] = time.perf_counter() - start
        out["machine_cpu"] = machine_busy_seconds() - busy
        out["our_cpu"] = meters.ours() - ours
        out["top_others"] = top_others(procs, process_cpu(), descendants(os.getpid()))
        out["sentences"] = user.done
        await context.close()
    out["rss_end"] = meters.server_rss()
    return out


def clicks_run(args) -> dict:
    """The clicks on one server (``run``) and on the trivial app (``floor_clicks``)."""
    visits = min(args.clicks, 10) if args.visits is None else args.visits
    link = f"/?{urlencode({'model': args.model})}" if args.model else ""
    with streamlit_server() as server, Watcher({os.getpid(), server.pid}) as watcher:
        meters = Meters(server.pid)
        raw = asyncio.run(run(server.url + link, meters,
                              sentences=tuple(SENTENCES[i] for i in args.sentences),
                              clicks=args.clicks, visits=visits, timeout=args.timeout,
                              actions=tuple(args.actions), view=step_view(args.model)))
    raw["floor"] = asyncio.run(floor_clicks(tuple(args.floor), args.clicks, args.timeout))
    raw["errors"] += [f"floor, {n} charts: {c.error}" for n, record in raw["floor"].items()
                      for c in record if c.error]
    raw["others"] = watcher.seen
    return raw


def step_view(model: str | None) -> str:
    """The view the clicks happen in for ``model`` (a folder of ``pretrained/``; None: the
    app's default): Cross-attention, or for a decoder-only model the written tokens reading
    the prompt (``ONE_STACK_VIEW``), where cross-attention went."""
    if model is None:
        return CROSS
    config = json.loads((pretrained_root() / model / "config.json").read_text(encoding="utf-8"))
    return ONE_STACK_VIEW if config.get("architecture") == "decoder-only" else CROSS


def cold_visits(raw: dict, cold: int, timeout: float) -> None:
    """``cold`` first visits to a new server in a new browser, each followed by one to the
    trivial app, one pair at a time (``raw["visits_cold"]``, ``raw["visits_floor"]``)."""
    for _ in range(cold):
        visit, errors = asyncio.run(cold_visit(timeout))
        raw["visits_cold"].append(visit)
        raw["errors"] += errors
        raw["visits_floor"].append(asyncio.run(floor_visit(timeout)))  # the same run
        raw["errors"] += [c.error for c in raw["visits_floor"][-1:] if c.error]


def main(argv: list[str] | None = None) -> int:
    """Measure once, print the figures and (with --write) write RESULTS.md's section."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clicks", type=int, default=30, help="clicks per action and sentence")
    parser.add_argument("--visits", type=int, default=None,
                        help="first visits on new pages after the cold one (default: "
                             "min(clicks, 10))")
    parser.add_argument("--cold", type=int, default=5,
                        help="first visits to a fresh server in a fresh browser (default 5)")
    parser.add_argument("--floor", type=int, nargs="*", default=[1, 2], metavar="N",
                        help="also time a trivial app redrawing N charts a click "
                             "(benchmarks/floor_app.py; default 1 and 2; none: skip)")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds per click")
    parser.add_argument("--actions", nargs="+", choices=ACTIONS, default=list(ACTIONS),
                        metavar="ACTION", help=f"only these actions (default: all of {ACTIONS})")
    parser.add_argument("--sentences", nargs="+", type=int, choices=range(len(SENTENCES)),
                        default=list(range(len(SENTENCES))), metavar="I",
                        help="only these sentences, by index (0: the default, 1: 20 tokens)")
    parser.add_argument("--only-visits", action="store_true",
                        help="only the cold first visits of the app and the trivial app")
    parser.add_argument("--model", default=None, help="a folder of pretrained/ to open by its "
                        "link (?model=); a decoder-only model's clicks happen in its "
                        "'Reading the prompt' view (default: the app's default model)")
    parser.add_argument("--write", action="store_true", help="write benchmarks/RESULTS.md")
    args = parser.parse_args(argv)
    if args.write and (len(args.actions) < len(ACTIONS) or len(args.sentences) < len(SENTENCES)
                       or args.model):
        parser.error("--write records the whole measurement: leave out --actions/--sentences"
                     "/--model")
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
    if args.only_visits:
        raw = {"visits_cold": [], "errors": [], "page_errors": [], "sentences": []}
    else:
        raw = clicks_run(args) | {"visits_cold": []}
    raw["visits_floor"] = []
    cold_visits(raw, args.cold, args.timeout)  # after the first server has stopped
    publish(report(raw, info, args), HEADING, args.write and not args.only_visits)
    return 0


if __name__ == "__main__":
    sys.exit(main())
