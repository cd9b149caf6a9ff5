"""Every eye: axe-core (``axe-playwright-python``, which bundles it) runs in Chromium on the
default page, a lesson chapter, the Chinese page and Present mode; no serious or critical
violation may remain (issue 33). The report names each rule, its impact and its elements."""

from __future__ import annotations

from urllib.parse import quote

import pytest
from axe_playwright_python.sync_playwright import Axe

from ui.lesson import chapters

#: The pages checked: a name -> (the link's query, what the page must have drawn).
PAGES = {
    "default": ("", {"minCharts": 1}),
    "lesson": ("?lesson=4", {}),
    "chinese": (f"?lang={quote('简体中文')}", {"minCharts": 1}),
    "present": ("?present=true", {"minCharts": 1}),
}
BLOCKING = ("serious", "critical")


def _report(violations: list[dict]) -> str:
    """One line per violation and element: rule (impact): the element's HTML, cut, and
    axe's reason (e.g. the two colours and their contrast)."""
    return "\n".join(f"{v['id']} ({v['impact']}): {node['html'][:100]} "
                     f"{' '.join(c['message'] for c in node.get('any', []))[:160]}"
                     for v in violations for node in v["nodes"])


@pytest.mark.parametrize("name", list(PAGES))
def test_no_serious_accessibility_violation(app, name):
    query, ready = PAGES[name]
    if query:
        app.page.goto(f"{app.url}/{query}")
    if name == "lesson":
        title = chapters()[3]["title"]["en"]
        app.page.get_by_role("heading", name=title).wait_for(timeout=60_000)
        app.wait_ready(charts=0)
    else:
        app.wait_ready(**ready)
    results = Axe().run(app.page).response
    blocking = [v for v in results["violations"] if v["impact"] in BLOCKING]
    assert not blocking, _report(blocking)
