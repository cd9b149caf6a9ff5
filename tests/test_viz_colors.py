"""One colour per meaning: ``viz.colors`` defines every colour and colour scale once, every
viz module uses those objects, and figures that show the same thing show it alike."""

from __future__ import annotations

import importlib
import json
import pkgutil
import re
from pathlib import Path

import numpy as np
from viz_helpers import sinusoid, softmax_rows

import viz
import viz.colors

MODULES = [importlib.import_module(f"viz.{m.name}") for m in pkgutil.iter_modules(viz.__path__)]
SHARED = [name for name in viz.colors.__all__ if name.endswith(("_COLOR", "_COLORS", "_SCALE"))]
# A colour written in the code: a hex literal, or a colour scale given by its name
COLOUR_LITERAL = re.compile(r"""["']#[0-9A-Fa-f]{3,8}["']|colorscale\s*=\s*["']""")


def test_every_module_uses_the_one_object_of_each_colour_name():
    assert SHARED == viz.colors.__all__  # every public name of viz.colors is a colour
    seen = 0
    for module in MODULES:
        for name in SHARED:
            if hasattr(module, name):
                assert getattr(module, name) is getattr(viz.colors, name), (module, name)
                seen += 1
    assert seen > len(SHARED)  # the builders do import them (and keep their old names)
    blocked = viz.colors.BLOCKED_COLOR
    assert viz.masks.BLOCKED_COLOR is viz.internals.BLOCKED_COLOR is blocked
    assert viz.masks.ALLOWED_COLOR is viz.colors.ALLOWED_COLOR != blocked
    assert viz.decoding.CHOSEN_COLOR is viz.colors.HIGHLIGHT_COLOR  # the chosen token's name


def test_no_viz_module_writes_a_colour_of_its_own():
    for module in MODULES:
        if module is viz.colors:
            continue
        source = Path(module.__file__).read_text(encoding="utf-8")
        found = [m.group(0) for m in COLOUR_LITERAL.finditer(source)]
        assert not found, (module.__name__, found, "define it in viz/colors.py")


def _sent(fig) -> list[dict]:
    """The figure's traces as sent to the page (named scales expanded to lists)."""
    return json.loads(fig.to_json())["data"]


def test_figures_that_show_the_same_thing_show_it_alike():
    mask = np.array([[False, True], [False, False]])
    masked, scores = viz.mask_heatmap(mask, ["a", "b"], ["a", "b"]), viz.score_heatmap(
        np.array([[1.0, -np.inf], [-2.0, 0.5]]), ["a", "b"], ["a", "b"], mask)
    # blocked: the mask's colour for True is the colour of a score heatmap's blocked cells
    assert _sent(masked)[0]["colorscale"][-1][1] == _sent(scores)[1]["marker"]["color"]
    # signed values: positional encodings, Q/K/V matrices and raw scores on one scale
    signed = [_sent(viz.positional_heatmap(sinusoid(3, 4)))[0],
              _sent(viz.matrix_heatmap(sinusoid(3, 4), ["a", "b", "c"]))[0], _sent(scores)[0]]
    assert len({json.dumps([t["colorscale"], t.get("reversescale")]) for t in signed}) == 1
    assert all(t["zmid"] == 0 for t in signed)
    # attention weights and softmax probabilities on one scale
    weights = [_sent(viz.attention_heatmap(softmax_rows((2, 2)), ["a", "b"], ["x", "y"]))[0],
               _sent(viz.score_heatmap(softmax_rows((2, 2)), ["a", "b"], ["x", "y"],
                                       probabilities=True))[0],
               _sent(viz.attention_grid(softmax_rows((2, 2, 2)), ["a", "b"], ["x", "y"]))[0]]
    assert len({json.dumps(t["colorscale"]) for t in weights}) == 1
    # highlighted: the chosen bar, outlined cells and the selected beam path
    bars = viz.probability_bars(["a", "b"], [0.4, 0.6], chosen=1)
    outlined = viz.attention_heatmap(softmax_rows((2, 2)), ["a", "b"], ["x", "y"],
                                     marked=[(0, 1)])
    path = viz.beam_tree([[(0, "a", -0.1, "finished")]], highlight=(0, 0))
    chosen = {bars.data[0].marker.color[0], outlined.data[1].marker.color,
              next(t.line.color for t in path.data if t.name == "selected hypothesis")}
    assert chosen == {viz.colors.HIGHLIGHT_COLOR}
