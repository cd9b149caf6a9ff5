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


def _hf_zeroed_output(model, ids: torch.Tensor, layer: int, j: int | None) -> torch.Tensor:
    """A Hugging Face causal model's layer ``layer`` output (N, D) over ``ids`` (N,), with
    position ``j``'s value vectors zeroed by a hand-made hook on that layer's value
    projection (GPT-2: the last third of ``c_attn``); ``j`` None: unchanged."""
    hf = model.hf
    blocks = hf.transformer.h if model.model_type == "gpt2" else hf.model.layers
    attn = blocks[layer].attn if model.model_type == "gpt2" else blocks[layer].self_attn
    value = attn.c_attn if model.model_type == "gpt2" else attn.v_proj
    start = 2 * model.config.d_model if model.model_type == "gpt2" else 0
    seen = {}

    def zero(_module, _args, out):
        out = out.clone()
        out[:, j, start:] = 0.0
        return out

    def keep(_module, _args, out):
        seen["out"] = (out[0] if isinstance(out, tuple) else out)[0]

    handles = [blocks[layer].register_forward_hook(keep)]
    if j is not None:
        handles.append(value.register_forward_hook(zero))
    try:
        with torch.inference_mode():
            hf(input_ids=ids[None], use_cache=False)
    finally:
        for h in handles:
            h.remove()
    return seen["out"]


@pytest.mark.parametrize("family", ["gpt2", "llama", "qwen3"])
def test_a_hugging_face_one_stack_s_value_zeroing_is_the_hooked_pass(family, tmp_path):
    """Batch row j of the hooked, stopped passes is position j zeroed alone, in every layer
    (GPT-2's fused projection, Llama's grouped values, Qwen3's q/k norms)."""
    from testkit.hf_tiny_causal import build_tiny_causal

    tr = load_pretrained(build_tiny_causal(family, tmp_path / f"tiny-{family}"))
    trace = tr.generate("the cat sat on the mat", max_new_tokens=4)
    src, tgt = torch.from_numpy(trace.src_ids), torch.from_numpy(trace.tgt_ids[:-1])
    vz = value_zeroing(tr.model, src, tgt)
    S, T, L = len(src), len(tgt), tr.config.num_layers
    assert vz.cross.shape == (L, T, S) and vz.decoder.shape == (L, T, T)
    ids = torch.cat([src, tgt])
    for layer in range(L):
        base = _hf_zeroed_output(tr.model, ids, layer, None)[S:]  # (T, D)
        for j in (0, S - 1, S, S + T - 1):
            out = _hf_zeroed_output(tr.model, ids, layer, j)[S:]
            d = (1 - F.cosine_similarity(out, base, dim=-1)).clamp_min(0).numpy()
            got = vz.cross[layer, :, j] if j < S else vz.decoder[layer, :, j - S]
            want = d if j < S else np.where(np.arange(T) >= j - S, d, 0.0)
            np.testing.assert_allclose(got, want, atol=1e-5)
    assert vz.cross.max() > 0  # the zeroing moved something
