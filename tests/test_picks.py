"""What the lesson points at (model.analysis.picks): properties that hold for any input."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from model.analysis.picks import (
    clearest_row,
    content_position,
    count_options,
    distinct_heads,
    is_content,
    top_keys,
)

weights = arrays(np.float64, st.tuples(st.integers(1, 6), st.integers(1, 9)),
                 elements=st.floats(0, 1, allow_nan=False))
tokens = st.lists(st.sampled_from(["why", "do", "we", "work", "?", "</s>", "<s>", "▁learn",
                                   "ing", "，", "1998", "Ġthe", "<unk>", "..."]), min_size=1,
                  max_size=12)


@given(tokens)
def test_content_position_is_a_longest_content_word(labels):
    i = content_position(labels)
    content = [j for j, lab in enumerate(labels) if is_content(lab)]
    if not content:
        assert i == 0
        return
    assert i in content
    length = [sum(c.isalnum() for c in labels[j]) for j in content]
    assert sum(c.isalnum() for c in labels[i]) == max(length)
    assert i == content[length.index(max(length))]  # the first of equals


def test_special_tokens_and_punctuation_are_not_content():
    for label in ("<s>", "</s>", "<pad>", "<unk>", "?", "。", "▁，", "Ġ,"):
        assert not is_content(label)
    for label in ("我", "▁learn", "Ġthe", "1998", "ing"):
        assert is_content(label)


@given(weights, st.integers(1, 5))
def test_top_keys_are_the_heaviest_in_key_order(w, k):
    row = w[0]
    keys = top_keys(row, k)
    assert keys == sorted(keys) and len(keys) == min(k, len(row)) == len(set(keys))
    assert int(np.argmax(row)) in keys
    rest = [j for j in range(len(row)) if j not in keys]
    if rest:
        assert min(row[keys]) >= max(row[rest])


@given(weights, st.data())
def test_clearest_row_is_the_allowed_row_with_the_highest_peak(w, data):
    allowed = data.draw(st.lists(st.booleans(), min_size=len(w), max_size=len(w)))
    row = clearest_row(w, allowed)
    if not any(allowed):
        assert row == 0
        return
    assert allowed[row]
    assert w[row].max() == max(w[i].max() for i in range(len(w)) if allowed[i])


@given(arrays(np.float64, (3, 4), elements=st.floats(-5, 5, allow_nan=False)),
       arrays(np.float64, (3, 4), elements=st.floats(-5, 5, allow_nan=False)),
       arrays(np.float64, (3, 4), elements=st.floats(-5, 5, allow_nan=False)))
def test_distinct_heads_are_distinct_and_each_the_best_left(a, b, c):
    picked = distinct_heads({"a": a, "b": b, "c": c})
    assert list(picked) == ["a", "b", "c"]
    assert len(set(picked.values())) == 3
    assert a[picked["a"]] == a.max()  # the first statistic gets its best head
    taken = {picked["a"]}
    for name, v in (("b", b), ("c", c)):
        left = [v[cell] for cell in np.ndindex(v.shape) if cell not in taken]
        assert v[picked[name]] == max(left)
        taken.add(picked[name])


def test_distinct_heads_skips_undefined_heads_and_refuses_too_few():
    v = np.array([[np.nan, 0.2], [0.1, np.nan]])
    assert distinct_heads({"x": v, "y": v}) == {"x": (0, 1), "y": (1, 0)}
    with pytest.raises(ValueError):
        distinct_heads({"x": np.zeros((1, 1)), "y": np.zeros((1, 1))})


@given(st.integers(1, 200), st.integers(1, 5))
def test_count_options_hold_the_answer(answer, spread):
    options = count_options(answer, spread)
    assert answer in options and len(set(options)) == 3
    assert options == sorted(options) and min(options) >= 1


def test_count_options_refuse_nonsense():
    with pytest.raises(ValueError):
        count_options(0)
