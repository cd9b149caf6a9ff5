"""Switching heads off (model.backends.heads) and head importance (model.analysis.ablation):
hooks on the shared model against weight surgery on a copy, for our model and each Hugging
Face family; thread isolation; head importance against a finite difference of the loss."""

from __future__ import annotations

import copy
import threading

import numpy as np
import pytest
import torch
from shipped import model_of

from model import InputError, load_pretrained
from model.analysis.ablation import head_importance, pruning_order
from model.backends.heads import check_heads, gated_heads, heads_off, output_projection
from model.core.config import ATTENTION_KINDS
from testkit.hf_tiny import FAMILIES, sentence_pairs, tiny_folder

SENTENCE = "why do we work ?"


@pytest.fixture(scope="module")
def small():
    return model_of("en-zh-small")


def _surgery(translator, heads, folder=None):
    """A copy of ``translator`` (a deep copy, or a second load of ``folder``) whose W_O
    columns of each head in ``heads`` are zero: the same intervention as the hooks, made on
    the weights instead."""
    twin = copy.deepcopy(translator) if folder is None else load_pretrained(folder)
    Dh = twin.config.d_model // twin.config.nhead
    with torch.no_grad():
        for kind, layer, head in heads:
            output_projection(twin.model, kind, layer).weight[:, head * Dh:(head + 1) * Dh] = 0
    return twin


def _same_trace(a, b, atol=1e-5):
    assert a.tgt_tokens == b.tgt_tokens
    np.testing.assert_allclose(a.step_probs, b.step_probs, atol=atol)
    for name in ("encoder_attentions", "decoder_attentions", "cross_attentions"):
        np.testing.assert_allclose(getattr(a, name), getattr(b, name), atol=atol)


def _some_heads(config):
    """One head of each kind, in the last layer, plus a whole first encoder layer."""
    last_enc, last_dec = config.num_encoder_layers - 1, config.num_decoder_layers - 1
    return [("encoder", last_enc, 1), ("decoder", last_dec, 0), ("cross", last_dec, 1),
            *[("encoder", 0, h) for h in range(config.nhead)]]


def test_hooks_equal_zeroed_output_weights_on_a_copy(small):
    heads = _some_heads(small.config)
    ablated = small.generate(SENTENCE, heads_off=heads)
    _same_trace(ablated, _surgery(small, heads).generate(SENTENCE))
    assert ablated.heads_off == check_heads(heads, small.config)
    # the intervention changed something, and the hooks are gone afterwards
    normal = small.generate(SENTENCE)
    assert not np.allclose(ablated.step_probs[0], normal.step_probs[0])
    _same_trace(normal, small.generate(SENTENCE, heads_off=()))


def test_teacher_forcing_and_beams_switch_the_same_heads_off(small):
    heads = [("cross", 1, 0), ("decoder", 0, 2)]
    twin = _surgery(small, heads)
    _same_trace(small.teacher_force(SENTENCE, "我们为什么学习？", heads_off=heads),
                twin.teacher_force(SENTENCE, "我们为什么学习？"))
    _same_trace(small.generate(SENTENCE, num_beams=3, heads_off=heads),
                twin.generate(SENTENCE, num_beams=3))


@pytest.mark.parametrize("family", FAMILIES)
def test_hugging_face_heads_off_equal_weight_surgery(family, tmp_path_factory):
    folder = tiny_folder(family, tmp_path_factory)
    tr = load_pretrained(folder)
    heads = _some_heads(tr.config)
    text = sentence_pairs()[0][0]
    ablated = tr.generate(text, max_new_tokens=6, heads_off=heads)
    _same_trace(ablated, _surgery(tr, heads, folder).generate(text, max_new_tokens=6))
    assert not np.allclose(ablated.step_probs[0], tr.generate(text, max_new_tokens=6)
                           .step_probs[0])


def test_another_threads_pass_is_untouched(small):
    normal = small.generate(SENTENCE)
    seen = {}
    with heads_off(small.model, [("cross", l, h) for l in range(2) for h in range(4)],
                   small.config.nhead):
        worker = threading.Thread(target=lambda: seen.setdefault("t", small.generate(SENTENCE)))
        worker.start()
        worker.join()
        inside = small.generate(SENTENCE)  # this thread's pass is ablated
    _same_trace(seen["t"], normal)
    assert inside.tgt_tokens != normal.tgt_tokens or not np.allclose(
        inside.step_probs, normal.step_probs)


@pytest.mark.parametrize(("heads", "match"), [
    ([("self", 0, 0)], "kind"),
    ([("encoder", 2, 0)], "encoder layer 2 is outside 0..1"),
    ([("cross", 0, 4)], "cross head 4 is outside 0..3"),
    ([("decoder", True, 0)], "decoder layer True"),
    ([("decoder", 0)], r"\(kind, layer, head\)"),
    (["encoder"], r"\(kind, layer, head\)"),
])
def test_bad_heads_are_refused(small, heads, match):
    with pytest.raises(InputError, match=match):
        small.generate(SENTENCE, heads_off=heads)


def _loss(translator, src, tgt, gates):
    with torch.no_grad(), gated_heads(translator.model, gates, translator.config.nhead):
        enc = translator.model.encode(src)
        logits = translator.model.decode(tgt[:, :-1], enc.memory, enc.key_padding_mask).logits
        return float(torch.nn.functional.cross_entropy(logits[0].double(), tgt[0, 1:],
                                                       reduction="sum"))


def _pair(translator, text, reference):
    src = torch.from_numpy(translator.source(text).ids)[None]  # (1, S)
    ids = [translator.config.bos_id, *translator.target.ids(reference), translator.config.eos_id]
    return src, torch.tensor([ids])


def test_importance_is_the_absolute_derivative_of_the_loss_in_the_gate(small):
    src, tgt = _pair(small, SENTENCE, "我们为什么工作？")
    importance = head_importance(small.model, small.config, [(src, tgt)])
    n = small.config.nhead
    for kind, layer, head in [("encoder", 0, 1), ("decoder", 1, 2), ("cross", 1, 3)]:
        eps, losses = 1e-2, []
        for sign in (1, -1):
            gate = torch.ones(n)
            gate[head] += sign * eps
            losses.append(_loss(small, src, tgt, {(kind, layer): gate}))
        numeric = abs(losses[0] - losses[1]) / (2 * eps)
        assert importance[kind][layer, head] == pytest.approx(numeric, rel=0.05, abs=1e-3)


def test_a_head_that_passes_nothing_on_has_no_importance(small):
    dead = ("cross", 0, 2)
    twin = _surgery(small, [dead])
    pairs = [_pair(twin, SENTENCE, "我们为什么工作？"),
             _pair(twin, "we eat rice .", "我们吃米饭。")]
    calls = []
    importance = head_importance(twin.model, twin.config, pairs,
                                 progress=lambda i, n: calls.append((i, n)))
    assert importance["cross"][0, 2] == 0.0
    assert set(importance) == set(ATTENTION_KINDS)
    assert all(v.shape == (2, 4) for v in importance.values())
    assert all((v >= 0).all() for v in importance.values()) and importance["cross"].sum() > 0
    assert calls == [(1, 2), (2, 2)]
    order = pruning_order(importance)
    assert order[0] == dead or importance[order[0][0]][order[0][1:]] == 0.0
    assert len(order) == len(set(order)) == 3 * 2 * 4
    values = [importance[k][layer, h] for k, layer, h in order]
    assert values == sorted(values)
    # the shared model's parameters got no gradients
    assert all(p.grad is None for p in twin.model.parameters())


def test_importance_needs_pairs(small):
    with pytest.raises(ValueError, match="at least one"):
        head_importance(small.model, small.config, [])
