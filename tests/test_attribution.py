"""Gradient attributions (model.analysis.attribution): integrated gradients (Captum) are
complete within 2 % on the shipped models (post-LN and pre-LN), gradient x input (ours)
equals Captum's InputXGradient and the gradient computed by hand times the embeddings, and
the shares are shares."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from shipped import model_of

from model.analysis.attribution import MAX_COMPLETENESS_ERROR, attribute

CASES = [("en-zh-small", "why do we work ?"), ("en-zh-everyday", "Why do we work?")]


def _ids(name, sentence):
    m = model_of(name)
    tr = m.generate(sentence)
    return m.model, torch.as_tensor(tr.src_ids), torch.as_tensor(tr.tgt_ids)


@pytest.mark.slow
@pytest.mark.parametrize("name, sentence", CASES)
def test_integrated_gradients_are_complete(name, sentence):
    model, src, tgt = _ids(name, sentence)
    a = attribute(model, src, tgt, "integrated_gradients")
    T, S = len(tgt) - 1, len(src)
    assert a.source.shape == (T, S) and a.prefix.shape == (T, T)
    assert np.all(a.completeness_error <= MAX_COMPLETENESS_ERROR), a.completeness_error
    assert np.all(np.triu(a.prefix, k=1) == 0)
    src_n, pre_n = a.normalised()
    np.testing.assert_allclose(src_n.sum(-1) + pre_n.sum(-1), 1.0, atol=1e-5)
    assert np.all((a.source_share() >= 0) & (a.source_share() <= 1 + 1e-6))


def test_gradient_times_input_equals_captums_input_x_gradient():
    from captum.attr import InputXGradient

    from model.analysis.attribution import _step_function

    model, src, tgt = _ids("en-zh-everyday", "Why do we work?")
    a = attribute(model, src, tgt, "input_x_gradient")
    with torch.inference_mode(False), torch.enable_grad():
        src_e = model.src_embed(src[None]).detach()  # (1, S, D)
        tgt_all = model.tgt_embed(tgt[None, :-1]).detach()  # (1, T, D)
        for t in range(len(tgt) - 1):
            f = _step_function(model, src, tgt, step=t, token=int(tgt[t + 1]))
            ref = InputXGradient(f).attribute((src_e.clone().requires_grad_(True),
                                               tgt_all[:, : t + 1].clone().requires_grad_(True)))
            np.testing.assert_allclose(a.source[t], ref[0][0].sum(-1).detach().numpy(),
                                       atol=1e-5)
            np.testing.assert_allclose(a.prefix[t, : t + 1], ref[1][0].sum(-1).detach().numpy(),
                                       atol=1e-5)


def test_gradient_times_input_is_the_gradient_by_hand():
    model, src, tgt = _ids("en-zh-small", "why do we work ?")
    a = attribute(model, src, tgt, "input_x_gradient")
    t = 1
    src_e = model.src_embed(src[None]).detach().requires_grad_(True)
    tgt_e = model.tgt_embed(tgt[None, : t + 1]).detach().requires_grad_(True)
    enc = model.encode(src[None], src_embeds=src_e)
    out = model.decode(tgt[None, : t + 1], enc.memory, enc.key_padding_mask, tgt_embeds=tgt_e)
    logp = torch.log_softmax(out.logits[0, t], -1)[int(tgt[t + 1])]
    g_src, g_tgt = torch.autograd.grad(logp, (src_e, tgt_e))
    np.testing.assert_allclose(a.source[t], (g_src * src_e)[0].sum(-1).detach().numpy(),
                               atol=1e-5)
    np.testing.assert_allclose(a.prefix[t, : t + 1], (g_tgt * tgt_e)[0].sum(-1).detach().numpy(),
                               atol=1e-5)
    assert a.completeness_error is None
    with pytest.raises(ValueError, match="method"):
        attribute(model, src, tgt, "saliency")
