"""The click benchmark (benchmarks/clicks.py) finds the widgets it clicks by the app's own ids:
a renamed view id once made every click wait 30 s for a key that no longer existed, and the
report came out empty."""

from __future__ import annotations

from benchmarks.clicks_page import (
    CROSS,
    ONE_STACK_VIEW,
    STATE_JS,
    picked_index,
    step_want,
    view_title,
)
from ui.i18n import KIND_VIEWS, ONE_STACK_VIEWS, VIEWS, text_in
from ui.state import head_key, layer_key
from viz.convention import head_number, layer_number


def test_the_benchmark_clicks_the_step_views_own_keys():
    """Cross-attention, and a decoder-only model's view of the written tokens reading the
    prompt: the app's view ids, their charts' keys (``panels.attention_view``:
    ``{view}_chart``) and their pickers' keys (``ui.state``), which the state it reads before
    each click builds from the view id it is given."""
    assert CROSS in VIEWS and KIND_VIEWS["cross"] == CROSS
    assert ONE_STACK_VIEW in ONE_STACK_VIEWS
    for view in (CROSS, ONE_STACK_VIEW):
        want = step_want("en", 1, 3, layer=0, head=None, view=view)
        assert f"{view}_chart" in want["redrawn"] and "step_chart" in want["redrawn"]
        assert (layer_key(view), head_key(view)) == (f"{view}_layer", f"{view}_head")
    assert "box(view + '_layer')" in STATE_JS and "box(view + '_head')" in STATE_JS


def test_the_benchmark_reads_the_pickers_and_titles_as_the_app_numbers_them():
    # A picker's option names a layer or head as people read it (from 1); the benchmark
    # turns it back into the index and waits for the title the app draws for that index.
    for lang in ("en", "zh"):
        for i in range(4):
            for label in (text_in("layer_option", lang, layer=layer_number(i)),
                          text_in("head_option", lang, head=head_number(i))):
                assert picked_index(label) == i, label
        assert picked_index(text_in("all_heads", lang)) is None
        # The titles: the strings the app formats (ui/views/panels.py), numbered as it does.
        view = text_in("tab_cross", lang)
        assert view_title(lang, 1, 2) == text_in("view_head_title", lang, view=view,
                                                 layer=layer_number(1), head=head_number(2))
        assert view_title(lang, 0, None) == text_in("view_all_heads_title", lang, view=view,
                                                    layer=layer_number(0))
