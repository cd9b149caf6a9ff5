import numpy as np
import pytest
import torch

from model.decoding import greedy_decode, greedy_decode_batch, top_k_step


def test_stepwise_attentions_equal_one_teacher_forced_pass(tiny_model):
    src = torch.tensor([[5, 6, 7, 8, 3]])
    res = greedy_decode(tiny_model, src, max_new_tokens=12)
    T = len(res.tgt_ids) - 1
    assert res.decoder_attentions.shape == (2, 4, T, T)
    assert res.cross_attentions.shape == (2, 4, T, 5)
    with torch.inference_mode():
        enc = tiny_model.encode(src)
        out = tiny_model.decode(torch.tensor(res.tgt_ids[None, :-1]), enc.memory,
                                enc.key_padding_mask)
    full_self = torch.stack([a[0] for a in out.self_attentions]).numpy()
    full_cross = torch.stack([a[0] for a in out.cross_attentions]).numpy()
    np.testing.assert_allclose(res.decoder_attentions, full_self, atol=1e-5)
    np.testing.assert_allclose(res.cross_attentions, full_cross, atol=1e-5)
    full_probs = out.logits[0].softmax(-1).numpy()
    np.testing.assert_allclose(res.step_probs, full_probs, atol=1e-5)
    # Greedy: every generated token is the argmax of its step's distribution.
    assert list(res.tgt_ids[1:]) == list(res.step_probs.argmax(-1))


def test_stepwise_maps_are_lower_triangular_and_rows_sum_to_one(tiny_model):
    res = greedy_decode(tiny_model, torch.tensor([[4, 9, 3]]), max_new_tokens=8)
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
    batched = greedy_decode_batch(tiny_model, batch, max_new_tokens=10)
    for s, got in zip(sentences, batched, strict=True):
        alone = greedy_decode(tiny_model, torch.tensor([s]), max_new_tokens=10).tgt_ids[1:]
        expected = [int(i) for i in alone if i != 3]
        assert got == expected[: len(got)] and len(got) == len(expected)


def test_greedy_rejects_bad_arguments(tiny_model):
    with pytest.raises(ValueError):
        greedy_decode(tiny_model, torch.tensor([[4, 3], [5, 3]]), 5)
    with pytest.raises(ValueError):
        greedy_decode(tiny_model, torch.tensor([[4, 3]]), 0)


def test_top_k_step_orders_and_measures_entropy():
    probs = np.array([0.1, 0.6, 0.3, 0.0], dtype=np.float32)
    ids, p, h = top_k_step(probs, 2)
    assert list(ids) == [1, 2]
    np.testing.assert_allclose(p, [0.6, 0.3])
    assert h == pytest.approx(-(0.1 * np.log(0.1) + 0.6 * np.log(0.6) + 0.3 * np.log(0.3)))
