"""Subword pieces grouped into words (Clark et al. 2019), checked against the definition."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from model.analysis.words import group_attention, group_labels, group_matrix


@st.composite
def word_runs(draw, max_tokens: int = 9) -> list[int]:
    """Word ids of a token sequence: start at 0, each token continues a word or starts one."""
    n = draw(st.integers(1, max_tokens))
    steps = draw(st.lists(st.sampled_from([0, 1]), min_size=n - 1, max_size=n - 1))
    return list(np.cumsum([0, *steps]).astype(int))


def stochastic(rng: np.random.Generator, *shape: int) -> np.ndarray:
    w = rng.random(shape).astype(np.float32) + 1e-3
    return w / w.sum(-1, keepdims=True)


@settings(max_examples=60, deadline=None)
@given(word_runs(), word_runs(), st.integers(0, 2**31 - 1))
def test_rows_still_sum_to_one_and_match_the_definition(qw, kw, seed):
    rng = np.random.default_rng(seed)
    weights = stochastic(rng, 2, 3, len(qw), len(kw))  # (L, H, Tq, Tk)
    grouped = group_attention(weights, qw, kw)
    assert grouped.shape == (2, 3, qw[-1] + 1, kw[-1] + 1)
    np.testing.assert_allclose(grouped.sum(-1), 1.0, atol=1e-5)
    for a in range(qw[-1] + 1):  # the paper's words: mean over the query word's pieces ...
        rows = [i for i, w in enumerate(qw) if w == a]
        for b in range(kw[-1] + 1):  # ... of the sum over the key word's pieces
            cols = [j for j, w in enumerate(kw) if w == b]
            want = weights[..., rows, :][..., cols].sum(-1).mean(-1)
            np.testing.assert_allclose(grouped[..., a, b], want, atol=1e-6)


def test_one_piece_per_word_changes_nothing():
    weights = stochastic(np.random.default_rng(0), 4, 5)
    np.testing.assert_allclose(group_attention(weights, range(4), range(5)), weights, atol=1e-7)


def test_a_fully_masked_row_stays_zero():
    weights = stochastic(np.random.default_rng(1), 3, 4)
    weights[2] = 0.0
    grouped = group_attention(weights, [0, 1, 2], [0, 0, 1, 2])
    assert grouped[2].sum() == 0.0


@pytest.mark.parametrize("bad", [[], [1, 1], [0, 2], [0, 1, 0]])
def test_word_ids_must_be_runs_from_zero(bad):
    with pytest.raises(ValueError, match="word ids"):
        group_matrix(bad)


def test_mismatched_lengths_are_refused():
    with pytest.raises(ValueError, match="cover"):
        group_attention(np.ones((2, 3), np.float32) / 3, [0, 1], [0, 1])


def test_labels_join_a_words_pieces():
    assert group_labels(["learn", "ing", "is", "fun", "!", "</s>"], [0, 0, 1, 2, 3, 4]) == [
        "learning", "is", "fun", "!", "</s>"]


def test_a_chinese_words_characters_join_with_their_pinyin_on_a_second_line():
    """A Chinese source's characters grouped into words (``DecodeTrace.src_words``): the
    characters joined, their readings (a label's second line) joined apart by spaces."""
    labels = ["我\nwǒ", "们\nmen", "工\ngōng", "作\nzuò", "？", "</s>"]
    assert group_labels(labels, [0, 0, 1, 1, 2, 3]) == [
        "我们\nwǒ men", "工作\ngōng zuò", "？", "</s>"]
    assert group_labels(["1998", "年\nnián"], [0, 0]) == ["1998年\nnián"]
    with pytest.raises(ValueError):
        group_labels(["我"], [0, 0])
