"""Tests of ``viz.validate``: HTML escaping and the input checks every builder runs."""

from __future__ import annotations

import numpy as np
import pytest
from viz_helpers import SRC, SRC_ESC, TGT, softmax_rows

from viz import (
    attention_heatmap,
    check_heads,
    check_mask,
    check_matrix,
    escape_html,
    escape_tokens,
)

# --- escaping ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "escaped"),
    [
        ("<s>", "&lt;s&gt;"),
        ("</s>", "&lt;/s&gt;"),
        ("<pad>", "&lt;pad&gt;"),
        ("<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;"),
        ("a & b", "a &amp; b"),
        ("&lt;", "&amp;lt;"),  # already-escaped text is shown literally, not decoded
        ("猫", "猫"),
        ('"quoted"', '"quoted"'),
    ],
)
def test_escape_html(raw: str, escaped: str) -> None:
    assert escape_html(raw) == escaped


def test_escape_tokens_keeps_order_and_repeats() -> None:
    assert escape_tokens(SRC) == SRC_ESC


# --- validators -------------------------------------------------------------------------


def test_check_matrix_returns_float32_copy_of_values() -> None:
    m = softmax_rows((5, 6))
    out = check_matrix(m, TGT, SRC, "weights")
    assert out.dtype == np.float32 and out.shape == (5, 6)
    np.testing.assert_allclose(out, m.astype(np.float32))


def test_check_matrix_accepts_none_tokens() -> None:
    assert check_matrix([[1, 2, 3]], None, None).shape == (1, 3)


@pytest.mark.parametrize(
    ("matrix", "rows", "cols", "match"),
    [
        (np.zeros(6), TGT, SRC, r"2-D.*got shape \(6,\)"),
        (np.zeros((2, 5, 6)), TGT, SRC, r"2-D.*got shape \(2, 5, 6\)"),
        (np.zeros((4, 6)), TGT, SRC, r"needs 4 query_tokens.*got 5"),
        (np.zeros((5, 7)), TGT, SRC, r"needs 7 key_tokens.*got 6"),
        (np.full((5, 6), np.nan), TGT, SRC, r"non-finite"),
        (np.zeros((0, 0)), [], [], r"empty"),
        ([["a", "b"]], None, None, r"numeric"),
    ],
)
def test_check_matrix_errors(matrix, rows, cols, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        check_matrix(matrix, rows, cols, "weights", row_name="query_tokens", col_name="key_tokens")


def test_check_matrix_reports_nan_position() -> None:
    m = np.zeros((5, 6))
    m[2, 3] = np.inf
    with pytest.raises(ValueError, match=r"1 non-finite.*\(2, 3\)"):
        check_matrix(m, TGT, SRC)


def test_check_heads_shape_and_layer_hint() -> None:
    assert check_heads(softmax_rows((3, 5, 6)), TGT, SRC).dtype == np.float32
    with pytest.raises(ValueError, match=r"3-D.*select one layer"):
        check_heads(softmax_rows((2, 3, 5, 6)), TGT, SRC)
    with pytest.raises(ValueError, match=r"needs 6 key_tokens.*got 5"):
        check_heads(softmax_rows((3, 5, 6)), TGT, TGT)


def test_check_mask_accepts_bool_and_01() -> None:
    assert check_mask(np.array([[0, 1]]), None, None).dtype == np.bool_
    assert check_mask(np.array([[0.0, 1.0]]), None, None).tolist() == [[False, True]]


@pytest.mark.parametrize(
    ("mask", "match"),
    [
        (np.array([[0.0, 0.5]]), r"boolean.*0/1"),
        (np.array([[0.0, -np.inf]]), r"additive float mask"),
        (np.array([["a", "b"]]), r"boolean"),
        (np.array([True, False]), r"2-D"),
    ],
)
def test_check_mask_errors(mask: np.ndarray, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        check_mask(mask, None, None)


@pytest.mark.parametrize(
    ("tokens", "match"),
    [("the cat", r"single string"), (["a", 3], r"\[1\] must be a str"), (5, r"list of token")],
)
def test_tokens_must_be_a_list_of_strings(tokens, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        attention_heatmap(np.eye(2), tokens, ["a", "b"])
