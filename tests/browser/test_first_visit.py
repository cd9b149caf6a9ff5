"""A first visit to a server that has just started (``streamlit run serve.py``, the page
opened as soon as the server answers, as ``streamlit run`` opens a browser): the snapshot's
first step with its heatmap (``ui/first_page.py``), then the app itself, in Chromium, with no
error in the page or in the server's log. The timing is benchmarks/clicks.py's."""

from __future__ import annotations

import json

import pytest

from testkit.harness import VIEWPORT, streamlit_server
from tests.browser.conftest import AppPage
from ui import first_page

HEATMAP = "[data-testid='stPlotlyChart'] .heatmaplayer image"
SENTENCE_BOX = "[data-testid='stSidebar'] [data-testid='stTextInput'] input"


@pytest.mark.parametrize(("query", "language"), [("", "en"), ("?lang=zh", "zh")])
def test_a_first_visit_at_once_sees_the_snapshot_then_the_app(browser, query, language):
    snapshot = json.loads(first_page.SNAPSHOT.read_text(encoding="utf-8"))
    note = snapshot["pages"][language]["note"].split(": ", 1)[-1][:20]  # after its icon
    with streamlit_server() as server:
        context = browser.new_context(viewport=VIEWPORT)
        driver = AppPage(context.new_page(), server)
        page = driver.page
        page.goto(server.url + "/" + query)
        page.get_by_text(note).wait_for(timeout=60_000)  # the snapshot page...
        page.wait_for_selector(HEATMAP, timeout=60_000)  # ...with its heatmap drawn
        assert page.locator(SENTENCE_BOX).count() == 0  # before the app's sidebar
        page.wait_for_selector(SENTENCE_BOX, timeout=120_000)  # the app itself...
        snap = driver.wait_ready(minCharts=1)  # ...its run finished, its charts drawn
        assert page.get_by_text(note).count() == 0  # the snapshot's note is gone
        assert page.locator(SENTENCE_BOX).first.input_value()  # the sentence box, filled
        assert any(c["title"] for c in snap["charts"])
        context.close()
        log = server.output(None)
    assert not driver.page_errors, driver.page_errors
    assert not any(word in log for word in ("Traceback", "WARNING", "Error")), log[-3000:]
