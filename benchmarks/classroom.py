"""A classroom on one server: ten browser sessions using the app at the same time.

    python -m benchmarks.classroom            # writes benchmarks/RESULTS.md
    python -m benchmarks.classroom --no-write # only prints the figures

Starts ``streamlit run app.py`` on a free loopback port and opens ten browser contexts in
one headless Debian Chromium (Playwright's async API). Each context is one student with
their own sentence: type it, open the Cross-attention view, then press "Next ▶" several
times. For every click it measures the time from the click until the page has finished the
rerun and the cross-attention chart shows the new decoder row, and it checks that no
session ever shows another session's source words.

The server launcher, the Chromium settings and the in-page JavaScript it shares with
``tests/browser`` are in ``testkit/harness.py``; ``tests/browser/test_classroom.py`` runs
this scenario with fewer figures and more checks.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import os
import statistics
import sys
import time
from dataclasses import dataclass, field

from benchmarks.procs import Watcher
from benchmarks.report import app_model, machine, percentile, publish
from model import InputError
from testkit.harness import (
    CHROMIUM,
    CHROMIUM_ARGS,
    READY_JS,
    SNAPSHOT_JS,
    VIEWPORT,
    chart,
    chromium_problem,
    page_problems,
    streamlit_server,
    tick_labels,
    view_option,
)

# ---------------------------------------------------------------------------------------------
# The classroom
# ---------------------------------------------------------------------------------------------


def classroom_sentences(n: int = 10) -> list[str]:
    """``n`` of the app's example sentences, each with a source word no other one has."""
    from model.tasks.en_zh import EXAMPLES

    chosen: list[str] = []
    for sentence in EXAMPLES:
        if len(chosen) < n and all(unique_tokens([*chosen, sentence]).values()):
            chosen.append(sentence)
    assert len(chosen) == n, f"only {len(chosen)} example sentences have distinctive words"
    return chosen


def source_tokens(sentence: str) -> list[str]:
    """The source tokens the app's caption shows for ``sentence`` with its default model
    (readable subword pieces or words, then ``</s>``); [] for a sentence the model refuses
    (the app shows no caption then)."""
    try:
        return list(app_model().source(sentence).labels)
    except InputError:
        return []


def unique_tokens(sentences: list[str]) -> dict[str, set[str]]:
    """For each sentence, its source tokens that no other sentence in the list has."""
    toks = {s: set(source_tokens(s)[:-1]) for s in sentences}
    return {s: toks[s] - set().union(*(toks[o] for o in sentences if o != s))
            for s in sentences}


@dataclass
class Student:
    """What one browser session saw: its click timings and anything that went wrong."""

    sentence: str
    click_seconds: list[float] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)
    steps_total: int = 0
    source_tokens: list[str] = field(default_factory=list)


CROSS = "Cross-attention, layer "  # the Cross-attention view's chart title starts so


async def _wait_ready(page, want: dict, timeout_ms: int) -> None:
    await page.wait_for_function(READY_JS, arg=want, polling="raf", timeout=timeout_ms)


async def _check(page, me: Student, where: str, *, source: list[str], foreign: set[str]
                 ) -> dict:
    """The page's snapshot (``SNAPSHOT_JS``) at ``where``; records in ``me.problems`` the
    page's own problems, any of the ``foreign`` tokens shown, a sentence box that is not
    ``me.sentence`` and source tokens that are not ``source``."""
    snap = await page.evaluate(SNAPSHOT_JS)
    me.problems += [f"{where}: {p}" for p in page_problems(snap)]
    seen = tick_labels(snap) | set(snap["sourceTokens"] or ())
    leaked = {t for t in foreign if t in seen}
    if leaked:
        me.problems.append(f"{where}: another session's tokens {sorted(leaked)} shown")
    if snap["sentence"] != me.sentence:
        me.problems.append(f"{where}: sentence box shows {snap['sentence']!r}")
    if snap["sourceTokens"] != source:
        me.problems.append(f"{where}: source tokens {snap['sourceTokens']}")
    return snap


async def student_session(browser, url: str, sentence: str, *, foreign: set[str], clicks: int,
                          timeout_ms: int = 120_000) -> Student:
    """One student's whole session in a fresh browser context.

    Types ``sentence``, opens the Cross-attention view and presses "Next ▶" ``clicks`` times
    (fewer if the translation is shorter), timing each click until the page is idle and
    shows the new step label and one more cross-attention row. Records as problems:
    exception boxes, error alerts, a source-token caption that is not this sentence's, a
    sentence box showing another text, and any tick label or caption token in ``foreign``
    (tokens only other students' sentences have).
    """
    me = Student(sentence)
    source = source_tokens(sentence)
    context = await browser.new_context(viewport=VIEWPORT)
    try:
        page = await context.new_page()
        page.on("dialog", lambda d: (me.dialogs.append(d.message),
                                     asyncio.ensure_future(d.dismiss())))
        await page.goto(url, timeout=timeout_ms)
        await _wait_ready(page, {"titles": ["Step 1, layer"], "stepOf": "Step 1 of "}, timeout_ms)

        async def check(where: str) -> dict:
            return await _check(page, me, where, source=source, foreign=foreign)

        box = page.get_by_role("textbox", name="English sentence", exact=True)
        await box.fill(sentence)
        await box.press("Enter")
        await _wait_ready(page, {"titles": ["Step 1, layer"], "source": source,
                                 "stepOf": "Step 1 of "}, timeout_ms)
        snap = await check("after typing")
        me.source_tokens = list(snap["sourceTokens"] or ())
        total = me.steps_total = int(snap["step"].split()[-1])

        await view_option(page, "Cross-attention").click()
        await _wait_ready(page, {"tab": "Cross-attention", "panelCharts": 1,
                                 "rows": {"title": CROSS, "n": 1}}, timeout_ms)
        snap = await check("cross-attention view")
        cross = chart(snap, CROSS)
        if set(cross["x"]) != set(source):
            me.problems.append(f"cross-attention keys {cross['x']}, expected {source}")

        next_button = page.get_by_role("button", name="Next ▶", exact=True)
        for k in range(2, min(clicks + 1, total) + 1):
            start = time.perf_counter()
            await next_button.click()
            await _wait_ready(page, {"step": f"Step {k} of {total}", "panelCharts": 1,
                                     "rows": {"title": CROSS, "n": k}}, timeout_ms)
            me.click_seconds.append(time.perf_counter() - start)
            await check(f"step {k}")
    except Exception as exc:  # one student's failure is reported, the class goes on
        me.problems.append(f"{type(exc).__name__}: {str(exc)[:500]}")
    finally:
        await context.close()
    return me


async def classroom(url: str, sentences: list[str], clicks: int = 5) -> list[Student]:
    """All students at once: one Chromium, one context per sentence, run concurrently."""
    from playwright.async_api import async_playwright

    unique = unique_tokens(sentences)
    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            return list(await asyncio.gather(*(
                student_session(browser, url, s, clicks=clicks, foreign=set().union(
                    *(unique[o] for o in sentences if o != s)))
                for s in sentences)))
        finally:
            await browser.close()


def summary(students: list[Student]) -> dict:
    """Click-latency figures over all students: n, p50, p95, max (seconds)."""
    times = [t for s in students for t in s.click_seconds]
    if not times:
        return {"n": 0, "p50": float("nan"), "p95": float("nan"), "max": float("nan")}
    return {"n": len(times), "p50": percentile(times, 50), "p95": percentile(times, 95),
            "max": max(times)}


# ---------------------------------------------------------------------------------------------


def report(students: list[Student], clicks: int, info: dict, seconds: float, *,
           solo: list[Student] | None = None, others: set[str] | None = None) -> str:
    """RESULTS.md's section for one classroom run (and the one-session baseline ``solo``)."""
    fig = summary(students)
    alone = ""
    if solo:
        one = summary(solo)
        alone = (f"| One session alone, same clicks afterwards: p50 / p95 (n) | "
                 f"{one['p50']:.2f} s / {one['p95']:.2f} s ({one['n']}) |\n")
    when = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    busy = "; ".join(f"`{p}`" for p in sorted(others)) if others else "none seen"
    software = (f"Python {info['python']}, torch {info['torch']}, Streamlit "
                f"{info['streamlit']}, Playwright {info['playwright']}, {info['chromium']}")
    rows = "\n".join(
        f"| `{s.sentence}` | {s.steps_total} | {len(s.click_seconds)} | "
        + (f"{statistics.median(s.click_seconds):.2f} | " if s.click_seconds else "– | ")
        + ("ok" if not (s.problems or s.dialogs) else
           "; ".join(s.problems + s.dialogs).replace("|", "\\|").replace("\n", " ")) + " |"
        for s in students)
    return f"""## Classroom: {len(students)} browser sessions on one server

`python -m benchmarks.classroom`, {when}. One `streamlit run app.py` and one headless
Chromium with {len(students)} contexts working at the same time, each typing its own sentence,
opening the Cross-attention view and pressing "Next ▶" up to {clicks} times. A click's time
runs from the click until the page is idle again and shows the new step label and the
cross-attention chart redrawn with one more row, so it includes the script run on the
server, the websocket round trips and Plotly's drawing in the browser, with every session
competing for the same CPU cores.

| Figure | Value |
| --- | --- |
| Clicks measured (n) | {fig['n']} |
| p50 click-to-redrawn | {fig['p50']:.2f} s |
| p95 click-to-redrawn | {fig['p95']:.2f} s |
| Slowest click | {fig['max']:.2f} s |
| Whole classroom run, browser start to last click | {seconds:.0f} s |
{alone}
| Session sentence | Steps | Clicks | Median click | Problems |
| --- | --- | --- | --- | --- |
{rows}

| Machine | |
| --- | --- |
| CPU | {info['cpu']} |
| Cores (`os.cpu_count()`) | {info['cores']} |
| RAM | {info['ram']} |
| Load average at the start (1, 5, 15 min) | {info['load']} |
| Software | {software} |
| Model | {info['model']} |
| App version | git {info['commit']} |
| Other test runs, servers or trainings during the run | {busy} |

All sessions share one server process on these cores, so a click in a busy classroom waits
for the other sessions' reruns (compare the one-session figure). The browsers run on the
same machine and take CPU time from the server, which a real classroom's laptops would not:
these figures are pessimistic for the server.
"""


def main(argv: list[str] | None = None) -> int:
    """Run the classroom once, print the figures and (unless --no-write) write RESULTS.md."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=10)
    parser.add_argument("--clicks", type=int, default=5, help="Next clicks per session")
    parser.add_argument("--no-write", action="store_true", help="do not write RESULTS.md")
    args = parser.parse_args(argv)
    problem = chromium_problem()
    if problem:
        raise SystemExit(problem)
    info = machine()
    sentences = classroom_sentences(args.sessions)
    with streamlit_server() as server, Watcher({os.getpid(), server.pid}) as watcher:
        start = time.perf_counter()
        students = asyncio.run(classroom(server.url, sentences, args.clicks))
        seconds = time.perf_counter() - start
        solo = asyncio.run(classroom(server.url, sentences[:1], args.clicks))
    publish(report(students, args.clicks, info, seconds, solo=solo, others=watcher.seen),
            "## Classroom", not args.no_write)
    bad = [s for s in [*students, *solo] if s.problems or s.dialogs]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
