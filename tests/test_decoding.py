import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from model import GenerationSettings
from model.decoding import greedy_batch, greedy_decode, top_k_step
from model.decoding.settings import BOUNDS


def test_stepwise_attentions_equal_one_teacher_forced_pass(tiny_model):
    src = torch.tensor([[5, 6, 7, 8, 3]])
    res = greedy_decode(tiny_model, src, GenerationSettings(max_new_tokens=12))
    T = len(res.tgt_ids) - 1
    assert res.decoder_attentions.shape == (2, 4, T, T)
    assert res.cross_attentions.shape == (2, 4, T, 5)
    with torch.inference_mode():
        enc = tiny_model.encode(src)
        out = tiny_model.decode(torch.tensor(res.tgt_ids[None, :-1]), enc.memory,
                                enc.key_padding_mask)
    full_self = torch.stack([a[0] for a in out.decoder_attentions]).numpy()
    full_cross = torch.stack([a[0] for a in out.cross_attentions]).numpy()
    np.testing.assert_allclose(res.decoder_attentions, full_self, atol=1e-5)
    np.testing.assert_allclose(res.cross_attentions, full_cross, atol=1e-5)
    full_probs = out.logits[0].softmax(-1).numpy()
    np.testing.assert_allclose(res.step_probs, full_probs, atol=1e-5)
    # Greedy: every generated token is the argmax of its step's distribution.
    assert list(res.tgt_ids[1:]) == list(res.step_probs.argmax(-1))


def test_stepwise_maps_are_lower_triangular_and_rows_sum_to_one(tiny_model):
    res = greedy_decode(tiny_model, torch.tensor([[4, 9, 3]]),
                        GenerationSettings(max_new_tokens=8))
    d = res.decoder_attentions
    T = d.shape[-1]
    assert np.all(d[..., np.triu_indices(T, 1)[0], np.triu_indices(T, 1)[1]] == 0)
    for arr in (res.encoder_attentions, d, res.cross_attentions):
        assert arr.dtype == np.float32
        np.testing.assert_allclose(arr.sum(-1), 1.0, atol=1e-5)


def test_batched_greedy_equals_one_at_a_time_with_padding(tiny_model):
    sentences = [[5, 6, 7, 3], [9, 3], [4, 4, 8, 10, 11, 3]]
    S = max(map(len, sentences))
    batch = torch.tensor([s + [0] * (S - len(s)) for s in sentences])
    batched = greedy_batch(tiny_model, batch, GenerationSettings(max_new_tokens=10)
                           ).outputs({3})
    for s, got in zip(sentences, batched, strict=True):
        alone = greedy_decode(tiny_model, torch.tensor([s]),
                              GenerationSettings(max_new_tokens=10)).tgt_ids[1:]
        expected = [int(i) for i in alone if i != 3]
        assert got == expected[: len(got)] and len(got) == len(expected)


def test_greedy_rejects_bad_arguments(tiny_model):
    with pytest.raises(ValueError):
        greedy_decode(tiny_model, torch.tensor([[4, 3], [5, 3]]),
                      GenerationSettings(max_new_tokens=5))
    with pytest.raises(ValueError):
        greedy_decode(tiny_model, torch.tensor([[4, 3]]), GenerationSettings(max_new_tokens=0))


def test_top_k_step_orders_and_measures_entropy():
    probs = np.array([0.1, 0.6, 0.3, 0.0], dtype=np.float32)
    ids, p, h = top_k_step(probs, 2)
    assert list(ids) == [1, 2]
    np.testing.assert_allclose(p, [0.6, 0.3])
    assert h == pytest.approx(-(0.1 * np.log(0.1) + 0.6 * np.log(0.6) + 0.3 * np.log(0.3)))


@given(st.lists(st.sampled_from([0.0, 0.05, 0.1, 0.2, 0.25]), min_size=1, max_size=40),
       st.integers(1, 50))
def test_top_k_step_equals_a_full_stable_sort(values, k):
    """The partition-based top k equals the first k of a stable full argsort (ties by id),
    for distributions full of ties."""
    probs = np.array(values, dtype=np.float32)
    ids, p, _ = top_k_step(probs, k)
    want = np.argsort(-probs, kind="stable")[: max(1, min(k, len(values)))]
    assert list(ids) == list(want)
    np.testing.assert_array_equal(p, probs[want])


def test_cached_incremental_decoding_equals_full_recompute(tiny_model):
    src = torch.tensor([[5, 6, 7, 3, 0]])  # with a padded source position
    tgt = torch.tensor([[2, 9, 4, 11, 7, 5]])
    with torch.inference_mode():
        enc = tiny_model.encode(src)
        full = tiny_model.decode(tgt, enc.memory, enc.key_padding_mask)
        cache = None
        for t in range(tgt.size(1)):
            step = tiny_model.decode(tgt[:, t : t + 1], enc.memory, enc.key_padding_mask,
                                     past_key_values=cache)
            cache = step.past_key_values
            torch.testing.assert_close(step.logits[:, 0], full.logits[:, t], atol=1e-5, rtol=0)
            for layer in range(2):
                torch.testing.assert_close(step.decoder_attentions[layer][:, :, 0],
                                           full.decoder_attentions[layer][:, :, t, : t + 1],
                                           atol=1e-5, rtol=0)
                torch.testing.assert_close(step.cross_attentions[layer][:, :, 0],
                                           full.cross_attentions[layer][:, :, t],
                                           atol=1e-5, rtol=0)
        # A cache can also take several new positions at once (e.g. a forced prefix).
        head = tiny_model.decode(tgt[:, :2], enc.memory, enc.key_padding_mask)
        rest = tiny_model.decode(tgt[:, 2:], enc.memory, enc.key_padding_mask,
                                 past_key_values=head.past_key_values)
        torch.testing.assert_close(rest.logits, full.logits[:, 2:], atol=1e-5, rtol=0)
    assert cache[0].self_kv[0].shape == (1, 4, 6, 8)


def test_subsequent_mask_with_past_positions():
    from model.core.masks import subsequent_mask

    m = subsequent_mask(2, past=3)
    assert m.tolist() == [[False, False, False, False, True],
                          [False, False, False, False, False]]


@pytest.mark.parametrize("src", [[5, 6, 7, 8, 3], [9, 3], [4, 4, 10, 11, 12, 13, 3]])
def test_one_beam_equals_greedy(tiny_model, src):
    from model.decoding import beam_search

    src = torch.tensor([src])
    greedy = greedy_decode(tiny_model, src, GenerationSettings(max_new_tokens=12))
    beam = beam_search(tiny_model, src, GenerationSettings(num_beams=1, max_new_tokens=12))
    assert list(beam.hypotheses[0].ids) == list(greedy.tgt_ids[1:])
    expected_logprob = float(np.log(greedy.step_probs[np.arange(len(greedy.step_probs)),
                                                      greedy.tgt_ids[1:]]).sum())
    assert beam.hypotheses[0].logprob == pytest.approx(expected_logprob, abs=1e-4)


def test_beam_search_records_are_consistent(tiny_model):
    from model.decoding import beam_search, run_decoder

    src = torch.tensor([[5, 6, 7, 8, 3]])
    res = beam_search(tiny_model, src, GenerationSettings(num_beams=4, max_new_tokens=10,
                                                         length_penalty=0.7))
    assert 1 <= len(res.hypotheses) <= 4
    scores = [h.score for h in res.hypotheses]
    assert scores == sorted(scores, reverse=True)
    previous_kept = 1
    for t, step in enumerate(res.steps):
        assert all(c.step == t and 0 <= c.parent < previous_kept for c in step)
        kept = [c for c in step if c.status == "kept"]
        assert len(kept) <= 4
        logprobs = [c.logprob for c in step]
        assert logprobs == sorted(logprobs, reverse=True)  # ranked
        previous_kept = len(kept) or previous_kept
    # Each hypothesis' log-probability is what the model gives its tokens (teacher forced).
    for h in res.hypotheses:
        forced = run_decoder(tiny_model, src, GenerationSettings(max_new_tokens=len(h.ids)),
                             forced=h.ids)
        lp = np.log(forced.step_probs[np.arange(len(h.ids)), list(h.ids)]).sum()
        assert h.logprob == pytest.approx(float(lp), abs=1e-4)
        assert h.score == pytest.approx(h.logprob / len(h.ids) ** 0.7)


def test_beam_search_rejects_bad_width(tiny_model):
    from model.decoding import beam_search

    for n in (0, 9):
        with pytest.raises(ValueError, match="num_beams"):
            beam_search(tiny_model, torch.tensor([[5, 3]]),
                        GenerationSettings(num_beams=n, max_new_tokens=5))


def test_sampling_is_reproducible_and_zero_temperature_is_greedy(tiny_model):
    from model.decoding import sample_decode

    src = torch.tensor([[5, 6, 7, 8, 3]])
    warm = GenerationSettings(do_sample=True, max_new_tokens=12, temperature=1.0, seed=3)
    a = sample_decode(tiny_model, src, warm)
    b = sample_decode(tiny_model, src, warm)
    assert list(a.tgt_ids) == list(b.tgt_ids)
    others = {tuple(sample_decode(tiny_model, src, warm.replace(seed=s)).tgt_ids)
              for s in range(8)}
    assert len(others) > 1  # an untrained model's distribution is flat: seeds differ
    cold = sample_decode(tiny_model, src, warm.replace(temperature=1e-6, seed=5))
    greedy = greedy_decode(tiny_model, src, GenerationSettings(max_new_tokens=12))
    assert list(cold.tgt_ids) == list(greedy.tgt_ids)


def test_sampling_distribution_top_k_top_p():
    from model.decoding import sampling_distribution

    p = torch.tensor([0.5, 0.2, 0.15, 0.1, 0.05])
    torch.testing.assert_close(sampling_distribution(p), p)
    k2 = sampling_distribution(p, top_k=2)
    torch.testing.assert_close(k2, torch.tensor([5 / 7, 2 / 7, 0, 0, 0]))
    nucleus = sampling_distribution(p, top_p=0.8)  # 0.5 + 0.2 < 0.8 <= 0.85: three kept
    torch.testing.assert_close(nucleus, torch.tensor([0.5, 0.2, 0.15, 0, 0]) / 0.85)
    hot = sampling_distribution(p, temperature=2.0)
    torch.testing.assert_close(hot, p.sqrt() / p.sqrt().sum())
    with pytest.raises(ValueError):
        sampling_distribution(p, top_p=0.0)


def test_forced_prefix_is_kept_and_continued(tiny_model):
    from model.decoding import run_decoder

    src = torch.tensor([[5, 6, 7, 8, 3]])
    res = greedy_decode(tiny_model, src, GenerationSettings(max_new_tokens=12), forced=[9, 10])
    assert list(res.tgt_ids[1:3]) == [9, 10] and res.n_forced == 2
    teacher = run_decoder(tiny_model, src, GenerationSettings(max_new_tokens=12),
                          forced=[9, 10, 11])
    assert list(teacher.tgt_ids) == [2, 9, 10, 11] and teacher.step_probs.shape[0] == 3


def test_hypothesis_end_points_at_its_last_token(tiny_model):
    from model.decoding import beam_search

    res = beam_search(tiny_model, torch.tensor([[5, 6, 7, 8, 3]]),
                      GenerationSettings(num_beams=3, max_new_tokens=6))
    for h in res.hypotheses:
        t, rank = h.end
        cand = res.steps[t][rank]
        assert cand.token_id == h.ids[-1] and cand.logprob == pytest.approx(h.logprob)
        assert cand.status == ("finished" if h.finished else "kept")
        assert t == len(h.ids) - 1


@given(seed=st.integers(0, 10_000), size=st.integers(1, 4), length=st.integers(1, 12),
       rows=st.integers(1, 3))
def test_no_repeat_ngram_equals_transformers(seed, size, length, rows):
    """``processors.no_repeat_ngram`` bans exactly what transformers'
    ``NoRepeatNGramLogitsProcessor`` bans, on random rows of a 6-token vocabulary (so
    n-grams repeat), and changes nothing else."""
    from transformers.generation.logits_process import NoRepeatNGramLogitsProcessor

    from model.decoding import no_repeat_ngram

    gen = torch.Generator().manual_seed(seed)
    input_ids = torch.randint(0, 6, (rows, length), generator=gen)  # (n, t + 1)
    logp = torch.randn(rows, 6, generator=gen).log_softmax(-1)  # (n, V)
    ours = no_repeat_ngram(size)(length - 1, logp, input_ids)
    theirs = NoRepeatNGramLogitsProcessor(size)(input_ids, logp.clone())
    assert torch.equal(torch.isinf(ours), torch.isinf(theirs))
    assert torch.equal(ours[~torch.isinf(ours)], logp[~torch.isinf(ours)])


@given(seed=st.integers(0, 10_000), penalty=st.floats(
    BOUNDS["repetition_penalty"].low, BOUNDS["repetition_penalty"].high).filter(lambda p: p != 1),
       length=st.integers(1, 12),
       rows=st.integers(1, 3))
def test_repetition_penalty_equals_transformers(seed, penalty, length, rows):
    """``processors.repetition_penalty`` gives what transformers'
    ``RepetitionPenaltyLogitsProcessor`` gives on the same log-probabilities (the scores
    beam search hands it): the tokens already in a row scaled, every other score as it was."""
    from transformers.generation.logits_process import RepetitionPenaltyLogitsProcessor

    from model.decoding import repetition_penalty

    gen = torch.Generator().manual_seed(seed)
    input_ids = torch.randint(0, 8, (rows, length), generator=gen)  # (n, t + 1)
    logp = torch.randn(rows, 8, generator=gen).log_softmax(-1)  # (n, V)
    ours = repetition_penalty(penalty)(length - 1, logp, input_ids)
    theirs = RepetitionPenaltyLogitsProcessor(penalty)(input_ids, logp.clone())
    torch.testing.assert_close(ours, theirs)
    for r in range(rows):
        unseen = [v for v in range(8) if v not in input_ids[r].tolist()]
        assert torch.equal(ours[r, unseen], logp[r, unseen])
        seen = sorted(set(input_ids[r].tolist()))
        torch.testing.assert_close(ours[r, seen], logp[r, seen] * penalty)


def test_repetition_penalty_off_and_bad_values():
    from model.decoding import for_settings, repetition_penalty

    assert repetition_penalty(1.0) is None
    assert for_settings(GenerationSettings()) == []
    for bad in (0.0, -2.0, float("inf"), float("nan")):
        with pytest.raises(ValueError, match="penalty"):
            repetition_penalty(bad)


def test_processors_apply_in_order():
    from model.decoding import apply

    def add(x):
        return lambda t, logp, ids: logp + x

    def double(t, logp, ids):
        return logp * 2

    logp, ids = torch.zeros(1, 3), torch.zeros(1, 1, dtype=torch.long)
    assert apply([], 0, logp, ids) is logp
    assert torch.equal(apply([add(1), double], 0, logp, ids), torch.full((1, 3), 2.0))
    assert torch.equal(apply([double, add(1)], 0, logp, ids), torch.full((1, 3), 1.0))


def test_every_strategy_applies_the_settings_processors(tiny_model):
    """``no_repeat_ngram_size=1`` bans every token already in the decoder input: each
    strategy, given only the settings, produces no token twice (nor the start token)."""
    from model.decoding import beam_search, sample_decode

    src = torch.tensor([[5, 6, 7, 8, 3]])
    s = GenerationSettings(max_new_tokens=12, no_repeat_ngram_size=1)
    outputs = [list(greedy_decode(tiny_model, src, s).tgt_ids),
               list(sample_decode(tiny_model, src, s.replace(do_sample=True, seed=1)).tgt_ids),
               [2, *beam_search(tiny_model, src, s.replace(num_beams=3)).hypotheses[0].ids],
               [2, *greedy_batch(tiny_model, src, s).generated[0]]]
    for ids in outputs:
        assert len(ids) == len(set(ids)) > 1


def test_one_argument_check_for_every_strategy(tiny_model):
    from model.decoding import beam_search, check_arguments, run_decoder

    src = torch.tensor([[5, 6, 3]])
    limit = tiny_model.config.max_len - 1
    assert check_arguments(tiny_model, src, GenerationSettings()) == limit
    for strategy in (greedy_decode, beam_search, run_decoder, greedy_batch):
        with pytest.raises(TypeError):
            strategy(tiny_model, src, 5)
        with pytest.raises(ValueError, match="max_new_tokens"):
            strategy(tiny_model, src, GenerationSettings(max_new_tokens=limit + 1))
    with pytest.raises(ValueError, match="forced"):
        run_decoder(tiny_model, src, GenerationSettings(max_new_tokens=2), forced=[5, 6, 7])
