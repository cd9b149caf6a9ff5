"""Stepping in the browser (ui/player/in_browser.py) in Chromium, against the real app and
model: the keys step the player with no websocket message either way, the heatmap and the
top-k bars are the trace's numbers, Play walks every step in order, the address bar keeps
the step, and the server's stepper opens at the player's step once the switch is turned
off."""

from __future__ import annotations

from urllib.parse import parse_qs, quote, urlparse

import numpy as np
import pytest
from shipped import trace_of

from model.backends.load import default_model, pretrained_root
from testkit.harness import VIEWPORT, RunCounter
from ui.i18n import STRINGS

SENTENCE = "My little brother wants to read three new books about old trains."
ROOT = ".player.in-app"
STEP = f"(document.querySelector('{ROOT}') || {{dataset: {{}}}}).dataset.step"


@pytest.fixture(scope="module")
def trace():
    name = default_model([p.name for p in pretrained_root().iterdir()])
    return trace_of(name, SENTENCE)


def _open(browser, url: str, viewport: dict = VIEWPORT):
    """A fresh page on ``url`` with its websocket frames counted both ways, once the player
    has drawn its first step; (page, frames, runs, page errors)."""
    page = browser.new_context(viewport=viewport).new_page()
    frames = {"sent": 0, "received": 0}

    def watch(ws):
        ws.on("framesent", lambda _: frames.__setitem__("sent", frames["sent"] + 1))
        ws.on("framereceived", lambda _: frames.__setitem__("received", frames["received"] + 1))

    page.on("websocket", watch)
    runs = RunCounter(page)
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(url)
    page.wait_for_function(
        f"{STEP} === '1' && !!document.querySelector('{ROOT} #heatmap .svg-container')",
        timeout=90_000)
    return page, frames, runs, errors


def _press(page, key: str, want: int) -> None:
    page.keyboard.press(key)
    page.wait_for_function(f"{STEP} === '{want}'", timeout=5_000)


def _heatmap(page, rows: int) -> np.ndarray:
    """The heatmap's first ``rows`` rows; the rest (steps not yet taken) must be blank."""
    z = page.evaluate(f"document.querySelector('{ROOT} #heatmap').data[0].z")
    z = np.array([[np.nan if v is None else v for v in row] for row in z], dtype=float)
    assert np.isnan(z[rows:]).all()
    return z[:rows]


def test_keys_step_in_the_page_with_no_message_and_the_server_follows(browser, app_url, trace):
    page, frames, runs, errors = _open(browser, f"{app_url}/?in_browser=true&pinyin=false"
                                        f"&sentence={quote(SENTENCE)}")
    page.wait_for_timeout(1500)  # let the first runs' messages end
    before = dict(frames)
    T = len(trace.steps)
    assert T > 11
    for k in range(2, 12):
        _press(page, "ArrowRight", k)
    assert frames == before, "stepping sent or received websocket messages"
    np.testing.assert_allclose(_heatmap(page, 11), trace.cross_attentions[0, :, :11].mean(0),
                               atol=1e-4)
    bars = page.evaluate(f"[...document.querySelectorAll('{ROOT} #topk .topk-row:not([hidden])')]"
                         ".map((r) => 100 * Number(r.dataset.prob))")
    np.testing.assert_allclose(bars, 100 * trace.steps[10].top_probs, atol=1e-3)
    _press(page, "PageUp", 10)
    _press(page, "End", T)
    _press(page, "Home", 1)
    _press(page, "PageDown", 2)
    page.locator(f"{ROOT} #next").click()
    page.wait_for_function(f"{STEP} === '3'")
    assert frames == before
    assert parse_qs(urlparse(page.url).query)["step"] == ["3"]  # the link keeps the step
    # turning to the rest of the page: the step reaches the server, whose stepper shows it
    done = runs.done
    page.get_by_text(STRINGS["in_browser_switch"]["en"], exact=True).click()
    slider = ".st-key-step [data-testid='stSlider'] input[type='range']"  # the server's stepper
    page.wait_for_function(f"() => !document.querySelector('{ROOT}') && "
                           f"document.querySelector(\"{slider}\")", timeout=60_000)
    assert runs.done > done
    assert page.locator(slider).input_value() == "3"  # at the player's step
    assert not errors


def test_play_walks_every_step_in_order(browser, app_url, trace):
    page, frames, _, errors = _open(browser, f"{app_url}/?in_browser=true&pinyin=false"
                                     f"&sentence={quote(SENTENCE)}")
    page.evaluate(f"""() => {{
      const root = document.querySelector('{ROOT}');
      window.__seen = [];
      new MutationObserver(() => window.__seen.push(root.dataset.step))
        .observe(root, {{attributes: true, attributeFilter: ['data-step']}});
    }}""")
    page.select_option(f"{ROOT} #speed", "10")
    page.wait_for_timeout(500)
    before = dict(frames)
    page.locator(f"{ROOT} #play").click()
    T = len(trace.steps)
    page.wait_for_function(f"{STEP} === '{T}'", timeout=30_000)
    seen = [int(s) for s in page.evaluate("window.__seen")]
    drawn = [k for i, k in enumerate(seen) if i == 0 or k != seen[i - 1]]  # redraws apart
    assert drawn == list(range(1, T + 1)), seen  # from the start, no step skipped
    assert frames == before and not errors


def _map_fit(page) -> dict:
    """The map's column (its scroll box), the map's width and its visible key labels'
    centres, in CSS pixels."""
    return page.evaluate(f"""() => {{
      const box = document.querySelector('{ROOT} .map-scroll');
      const r = box.getBoundingClientRect();
      const xs = [...box.querySelectorAll('.map-x:not([hidden])')].map((el) => {{
        const b = el.getBoundingClientRect(); return b.right; }});
      return {{left: r.left, right: r.right, client: box.clientWidth, scroll: box.scrollWidth,
               map: document.querySelector('{ROOT} #map').getBoundingClientRect().width,
               ends: xs}};
    }}""")


def test_the_map_fits_its_column_and_follows_its_size(browser, app_url, trace):
    # 15 keys at 1280 px beside the sidebar: every column and label on screen, no scrolling,
    # the labels' ends (rotated labels end at their key's column) apart and in order.
    page, _, _, errors = _open(browser, f"{app_url}/?in_browser=true&pinyin=false"
                                f"&sentence={quote(SENTENCE)}", {"width": 1280, "height": 800})
    fit = _map_fit(page)
    assert len(fit["ends"]) == len(trace.src_labels) > 12
    assert fit["scroll"] <= fit["client"], fit
    assert all(fit["left"] <= x <= fit["right"] for x in fit["ends"]), fit
    gaps = np.diff(fit["ends"])
    assert (gaps >= 20).all(), gaps  # a 14 px label turned 60 degrees needs ~17 px
    page.set_viewport_size({"width": 1900, "height": 800})
    page.wait_for_function(f"document.querySelector('{ROOT} #map').getBoundingClientRect()"
                           f".width > {fit['map'] + 50}", timeout=5_000)
    wide = _map_fit(page)
    assert wide["scroll"] <= wide["client"] and np.diff(wide["ends"]).min() > gaps.min()
    assert not errors
