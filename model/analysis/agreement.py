"""Does a head's attention agree with what the model used? Per head, the rank correlation
(Spearman) of its attention rows with an attribution's rows over the same keys, and how
often the two put the same key first (Ferrando & Costa-jussà 2021 ask this of translation
models' cross-attention). Pure numpy.

Weights are compared to TIE_DECIMALS decimals: keys closer than that are ties (their order
is float noise: the same model on one thread or two orders near-zero weights differently).

Shape letters: L layers, H heads, T query rows (decoder steps), S keys (source tokens).
"""

from __future__ import annotations

import numpy as np

TIE_DECIMALS = 3


def _ranks(x: np.ndarray) -> np.ndarray:
    """(R, K) rows (no NaN) -> their 1-based ranks per row, ties sharing the mean of their
    ranks (pandas' ``rank(method="average")``, which the tests compare it with; pandas
    itself stays out of the server)."""
    R, K = x.shape
    order = np.argsort(x, axis=1, kind="stable")  # (R, K)
    s = np.take_along_axis(x, order, axis=1)  # each row sorted
    pos = np.broadcast_to(np.arange(K), (R, K))
    starts = np.ones((R, K), bool)
    starts[:, 1:] = s[:, 1:] != s[:, :-1]  # a tie group begins
    ends = np.ones((R, K), bool)
    ends[:, :-1] = starts[:, 1:]  # a tie group ends
    first = np.maximum.accumulate(np.where(starts, pos, 0), axis=1)
    last = np.minimum.accumulate(np.where(ends, pos, K - 1)[:, ::-1], axis=1)[:, ::-1]
    out = np.empty((R, K), np.float64)
    np.put_along_axis(out, order, (first + last) / 2 + 1, axis=1)
    return out


def row_spearman(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Spearman's rho of each row of ``a`` with the same row of ``b``, both (R, K): the
    Pearson correlation of their ranks; NaN for a row where either is constant.

    Raises:
        ValueError: arrays of different shapes, or not 2-D.
    """
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 2:
        raise ValueError(f"expected two (R, K) arrays of one shape, got {a.shape}, {b.shape}")
    ra, rb = _ranks(a), _ranks(b)
    ra -= ra.mean(1, keepdims=True)
    rb -= rb.mean(1, keepdims=True)
    den = np.sqrt((ra**2).sum(1) * (rb**2).sum(1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, (ra * rb).sum(1) / np.where(den > 0, den, 1.0), np.nan)


def head_agreement(attention: np.ndarray, attribution: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray]:
    """Each head's agreement with an attribution of its own layer.

    Args:
        attention: (L, H, T, S) attention weights.
        attribution: (L, T, S) an attribution per layer (value zeroing), or (T, S) one for
            every layer (a gradient method's).

    Returns:
        (rho (L, H): Spearman's rho averaged over the T rows, NaN rows left out, both
        rounded to TIE_DECIMALS first;
        top1 (L, H): the share of rows whose largest key is the attribution's largest).

    Raises:
        ValueError: shapes that do not match.
    """
    att = np.round(np.asarray(attention, dtype=np.float64), TIE_DECIMALS)
    attr = np.round(np.asarray(attribution, dtype=np.float64), TIE_DECIMALS)
    if attr.ndim == 2:
        attr = np.broadcast_to(attr, (att.shape[0], *attr.shape))
    if att.ndim != 4 or attr.shape != (att.shape[0], *att.shape[2:]):
        raise ValueError(f"expected attention (L, H, T, S) and attribution (L, T, S), got "
                         f"{att.shape} and {attr.shape}")
    L, H, T, _ = att.shape
    rho, top1 = np.full((L, H), np.nan), np.zeros((L, H))
    for layer in range(L):
        best = attr[layer].argmax(-1)  # (T,)
        for head in range(H):
            r = row_spearman(att[layer, head], attr[layer])
            if np.isfinite(r).any():
                rho[layer, head] = np.nanmean(r)
            top1[layer, head] = float((att[layer, head].argmax(-1) == best).mean())
    return rho, top1
