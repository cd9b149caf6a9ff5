"""Attention rollout and flow (Abnar and Zuidema 2020), checked by hand and by invariants."""

from __future__ import annotations

from dataclasses import FrozenInstanceError

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from model.analysis.aggregate import (
    DecoderRollout,
    attention_flow,
    attention_rollout,
    decoder_rollout,
    residual_attention,
)


def stochastic(rng: np.random.Generator, *shape: int, causal: bool = False,
               blocked: tuple[int, ...] = ()) -> np.ndarray:
    """Random float32 weights whose rows sum to 1; ``causal`` zeroes keys after the query,
    ``blocked`` queries get all-zero rows (a query whose keys are all masked)."""
    w = rng.random(shape) ** 3 + 1e-3
    if causal:
        w = w * np.tril(np.ones(shape[-2:]))
    w = w / w.sum(-1, keepdims=True)
    w[..., list(blocked), :] = 0.0
    return w.astype(np.float32)


def by_hand_residual(a: np.ndarray) -> np.ndarray:
    """The paper's A_hat written out: 0.5 * head mean + 0.5 * I, rows divided by their sum."""
    A = 0.5 * a.astype(np.float64).mean(1) + 0.5 * np.eye(a.shape[-1])
    return A / A.sum(-1, keepdims=True)


sizes = st.tuples(st.integers(1, 3), st.integers(1, 3), st.integers(1, 5),  # L, H, T
                  st.integers(0, 2**31 - 1))  # seed


# --- rollout -------------------------------------------------------------------------------

def test_identity_attention_rolls_out_to_identity_at_every_layer():
    a = np.broadcast_to(np.eye(4, dtype=np.float32), (3, 2, 4, 4))  # (L, H, T, T)
    np.testing.assert_array_equal(residual_attention(a), np.broadcast_to(np.eye(4), (3, 4, 4)))
    np.testing.assert_array_equal(attention_rollout(a), np.broadcast_to(np.eye(4), (3, 4, 4)))
    np.testing.assert_array_equal(attention_flow(a), np.eye(4))


@settings(max_examples=60, deadline=None)
@given(sizes, st.booleans(), st.booleans())
def test_rollout_rows_sum_to_one_and_follow_the_recursion(size, causal, block_last):
    L, H, T, seed = size
    blocked = (T - 1,) if block_last else ()
    a = stochastic(np.random.default_rng(seed), L, H, T, T, causal=causal, blocked=blocked)
    A_hat, R = residual_attention(a), attention_rollout(a)
    assert A_hat.shape == R.shape == (L, T, T) and R.dtype == np.float32
    np.testing.assert_allclose(A_hat, by_hand_residual(a), atol=1e-6)
    for M in (A_hat, R):
        assert (M >= 0).all()
        np.testing.assert_allclose(M.sum(-1), 1.0, atol=1e-5)
    np.testing.assert_allclose(R[0], A_hat[0], atol=1e-6)  # R_1 = A_hat_1
    for l in range(1, L):  # R_l = A_hat_l @ R_{l-1}
        np.testing.assert_allclose(R[l], A_hat[l] @ R[l - 1], atol=1e-5)
    if causal:  # a causal decoder stays causal: no position draws on a later token
        np.testing.assert_array_equal(np.triu(R, 1), 0.0)


def test_one_layer_rollout_is_half_mean_plus_half_identity_by_hand():
    a = np.array([[[[1.0, 0.0, 0.0], [0.5, 0.5, 0.0], [0.0, 0.0, 0.0]],  # head 0
                   [[0.0, 1.0, 0.0], [0.5, 0.0, 0.5], [0.0, 0.0, 0.0]]]],  # head 1
                 np.float32)  # (L=1, H=2, T=3, T=3); query 2 is fully blocked
    # mean over heads: [[.5, .5, 0], [.5, .25, .25], [0, 0, 0]]
    # 0.5 * mean + 0.5 * I: [[.75, .25, 0], [.25, .625, .125], [0, 0, .5]]
    # rows 0 and 1 already sum to 1; row 2 sums to .5 and renormalises to [0, 0, 1]
    want = np.array([[0.75, 0.25, 0.0], [0.25, 0.625, 0.125], [0.0, 0.0, 1.0]])
    np.testing.assert_allclose(attention_rollout(a)[0], want, atol=1e-7)
    np.testing.assert_allclose(residual_attention(a)[0], want, atol=1e-7)


def test_two_layer_rollout_is_the_matrix_product_by_hand():
    a = np.array([[[[1.0, 0.0], [1.0, 0.0]]],  # layer 1: both positions read token 0
                  [[[0.0, 1.0], [0.0, 1.0]]]], np.float32)  # layer 2: both read position 1
    # A_hat_1 = .5 * [[1, 0], [1, 0]] + .5 * I = [[1, 0], [.5, .5]]
    # A_hat_2 = .5 * [[0, 1], [0, 1]] + .5 * I = [[.5, .5], [0, 1]]
    # R_2 = A_hat_2 @ A_hat_1 = [[.5 * 1 + .5 * .5, .5 * 0 + .5 * .5], [.5, .5]]
    R = attention_rollout(a)
    np.testing.assert_allclose(R[0], [[1.0, 0.0], [0.5, 0.5]], atol=1e-7)
    np.testing.assert_allclose(R[1], [[0.75, 0.25], [0.5, 0.5]], atol=1e-7)


# --- flow ----------------------------------------------------------------------------------

@settings(max_examples=25, deadline=None)
@given(sizes)
def test_flow_of_one_layer_is_the_residual_matrix(size):
    L, H, T, seed = size  # every (0, j) -> (1, i) is one edge, so its capacity is the flow
    a = stochastic(np.random.default_rng(seed), L, H, T, T)
    np.testing.assert_allclose(attention_flow(a[:1]), residual_attention(a)[0], atol=1e-6)
    np.testing.assert_allclose(attention_flow(a, layer=0), residual_attention(a)[0], atol=1e-6)


def test_flow_of_two_layers_and_two_tokens_by_hand():
    a = np.array([[[[1.0, 0.0], [1.0, 0.0]]],
                  [[[0.0, 1.0], [0.0, 1.0]]]], np.float32)  # the rollout test's example
    # Capacities: A_hat_1 = [[1, 0], [.5, .5]], A_hat_2 = [[.5, .5], [0, 1]], edge
    # (l-1, j) -> (l, i) holding A_hat_l[i, j]. Two layers: each path (0, j) -> (1, k) ->
    # (2, i) has its own two edges, so the max flow is the sum over k of the path minima.
    # flow[0, 0]: via k=0 min(1, .5) = .5, via k=1 min(.5, .5) = .5 -> 1 (rollout: .75)
    # flow[0, 1]: via k=0 the edge (0,1)->(1,0) is 0; via k=1 min(.5, .5) = .5
    # flow[1, 0]: via k=0 the edge (1,0)->(2,1) is 0; via k=1 min(.5, 1) = .5
    # flow[1, 1]: via k=0 both edges are 0; via k=1 min(.5, 1) = .5
    # Row 0 sums to 1.5: both inputs may use the edge (1,1)->(2,0) in their own flow.
    np.testing.assert_allclose(attention_flow(a), [[1.0, 0.5], [0.5, 0.5]], atol=1e-7)
    np.testing.assert_allclose(attention_flow(a, layer=-2), [[1.0, 0.0], [0.5, 0.5]],
                               atol=1e-7)


@settings(max_examples=30, deadline=None)
@given(sizes, st.booleans(), st.integers(0, 2))
def test_flow_lies_between_rollout_and_the_cut_bounds(size, causal, layer):
    L, H, T, seed = size
    layer = min(layer, L - 1)
    a = stochastic(np.random.default_rng(seed), L, H, T, T, causal=causal)
    flow = attention_flow(a, layer=layer)
    assert flow.shape == (T, T) and flow.dtype == np.float32
    # only the layers up to ``layer`` matter: the sinks sit at boundary layer + 1
    np.testing.assert_allclose(flow, attention_flow(a[: layer + 1]), atol=1e-6)
    # the rollout's proportional flow from input j is one feasible flow from j
    assert (flow >= attention_rollout(a)[layer] - 1e-5).all()
    # a cut at the sink: its incoming capacities, a renormalised row of A_hat, sum to 1
    assert (flow <= 1.0 + 1e-6).all()
    # a cut at the source: the capacities out of input j, column j of A_hat_1
    assert (flow <= residual_attention(a)[0].sum(0)[None, :] + 1e-5).all()
    assert (flow.sum(-1) >= 1.0 - 1e-5).all()  # rows need not sum to 1, but never less
    if causal:  # no path leads from a later token to an earlier position
        np.testing.assert_array_equal(np.triu(flow, 1), 0.0)


# --- encoder-decoder rollout ---------------------------------------------------------------

def by_hand_decoder_rollout(enc, dec, cross):
    """The definition as written in ``decoder_rollout``'s docstring, step by step."""
    R_enc = attention_rollout(enc)[-1].astype(np.float64)  # (S, S)
    S_hat = residual_attention(dec).astype(np.float64)  # (Ld, T, T)
    T, S = cross.shape[2:]
    D, X = np.eye(T), np.zeros((T, S))
    for l in range(len(dec)):
        D, X = S_hat[l] @ D, S_hat[l] @ X
        D, X = 0.5 * D, 0.5 * X + 0.5 * cross[l].astype(np.float64).mean(0) @ R_enc
    return X, D


encdec = st.tuples(st.integers(1, 3), st.integers(1, 3), st.integers(1, 3),  # Le, Ld, H
                   st.integers(1, 5), st.integers(1, 5), st.integers(0, 2**31 - 1))  # S, T


@settings(max_examples=60, deadline=None)
@given(encdec)
def test_decoder_rollout_rows_sum_to_one_and_match_the_definition(sizes_):
    Le, Ld, H, S, T, seed = sizes_
    rng = np.random.default_rng(seed)
    enc = stochastic(rng, Le, H + 1, S, S)  # the encoder may have other heads
    dec = stochastic(rng, Ld, H, T, T, causal=True)
    cross = stochastic(rng, Ld, H, T, S)
    out = decoder_rollout(enc, dec, cross)
    assert isinstance(out, DecoderRollout)
    assert out.source.shape == (T, S) and out.decoder.shape == (T, T)
    both = np.concatenate([out.source, out.decoder], 1)  # (T, S + T)
    assert (both >= 0).all()
    np.testing.assert_allclose(both.sum(-1), 1.0, atol=1e-5)
    X, D = by_hand_decoder_rollout(enc, dec, cross)
    np.testing.assert_allclose(out.source, X, atol=1e-6)
    np.testing.assert_allclose(out.decoder, D, atol=1e-6)
    np.testing.assert_array_equal(np.triu(out.decoder, 1), 0.0)  # causal: no later inputs
    with pytest.raises(FrozenInstanceError):
        out.source = X


@pytest.mark.parametrize("k", [0, 2, 4])
@pytest.mark.parametrize("Ld", [1, 3])
def test_cross_attention_on_one_token_puts_all_source_weight_there(k, Ld):
    S, T, H = 5, 4, 2
    rng = np.random.default_rng(k + 10 * Ld)
    enc = np.broadcast_to(np.eye(S, dtype=np.float32), (2, H, S, S))  # encoder keeps tokens
    dec = stochastic(rng, Ld, H, T, T, causal=True)
    cross = np.zeros((Ld, H, T, S), np.float32)
    cross[..., k] = 1.0  # every layer, head and query reads source token k only
    out = decoder_rollout(enc, dec, cross)
    others = np.delete(out.source, k, axis=1)
    np.testing.assert_array_equal(others, 0.0)
    # every row of X is x * e_k with the same x for all rows, so Shat_l @ X = X, and each
    # cross step maps x to .5 x + .5: after Ld layers x = 1 - 0.5 ** Ld, the rest decoder
    np.testing.assert_allclose(out.source[:, k], 1 - 0.5**Ld, atol=1e-6)
    np.testing.assert_allclose(out.decoder.sum(-1), 0.5**Ld, atol=1e-6)


def test_a_query_with_every_source_key_blocked_keeps_its_own_input():
    rng = np.random.default_rng(3)
    enc = stochastic(rng, 2, 2, 3, 3)
    dec = stochastic(rng, 2, 2, 4, 4, causal=True)
    cross = stochastic(rng, 2, 2, 4, 3, blocked=(0,))  # query 0 may read no source token
    out = decoder_rollout(enc, dec, cross)
    # position 0 sees only itself (causal) and no source: the residual keeps it all
    np.testing.assert_allclose(out.source[0], 0.0, atol=1e-7)
    np.testing.assert_allclose(out.decoder[0], [1.0, 0.0, 0.0, 0.0], atol=1e-7)
    np.testing.assert_allclose(np.concatenate([out.source, out.decoder], 1).sum(-1), 1.0,
                               atol=1e-5)


# --- errors --------------------------------------------------------------------------------

def uniform(*shape: int) -> np.ndarray:
    return np.full(shape, 1.0 / shape[-1], np.float32)


def transposed() -> np.ndarray:
    a = np.array([[0.9, 0.1], [0.9, 0.1]], np.float32).T  # columns sum to 1, rows do not
    return a[None, None]


def nan() -> np.ndarray:
    a = uniform(1, 1, 2, 2)
    a[0, 0, 0, 0] = np.nan
    return a


def negative() -> np.ndarray:
    return np.array([[[[1.5, -0.5], [0.5, 0.5]]]], np.float32)


@pytest.mark.parametrize("fn", [residual_attention, attention_rollout, attention_flow])
@pytest.mark.parametrize(("bad", "match"), [
    (uniform(2, 3, 3), "4-D"),
    (uniform(1, 1, 2, 3), "square"),
    (np.zeros((1, 0, 2, 2), np.float32), "at least one"),
    (np.array([[[["a", "b"], ["c", "d"]]]]), "real-valued"),
    (nan(), "NaN or infinite"),
    (negative(), "negative"),
    (transposed(), "sum to 1.*keys last"),
])
def test_bad_attention_is_refused_with_what_to_fix(fn, bad, match):
    with pytest.raises(ValueError, match=f"attentions.*{match}"):
        fn(bad)


@pytest.mark.parametrize("layer", [3, -4, 1.0, True, "last"])
def test_flow_layer_must_be_inside_the_model(layer):
    with pytest.raises(ValueError, match="layer must be an integer from -3 to 2"):
        attention_flow(uniform(3, 1, 2, 2), layer=layer)


@pytest.mark.parametrize(("enc", "dec", "cross", "match"), [
    (uniform(2, 2, 5, 5), uniform(3, 2, 4, 4), uniform(2, 2, 4, 5), "layers, heads"),
    (uniform(2, 2, 5, 5), uniform(3, 2, 4, 4), uniform(3, 4, 4, 5), "layers, heads"),
    (uniform(2, 2, 5, 5), uniform(3, 2, 4, 4), uniform(3, 2, 3, 5), "decoder length"),
    (uniform(2, 2, 5, 5), uniform(3, 2, 4, 4), uniform(3, 2, 4, 6), "S = 5"),
    (uniform(2, 2, 5, 6), uniform(3, 2, 4, 4), uniform(3, 2, 4, 6), "encoder_attentions.*square"),
    (uniform(2, 2, 5, 5), uniform(3, 2, 4, 5), uniform(3, 2, 4, 5), "decoder_attentions.*square"),
    (uniform(2, 2, 5, 5), uniform(3, 2, 4, 4), uniform(3, 2, 4), "cross_attentions.*4-D"),
    (uniform(2, 2, 5, 5), uniform(3, 2, 4, 4), -uniform(3, 2, 4, 5), "cross_attentions.*negat"),
])
def test_mismatched_encoder_decoder_attention_is_refused(enc, dec, cross, match):
    with pytest.raises(ValueError, match=match):
        decoder_rollout(enc, dec, cross)
