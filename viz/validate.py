"""Input checks and HTML escaping shared by the figure builders.

Every builder runs its inputs through these helpers before touching Plotly, so a bad
input fails early with a ``ValueError`` that says what to fix, instead of producing a
blank or silently wrong figure (in the spirit of bertviz's ``format_attention``).
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from numbers import Integral
from typing import Any

import numpy as np

__all__ = [
    "check_heads",
    "check_index",
    "check_mask",
    "check_matrix",
    "check_range",
    "check_tokens",
    "check_vector",
    "escape_html",
    "escape_tokens",
]


def escape_html(text: str) -> str:
    """Escape ``&``, ``<`` and ``>`` so Plotly shows ``text`` literally.

    Plotly renders a subset of HTML in titles, tick labels and hover text, so the token
    ``<s>`` would otherwise be parsed as a strike-through tag and vanish. The result is
    ``&lt;s&gt;``, which Plotly displays as ``<s>``. ``&`` is escaped first, so an
    already-escaped string is escaped again (shown literally, never decoded).
    """
    return html.escape(str(text), quote=False)


def escape_tokens(tokens: Sequence[str]) -> list[str]:
    """Return ``[escape_html(t) for t in tokens]``."""
    return [escape_html(t) for t in tokens]


def check_tokens(tokens: Sequence[str], name: str = "tokens") -> list[str]:
    """Return ``tokens`` as a list of strings.

    Raises:
        ValueError: if ``tokens`` is a single string (a common slip: pass a list), is not
            iterable, or contains something that is not a ``str``.
    """
    if isinstance(tokens, (str, bytes)):
        raise ValueError(
            f"{name} must be a list of token strings, got the single string {tokens!r}; "
            "pass a list such as tokenizer output."
        )
    try:
        items = list(tokens)
    except TypeError:
        raise ValueError(
            f"{name} must be a list of token strings, got {type(tokens).__name__}."
        ) from None
    for i, tok in enumerate(items):
        if not isinstance(tok, str):
            raise ValueError(
                f"{name}[{i}] must be a str, got {type(tok).__name__} {tok!r}; "
                "convert ids to token text first."
            )
    return items


def _as_float(values: Any, name: str, ndim: int, layout: str, *, hint: str = ""
              ) -> np.ndarray:
    """Convert to a finite, non-empty float32 array with ``ndim`` dimensions."""
    try:
        with np.errstate(over="ignore", invalid="ignore"):
            arr = np.asarray(values, dtype=np.float32)
    except (TypeError, ValueError, RuntimeError) as err:
        raise ValueError(
            f"{name} must be a numeric array of shape {layout}, but it could not be converted "
            f"({err}). Pass a numpy array (for a torch tensor: t.detach().cpu().numpy())."
        ) from None
    if arr.ndim != ndim:
        raise ValueError(
            f"{name} must be {ndim}-D with shape {layout}, got shape {arr.shape}.{hint}"
        )
    if arr.size == 0:
        raise ValueError(f"{name} is empty (shape {arr.shape}); it needs at least one element.")
    bad = ~np.isfinite(arr)
    if bad.any():
        first = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(
            f"{name} contains {int(bad.sum())} non-finite value(s) (NaN or inf, or too large "
            f"for float32), first at index {first}; fix or drop them before plotting."
        )
    return arr


def _check_count(
    size: int, tokens: Sequence[str] | None, axis: str, name: str, *, tok_name: str,
    shape: tuple
) -> None:
    if tokens is not None and len(tokens) != size:
        raise ValueError(
            f"{name} has shape {shape}, so it needs {size} {tok_name} (one per {axis}), "
            f"but got {len(tokens)}."
        )


def check_matrix(
    matrix: Any,
    row_tokens: Sequence[str] | None,
    col_tokens: Sequence[str] | None,
    name: str = "matrix",
    *,
    row_name: str = "row_tokens",
    col_name: str = "col_tokens",
) -> np.ndarray:
    """Validate a 2-D matrix (rows x columns) against its row and column tokens.

    Args:
        matrix: array-like of shape (R, C), e.g. attention (Tq, Tk) or encodings (T, D).
        row_tokens: R token strings, or None to skip the row-count check.
        col_tokens: C token strings, or None to skip the column-count check.
        name, row_name, col_name: argument names used in error messages.

    Returns:
        The matrix as a float32 array of shape (R, C).

    Raises:
        ValueError: if it is not numeric, not 2-D, empty, contains NaN/inf, or its shape
            does not match the token counts (the message gives expected vs got).
    """
    arr = _as_float(matrix, name, 2, "(rows, columns)")
    _check_count(arr.shape[0], row_tokens, "row", name, tok_name=row_name, shape=arr.shape)
    _check_count(arr.shape[1], col_tokens, "column", name, tok_name=col_name, shape=arr.shape)
    return arr


def check_vector(
    values: Any, tokens: Sequence[str] | None, name: str = "values", *, tok_name: str = "tokens"
) -> np.ndarray:
    """Validate a 1-D array of K values, one per token.

    Returns:
        float32 array of shape (K,).

    Raises:
        ValueError: if it is not numeric, not 1-D, empty, contains NaN/inf, or its length
            differs from ``len(tokens)``.
    """
    arr = _as_float(values, name, 1, "(K,)")
    _check_count(arr.shape[0], tokens, "value", name, tok_name=tok_name, shape=arr.shape)
    return arr


def check_heads(
    weights: Any,
    row_tokens: Sequence[str] | None,
    col_tokens: Sequence[str] | None,
    name: str = "weights",
    *,
    row_name: str = "query_tokens",
    col_name: str = "key_tokens",
) -> np.ndarray:
    """Validate per-head attention of shape (H, Tq, Tk); see :func:`check_matrix`.

    Returns:
        float32 array of shape (H, Tq, Tk).

    Raises:
        ValueError: as :func:`check_matrix`, but for a 3-D array (the message hints to
            select one layer of an (L, H, Tq, Tk) array).
    """
    hint = f" For (L, H, Tq, Tk) attention select one layer first, e.g. {name}[layer]."
    arr = _as_float(weights, name, 3, "(H, Tq, Tk)", hint=hint)
    _check_count(arr.shape[1], row_tokens, "query row", name, tok_name=row_name, shape=arr.shape)
    _check_count(arr.shape[2], col_tokens, "key column", name, tok_name=col_name, shape=arr.shape)
    return arr


def check_range(
    arr: np.ndarray, low: float, high: float, name: str, *, hint: str = "", tol: float = 1e-3
) -> None:
    """Raise ``ValueError`` unless every value lies in [low - tol, high + tol].

    The small tolerance absorbs float rounding (e.g. a softmax row summing to 1.0000001).
    """
    lo, hi = float(arr.min()), float(arr.max())
    if lo < low - tol or hi > high + tol:
        raise ValueError(
            f"{name} must lie in [{low}, {high}], got values from {lo:.4g} to {hi:.4g}."
            + (f" {hint}" if hint else "")
        )


def check_mask(
    mask: Any,
    row_tokens: Sequence[str] | None,
    col_tokens: Sequence[str] | None,
    name: str = "mask",
    *,
    row_name: str = "query_tokens",
    col_name: str = "key_tokens",
) -> np.ndarray:
    """Validate a boolean mask (Tq, Tk) where True = blocked (torch MultiheadAttention style).

    Accepts a bool array, or a numeric array holding only 0 and 1.

    Returns:
        bool array of shape (Tq, Tk).

    Raises:
        ValueError: if it is not 2-D, does not match the token counts, or is not
            boolean-like. An additive float mask (0 / -inf) gets a hint to convert it.
    """
    arr = np.asarray(mask)
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 2-D (Tq, Tk), got shape {arr.shape}.")
    if arr.size == 0:
        raise ValueError(f"{name} is empty (shape {arr.shape}); it needs at least one element.")
    if arr.dtype != np.bool_:
        numeric = np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)
        if not numeric:
            raise ValueError(f"{name} must be boolean (True = blocked), got dtype {arr.dtype}.")
        values = np.unique(arr)
        if np.issubdtype(arr.dtype, np.floating) and np.isneginf(values).any():
            raise ValueError(
                f"{name} looks like an additive float mask (0 / -inf); pass a boolean mask "
                f"instead, e.g. np.isneginf({name})."
            )
        if not np.isin(values, [0, 1]).all():
            raise ValueError(
                f"{name} must be boolean (True = blocked) or hold only 0/1, got dtype "
                f"{arr.dtype} with values {values[:5].tolist()}."
            )
        arr = arr.astype(bool)
    _check_count(arr.shape[0], row_tokens, "row", name, tok_name=row_name, shape=arr.shape)
    _check_count(arr.shape[1], col_tokens, "column", name, tok_name=col_name, shape=arr.shape)
    return arr


def check_px(value: Any, name: str) -> int | None:
    """Return a size in pixels (a positive int) or None as it is.

    Raises:
        ValueError: if it is neither None nor a positive int (bools are rejected).
    """
    if value is None:
        return None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, Integral) or value <= 0:
        raise ValueError(f"{name} must be a positive int (px) or None, got {value!r}.")
    return int(value)


def check_index(value: Any, size: int, name: str) -> int:
    """Return ``value`` as an int in ``range(size)``.

    Raises:
        ValueError: if it is not an integer (bools are rejected) or is out of range.
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, Integral):
        raise ValueError(f"{name} must be an int, got {type(value).__name__} {value!r}.")
    if not 0 <= value < size:
        raise ValueError(f"{name} must be in 0..{size - 1}, got {value}.")
    return int(value)
