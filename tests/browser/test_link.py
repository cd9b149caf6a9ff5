"""A link reopens the same view: model, step, view, layer and head are in the page's URL
(widgets bound to query parameters), and a link with values that do not fit falls back to
the defaults with a message naming them."""

from __future__ import annotations

from urllib.parse import parse_qs, urlencode, urlsplit

from benchmarks.harness import VIEWPORT
from tests.browser.conftest import AppPage

MODEL = "en-zh"


def _open(browser, server, url: str, **ready) -> AppPage:
    page = browser.new_context(viewport=VIEWPORT).new_page()
    other = AppPage(page, server)
    before = other.runs.done
    page.goto(url)
    other.wait_ready(before, **ready)
    return other


def test_a_copied_link_reopens_the_same_step_view_layer_and_head(app, browser, app_server):
    app.select("Model", MODEL, stepOf="Step 1 of ")
    for k in (2, 3):
        app.click_button("Next ▶", step=f"Step {k} of 9")
    app.open_view("Cross-attention", panelCharts=1)
    app.select("Layer", "Layer 2", in_tab=True, titles=["Cross-attention, layer 2, all heads"])
    app.select("Head", "Head 5", in_tab=True, titles=["Cross-attention, layer 2, head 5"])
    app.page.wait_for_timeout(300)  # the URL follows the last widget change
    url = app.page.url
    query = parse_qs(urlsplit(url).query)
    assert query["model"] == [MODEL] and query["step"] == ["3"], query

    other = _open(browser, app_server, url, step="Step 3 of 9", tab="Cross-attention",
                  titles=["Cross-attention, layer 2, head 5"])
    snap = other.snapshot()
    assert snap["sentence"] == "why do we work ?" and not snap["alerts"]
    other.page.context.close()

    # A stale link: a step past the end and a layer the model does not have.
    assert query["view"] == ["Cross-attention"] and (query["layer"], query["head"]) == (["2"],
                                                                                     ["5"])
    bad = {**{k: v[0] for k, v in query.items()}, "step": "99", "layer": "9"}
    stale = _open(browser, app_server, f"{app_server.url}/?{urlencode(bad)}",
                  step="Step 1 of 9", tab="Cross-attention",
                  alert="do not fit this model or sentence")
    alert = " ".join(a["text"] for a in stale.snapshot()["alerts"] if a["kind"] == "warning")
    assert "step=99" in alert and "layer=9" in alert, alert
    stale.page.context.close()
