"""Subword pieces grouped into words, for the attention views.

Clark et al. 2019 (*What Does BERT Look At?*, section 2): to turn a token-to-token attention
map into a word-to-word map, attention **to** a word is the sum of the attention to its
pieces, and attention **from** a word is the mean of its pieces' attention rows. Each row
of a word map then still sums to what a token row sums to (1, or 0 for a fully masked row).

Shape letters: Tq, Tk query and key tokens; Wq, Wk query and key words; ``...`` any leading
axes (layers, heads).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def group_matrix(word_ids: Sequence[int]) -> np.ndarray:
    """(W, T) float32 0/1 membership: entry [w, t] is 1 when token t belongs to word w.

    Raises:
        ValueError: word ids that do not start at 0 and grow by 0 or 1 per token (words must
            be runs of consecutive tokens).
    """
    ids = list(word_ids)
    steps = [b - a for a, b in zip(ids, ids[1:], strict=False)]
    if not ids or ids[0] != 0 or any(s not in (0, 1) for s in steps):
        raise ValueError(f"word ids must start at 0 and grow by 0 or 1 per token, got {ids}")
    G = np.zeros((ids[-1] + 1, len(ids)), np.float32)  # (W, T)
    G[ids, np.arange(len(ids))] = 1.0
    return G


def group_attention(weights: np.ndarray, query_words: Sequence[int],
                    key_words: Sequence[int]) -> np.ndarray:
    """Word-level attention from token-level weights (Clark et al. 2019).

    Args:
        weights: (..., Tq, Tk) attention weights.
        query_words: Tq word ids of the query tokens (``group_matrix``'s rule).
        key_words: Tk word ids of the key tokens.

    Returns:
        (..., Wq, Wk) float32: rows are the mean of a word's pieces' rows, columns the sum
        over a word's pieces.

    Raises:
        ValueError: word id lists that do not match the weights' last two axes, or are not
            runs of consecutive tokens.
    """
    Gq, Gk = group_matrix(query_words), group_matrix(key_words)  # (Wq, Tq), (Wk, Tk)
    if weights.shape[-2:] != (Gq.shape[1], Gk.shape[1]):
        raise ValueError(f"weights end in {weights.shape[-2:]} but the word ids cover "
                         f"({Gq.shape[1]}, {Gk.shape[1]}) tokens")
    mean_q = Gq / Gq.sum(1, keepdims=True)  # (Wq, Tq) rows average a word's pieces
    return (mean_q @ weights.astype(np.float32) @ Gk.T).astype(np.float32)  # (..., Wq, Wk)


def group_labels(labels: Sequence[str], word_ids: Sequence[int]) -> list[str]:
    """One label per word: its pieces' labels joined (``learn`` + ``ing`` -> ``learning``,
    ``我`` + ``们`` -> ``我们``). A label's second line (after ``\n``: the pinyin of a
    Chinese token, ``"我\nwǒ"``) goes to the word's second line, the readings apart by
    spaces (``"我们\nwǒ men"``).

    Args:
        labels: S token labels; word_ids: S word indices, a word's tokens consecutive.

    Raises:
        ValueError: ``labels`` and ``word_ids`` differ in length.
    """
    words: list[tuple[str, list[str]]] = []  # (the word's text, its tokens' readings)
    for label, (i, w) in zip(labels, enumerate(word_ids), strict=True):
        text, _, reading = label.partition("\n")
        if i and w == word_ids[i - 1]:
            words[-1] = (words[-1][0] + text, [*words[-1][1], reading])
        else:
            words.append((text, [reading]))
    out = []
    for text, readings in words:
        reading = " ".join(r for r in readings if r)
        out.append(f"{text}\n{reading}" if reading else text)
    return out
