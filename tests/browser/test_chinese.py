"""Every view in 简体中文, in a real browser: the language comes from the URL, every tab
(the padded batch of three sentences under Masks and the inside of one head included)
draws its charts with no error, and the interface text is Chinese."""

from __future__ import annotations

from urllib.parse import quote

from testkit.harness import CJK
from ui.i18n import VIEWS


def test_every_view_in_chinese(app):
    page = app.page
    before = app.runs.done
    page.goto(f"{app.url}/?lang={quote('简体中文')}")
    app.wait_ready(before, minCharts=2)  # the step figure, the default view's chart
    tabs = app.views()
    assert len(tabs) == len(VIEWS) and all(CJK.search(t) for t in tabs), tabs
    sidebar = page.locator("[data-testid='stSidebar']").inner_text()
    assert "模型" in sidebar and CJK.search(sidebar)
    for name, _ in app.each_view():
        panel = app.panel()
        assert CJK.search(panel.inner_text()), f"{name}: no Chinese text in the panel"
        app.screenshot(f"zh-{len(name)}-{tabs.index(name)}")
    # The Masks tab's padded batch: three sentences, <pad> in the id table, all checks shown.
    app.act(app.view_option(tabs[1]).click, tab=tabs[1], panelMin=3)
    panel = app.panel()
    assert panel.locator("[data-testid='stPlotlyChart'] svg.main-svg").count() >= 8
    assert "1e-5" in panel.inner_text() or "1e-05" in panel.inner_text()
