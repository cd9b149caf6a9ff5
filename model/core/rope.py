"""Rotary position embedding (RoPE; Su, Lu, Pan, Murtadha, Wen, Liu, "RoFormer: Enhanced
Transformer with Rotary Position Embedding", 2021): instead of adding a position vector to
the embedding, each head's query and key at position m are rotated, pair of dimensions by
pair, by the angles m * theta_i, so that a query-key score depends on the positions only
through their distance (section 3.4.2). What the Positions view shows of a Llama, Mistral
or Qwen model.

Layout as Hugging Face's Llama-like models have it (``rotate_half``): dimension i is paired
with i + Dh/2 (not with i + 1 as the paper writes it), and

    theta_i = base ** (-2i / Dh),  i = 0 .. Dh/2 - 1   (``inverse_frequencies``)
    x'_i        = x_i cos(m theta_i) - x_{i+Dh/2} sin(m theta_i)
    x'_{i+Dh/2} = x_{i+Dh/2} cos(m theta_i) + x_i sin(m theta_i)   (``rotate``)

Shape letters: N positions, Dh the per-head width (even), K distances.
"""

from __future__ import annotations

import numpy as np


def inverse_frequencies(head_dim: int, base: float) -> np.ndarray:
    """theta_i = base ** (-2i / Dh) for i = 0 .. Dh/2 - 1: (Dh/2,) float64, radians per
    position; pair 0 turns fastest (1 radian a position), the last pair slowest.

    Raises:
        ValueError: ``head_dim`` not a positive even int, or ``base`` not above 1.
    """
    if isinstance(head_dim, bool) or not isinstance(head_dim, int) or head_dim <= 0 \
            or head_dim % 2:
        raise ValueError(f"head_dim must be a positive even int, got {head_dim!r}")
    if not base > 1:
        raise ValueError(f"the RoPE base must be above 1, got {base!r}")
    return base ** (-np.arange(0, head_dim, 2, dtype=np.float64) / head_dim)


def rotate(x: np.ndarray, positions: np.ndarray, inv_freq: np.ndarray) -> np.ndarray:
    """Each row of ``x`` (N, Dh) rotated by the angles ``positions[n] * inv_freq``
    (``positions`` (N,), ``inv_freq`` (Dh/2,)), in Hugging Face's half layout (module
    docstring). Float64.

    Raises:
        ValueError: shapes that do not fit.
    """
    x = np.asarray(x, dtype=np.float64)
    positions = np.asarray(positions, dtype=np.float64)
    half = inv_freq.shape[0]
    if x.ndim != 2 or x.shape[1] != 2 * half or positions.shape != (x.shape[0],):
        raise ValueError(f"x must be (N, {2 * half}) and positions (N,), got {x.shape} and "
                         f"{positions.shape}")
    angle = positions[:, None] * inv_freq[None, :]  # (N, Dh/2)
    cos, sin = np.cos(angle), np.sin(angle)
    a, b = x[:, :half], x[:, half:]
    return np.concatenate([a * cos - b * sin, b * cos + a * sin], axis=1)


def score_by_distance(head_dim: int, base: float, distances: np.ndarray) -> np.ndarray:
    """How RoPE alone changes a query-key score with the distance between them: the score
    of a query and a key that are both the all-ones vector, rotated to positions Delta
    apart, divided by its value at Delta = 0 (Dh):

        s(Delta) = (2 / Dh) * sum_i cos(Delta * theta_i)

    (RoFormer, section 3.4.3: it decays, with ripples, as the tokens move apart). (K,)
    float64 for the K ``distances``; s(0) = 1.

    Raises:
        ValueError: as ``inverse_frequencies``.
    """
    theta = inverse_frequencies(head_dim, base)
    d = np.asarray(distances, dtype=np.float64)
    return np.cos(d[:, None] * theta[None, :]).mean(axis=1)
