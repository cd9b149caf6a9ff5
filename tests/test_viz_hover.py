"""Each hover says each thing once (issue 54: "Key work: work", "Position 5: you: you").

Every figure a builder makes has its hovers written out as Plotly writes them, point by point:
``%{x}`` / ``%{y}`` on a token axis become the tick's label there (plotly.js writes an axis
value that is one of ``tickvals`` as its ``ticktext``), ``%{customdata[i]}``, ``%{text}`` and
``%{hovertext}`` the point's own values. No token, and no pinyin, may appear twice in one hover,
and every hover of a cell names its tokens at least once.
"""

from __future__ import annotations

import re
from collections import Counter

import numpy as np
import pytest
from viz_helpers import sinusoid, softmax_rows

import viz
from viz import ENGLISH, VizText

QUERIES = ["alpha", "bravo", "我\nwǒ"]  # the last with its pinyin, as ui.pinyin makes it
KEYS = ["xray", "yankee", "们\nmen"]
WORDS = ["alpha", "bravo", "我", "wǒ", "xray", "yankee", "们", "men"]
MASK = np.array([[False, True, True], [False, False, True], [False, False, False]])
CHINESE = VizText(**{name: value for name, value in
                     (("hover_query", "查询 %{y}"), ("hover_key", "键 %{x}"),
                      ("hover_position_y", "位置 %{y}"))})


def _figures(text: VizText) -> dict:
    """One figure of every builder whose hover names tokens."""
    w = softmax_rows((3, 3))
    return {
        "heatmap": viz.attention_heatmap(w, QUERIES, KEYS, text=text),
        "grid": viz.attention_grid(softmax_rows((3, 3, 3)), QUERIES, KEYS, ncols=2, text=text),
        "mask": viz.mask_heatmap(MASK, QUERIES, KEYS, text=text),
        "matrix": viz.matrix_heatmap(w, QUERIES, text=text),
        "scores": viz.score_heatmap(w, QUERIES, KEYS, MASK, text=text),
        "pe_tokens": viz.positional_heatmap(sinusoid(3, 6), QUERIES, text=text),
        "bars": viz.probability_bars(QUERIES, np.array([0.2, 0.3, 0.5]), chosen=1, text=text),
        "sequence": viz.sequence_probabilities(QUERIES, np.array([0.2, 0.3, 0.5]), text=text),
        "step": viz.step_overview(QUERIES[:2], np.array([0.3, 0.7]), 1, softmax_rows((2, 3)),
                                  source_tokens=KEYS, self_rows=softmax_rows((2, 2)),
                                  decoder_tokens=QUERIES[:2], head_labels=["h0", "h1"],
                                  text=text),
    }


def _axis_label(layout: dict, ref: str, value) -> str:
    """What plotly.js writes for ``%{x}`` (``ref`` "x", "x2", ...) at ``value``: the tick's
    label where the value is a tick of an axis with ``ticktext``, else the value."""
    axis = layout.get(ref[0] + "axis" + ref[1:]) or {}
    vals, text = axis.get("tickvals"), axis.get("ticktext")
    if vals is not None and text is not None and value in list(vals):
        return str(text[list(vals).index(value)])
    return str(value)


def _cell(array, index):
    """``array`` at ``index`` (a tuple), or None where it has no such entry."""
    if array is None:
        return None
    value = np.asarray(array, dtype=object)
    try:
        return value[index]
    except IndexError:
        return None


def _hovers(fig) -> list[str]:
    """Every point's hover of every trace, written out (``%{z...}`` and other numbers as 0)."""
    layout = fig.layout.to_plotly_json()
    out = []
    for trace in fig.data:
        template = trace.hovertemplate
        if not template:
            continue
        if trace.type == "heatmap":
            z = np.asarray(trace.z, dtype=float)
            xs = list(trace.x) if trace.x is not None else list(range(z.shape[1]))
            ys = list(trace.y) if trace.y is not None else list(range(z.shape[0]))
            points = [((i, j), xs[j], ys[i]) for i in range(z.shape[0])
                      for j in range(z.shape[1]) if not np.isnan(z[i, j])]
        else:
            points = [((k,), x, y) for k, (x, y) in enumerate(zip(trace.x, trace.y, strict=True))]
        for at, x, y in points:
            def value(match, at=at, x=x, y=y, trace=trace):
                name, index = match.group(1), match.group(2)
                if name == "x":
                    return _axis_label(layout, trace.xaxis or "x", x)
                if name == "y":
                    return _axis_label(layout, trace.yaxis or "y", y)
                if name in ("customdata", "text", "hovertext"):
                    cell = _cell(getattr(trace, name), at)
                    if index is not None and cell is not None:
                        cell = np.asarray(cell, dtype=object)[int(index)]
                    return "" if cell is None else str(cell)
                return "0"
            out.append(re.sub(r"%\{(\w+)(?:\[(\d+)\])?(?::[^}]*)?\}", value, template))
    return out


@pytest.mark.parametrize("text", [ENGLISH, CHINESE], ids=["en", "zh"])
def test_each_hover_names_each_token_once(text) -> None:
    for name, fig in _figures(text).items():
        hovers = _hovers(fig)
        assert hovers, name
        for hover in hovers:
            seen = Counter(w for w in re.findall(r"[^\s:<>()/]+", hover) if w in WORDS)
            twice = [w for w, n in seen.items() if n > 1]
            assert not twice, f"{name}: {hover!r} says {twice} twice"


def test_a_cell_hover_names_its_query_and_key() -> None:
    # "Key: yankee", not "Key yankee: yankee": the token once, after the axis's name
    hovers = _hovers(_figures(ENGLISH)["heatmap"])
    assert "Query: bravo<br>Key: yankee<br>" in hovers[1 * 3 + 1]
    assert "Query: 我 wǒ<br>Key: 们 men<br>" in hovers[2 * 3 + 2]
    grid = _hovers(_figures(ENGLISH)["grid"])
    assert any("Query 2: bravo<br>Key 3: 们 men<br>" in h for h in grid), grid[:3]  # from 1
    pe = _hovers(_figures(ENGLISH)["pe_tokens"])
    assert pe[1 * 6].startswith("Position 2: bravo (pos = 1 in the formula)<br>"), pe[6]
