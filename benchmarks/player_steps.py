"""Stepping in the browser against stepping on the server, in headless Chromium (issue 34).

    python -m benchmarks.player_steps              # prints the figures
    python -m benchmarks.player_steps --write      # also writes them into benchmarks/RESULTS.md

Starts ``streamlit run serve.py`` (``testkit.harness.streamlit_server``) and, for a short
and a 40-token sentence, opens the app with ``?in_browser=true`` (``ui/player/in_browser.py``: the
player steps in the page) and measures, ``--steps`` times each:

* ArrowRight and a click on the player's Next: from the key's ``keydown`` / the click's
  ``pointerdown`` (read in the page, capture phase) to the frame painted after the player
  drew the new step (its ``data-step`` changed; then ``requestAnimationFrame`` and a task
  after it, i.e. after that frame's paint). At the last step, Home (not counted) starts
  over;
* the websocket frames the page sent or received meanwhile (the player needs none);
* Play at 10 steps a second from step 1: the intervals between the steps drawn, and how many
  steps were skipped.

Then, in the same run and browser, the server-side step of the same sentence: "Next" of the
app's stepper, timed as ``benchmarks/clicks.py`` times it (``User.session``, "next step").
Only figures are printed; nothing is asserted about them.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from urllib.parse import quote

from benchmarks.clicks import User, chromium, new_context
from benchmarks.clicks_report import figures
from benchmarks.procs import Meters
from benchmarks.report import machine, percentile, publish
from testkit.harness import streamlit_server

HEADING = "## Stepping in the browser (benchmarks/player_steps.py)"
SENTENCES = (
    "My little brother wants to read new books.",
    "When I was a child, my grandmother told me stories about her village in the mountains, "
    "where people grew rice and tea, and every autumn the family came home to help with the "
    "harvest.",
)
ROOT = ".player.in-app"

#: Installs the page's clock: ``window.__t0`` at each keydown / pointerdown (capture), and
#: ``window.__painted`` once the frame after a new ``data-step`` has been painted.
TIMING_JS = f"""
() => {{
  const root = document.querySelector('{ROOT}');
  const start = () => {{ window.__t0 = performance.now(); window.__painted = null; }};
  window.addEventListener('keydown', start, true);
  window.addEventListener('pointerdown', start, true);
  window.__steps = [];
  new MutationObserver(() => {{
    const step = root.dataset.step, at = performance.now();
    window.__steps.push([Number(step), at]);
    requestAnimationFrame(() => setTimeout(() => {{
      window.__painted = {{step: Number(step), at: performance.now()}};
    }}, 0));
  }}).observe(root, {{attributes: true, attributeFilter: ['data-step']}});
}}
"""
STEP = f"Number(document.querySelector('{ROOT}').dataset.step)"  # the step drawn
T_JS = f"() => document.querySelector('{ROOT}').__player.T"


async def _open(browser, url: str, sentence: str):
    """A page with the player of ``sentence`` drawn at step 1; (page, frame counter)."""
    context = await new_context(browser, 60.0)
    page = await context.new_page()
    frames = {"n": 0}

    def watch(ws):
        for event in ("framesent", "framereceived"):
            ws.on(event, lambda _: frames.__setitem__("n", frames["n"] + 1))

    page.on("websocket", watch)
    await page.goto(f"{url}/?in_browser=true&sentence={quote(sentence)}")
    await page.wait_for_function(
        f"() => document.querySelector('{ROOT}') && document.querySelector('{ROOT}').__player"
        f" && document.querySelector('{ROOT} #heatmap .svg-container')", timeout=120_000)
    await page.evaluate(TIMING_JS)
    await page.wait_for_timeout(1000)  # the first runs' last messages
    return page, frames


async def _steps(page, how: str, n: int) -> list[float]:
    """``n`` timed steps forward by ``how`` ("key": ArrowRight, "click": the Next button);
    seconds from the input to the painted frame."""
    out, T = [], await page.evaluate(T_JS)
    while len(out) < n:
        k = await page.evaluate(f"() => {STEP}")
        if k >= T:
            await page.keyboard.press("Home")
            await page.wait_for_function(f"() => {STEP} === 1")
            continue
        if how == "key":
            await page.keyboard.press("ArrowRight")
        else:
            await page.locator(f"{ROOT} #next").click()
        done = await (await page.wait_for_function(
            f"() => window.__painted && window.__painted.step === {k + 1} && window.__painted")
        ).json_value()
        out.append((done["at"] - await page.evaluate("window.__t0")) / 1000)
    return out


async def _play(page) -> dict:
    """Play at 10 steps a second from step 1 to the end: intervals (s) and skipped steps."""
    await page.keyboard.press("Home")
    await page.select_option(f"{ROOT} #speed", "10")
    await page.evaluate("window.__steps = []")
    T = await page.evaluate(T_JS)
    await page.locator(f"{ROOT} #play").click()
    await page.wait_for_function(f"() => {STEP} === {T}", timeout=60_000)
    steps = await page.evaluate("window.__steps")
    drawn = [(k, at) for i, (k, at) in enumerate(steps) if i == 0 or k != steps[i - 1][0]]
    gaps = [(b[1] - a[1]) / 1000 for a, b in zip(drawn[1:], drawn[2:], strict=False)]
    seen = {k for k, _ in drawn}
    return {"T": T, "gaps": gaps, "skipped": len(set(range(1, T + 1)) - seen)}


async def run(steps: int) -> dict:
    """Every measurement, on one server and one browser."""
    out: dict = {"sentences": []}
    with streamlit_server() as server:
        async with chromium() as browser:
            for sentence in SENTENCES:
                page, frames = await _open(browser, server.url, sentence)
                before = frames["n"]
                keys = await _steps(page, "key", steps)
                clicks = await _steps(page, "click", steps)
                sent = frames["n"] - before
                play = await _play(page)
                source = await page.evaluate(
                    f"() => document.querySelector('{ROOT}').__player.doc.src_tokens.length")
                await page.context.close()
                context = await new_context(browser, 30.0)  # the server's own stepper
                user = User(await context.new_page(), server.url, Meters(server.pid), 30.0)
                await user.visit([], timeout=120.0)
                server_side = await user.session(sentence, steps, ("next step",))
                await context.close()
                out["sentences"].append({"sentence": sentence, "source": source, "keys": keys,
                                         "clicks": clicks, "frames": sent, "play": play,
                                         "server": server_side.clicks["next step"]})
    return out


def report(raw: dict, info: dict, steps: int) -> str:
    """The RESULTS.md section."""
    def ms(values, q):
        return f"{percentile(values, q) * 1000:.0f}" if values else "–"

    rows, play = [], []
    for s in raw["sentences"]:
        name = f"{s['source']} source tokens, {s['play']['T']} steps"
        server = figures(s["server"])
        rows.append(f"| {name} | in the browser: ArrowRight | {len(s['keys'])} | "
                    f"{ms(s['keys'], 50)} | {ms(s['keys'], 95)} | {s['frames']} (both kinds "
                    f"of step) |")
        rows.append(f"| {name} | in the browser: Next | {len(s['clicks'])} | "
                    f"{ms(s['clicks'], 50)} | {ms(s['clicks'], 95)} | |")
        rows.append(f"| {name} | on the server: the stepper's Next | {server['n']} | "
                    f"{ms([c.seconds for c in s['server'] if c.seconds], 50)} | "
                    f"{ms([c.seconds for c in s['server'] if c.seconds], 95)} | "
                    f"{server['errors']} errors |")
        gaps = s["play"]["gaps"]
        play.append(f"| {name} | {len(gaps)} | {ms(gaps, 50)} | {ms(gaps, 95)} | "
                    f"{max(gaps) * 1000 if gaps else 0:.0f} | {s['play']['skipped']} |")
    nl = "\n"
    return f"""{HEADING}

`python -m benchmarks.player_steps --steps {steps}`: one `streamlit run serve.py` and one
headless Chromium on the same machine, the model the app preselects. A step in the browser
is timed from the key's `keydown` or the click's `pointerdown` to the frame painted after the
player drew it; the server's step as `benchmarks/clicks.py` times it (to the page settled
with the new step drawn). Websocket frames: both directions, during all the steps in the
browser.

| Sentence | Step | n | p50 ms | p95 ms | websocket frames |
| --- | --- | --- | --- | --- | --- |
{nl.join(rows)}

Play at 10 steps a second (from step 1 to the end):

| Sentence | intervals | p50 ms | p95 ms | max ms | steps skipped |
| --- | --- | --- | --- | --- | --- |
{nl.join(play)}

Machine: {info['cpu']}, {info['cores']} cores; Python {info['python']}, torch {info['torch']},
Streamlit {info['streamlit']}, Playwright {info['playwright']}, {info['chromium']}; git
{info['commit']}.
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=30, help="timed steps of each kind")
    parser.add_argument("--write", action="store_true", help="write benchmarks/RESULTS.md")
    args = parser.parse_args(argv)
    raw = asyncio.run(run(args.steps))
    publish(report(raw, machine(), args.steps), HEADING, args.write)
    return 0


if __name__ == "__main__":
    sys.exit(main())
