"""A link reopens the same view: model, decoding settings, step, view, layer and head are in
the page's URL as language-independent ids and numbers, so a link opens the same view in
either language; links in the older format (labels) still open; a link with values that do
not fit falls back to the defaults with a message naming them."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlencode, urlsplit

from tests.browser.conftest import open_link as _open

MODEL = "en-zh"


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
    assert query["view"] == ["cross"] and (query["layer"], query["head"]) == (["2"], ["5"])
    bad = {**{k: v[0] for k, v in query.items()}, "step": "99", "layer": "9"}
    stale = _open(browser, app_server, f"{app_server.url}/?{urlencode(bad)}",
                  step="Step 1 of 9", tab="Cross-attention",
                  alert="do not fit this model or sentence")
    alert = " ".join(a["text"] for a in stale.snapshot()["alerts"] if a["kind"] == "warning")
    assert "step=99" in alert and "layer=9" in alert, alert
    stale.page.context.close()


def _query(url: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}


def test_a_link_opens_the_same_view_in_either_language(app, browser, app_server):
    """Beam search, the Cross-attention view and step 2, made in English, opened with
    ``lang=简体中文`` and back; and the same view from a link in the older label format."""
    sidebar = app.page.locator("[data-testid='stSidebar']")
    app.select("Model", MODEL, stepOf="Step 1 of ")
    app.act(lambda: sidebar.get_by_text("Beam search", exact=True).click(),
            titles=["Candidates at each step"])
    app.open_view("Cross-attention", panelCharts=1)
    snap = app.click_button("Next ▶", stepOf="Step 2 of ")
    n = int(re.fullmatch(r"Step 2 of (\d+)", snap["step"]).group(1))
    app.page.wait_for_timeout(300)  # the URL follows the last run
    query = _query(app.page.url)
    assert (query["strategy"], query["num_beams"], query["view"], query["step"]) == (
        "beam", "4", "cross", "2"), query

    def check(lang: str, step: str, view: str, described: str) -> str:
        url = f"{app_server.url}/?{urlencode({**query, 'lang': lang})}"
        other = _open(browser, app_server, url, step=step, tab=view)
        snap = other.snapshot()
        assert not snap["alerts"], snap["alerts"]  # no "does not fit" warning
        assert other.page.get_by_text(described).count() >= 1
        now = _query(other.page.url)
        assert {k: now.get(k) for k in query} == query, now  # the same link (pinyin=false:
        # off, which differs from the default in either language, so it is kept)
        other.page.context.close()
        return url

    check("简体中文", f"第 2 步（共 {n} 步）", "交叉注意力", "束搜索，束宽 4")
    check("English", f"Step 2 of {n}", "Cross-attention", "beam search, 4 beams")

    old = {"model": MODEL, "strategy": "Beam search", "num_beams": "4",
           "view": "Cross-attention", "step": "2", "lang": "简体中文"}  # labels, as before
    other = _open(browser, app_server, f"{app_server.url}/?{urlencode(old)}",
                  step=f"第 2 步（共 {n} 步）", tab="交叉注意力")
    assert not other.snapshot()["alerts"]
    assert other.page.get_by_text("束搜索，束宽 4").count() >= 1
    other.page.context.close()
