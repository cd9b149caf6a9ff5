"""Per-head statistics (Voita et al. 2019; Clark et al. 2019), checked on heads whose answer
is known by hand, against a row-by-row reading of the definitions, and on a real trace."""

from __future__ import annotations

import math
import unicodedata

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from shipped import trace_of

from model.analysis.headstats import (
    STATISTICS,
    HeadStats,
    head_stats,
    head_stats_over,
    is_punctuation,
    pool,
    rank_heads,
)
from model.decoding import DecodeTrace


def make_trace(src: list[str], dec: list[str], enc=None, self_=None, cross=None,
               src_labels: list[str] | None = None, L: int = 1, H: int = 1) -> DecodeTrace:
    """A DecodeTrace with S = len(src) source tokens and T = len(dec) decoder inputs; any
    attention left out is uniform (causal for the decoder)."""
    S, T = len(src), len(dec)
    if enc is None:
        enc = np.full((L, H, S, S), 1.0 / S)
    if self_ is None:
        self_ = np.tril(np.ones((T, T))) / np.arange(1, T + 1)[:, None] * np.ones((L, H, 1, 1))
    if cross is None:
        cross = np.full((L, H, T, S), 1.0 / S)
    return DecodeTrace(
        src_text=" ".join(src), src_tokens=tuple(src), tgt_tokens=(*dec, "</s>"),
        tgt_ids=np.zeros(T + 1, np.int64), steps=(), encoder_attentions=np.asarray(enc),
        decoder_attentions=np.asarray(self_), cross_attentions=np.asarray(cross),
        step_probs=np.zeros((T, 1), np.float32), finished=True,
        src_labels=tuple(src_labels or ()))


def stochastic(rng: np.random.Generator, *shape: int, causal: bool = False) -> np.ndarray:
    """Random rows that sum to 1 (zero above the diagonal when ``causal``), some near one-hot."""
    w = rng.random(shape) ** rng.choice([1.0, 8.0], size=shape[:-1] + (1,))
    if causal:
        w = np.tril(w)
    return (w / w.sum(-1, keepdims=True)).astype(np.float32)


WORDS = ["</s>", "。", "，", "？", ",", "Ġ,", "▁?", "Ġ", "the", "Ġcat", "<s>", "$", "…", "为"]


# -- heads whose statistics are known by hand ------------------------------------------------


def test_a_one_hot_previous_token_head():
    S = 5
    enc = np.zeros((1, 1, S, S))
    enc[0, 0, 0, 0] = 1.0  # the first row has no previous key: it looks at itself
    enc[0, 0, np.arange(1, S), np.arange(S - 1)] = 1.0
    stats = head_stats(make_trace(list("abcde"), ["<s>", "x"], enc=enc), "encoder")
    v = stats.values
    assert v["previous"][0, 0] == pytest.approx((S - 1) / S)
    assert v["same"][0, 0] == pytest.approx(1 / S)
    assert v["next"][0, 0] == 0.0
    assert v["confidence"][0, 0] == 1.0 and v["entropy"][0, 0] == 0.0
    assert stats.rows == S and stats.sentences == 1 and stats.kind == "encoder"


def test_a_one_hot_previous_head_in_the_decoder_scores_one_from_row_one_on():
    T = 4
    dec = np.zeros((1, 1, T, T))
    dec[0, 0, 0, 0] = 1.0
    dec[0, 0, np.arange(1, T), np.arange(T - 1)] = 1.0
    stats = head_stats(make_trace(["a", "</s>"], ["<s>", "x", "y", "z"], self_=dec), "decoder")
    assert stats.values["previous"][0, 0] == pytest.approx(3 / 4)
    assert stats.values["same"][0, 0] == pytest.approx(1 / 4)
    assert "next" not in stats.values and "next" not in STATISTICS["decoder"]


def test_next_and_previous_on_a_pure_shift():
    """A head that always looks one to the right: next = (S-1)/S (the last row has no next
    key and puts its weight on itself, which counts as 'same')."""
    S = 4
    enc = np.zeros((1, 1, S, S))
    enc[0, 0, np.arange(S - 1), np.arange(1, S)] = 1.0
    enc[0, 0, S - 1, S - 1] = 1.0
    v = head_stats(make_trace(list("abcd"), ["<s>"], enc=enc), "encoder").values
    assert (v["next"][0, 0], v["same"][0, 0], v["previous"][0, 0]) == pytest.approx(
        (3 / 4, 1 / 4, 0.0))


@pytest.mark.parametrize("n", [1, 2, 7])
def test_a_uniform_head_has_entropy_log_n_and_confidence_one_over_n(n):
    src = [f"w{i}" for i in range(n)]
    v = head_stats(make_trace(src, ["<s>", "x", "y"]), "cross").values
    assert v["entropy"][0, 0] == pytest.approx(math.log(n))
    assert v["confidence"][0, 0] == pytest.approx(1 / n)


def test_eos_and_punctuation_shares_are_hand_sums():
    src = ["hi", "</s>", ",", "</s>"]
    labels = ["hi", "</s>", "Ġ,", "</s>"]  # a byte-level mark that the label still carries
    enc = np.array([[0.1, 0.2, 0.3, 0.4],
                    [0.5, 0.0, 0.25, 0.25],
                    [0.0, 1.0, 0.0, 0.0],
                    [0.25, 0.25, 0.25, 0.25]])[None, None]
    v = head_stats(make_trace(src, ["<s>"], enc=enc, src_labels=labels), "encoder").values
    assert v["eos"][0, 0] == pytest.approx(((0.2 + 0.4) + 0.25 + 1.0 + 0.5) / 4)
    assert v["punctuation"][0, 0] == pytest.approx((0.3 + 0.25 + 0.0 + 0.25) / 4)
    dec_tokens = ["<s>", "我", "。", "▁，", "？"]
    self_ = np.tril(np.ones((5, 5)))
    self_ = (self_ / self_.sum(-1, keepdims=True))[None, None]
    v = head_stats(make_trace(src, dec_tokens, self_=self_), "decoder").values
    per_row = [0, 0, 1 / 3, 2 / 4, 3 / 5]  # keys 2, 3, 4 are punctuation
    assert v["punctuation"][0, 0] == pytest.approx(sum(per_row) / 5)
    assert v["eos"][0, 0] == 0.0  # "</s>" is never a decoder input here
    v = head_stats(make_trace(src, ["<s>", "x"], src_labels=labels), "cross").values
    assert v["eos"][0, 0] == pytest.approx(0.5) and v["punctuation"][0, 0] == pytest.approx(0.25)


def test_eos_follows_the_given_token():
    src = ["a", "<pad>", "b"]
    v = head_stats(make_trace(src, ["<s>"]), "encoder", eos="<pad>").values
    assert v["eos"][0, 0] == pytest.approx(1 / 3)


@pytest.mark.parametrize("label", ["。", "，", "？", "！", ",", "?", "Ġ,", "▁。", "...", "«", "…"])
def test_punctuation_labels(label):
    assert is_punctuation(label)


@pytest.mark.parametrize("label", ["", "Ġ", "▁", "</s>", "<s>", "<", "$", "+", "a,", "为", "Ġcat"])
def test_not_punctuation_labels(label):
    assert not is_punctuation(label)


def test_the_diagonal_of_an_identity_cross_attention_is_one():
    n = 6
    cross = np.eye(n)[None, None]
    v = head_stats(make_trace(list("abcdef"), list("uvwxyz"), cross=cross), "cross").values
    assert v["diagonal"][0, 0] == pytest.approx(1.0)
    assert "previous" not in v and "next" not in v


def test_the_diagonal_of_a_head_stuck_on_key_zero():
    """S = 10, T = 4: diagonal keys round(t * 9 / 3) = 0, 3, 6, 9; only row 0 has key 0 in
    its band, so the share is 1/4."""
    S, T = 10, 4
    cross = np.zeros((1, 1, T, S))
    cross[..., 0] = 1.0
    src = [f"w{i}" for i in range(S)]
    v = head_stats(make_trace(src, ["<s>", "a", "b", "c"], cross=cross), "cross").values
    assert v["diagonal"][0, 0] == pytest.approx(1 / 4)


def test_the_diagonal_band_is_three_keys_wide():
    """S = 7, T = 3: centres 0, 3, 6; uniform weights put 2/7, 3/7, 2/7 in the bands."""
    src = [f"w{i}" for i in range(7)]
    v = head_stats(make_trace(src, ["<s>", "a", "b"]), "cross").values
    assert v["diagonal"][0, 0] == pytest.approx((2 + 3 + 2) / 7 / 3)


# -- the definitions, row by row ----------------------------------------------------------------


def reference_rows(A: np.ndarray, keys, labels, kind: str, eos: str) -> dict[str, list]:
    """statistic -> per head [l][h] the list of per-row values, read off the definitions."""
    L, H, Tq, Tk = A.shape

    def punct(label: str) -> bool:
        text = label[1:] if label[:1] in ("Ġ", "▁") else label
        return text != "" and all(unicodedata.category(c)[0] == "P" for c in text)

    out = {name: [[[] for _ in range(H)] for _ in range(L)] for name in STATISTICS[kind]}
    for l in range(L):
        for h in range(H):
            for i in range(Tq):
                p = [float(x) for x in A[l, h, i]]
                row = {"entropy": -sum(x * math.log(x) for x in p if x > 0),
                       "confidence": max(p),
                       "previous": p[i - 1] if 1 <= i <= Tk else 0.0,
                       "same": p[i] if i < Tk else 0.0,
                       "next": p[i + 1] if i + 1 < Tk else 0.0,
                       "eos": sum(x for x, k in zip(p, keys, strict=True) if k == eos),
                       "punctuation": sum(x for x, k in zip(p, labels, strict=True)
                                          if punct(k))}
                centre = round(i * (Tk - 1) / max(Tq - 1, 1))
                row["diagonal"] = sum(p[j] for j in range(Tk) if abs(j - centre) <= 1)
                for name in STATISTICS[kind]:
                    out[name][l][h].append(row[name])
    return out


def kind_inputs(trace: DecodeTrace, kind: str):
    src, dec = list(trace.src_tokens), list(trace.decoder_input_tokens)
    return {"encoder": (trace.encoder_attentions, src, list(trace.src_labels)),
            "decoder": (trace.decoder_attentions, dec, dec),
            "cross": (trace.cross_attentions, src, list(trace.src_labels))}[kind]


@st.composite
def traces(draw, L: int = 2, H: int = 3) -> DecodeTrace:
    S = draw(st.integers(1, 7))
    T = draw(st.integers(1, 6))
    src = draw(st.lists(st.sampled_from(WORDS), min_size=S, max_size=S))
    dec = draw(st.lists(st.sampled_from(WORDS), min_size=T, max_size=T))
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    return make_trace(src, dec, enc=stochastic(rng, L, H, S, S),
                      self_=stochastic(rng, L, H, T, T, causal=True),
                      cross=stochastic(rng, L, H, T, S))


@settings(max_examples=40, deadline=None)
@given(st.lists(traces(), min_size=1, max_size=3), st.sampled_from(list(STATISTICS)))
def test_pooled_stats_equal_the_mean_over_all_rows_of_the_definitions(batch, kind):
    """pool(head_stats(each)) is the mean over every row of every sentence, and one
    sentence's stats are the mean over its rows."""
    pooled = pool([head_stats(t, kind) for t in batch])
    refs = [reference_rows(*kind_inputs(t, kind), kind=kind, eos="</s>") for t in batch]
    assert pooled.kind == kind and pooled.sentences == len(batch)
    assert pooled.rows == sum(len(r["entropy"][0][0]) for r in refs)
    assert tuple(pooled.values) == STATISTICS[kind]
    for name, got in pooled.values.items():
        assert got.shape == (2, 3) and got.dtype == np.float64
        want = [[np.mean([x for r in refs for x in r[name][l][h]]) for h in range(3)]
                for l in range(2)]
        np.testing.assert_allclose(got, want, atol=1e-9, err_msg=name)


@settings(max_examples=40, deadline=None)
@given(traces(), st.sampled_from(list(STATISTICS)))
def test_shares_are_in_range_and_positions_share_at_most_one(trace, kind):
    v = head_stats(trace, kind).values
    n_keys = {"encoder": len(trace.src_tokens), "decoder": len(trace.decoder_input_tokens),
              "cross": len(trace.src_tokens)}[kind]
    for name, a in v.items():
        upper = math.log(n_keys) if name == "entropy" else 1.0
        assert np.all(a >= 0) and np.all(a <= upper + 1e-6), name
    assert np.all(v["confidence"] >= 1 / n_keys - 1e-6)  # the max is at least the mean
    positional = sum(v[k] for k in ("previous", "same", "next") if k in v)
    assert np.all(np.asarray(positional) <= 1 + 1e-6)


def test_pool_of_two_traces_by_direct_construction():
    """Two encoder sentences: pooled = (3 rows of a + 2 rows of b) / 5, not their plain mean."""
    one_hot_same = np.eye(3)[None, None]
    uniform = np.full((1, 1, 2, 2), 0.5)
    a = head_stats(make_trace(["x", "y", "z"], ["<s>"], enc=one_hot_same), "encoder")
    b = head_stats(make_trace(["x", "y"], ["<s>"], enc=uniform), "encoder")
    pooled = pool([a, b])
    assert pooled.rows == 5 and pooled.sentences == 2
    assert pooled.values["same"][0, 0] == pytest.approx((3 * 1.0 + 2 * 0.5) / 5)
    assert pooled.values["entropy"][0, 0] == pytest.approx(2 * math.log(2) / 5)
    assert pooled.values["previous"][0, 0] == pytest.approx(0.5 / 5)
    np.testing.assert_array_equal(pool([a]).values["same"], a.values["same"])


def test_values_are_read_only():
    stats = head_stats(make_trace(["a", "</s>"], ["<s>"]), "encoder")
    with pytest.raises(ValueError):
        stats.values["entropy"][0, 0] = 1.0


# -- ranking -------------------------------------------------------------------------------------


def test_rank_heads_orders_by_value_and_breaks_ties_by_layer_then_head():
    values = {name: np.zeros((2, 2)) for name in STATISTICS["cross"]}
    values["diagonal"] = np.array([[0.5, 0.9], [0.9, 0.1]])
    stats = HeadStats("cross", rows=4, sentences=1, values=values)
    assert rank_heads(stats, "diagonal") == [(0, 1, 0.9), (1, 0, 0.9), (0, 0, 0.5), (1, 1, 0.1)]
    assert rank_heads(stats, "diagonal", descending=False) == [
        (1, 1, 0.1), (0, 0, 0.5), (0, 1, 0.9), (1, 0, 0.9)]
    assert all(type(v) is float for _, _, v in rank_heads(stats, "eos"))
    assert [(l, h) for l, h, _ in rank_heads(stats, "eos")] == [(0, 0), (0, 1), (1, 0), (1, 1)]


# -- a real trace -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def small_trace() -> DecodeTrace:
    return trace_of("en-zh-small", "why do we work ?")


def test_a_real_trace_gives_one_l_by_h_array_per_statistic_in_range(small_trace):
    L, H = small_trace.encoder_attentions.shape[:2]
    calls = []
    over = head_stats_over([small_trace, small_trace], progress=lambda i, n: calls.append((i, n)))
    assert calls == [(1, 2), (2, 2)]
    S, T = len(small_trace.src_tokens), len(small_trace.decoder_input_tokens)
    for kind, n_keys in (("encoder", S), ("decoder", T), ("cross", S)):
        stats = head_stats(small_trace, kind)
        assert tuple(stats.values) == STATISTICS[kind]
        assert stats.rows == (S if kind == "encoder" else T)
        for name, a in stats.values.items():
            assert a.shape == (L, H) and a.dtype == np.float64, (kind, name)
            assert np.all(np.isfinite(a)) and np.all(a >= 0), (kind, name)
            assert np.all(a <= (math.log(n_keys) if name == "entropy" else 1.0) + 1e-5)
            # the same sentence twice pools to itself, with twice the rows
            np.testing.assert_allclose(over[kind].values[name], a, atol=1e-12)
        assert over[kind].rows == 2 * stats.rows and over[kind].sentences == 2
        assert np.all(stats.values["confidence"] >= 1 / n_keys - 1e-6)


# -- errors that say what to fix ------------------------------------------------------------------


def test_errors_name_the_problem():
    trace = make_trace(["a", "</s>"], ["<s>", "x"])
    with pytest.raises(ValueError, match="kind must be one of encoder, decoder, cross"):
        head_stats(trace, "self")
    enc = head_stats(trace, "encoder")
    dec = head_stats(trace, "decoder")
    with pytest.raises(ValueError, match="'next' is not defined for decoder.*look-ahead.*previous"):
        rank_heads(dec, "next")
    with pytest.raises(ValueError, match="'nope' is not defined"):
        rank_heads(enc, "nope")
    with pytest.raises(ValueError, match="cannot pool encoder with decoder"):
        pool([enc, dec])
    bigger = head_stats(make_trace(["a", "</s>"], ["<s>"], L=2, H=3), "encoder")
    with pytest.raises(ValueError, match=r"shape \(1, 1\) with shape \(2, 3\)"):
        pool([enc, bigger])
    with pytest.raises(ValueError, match="at least one HeadStats"):
        pool([])
    with pytest.raises(ValueError, match="at least one trace"):
        head_stats_over([])


def test_arrays_that_do_not_match_the_tokens_are_refused():
    bad = make_trace(["a", "b", "</s>"], ["<s>"], enc=np.full((1, 1, 2, 2), 0.5))
    with pytest.raises(ValueError, match=r"encoder attentions must be \(L, H, 3, 3\)"):
        head_stats(bad, "encoder")
    labels = make_trace(["a", "</s>"], ["<s>"], src_labels=["a"])
    with pytest.raises(ValueError, match="one label per token"):
        head_stats(labels, "cross")
    empty = make_trace(["a", "</s>"], [], self_=np.zeros((1, 1, 0, 0)),
                       cross=np.zeros((1, 1, 0, 2)))
    with pytest.raises(ValueError, match="no decoder query rows"):
        head_stats(empty, "decoder")
