"""Rotary position embedding written here (``model.core.rope``) against Hugging Face's own
(``LlamaRotaryEmbedding``, ``apply_rotary_pos_emb``), and the property RoPE exists for: a
query-key score depends on the two positions only through their distance."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from transformers import LlamaConfig
from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding, apply_rotary_pos_emb

from model.core import rope


@pytest.mark.parametrize("head_dim, base", [(64, 10000.0), (48, 1e6), (8, 500.0)])
def test_inverse_frequencies_equal_hugging_faces(head_dim, base):
    config = LlamaConfig(hidden_size=head_dim * 2, num_attention_heads=2, rope_theta=base)
    hf = LlamaRotaryEmbedding(config).inv_freq.double().numpy()
    np.testing.assert_allclose(rope.inverse_frequencies(head_dim, base), hf, rtol=1e-6)


def test_rotation_equals_hugging_faces():
    head_dim, base, N = 16, 10000.0, 9
    config = LlamaConfig(hidden_size=head_dim * 2, num_attention_heads=2, rope_theta=base)
    emb = LlamaRotaryEmbedding(config)
    gen = torch.Generator().manual_seed(0)
    q, k = torch.randn(1, 1, N, head_dim, generator=gen), torch.randn(1, 1, N, head_dim,
                                                                      generator=gen)
    positions = torch.arange(N)[None]  # (1, N)
    cos, sin = emb(q, positions)
    hq, hk = apply_rotary_pos_emb(q, k, cos, sin)
    inv = rope.inverse_frequencies(head_dim, base)
    np.testing.assert_allclose(rope.rotate(q[0, 0].numpy(), np.arange(N), inv),
                               hq[0, 0].numpy(), atol=1e-5)
    np.testing.assert_allclose(rope.rotate(k[0, 0].numpy(), np.arange(N), inv),
                               hk[0, 0].numpy(), atol=1e-5)


def test_a_score_depends_only_on_the_distance():
    rng = np.random.default_rng(1)
    q, k = rng.normal(size=(1, 32)), rng.normal(size=(1, 32))
    inv = rope.inverse_frequencies(32, 10000.0)

    def score(m: int, n: int) -> float:
        return float((rope.rotate(q, np.array([m]), inv) @ rope.rotate(k, np.array([n]), inv).T)
                     [0, 0])

    for delta in (0, 1, 5, 40):
        scores = [score(m + delta, m) for m in (0, 3, 17, 100)]
        np.testing.assert_allclose(scores, scores[0], rtol=1e-9, atol=1e-9)


def test_score_by_distance_is_the_rotated_ones_vectors_score():
    head_dim, base = 24, 10000.0
    inv = rope.inverse_frequencies(head_dim, base)
    ones = np.ones((1, head_dim))
    distances = np.arange(0, 60, 7)
    want = [float((rope.rotate(ones, np.array([d + 3]), inv)
                   @ rope.rotate(ones, np.array([3]), inv).T)[0, 0]) / head_dim
            for d in distances]
    got = rope.score_by_distance(head_dim, base, distances)
    np.testing.assert_allclose(got, want, atol=1e-12)
    assert got[0] == pytest.approx(1.0)


@pytest.mark.parametrize("head_dim, base", [(7, 10000.0), (0, 10000.0), (8, 1.0)])
def test_bad_arguments_are_refused(head_dim, base):
    with pytest.raises(ValueError):
        rope.inverse_frequencies(head_dim, base)
