"""Two decodings compared (the Side by side view, the lesson's minimal-pair chapter): which
tokens two sentences share, an attention map's difference on them, and where two outputs
part. Pure functions of token lists and arrays."""

from __future__ import annotations

import difflib
from collections.abc import Hashable, Sequence

import numpy as np


def shared_tokens(a: Sequence[str], b: Sequence[str]) -> list[tuple[int, int]]:
    """(index in ``a``, index in ``b``) of the tokens the two sequences share, in order
    (``difflib.SequenceMatcher``'s matching blocks: the longest common runs)."""
    m = difflib.SequenceMatcher(a=list(a), b=list(b), autojunk=False)
    return [(i + k, j + k) for i, j, n in m.get_matching_blocks() for k in range(n)]


def changed_tokens(a: Sequence[str], b: Sequence[str]) -> list[int]:
    """The indices of ``b``'s tokens that ``a`` does not share (``shared_tokens``)."""
    kept = {j for _, j in shared_tokens(a, b)}
    return [j for j in range(len(b)) if j not in kept]


def difference(a: np.ndarray, b: np.ndarray, pairs: Sequence[tuple[int, int]]) -> np.ndarray:
    """``b`` minus ``a`` on the shared tokens ``pairs``: (P, P) where P = len(pairs), cell
    (p, q) = b[jp, jq] - a[ip, iq].

    Args:
        a: (Sa, Sa), b: (Sb, Sb) attention maps of two sentences.
    """
    ia, ib = [i for i, _ in pairs], [j for _, j in pairs]
    return b[np.ix_(ib, ib)] - a[np.ix_(ia, ia)]


def first_difference(a: Sequence[Hashable], b: Sequence[Hashable]) -> int | None:
    """The 0-based index of the first token where two outputs differ (the shorter one's
    length when one is the other's beginning); None when they are equal. Compare token ids
    (or the tokenizer's tokens), never display labels: two tokens may share a label."""
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return i
    return None if len(a) == len(b) else min(len(a), len(b))
