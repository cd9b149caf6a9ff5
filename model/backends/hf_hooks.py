"""Inside one head, and the embeddings, of a Hugging Face model (``hf.HFSeq2Seq``), for
``hf.HFInternals``; inside one head of a causal language model (``hf_causal.HFCausal``).

The query, key and value projections' inputs and outputs are taken by forward hooks during
one teacher-forced pass (``output_attentions=True``, eager attention); the scores, mask,
softmax and weighted sum are then recomputed from them and equal the model's own weights
(tests check 1e-5). The hooks only record calls made by the thread that registered them
and are removed before returning, so the shared model keeps no state from a request and
other sessions' passes are never recorded.

Each family's score: Marian, BART, M2M100: Q K^T / sqrt(Dh) (Vaswani et al., 2017);
T5: Q K^T + B with no scaling, B a learned bias per head and relative-distance bucket
(Raffel et al., 2020, section 2.1), in self-attention only. Llama, Mistral, Qwen: q and k
rotated by position first (RoPE; Su et al., 2021), Qwen3's normalised before that.

Shape letters: S source length, T decoder inputs, Tq / Tk query / key length, D d_model,
Dh head width. Masks are boolean, True = blocked.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from contextlib import contextmanager

import numpy as np
import torch

from ..decoding import DecodeTrace
from .records import EmbeddingParts, HeadInputs, to_numpy


@contextmanager
def recording(modules: dict[str, torch.nn.Module]):
    """Record each module's (input, output) during the ``with`` block, for calls made by
    this thread only; yields the dict name -> (input (B, T, D_in), output (B, T, D_out)).
    A module that returns a tuple (a decoder layer: hidden states first) is recorded by its
    first item; one called with keyword arguments only, with input None."""
    seen: dict[str, tuple[torch.Tensor, torch.Tensor]] = {}
    me = threading.get_ident()

    def hook_for(name: str):
        def hook(module, args, output):
            if threading.get_ident() == me:
                out = output[0] if isinstance(output, tuple) else output
                seen[name] = (args[0].detach() if args else None, out.detach())
        return hook

    handles = [m.register_forward_hook(hook_for(n)) for n, m in modules.items()]
    try:
        yield seen
    finally:
        for h in handles:
            h.remove()


def head_inputs(model, trace: DecodeTrace, kind: str, *, layer: int, head: int,
                relative: bool) -> HeadInputs:
    """What ``analysis.internals.head_internals`` recomputes one head of a Hugging Face
    model (``model``, an ``hf.HFSeq2Seq``) from: x_q (Tq, D), x_k (Tk, D), the (q, k, v)
    projections, the scaling and, for a ``relative`` position model (T5), its position
    bias (Tq, Tk), else None. The inputs are recorded by hooks on the projections during
    one teacher-forced pass."""
    src_ids = torch.from_numpy(trace.src_ids)[None]  # (1, S)
    tgt_ids = torch.from_numpy(trace.tgt_ids[:-1])[None]  # (1, T) the decoder inputs
    module, names = model.attention(kind, layer)
    linears = tuple(getattr(module, n) for n in names)
    with recording({"q": linears[0], "k": linears[1]}) as seen:
        model.hf(input_ids=src_ids, decoder_input_ids=tgt_ids, use_cache=False,
                 return_dict=True)
    x_q, x_k = seen["q"][0][0], seen["k"][0][0]  # (Tq, D), (Tk, D)
    Dh = model.config.head_dim  # T5's d_kv: H * Dh need not be D
    scaling = float(getattr(module, "scaling", Dh ** -0.5))  # T5: 1.0
    bias = None
    if relative and kind != "cross":
        bias = model.attention(kind, 0)[0].compute_bias(len(x_q), len(x_k))[0, head]
    return HeadInputs(x_q, x_k, linears, scaling, bias)


def causal_head_inputs(model, trace: DecodeTrace, layer: int) -> HeadInputs:
    """What ``analysis.internals.head_internals`` recomputes one self-attention head of a
    Hugging Face causal language model (``model``, an ``hf_causal.HFCausal``) from, over
    the trace's one sequence (N = S + T): x (N, D) the layer's attention input, recorded by
    a hook on its query projection (GPT-2: on the fused ``c_attn``, split into three
    ``nn.Linear``), the scaling 1 / sqrt(Dh), the query heads per key/value head, Qwen3's
    q/k norms and, for a rotary family, the rotary embedding's ``inv_freq`` (Dh/2,) and
    attention scaling (Llama 3's scaled frequencies included)."""
    ids = torch.from_numpy(np.concatenate([trace.src_ids, trace.tgt_ids[:-1]]))[None]  # (1, N)
    module, names = model.attention("decoder", layer)
    c = model.config
    if names == ("c_attn",):  # GPT-2: x W + b with W (D, 3 D) holding q, k and v
        linears = _split_fused(module.c_attn, c.d_model)
        hooked = module.c_attn
    else:
        linears = tuple(getattr(module, n) for n in names)
        hooked = linears[0]
    with recording({"q": hooked}) as seen:
        model.hf(input_ids=ids, use_cache=False, logits_to_keep=1, return_dict=True)
    x = seen["q"][0][0]  # (N, D)
    norms = (module.q_norm, module.k_norm) if hasattr(module, "q_norm") else None
    rotary = getattr(getattr(model.hf, "model", None), "rotary_emb", None)
    rope = None if rotary is None else (rotary.inv_freq.double().numpy().copy(),
                                        float(rotary.attention_scaling))
    scaling = float(getattr(module, "scaling", c.head_dim ** -0.5))
    return HeadInputs(x, x, linears, scaling, None, kv_group=c.nhead // c.num_key_value_heads,
                      head_norms=norms, rope=rope)


def _split_fused(c_attn, d_model: int) -> tuple[torch.nn.Linear, ...]:
    """GPT-2's fused ``Conv1D`` (x W + b, W (D, 3 D)) as three ``nn.Linear`` D -> D (x W^T
    + b), the query's, the key's and the value's, with copies of its weights."""
    out = []
    for i in range(3):
        part = slice(i * d_model, (i + 1) * d_model)
        linear = torch.nn.Linear(d_model, d_model)
        with torch.no_grad():
            linear.weight.copy_(c_attn.weight[:, part].T)
            linear.bias.copy_(c_attn.bias[part])
        out.append(linear)
    return tuple(out)


def embedding_parts(model, vocab, tokens: Sequence[str], *, side: str,
                    added: np.ndarray | None) -> EmbeddingParts:
    """``analysis.internals.embedding_parts`` for a Hugging Face model (``model``, an
    ``hf.HFSeq2Seq``; ``vocab`` its tokenizer's table, one for both sides; arguments checked
    there): the scaled token embedding (``embed_tokens`` times the model's ``embed_scale``),
    the position vectors ``added`` ((T, D), ``hf.HFInternals.positional_encoding``; None
    for T5, which adds none: zeros), and their sum. BART then normalises the sum
    (``layernorm_embedding``)."""
    stack = model.hf.get_encoder() if side == "source" else model.hf.get_decoder()
    ids = torch.tensor([vocab.encode(tokens)], dtype=torch.long)  # (1, T)
    T = len(tokens)
    scale = 1.0 if hasattr(stack.embed_tokens, "embed_scale") else getattr(stack, "embed_scale",
                                                                            1.0)
    with torch.inference_mode():
        emb = stack.embed_tokens(ids)[0] * scale  # (T, D)
    if added is None:
        added, positions = np.zeros_like(to_numpy(emb)), None
    else:
        positions = np.arange(T, dtype=np.int64)
    embedding = to_numpy(emb)
    return EmbeddingParts(side=side, positional_mode="normal", tokens=tuple(tokens),
                          ids=ids[0].numpy().copy(), positions=positions, embedding=embedding,
                          positional=added, total=embedding + added)
