"""The head-agreement measures (model.analysis.agreement) on constructed rows: identical rows
give rho 1, reversed rows -1, ties share ranks, and a head whose largest key is the
attribution's scores top-1 on that row."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from model.analysis.agreement import _ranks, head_agreement, row_spearman


@given(arrays(np.float64, st.tuples(st.integers(1, 5), st.integers(1, 7)),
              elements=st.sampled_from([0.0, 0.1, 0.25, 0.5, 1.0, -2.0])))
def test_ranks_are_pandas_average_ranks(x):
    np.testing.assert_array_equal(_ranks(x), pd.DataFrame(x).rank(axis=1, method="average"))


def test_identical_reversed_and_constant_rows():
    row = np.array([[0.1, 0.5, 0.2, 0.9]])
    assert row_spearman(row, row)[0] == pytest.approx(1.0)
    assert row_spearman(row, -row)[0] == pytest.approx(-1.0)
    assert np.isnan(row_spearman(row, np.ones((1, 4)))[0])
    ties = row_spearman(np.array([[1.0, 1.0, 2.0]]), np.array([[0.0, 0.0, 5.0]]))
    assert ties[0] == pytest.approx(1.0)  # tied ranks averaged on both sides
    with pytest.raises(ValueError):
        row_spearman(row, row[:, :3])


@settings(max_examples=30, deadline=None)
@given(arrays(np.float64, (3, 6), elements=st.sampled_from([i / 10 for i in range(11)])))
def test_rho_is_invariant_under_a_monotone_change(a):
    b = np.exp(3 * a) + 1  # same order (and ties) in every row
    r1, r2 = row_spearman(a, a), row_spearman(a, b)
    np.testing.assert_allclose(r1, r2, equal_nan=True)


def test_head_agreement_on_a_made_up_model():
    attr = np.array([[[0.7, 0.2, 0.1], [0.1, 0.3, 0.6]]])  # (L=1, T=2, S=3)
    att = np.stack([attr[0], attr[0][:, ::-1], np.array([[0.6, 0.3, 0.1], [0.5, 0.2, 0.3]])])
    rho, top1 = head_agreement(att[None], attr)  # (1, 3, 2, 3) heads: same, reversed, mixed
    assert rho[0, 0] == pytest.approx(1.0) and rho[0, 1] == pytest.approx(-1.0)
    assert top1[0].tolist() == [1.0, 0.0, 0.5]
    rho2, _ = head_agreement(att[None], attr[0])  # one attribution for every layer
    np.testing.assert_allclose(rho2, rho)
    with pytest.raises(ValueError):
        head_agreement(att[None], attr[:, :1])
