"""Present mode in the app (AppTest, the real app and model): with the switch on, every
view's charts have tick labels of at least ``PRESENT_FONT_PX`` and no figure wider than the
page; the attention views open on one head; the Masks view stands its charts one under
another (they stand side by side when it is off). A link's ``present=true`` is
tests/browser/test_labels.py's way in; Chromium's own measurement of the labels is
tests/browser/test_labels.py."""

from __future__ import annotations

from apptest_helpers import charts, run_app
from streamlit.testing.v1 import AppTest

from ui.charts import PRESENT_KEY
from ui.i18n import KIND_VIEWS, VIEWS
from viz.fit import PAGE_PX, PRESENT_FONT_PX

SENTENCE = "When I was a child, my grandmother told me stories about her village."


def _has_chart(node) -> bool:
    return getattr(node, "type", "") == "plotly_chart" or any(
        _has_chart(child) for child in getattr(node, "children", {}).values())


def _charts_in_columns(at: AppTest) -> bool:
    """Whether a chart stands in a column (side by side with another)."""
    return any(_has_chart(column) for column in at.columns)


def _axes(fig: dict) -> dict[str, dict]:
    return {k: v for k, v in fig["layout"].items() if k[1:5] == "axis"}


def test_every_view_is_drawn_large_in_present_mode():
    at = run_app()
    at.text_input(key="sentence").set_value(SENTENCE).run()
    at.toggle(key=PRESENT_KEY).set_value(True).run()
    for view in VIEWS:
        at.session_state["view"] = view
        at.run()
        assert not at.exception, (view, at.exception)
        figs = charts(at)
        assert len(figs) >= 2, view
        for fig in figs:
            lay = fig["layout"]
            assert lay["font"]["size"] >= PRESENT_FONT_PX, view
            assert lay.get("width") is None or lay["width"] <= PAGE_PX, view
            for name, axis in _axes(fig).items():
                assert axis["tickfont"]["size"] >= PRESENT_FONT_PX, (view, name)
        if view in KIND_VIEWS:
            assert at.session_state[f"{view}_head"] == 0  # one head, not the grid
        if view == "masks":  # one under another: no columns around the masks
            assert not _charts_in_columns(at)


def test_off_the_figures_are_as_built():
    at = run_app()
    assert not at.session_state[PRESENT_KEY]
    assert all((fig["layout"].get("font") or {}).get("size", 13) < PRESENT_FONT_PX
               for fig in charts(at))
    at.session_state["view"] = "masks"
    at.run()
    assert _charts_in_columns(at)  # side by side when not presenting
