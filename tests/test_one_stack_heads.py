"""Which heads matter in a decoder-only model (issue 55: the Heads view's importance and
pruning, as for an encoder-decoder): Michel et al.'s head importance over held-out pairs
whose references continue the prompt after ``<sep>``, against a finite difference of the
loss in each head's gate. A tiny random prefix LM (``testkit.one_stack_tiny``)."""

from __future__ import annotations

import pytest
import torch
from test_ablation import _loss

from model import load_pretrained
from model.analysis.pruning import importance, pair_ids
from testkit.one_stack_tiny import tiny_prefix_lm

PAIRS = [("We are learning.", "我们在学习。"), ("Why do we work?", "我们为什么工作？")]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return load_pretrained(tiny_prefix_lm(tmp_path_factory.mktemp("m") / "a-tiny-prefix-lm"))


def test_a_pair_continues_the_prompt_after_its_separator(tiny):
    for (text, _), (src, tgt) in zip(PAIRS, pair_ids(tiny, PAIRS), strict=True):
        source = tiny.source(text)
        assert src[0].tolist() == source.ids.tolist()
        assert int(tgt[0, 0]) == source.start_id and int(tgt[0, -1]) == tiny.config.eos_id


def test_one_stack_importance_is_the_derivative_of_the_loss_in_the_gate(tiny):
    found = importance(tiny, PAIRS)
    assert found["encoder"].size == found["cross"].size == 0  # one stack: "decoder" only
    n, pairs = tiny.config.nhead, pair_ids(tiny, PAIRS)
    for layer, head in [(0, 1), (1, 3)]:
        eps, slope = 1e-3, 0.0  # the random tiny model bends more than a trained one
        for src, tgt in pairs:
            losses = []
            for sign in (1, -1):
                gate = [1.0] * n
                gate[head] += sign * eps
                losses.append(_loss(tiny, src, tgt, {("decoder", layer): torch.tensor(gate)}))
            slope += abs(losses[0] - losses[1]) / (2 * eps)
        assert found["decoder"][layer, head] == pytest.approx(slope / len(pairs), rel=0.05,
                                                              abs=1e-3)
