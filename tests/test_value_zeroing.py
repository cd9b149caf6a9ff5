"""Value zeroing (model.analysis.value_zeroing) against the same intervention made by hand: a
forward hook on a copy of the model zeroes one token's projected values in one layer, the
decoder runs as usual, and the layer's output moves by exactly the score; post-LN and pre-LN
models; rows normalise to shares."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from shipped import model_of

from model.analysis.value_zeroing import value_zeroing

SENTENCES = {"en-zh-small": "why do we work ?", "en-zh-everyday": "Why do we work?"}


def _layer_output(model, src, tgt, layer: int, where: str | None = None, j: int = 0):
    """Decoder layer ``layer``'s output (T, D) in a plain teacher-forced pass, with position
    ``j``'s projected values zeroed by a hook on ``where`` ("cross_attn"/"self_attn") of that
    layer (None: no hook)."""
    handle = None
    if where is not None:
        proj = getattr(model.decoder_layers[layer], where).v_proj

        def zero(module, inputs, output):
            output = output.clone()
            output[:, j, :] = 0.0
            return output

        handle = proj.register_forward_hook(zero)
    try:
        with torch.inference_mode():
            enc = model.encode(src[None])
            out = model.decode(tgt[None], enc.memory, enc.key_padding_mask, return_layers=True)
    finally:
        if handle is not None:
            handle.remove()
    return out.layers[layer].output[0]


@pytest.mark.parametrize("name", list(SENTENCES))
def test_each_score_is_the_layers_move_when_the_values_are_zeroed_by_hand(name):
    translator = model_of(name)
    trace = translator.generate(SENTENCES[name])
    src = torch.as_tensor(trace.src_ids)
    tgt = torch.as_tensor(trace.tgt_ids[:-1])  # (T,) the decoder inputs
    vz = value_zeroing(translator.model, src, tgt)
    L, T, S = vz.cross.shape
    assert vz.decoder.shape == (L, T, T) and (S, T) == (len(src), len(tgt))
    model = copy.deepcopy(translator.model)  # hooks go on a copy, never on the shared model
    for layer in (0, L - 1):
        base = _layer_output(model, src, tgt, layer)
        for j in (0, S // 2, S - 1):
            moved = _layer_output(model, src, tgt, layer, "cross_attn", j)
            want = (1 - F.cosine_similarity(moved, base, dim=-1)).clamp_min(0).numpy()
            np.testing.assert_allclose(vz.cross[layer, :, j], want, atol=2e-5)
        for j in (0, T // 2):
            moved = _layer_output(model, src, tgt, layer, "self_attn", j)
            want = (1 - F.cosine_similarity(moved, base, dim=-1)).clamp_min(0).numpy()
            want[:j] = 0.0  # a query before j never sees it (the look-ahead mask)
            np.testing.assert_allclose(vz.decoder[layer, :, j], want, atol=2e-5)
    cross, decoder = vz.normalised()
    np.testing.assert_allclose(cross.sum(-1) + decoder.sum(-1), 1.0, atol=1e-5)
    assert np.all(np.triu(decoder, k=1) == 0)
    share = vz.source_share()
    assert share.shape == (L, T) and np.all((share >= 0) & (share <= 1 + 1e-6))


def test_bad_ids_are_refused():
    model = model_of("en-zh-small").model
    with pytest.raises(ValueError, match="1-D"):
        value_zeroing(model, torch.zeros(2, 3, dtype=torch.long), torch.zeros(3, dtype=torch.long))
