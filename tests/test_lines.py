"""viz.attention_lines (BertViz-style head view): one line per weight above the threshold,
as opaque as its weight's band, per chosen head; a focused token keeps only its lines."""

from __future__ import annotations

import numpy as np
import pytest

from viz.lines import HEAD_COLORS, LEVELS, MIN_WEIGHT, attention_lines


def _weights(H=3, Tq=4, Tk=5, seed=0):
    w = np.random.default_rng(seed).random((H, Tq, Tk)).astype(np.float32) ** 3
    return w / w.sum(-1, keepdims=True)


def _segments(fig):
    """(head colour, opacity, y of the query end, y of the key end) of every line drawn."""
    out = []
    for trace in fig.data[2:]:
        ys = np.asarray(trace.y, dtype=float).reshape(-1, 3)
        out += [(trace.line.color, trace.opacity, a, b) for a, b, _ in ys]
    return out


def test_every_weight_above_the_threshold_is_one_line_in_its_band():
    w = _weights()
    fig = attention_lines(w, list("abcd"), list("vwxyz"))
    queries, keys = fig.data[0], fig.data[1]
    assert list(queries.text) == list("abcd") and list(keys.text) == list("vwxyz")
    segments = _segments(fig)
    assert len(segments) == int((w >= MIN_WEIGHT).sum())
    edges = np.linspace(MIN_WEIGHT, 1.0, LEVELS + 1)
    for h in range(3):
        mine = [s for s in segments if s[0] == HEAD_COLORS[h]]
        for i, j in zip(*np.nonzero(w[h] >= MIN_WEIGHT), strict=True):
            band = min(int(np.searchsorted(edges, w[h, i, j], side="right")) - 1, LEVELS - 1)
            assert (HEAD_COLORS[h], pytest.approx(edges[band + 1]), queries.y[i],
                    keys.y[j]) in mine
    assert sum(t.showlegend for t in fig.data[2:]) == 3  # one legend entry per head


def test_chosen_heads_and_a_focused_token():
    w = _weights()
    only = _segments(attention_lines(w, list("abcd"), list("vwxyz"), heads=[1]))
    assert {s[0] for s in only} == {HEAD_COLORS[1]}
    fig = attention_lines(w, list("abcd"), list("vwxyz"), focus=("key", 2))
    assert {s[3] for s in _segments(fig)} == {fig.data[1].y[2]}
    fig = attention_lines(w, list("abcd"), list("vwxyz"), focus=("query", 0))
    assert {s[2] for s in _segments(fig)} == {fig.data[0].y[0]}


@pytest.mark.parametrize(("kwargs", "match"), [
    (dict(heads=[3]), "heads must be in 0..2"),
    (dict(focus=("key", 5)), "focus must be"),
    (dict(focus=("value", 0)), "focus must be"),
])
def test_bad_arguments_are_refused(kwargs, match):
    with pytest.raises(ValueError, match=match):
        attention_lines(_weights(), list("abcd"), list("vwxyz"), **kwargs)
    with pytest.raises(ValueError):
        attention_lines(_weights() * 2, list("abcd"), list("vwxyz"))
