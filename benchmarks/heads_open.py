"""How long the Heads view takes to open in Chromium, for each shipped model: from the click
on "Heads" to the redrawn page (every chart drawn, the server's run finished), and from the
click on the held-out scope to the redrawn table; with the server's CPU seconds over each
(``/proc``). A model whose folder keeps its held-out figures (``heads.npz``) should open
both at once: issue 23 asks for under 2 s.

    .venv/bin/python -m benchmarks.heads_open            # prints the figures
    .venv/bin/python -m benchmarks.heads_open --write    # also updates benchmarks/RESULTS.md

Each figure is the median of ``--repeat`` fresh pages (a fresh Streamlit session each, so
nothing the session cached helps; the server's caches are warm after the first, as in a
class where the teacher opened the view first).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run as a script from anywhere

from benchmarks.procs import cpu_seconds  # noqa: E402
from benchmarks.report import machine, publish  # noqa: E402
from model.core.heldout import HELDOUT_SIZE  # noqa: E402
from testkit.harness import (  # noqa: E402
    CHROMIUM,
    CHROMIUM_ARGS,
    READY_JS,
    SNAPSHOT_JS,
    VIEWPORT,
    RunCounter,
    page_problems,
    streamlit_server,
    view_option,
)

MODELS = ("en-zh-everyday", "en-zh", "en-zh-small")
HELDOUT_LABEL = f"{HELDOUT_SIZE} held-out sentences"  # the scope's option (heads_scope_heldout)
TIMEOUT_MS = 120_000


def _wait(page, runs: RunCounter, after: int, **want) -> None:
    """Until the server finished a run after the ``after``-th and the page shows ``want``."""
    deadline = time.monotonic() + TIMEOUT_MS / 1000
    while runs.done <= after:
        if time.monotonic() > deadline:
            raise RuntimeError(f"no run finished after the {after}th")
        page.wait_for_timeout(10)
    page.wait_for_function(READY_JS, arg=want, polling="raf", timeout=TIMEOUT_MS)
    problems = page_problems(page.evaluate(SNAPSHOT_JS))
    if problems:
        raise RuntimeError(f"the page shows {problems}")


def _click_timed(page, runs: RunCounter, locator, pid: int, **want) -> tuple[float, float]:
    """(seconds from the click to the redrawn page, the server's CPU seconds meanwhile)."""
    before, cpu0, t0 = runs.done, cpu_seconds({pid}), time.perf_counter()
    locator.click()
    _wait(page, runs, before, **want)
    return time.perf_counter() - t0, cpu_seconds({pid}) - cpu0


def measure(repeat: int) -> dict[str, dict[str, float]]:
    """Per model: the median seconds (and server CPU seconds) of opening the Heads view and
    of switching it to the held-out sentences."""
    from playwright.sync_api import sync_playwright

    results = {}
    with streamlit_server() as server, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for name in MODELS:
            opened, heldout = [], []
            for _ in range(repeat):
                context = browser.new_context(viewport=VIEWPORT)
                page = context.new_page()
                runs = RunCounter(page)
                page.goto(f"{server.url}/?model={name}")
                _wait(page, runs, 0, minCharts=1)
                opened.append(_click_timed(page, runs, view_option(page, "Heads"), server.pid,
                                           panelMin=1))
                scope = page.locator(".st-key-view_panel").get_by_text(HELDOUT_LABEL,
                                                                      exact=True)
                heldout.append(_click_timed(page, runs, scope, server.pid, panelMin=1))
                context.close()
            results[name] = {
                "open (s)": statistics.median(s for s, _ in opened),
                "open, server CPU (s)": statistics.median(c for _, c in opened),
                "held-out scope (s)": statistics.median(s for s, _ in heldout),
                "held-out scope, server CPU (s)": statistics.median(c for _, c in heldout)}
        browser.close()
    return results


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--write", action="store_true", help="update benchmarks/RESULTS.md")
    args = ap.parse_args()
    results = measure(args.repeat)
    info = machine()
    lines = ["## Heads view", "",
             f"`python -m benchmarks.heads_open --repeat {args.repeat}` on {info['cpu']} "
             f"({info['cores']} cores), {info['chromium']}, commit {info['commit']}: "
             "the median over fresh pages of the click on Heads, and then on the held-out "
             "scope, to the redrawn page (server CPU from /proc).", "",
             "| model | open (s) | server CPU (s) | held-out scope (s) | server CPU (s) |",
             "|---|---|---|---|---|"]
    for name, r in results.items():
        lines.append(f"| `{name}` | {r['open (s)']:.2f} | {r['open, server CPU (s)']:.2f} | "
                     f"{r['held-out scope (s)']:.2f} | "
                     f"{r['held-out scope, server CPU (s)']:.2f} |")
    publish("\n".join(lines) + "\n", "## Heads view", args.write)


if __name__ == "__main__":
    main()
