"""A first visit to a server that is still starting (``streamlit run serve.py``, the page
opened as soon as its port is bound, while the warm-up runs): the browser waits, then gets
the app itself with its first heatmap, in Chromium, with no error in the page or in the
server's log. The timing is benchmarks/clicks.py's."""

from __future__ import annotations

from testkit.harness import VIEWPORT, streamlit_server
from tests.browser.conftest import AppPage

HEATMAP = "[data-testid='stPlotlyChart'] .heatmaplayer image"
SENTENCE_BOX = "[data-testid='stSidebar'] [data-testid='stTextInput'] input"


def test_a_first_visit_during_the_start_up_gets_the_app(browser):
    with streamlit_server(answering=False) as server:
        context = browser.new_context(viewport=VIEWPORT)
        driver = AppPage(context.new_page(), server)
        page = driver.page
        page.goto(server.url + "/", timeout=120_000)  # answered once the warm-up is done
        page.wait_for_selector(HEATMAP, timeout=120_000)
        snap = driver.wait_ready(minCharts=1)  # its run finished, its charts drawn
        assert page.locator(SENTENCE_BOX).first.input_value()  # the sentence box, filled
        assert any(c["title"] for c in snap["charts"])
        context.close()
        log = server.output(None)
    assert not driver.page_errors, driver.page_errors
    assert not any(word in log for word in ("Traceback", "WARNING", "Error")), log[-3000:]
