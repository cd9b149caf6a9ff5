"""What a lesson points at, chosen from the live model's own numbers, never hard-coded.

A chapter of the lesson (``ui.lesson``) shows one figure with one thing to look at: a
content word of the sentence, a decoding step whose attention is clearest, the head of a
layer that does a job most. These functions choose them from the trace's arrays, so the
same chapter works for every model and sentence.

Shape letters: L layers, H heads, S source tokens, T decoder steps, K keys.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from .headstats import is_punctuation

SPECIAL = ("<s>", "</s>", "<pad>", "<unk>")


def is_content(label: str) -> bool:
    """True for a token a reader would call a word: not a special token, not punctuation,
    with at least one letter or digit (after a subword's word mark)."""
    text = label.lstrip("Ġ▁")
    return (label not in SPECIAL and not is_punctuation(label)
            and any(ch.isalnum() for ch in text))


def content_position(labels: Sequence[str]) -> int:
    """The index of the longest content word among ``labels`` (the first of equals; the
    word a chapter follows), or 0 when there is none.

    Args:
        labels: S readable tokens.
    """
    best, best_len = 0, -1
    for i, label in enumerate(labels):
        n = sum(ch.isalnum() for ch in label)
        if is_content(label) and n > best_len:
            best, best_len = i, n
    return best


def top_keys(row: np.ndarray, k: int = 4) -> list[int]:
    """The ``k`` keys with the most weight in one query row, in key order (a question's
    options: they do not give the answer away by their order).

    Args:
        row: (K,) attention weights of one query.
        k: how many (at most K).
    """
    w = np.asarray(row, dtype=np.float64)
    order = np.argsort(-w, kind="stable")[: min(k, len(w))]
    return sorted(int(i) for i in order)


def clearest_row(weights: np.ndarray, allowed: Sequence[bool]) -> int:
    """The query row whose largest weight is the highest among the ``allowed`` rows (the
    row where a head's choice is plainest to see); the first row when none is allowed.

    Args:
        weights: (Tq, K) one head's attention weights.
        allowed: Tq flags (e.g. the step produced a content token).
    """
    peak = np.asarray(weights, dtype=np.float64).max(axis=-1)  # (Tq,)
    ok = np.asarray(allowed, dtype=bool)
    if not ok.any():
        return 0
    return int(np.argmax(np.where(ok, peak, -np.inf)))


def distinct_heads(values: Mapping[str, np.ndarray]) -> dict[str, tuple[int, int]]:
    """For each named statistic, the (layer, head) where it is highest, each head named
    once: statistics are served in order, and one whose best head is taken gets its best
    remaining head.

    Args:
        values: name -> (L, H) per-head values (NaN: undefined, picked only when no
            defined head is left).

    Returns:
        name -> (layer, head), in the order of ``values``.

    Raises:
        ValueError: more statistics than heads, or a value array that is not (L, H) like
            the first.
    """
    taken: set[tuple[int, int]] = set()
    picked: dict[str, tuple[int, int]] = {}
    shape = None
    for name, v in values.items():
        v = np.asarray(v, dtype=np.float64)
        if v.ndim != 2 or (shape is not None and v.shape != shape):
            raise ValueError(f"{name}: every value array must be the same (L, H) shape; "
                             f"got {v.shape}")
        shape = v.shape
        if len(values) > v.size:
            raise ValueError(f"{len(values)} statistics for {v.size} heads")
        order = np.argsort(-np.nan_to_num(v, nan=-np.inf), axis=None, kind="stable")
        for flat in order:
            cell = tuple(int(i) for i in np.unravel_index(flat, v.shape))
            if cell not in taken:
                taken.add(cell)
                picked[name] = cell
                break
    return picked


def count_options(answer: int, spread: int = 2) -> list[int]:
    """Three numbers for a "how many" question: ``answer`` and two others ``spread`` away
    (both above it when the one below would be under 1), in increasing order.

    Raises:
        ValueError: ``answer`` < 1 or ``spread`` < 1.
    """
    if answer < 1 or spread < 1:
        raise ValueError(f"answer and spread must be >= 1, got {answer}, {spread}")
    low = answer - spread
    return [low, answer, answer + spread] if low >= 1 else [answer, answer + spread,
                                                             answer + 2 * spread]
