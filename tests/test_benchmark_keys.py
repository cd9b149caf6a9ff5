"""The click benchmark (benchmarks/clicks.py) finds the widgets it clicks by the app's own ids:
a renamed view id once made every click wait 30 s for a key that no longer existed, and the
report came out empty."""

from __future__ import annotations

from benchmarks.clicks_page import CROSS, STATE_JS, STEP_CHARTS
from ui.i18n import KIND_VIEWS, VIEWS


def test_the_benchmark_clicks_the_cross_attention_views_own_keys():
    assert CROSS in VIEWS and KIND_VIEWS["cross"] == CROSS
    assert f"{CROSS}_chart" in STEP_CHARTS
    # the state it reads before each click: the Cross-attention view's pickers by their keys
    assert f"box('{CROSS}_layer')" in STATE_JS and f"box('{CROSS}_head')" in STATE_JS
    assert "%CROSS%" not in STATE_JS
