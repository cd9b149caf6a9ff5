"""Take the README's screenshot of the running app in a real browser.

    pip install playwright          # the Python package only; no browser download
    apt-get install chromium fonts-noto-cjk
    python docs/screenshot.py docs/screenshot.png
    python docs/screenshot.py docs/lesson.png --lesson 7     # a chapter of the lesson
    python docs/screenshot.py docs/present.png --present     # Present mode on a projector

Starts ``streamlit run app.py`` on a free loopback port, opens it in Debian's Chromium,
steps the decoder forward, opens the Cross-attention view and saves a PNG; with
``--lesson N``, opens chapter N of the lesson (``?lesson=N``), presses "Just show me" and
saves that page; with ``--present``, opens a 33-token sentence in Present mode at step 12
in a 1920x1080 window (a projector) and saves its first screen.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_idle(page) -> None:
    """Wait until Streamlit has finished running the script and drawn its charts."""
    page.wait_for_selector("[data-testid='stApp'][data-test-script-state='notRunning']",
                           timeout=60_000)
    page.wait_for_timeout(1500)


PRESENT_SENTENCE = ("When I was a child, my grandmother told me stories about her village in "
                    "the mountains, where people grew rice and tea.")


def main(out: str, tab: str = "Cross-attention", *, steps: int = 4, lesson: int | None = None,
         present: bool = False) -> None:
    """Start the app on a free port and save a PNG to ``out``: the ``tab`` view after
    ``steps`` clicks of "Next ▶" (1500 px wide, ``SHOT_HEIGHT`` high, the full page), or
    lesson ``lesson`` shown at once, or with ``present`` Present mode on a 1920 x 1080
    projector."""
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"), "--server.port",
         str(port), "--server.address", "127.0.0.1", "--server.headless", "true"],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(120):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=1)
                break
            except OSError:
                time.sleep(0.5)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            if present:  # the first screen of a projector, after the column's width is known
                page = browser.new_page(viewport={"width": 1920, "height": 1080})
                page.goto(f"http://127.0.0.1:{port}/?present=true&view=cross&step=12&sentence="
                          + urllib.parse.quote(PRESENT_SENTENCE))
                wait_idle(page)
                page.wait_for_timeout(3000)
                wait_idle(page)
                page.screenshot(path=out)
                browser.close()
                return
            height = int(os.environ.get("SHOT_HEIGHT", "1250"))
            page = browser.new_page(viewport={"width": 1500, "height": height})
            if lesson is not None:
                page.goto(f"http://127.0.0.1:{port}/?lesson={lesson}")
                wait_idle(page)
                page.get_by_role("button", name="Just show me").click()
                wait_idle(page)
                page.screenshot(path=out, full_page=True)
                browser.close()
                return
            page.goto(f"http://127.0.0.1:{port}/")
            wait_idle(page)
            for _ in range(steps):
                page.get_by_role("button", name="Next ▶").click()
                wait_idle(page)
            page.locator(".st-key-view").get_by_role("radio", name=tab).click()
            wait_idle(page)
            page.screenshot(path=out, full_page=True)
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=10)


if __name__ == "__main__":
    args = sys.argv[1:]
    chapter = None
    if "--lesson" in args:
        at = args.index("--lesson")
        chapter = int(args[at + 1])
        del args[at:at + 2]
    presenting = "--present" in args
    args = [a for a in args if a != "--present"]
    main(*args[:1] or ["docs/screenshot.png"], *args[1:2], lesson=chapter, present=presenting)
