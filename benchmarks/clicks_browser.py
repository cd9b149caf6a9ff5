"""The browser side of ``benchmarks/clicks.py``: Debian's headless Chromium and its contexts,
and the floor it reads the app's figures against: a trivial app (``benchmarks/floor_app.py``)
whose clicks redraw one or two small heatmaps, and its first visit."""

from __future__ import annotations

import time
from contextlib import asynccontextmanager

from benchmarks.clicks_page import INIT_JS
from benchmarks.clicks_report import Click
from testkit.harness import CHROMIUM, CHROMIUM_ARGS, VIEWPORT, streamlit_server


def first_line(exc: BaseException) -> str:
    """An exception's message's first line (at most 200 characters); "" when it has none
    (``asyncio.TimeoutError``'s)."""
    return (str(exc).splitlines() or [""])[0][:200]


@asynccontextmanager
async def chromium():
    """Debian's headless Chromium with the benchmarks' settings (``CHROMIUM_ARGS``), closed
    on exit."""
    from playwright.async_api import async_playwright

    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            await browser.close()


async def new_context(browser, timeout: float):
    """A browser context with the benchmarks' window (``VIEWPORT``), whose pages run
    ``INIT_JS`` first and whose waits give up after ``timeout`` seconds."""
    context = await browser.new_context(viewport=VIEWPORT)
    await context.add_init_script(INIT_JS)
    context.set_default_timeout(timeout * 1000)
    return context


async def floor_visit(timeout: float, charts: int = 2) -> Click:
    """One first visit to the trivial app (``benchmarks/floor_app.py`` with ``charts``
    heatmaps) on a server started for it, in a browser launched for it: from ``page.goto``
    to its first heatmap in the page, timed as the app's first visits are (and
    ``server_start``: from launching the server to ``page.goto``)."""
    launched = time.perf_counter()
    with streamlit_server(script="benchmarks/floor_app.py") as server:
        click = Click("floor visit", started=time.perf_counter())
        click.server_start = click.started - launched
        async with chromium() as browser:
            context = await new_context(browser, timeout)
            page = await context.new_page()
            try:
                await page.goto(f"{server.url}/?charts={charts}", wait_until="commit")
                handle = await page.wait_for_function(
                    "() => window.__firstHeatmapAt", polling="raf", timeout=120_000)
                click.first_heatmap = click.seconds = await handle.json_value() / 1000
                click.wall = time.perf_counter() - click.started
            except Exception as exc:
                click.error = f"floor visit: {type(exc).__name__}: {first_line(exc)}"
            await context.close()
    return click


#: ``(n) => false | {now, pressAt}``: the floor app idle with every chart titled "Step n".
FLOOR_JS = """
(n) => {
  const app = document.querySelector("[data-testid='stApp']");
  if (!app || app.getAttribute('data-test-script-state') !== 'notRunning') return false;
  const titles = [...document.querySelectorAll("[data-testid='stPlotlyChart'] .gtitle")];
  if (!titles.length || titles.some((t) => t.textContent !== `Step ${n}`)) return false;
  return {now: performance.now(), pressAt: window.__pressAt};
}
"""


async def floor_clicks(charts: tuple[int, ...], clicks: int, timeout: float
                       ) -> dict[int, list[Click]]:
    """Clicks on ``benchmarks/floor_app.py`` (a button and N small heatmaps redrawn by every
    click) for each N in ``charts``, timed as the app's clicks are (``pointerdown`` to the
    page idle with every chart showing the new step; the first five clicks warm up and are
    not counted). A click or page load that fails is recorded as an error and ends that
    N's clicks."""
    out: dict[int, list[Click]] = {}
    with streamlit_server(script="benchmarks/floor_app.py") as server:
        async with chromium() as browser:
            for n_charts in charts:
                context = await new_context(browser, timeout)
                page = await context.new_page()
                record = out[n_charts] = []
                try:
                    await page.goto(f"{server.url}/?charts={n_charts}")
                    await page.wait_for_function(FLOOR_JS, arg=0, polling="raf")
                    for n in range(1, clicks + 6):
                        await page.locator(".st-key-next button").click()
                        done = await (await page.wait_for_function(
                            FLOOR_JS, arg=n, polling="raf")).json_value()
                        if n > 5:
                            record.append(Click("floor", seconds=(done["now"]
                                                                   - done["pressAt"]) / 1000))
                except Exception as exc:
                    record.append(Click("floor", error=f"{type(exc).__name__}: "
                                                       f"{first_line(exc)}"))
                await context.close()
    return out
