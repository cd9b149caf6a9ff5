"""Value zeroing in our decoder-only model (issue 55: attribution as for an encoder-decoder):
each layer's scores equal zeroing one position's value vectors by a hook on the layer's
value projection during the stack's own forward pass, the prompt's columns standing where
cross-attention went. A tiny random prefix LM (``testkit.one_stack_tiny``)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from model import load_pretrained
from model.analysis.value_zeroing import value_zeroing
from testkit.one_stack_tiny import tiny_prefix_lm


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return load_pretrained(tiny_prefix_lm(tmp_path_factory.mktemp("m") / "a-tiny-prefix-lm"))


def _zeroed_output(stack, ids: torch.Tensor, layer: int, j: int) -> torch.Tensor:
    """Layer ``layer``'s output (N, D) with position ``j``'s values zeroed by a hook on its
    value projection (every head's slice), the earlier layers untouched."""
    def hook(_module, _args, out):
        out = out.clone()
        out[:, j] = 0.0
        return out

    handle = stack.layers[layer].self_attn.v_proj.register_forward_hook(hook)
    try:
        with torch.inference_mode():
            return stack(ids[None], return_layers=True).layers[layer].output[0]
    finally:
        handle.remove()


def test_one_stack_value_zeroing_is_the_hooked_pass(tiny):
    trace = tiny.generate("We are learning.", max_new_tokens=4)
    src, tgt = torch.from_numpy(trace.src_ids), torch.from_numpy(trace.tgt_ids[:-1])
    vz = value_zeroing(tiny.model, src, tgt)
    S, T = len(src), len(tgt)
    L = len(tiny.model.model.layers)
    assert vz.cross.shape == (L, T, S) and vz.decoder.shape == (L, T, T)
    stack, ids = tiny.model.model, torch.cat([src, tgt])
    with torch.inference_mode():
        base = stack(ids[None], return_layers=True).layers
    for layer in range(L):
        for j in (0, S - 1, S, S + T - 1):
            out = _zeroed_output(stack, ids, layer, j)[S:]  # (T, D) the decoder inputs' rows
            d = (1 - F.cosine_similarity(out, base[layer].output[0, S:], dim=-1)).clamp_min(0)
            got = vz.cross[layer, :, j] if j < S else vz.decoder[layer, :, j - S]
            want = d.numpy() if j < S else np.where(np.arange(T) >= j - S, d.numpy(), 0.0)
            np.testing.assert_allclose(got, want, atol=1e-6)
