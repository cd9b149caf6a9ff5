"""The server's memory with both shipped directions open, and how long each first page takes.

    python -m benchmarks.two_directions            # prints the figures
    python -m benchmarks.two_directions --rounds 3

Starts ``serve.py`` (``testkit.harness.streamlit_server``: the app as README runs it, its
warm-up included) and, in Debian's headless Chromium, opens the default page (the default
model, English -> Chinese), then ``?model=zh-en-everyday&sentence=我们为什么工作？`` (the
Chinese -> English model, loaded then), then the default page again. For each page it prints
the seconds from ``page.goto`` until the first heatmap has its SVG and the server's resident
memory (its process tree, ``/proc``) once the page has settled (no running indicator for a
second). Only figures are printed; nothing is asserted about them (issue 46's bar: at most
500 MB with both models open).
"""

from __future__ import annotations

import argparse
import time
import urllib.parse

from benchmarks.procs import Meters
from testkit.harness import CHROMIUM, CHROMIUM_ARGS, VIEWPORT, streamlit_server

ZH_EN = "?" + urllib.parse.urlencode({"model": "zh-en-everyday", "sentence": "我们为什么工作？"})
HEATMAP = ".js-plotly-plot .main-svg"
RUNNING = "[data-testid='stStatusWidget']"
SENTENCE_BOX = "[data-testid='stSidebar'] [data-testid='stTextInput'] input"  # the app itself


def open_page(page, url: str, timeout: float) -> float:
    """Go to ``url``; the seconds until the first heatmap is drawn, after which the page is
    left to show the app's sidebar (its sentence box) and to settle (no running indicator for
    a second)."""
    start = time.perf_counter()
    page.goto(url, wait_until="commit")
    page.wait_for_selector(HEATMAP, timeout=timeout * 1000)
    first = time.perf_counter() - start
    page.wait_for_selector(SENTENCE_BOX, timeout=timeout * 1000)
    quiet_since = time.monotonic()
    deadline = time.monotonic() + timeout
    while time.monotonic() - quiet_since < 1.0 and time.monotonic() < deadline:
        if page.locator(RUNNING).count():
            quiet_since = time.monotonic()
        page.wait_for_timeout(100)
    return first


def measure(rounds: int, timeout: float) -> list[tuple[str, float, float]]:
    """(page, seconds to the first heatmap, server MiB after it) for each page of each
    round, on one server."""
    from playwright.sync_api import sync_playwright

    rows = []
    with streamlit_server() as server, sync_playwright() as p:
        meters = Meters(server.pid)
        rows.append(("server started", float("nan"), meters.server_rss()))
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport=VIEWPORT)
        for r in range(rounds):
            for name, query in (("default (en-zh)", ""), ("zh-en-everyday", ZH_EN)):
                seconds = open_page(page, server.url + "/" + query, timeout)
                rows.append((f"{name}, round {r + 1}", seconds, meters.server_rss()))
        browser.close()
    return rows


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point (module docstring)."""
    ap = argparse.ArgumentParser(prog="python -m benchmarks.two_directions",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=2, help="times each page is opened")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per page")
    args = ap.parse_args(argv)
    print("| page | first heatmap (s) | server RSS (MiB) |\n|---|---|---|")
    for name, seconds, rss in measure(args.rounds, args.timeout):
        print(f"| {name} | {seconds:.2f} | {rss:.0f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
