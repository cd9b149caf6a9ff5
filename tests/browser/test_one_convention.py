"""One display convention (viz/convention.py, issue 45): for the same step, layer and head, the
server's view, the in-app player and the take-home page show the same layer and head numbers,
the same row and column labels, the same cell values and the same colour scale, in Chromium
against the real app and model."""

from __future__ import annotations

from urllib.parse import quote

import numpy as np
import pytest
from shipped import trace_of

from model.backends.load import default_model, pretrained_root
from ui.i18n import text_in
from ui.player import take_home
from viz.convention import head_number, layer_number

SENTENCE = "My little brother wants to read three new books about old trains."
LAYER, HEAD, STEP = 1, 2, 6  # indices; the step is 1-based
ROOT = ".player.in-app"

# The chart whose title starts with ``title``: its cells, colour scale and range as Plotly
# draws them (its full data), and its tick labels as the page shows them.
SERVER_JS = """(title) => {
  const c = [...document.querySelectorAll("[data-testid='stPlotlyChart']")].find(
    (c) => ((c.querySelector('.gtitle') || {}).textContent || '').startsWith(title));
  if (!c) return null;
  const gd = c.querySelector('.js-plotly-plot'), d = gd._fullData[0];
  const text = (sel) => [...c.querySelectorAll(sel)].map((e) => e.textContent);
  return {z: d.z, colorscale: d.colorscale, zmin: d.zmin, zmax: d.zmax,
          rows: text('.ytick text'), cols: text('.xtick text'),
          pickers: [...document.querySelectorAll("[data-testid='stSelectbox']")].map(
            (e) => e.textContent + " " + [...e.querySelectorAll('input')].map((i) => i.value)
                                                                   .join(" "))};
}"""

# The player under ``root``: the same things, its labels being the page's own elements.
PLAYER_JS = """(root) => {
  const r = document.querySelector(root), gd = r.querySelector('#heatmap');
  const d = gd._fullData[0];
  const text = (sel) => [...r.querySelectorAll(sel)].filter((e) => !e.hidden)
                          .map((e) => e.textContent);
  const picked = (id) => r.querySelector('#' + id).selectedOptions[0].textContent;
  return {z: d.z, colorscale: d.colorscale, zmin: d.zmin, zmax: d.zmax,
          rows: text('.map-y'), cols: text('.map-x'),
          layerText: picked('layer'), headText: picked('head')};
}"""


@pytest.fixture(scope="module")
def model_name() -> str:
    return default_model([p.name for p in pretrained_root().iterdir()])


@pytest.fixture(scope="module")
def trace(model_name):
    return trace_of(model_name, SENTENCE)


def _cells(z, rows: int) -> np.ndarray:
    """The first ``rows`` rows of a heatmap's z (None, a blank cell, as NaN)."""
    return np.array([[np.nan if v is None else v for v in row] for row in z[:rows]], float)


def _player(page, root: str) -> dict:
    """Pick LAYER and HEAD in the player under ``root`` and read what it draws."""
    for picker, value in (("layer", LAYER), ("head", HEAD)):
        page.select_option(f"{root} #{picker}", str(value))
    return page.evaluate(PLAYER_JS, root)


def _same(server: dict, player: dict, where: str) -> None:
    np.testing.assert_allclose(_cells(player["z"], STEP), _cells(server["z"], STEP),
                               atol=1e-4, err_msg=where)  # the document keeps 4 decimals
    assert player["colorscale"] == server["colorscale"], where
    assert (player["zmin"], player["zmax"]) == (server["zmin"], server["zmax"]), where
    assert player["rows"] == server["rows"], where
    assert player["cols"] == server["cols"], where
    assert player["layerText"] == text_in("layer_option", "en", layer=layer_number(LAYER)), where
    assert player["headText"] == text_in("head_option", "en", head=head_number(HEAD)), where


def test_server_view_player_and_take_home_page_draw_the_same_head(browser, app_url, trace,
                                                                  model_name, tmp_path):
    assert len(trace.steps) > STEP
    title = text_in("view_head_title", "en", view=text_in("tab_cross", "en"),
                 layer=layer_number(LAYER), head=head_number(HEAD))
    assert title.endswith("layer 2, head 3")  # people count layers and heads from 1
    query = (f"sentence={quote(SENTENCE)}&pinyin=false&step={STEP}&view=cross"
             f"&layer={layer_number(LAYER)}&head={head_number(HEAD)}")
    page = browser.new_context(viewport={"width": 1600, "height": 1000}).new_page()
    page.goto(f"{app_url}/?{query}")
    page.wait_for_function(f"({SERVER_JS})({title!r}) !== null", timeout=90_000)
    page.wait_for_timeout(500)
    server = page.evaluate(SERVER_JS, title)
    np.testing.assert_allclose(_cells(server["z"], STEP),
                               trace.cross_attentions[LAYER, HEAD, :STEP], atol=1e-6)
    assert any(text_in("layer_option", "en", layer=layer_number(LAYER)) in s
               for s in server["pickers"]), server["pickers"]

    # The in-app player, at the same step (the link's), same layer and head.
    page.goto(f"{app_url}/?{query}&in_browser=true")
    page.wait_for_function(f"(document.querySelector('{ROOT}') || {{dataset: {{}}}})"
                           f".dataset.step === '{STEP}'", timeout=90_000)
    _same(server, _player(page, ROOT), "in-app player")
    page.context.close()

    # The take-home page of the same decoding.
    path = tmp_path / "page.html"
    path.write_text(take_home.page_html(trace, model_name, "en"), encoding="utf-8")
    home = browser.new_context(viewport={"width": 1600, "height": 1000}).new_page()
    home.goto(path.as_uri())
    for _ in range(300):  # the page's CSP refuses wait_for_function's string evaluation
        if home.evaluate("() => !!window.tracePlayer"):
            break
        home.wait_for_timeout(100)
    home.evaluate(f"() => window.tracePlayer.go({STEP})")
    _same(server, _player(home, "#player"), "take-home page")
    home.context.close()
