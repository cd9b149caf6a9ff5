"""Inside one head, and the embeddings, of a Hugging Face model (``model.hf``).

The query, key and value projections' inputs and outputs are taken by forward hooks during
one teacher-forced pass (``output_attentions=True``, eager attention); the scores, mask,
softmax and weighted sum are then recomputed from them and equal the model's own weights
(tests check 1e-5). The hooks only record calls made by the thread that registered them
and are removed before returning, so the shared model keeps no state from a request and
other sessions' passes are never recorded.

Each family's score: Marian, BART, M2M100: Q K^T / sqrt(Dh) (Vaswani et al., 2017);
T5: Q K^T + B with no scaling, B a learned bias per head and relative-distance bucket
(Raffel et al., 2020, section 2.1), in self-attention only.

Shape letters: S source length, T decoder inputs, Tq / Tk query / key length, D d_model,
Dh head width. Masks are boolean, True = blocked.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

import numpy as np
import torch

from .layers import masked_softmax

if TYPE_CHECKING:
    from .decoding import DecodeTrace
    from .hf import HFTranslator
    from .internals import EmbeddingParts, HeadInternals


@contextmanager
def recording(modules: dict[str, torch.nn.Module]):
    """Record each module's (input, output) during the ``with`` block, for calls made by
    this thread only; yields the dict name -> (input (B, T, D_in), output (B, T, D_out))."""
    seen: dict[str, tuple[torch.Tensor, torch.Tensor]] = {}
    me = threading.get_ident()

    def hook_for(name: str):
        def hook(module, args, output):
            if threading.get_ident() == me:
                seen[name] = (args[0].detach(), output.detach())
        return hook

    handles = [m.register_forward_hook(hook_for(n)) for n, m in modules.items()]
    try:
        yield seen
    finally:
        for h in handles:
            h.remove()


def head_internals(translator: HFTranslator, trace: DecodeTrace, kind: str, layer: int,
                   head: int, rows: slice) -> HeadInternals:
    """``internals.head_internals`` for a Hugging Face model (arguments checked there;
    ``rows`` selects the query rows)."""
    from .internals import HeadInternals, _numpy

    model = translator.model
    src_tokens, dec_tokens = tuple(trace.src_tokens), tuple(trace.decoder_input_tokens)
    src_ids = torch.tensor([translator.src_vocab.encode(src_tokens)])  # (1, S)
    tgt_ids = torch.tensor([translator.tgt_vocab.encode(dec_tokens)])  # (1, T)
    module, names = model.attention(kind, layer)
    q_lin, k_lin, v_lin = (getattr(module, n) for n in names)
    H = translator.config.nhead
    Dh = q_lin.out_features // H
    cols = slice(head * Dh, (head + 1) * Dh)  # this head's slice of the projections
    with torch.inference_mode():
        with recording({"q": q_lin, "k": k_lin, "v": v_lin}) as seen:
            model.hf(input_ids=src_ids, decoder_input_ids=tgt_ids, output_attentions=True,
                     use_cache=False, return_dict=True)
        x_q, q_all = (x[0] for x in seen["q"])  # (Tq, D), (Tq, H * Dh)
        x_k, k_all = (x[0] for x in seen["k"])  # (Tk, D), (Tk, H * Dh)
        v_all = seen["v"][1][0]  # (Tk, H * Dh)
        q, k, v = q_all[:, cols], k_all[:, cols], v_all[:, cols]
        raw = q @ k.T  # (Tq, Tk)
        scaling = float(getattr(module, "scaling", Dh ** -0.5))
        bias = None
        if translator.positional_scheme == "relative" and kind != "cross":
            bias = model.attention(kind, 0)[0].compute_bias(raw.size(0), raw.size(1))[0, head]
        scaled = raw * scaling + (0 if bias is None else bias)  # (Tq, Tk)
        views = translator.mask_views(list(src_tokens), list(dec_tokens))
        mask = torch.from_numpy(views[kind])  # (Tq, Tk)
        weights = masked_softmax(scaled, mask)
        output = weights @ v  # (Tq, Dh)
        masked = scaled.masked_fill(mask, float("-inf"))

        def proj(linear: torch.nn.Linear) -> tuple[np.ndarray, np.ndarray]:
            b = linear.bias[cols] if linear.bias is not None else torch.zeros(Dh)
            return _numpy(linear.weight[cols].T), _numpy(b)

        (w_q, b_q), (w_k, b_k), (w_v, b_v) = proj(q_lin), proj(k_lin), proj(v_lin)
    query_tokens = tuple(trace.src_labels) if kind == "encoder" else dec_tokens
    key_tokens = dec_tokens if kind == "decoder" else tuple(trace.src_labels)
    positions = np.arange(len(query_tokens), dtype=np.int64)[rows]
    return HeadInternals(
        kind=kind, layer=layer, head=head,
        query_tokens=tuple(query_tokens[i] for i in positions), key_tokens=key_tokens,
        query_positions=positions, d_k=Dh,
        x_query=_numpy(x_q[rows]), x_key=_numpy(x_k),
        w_q=w_q, w_k=w_k, w_v=w_v, b_q=b_q, b_k=b_k, b_v=b_v,
        q=_numpy(q[rows]), k=_numpy(k), v=_numpy(v),
        raw_scores=_numpy(raw[rows]), scaled_scores=_numpy(scaled[rows]),
        mask=mask[rows].numpy().copy(), masked_scores=_numpy(masked[rows]),
        weights=_numpy(weights[rows]), output=_numpy(output[rows]),
        scaling=scaling, position_bias=None if bias is None else _numpy(bias[rows]),
    )


def embedding_parts(translator: HFTranslator, tokens: Sequence[str], side: str
                    ) -> EmbeddingParts:
    """``internals.embedding_parts`` for a Hugging Face model (arguments checked there):
    the scaled token embedding (``embed_tokens`` times the model's ``embed_scale``), the
    position vectors of ``HFTranslator.positional_encoding`` (zeros for T5, which adds
    none), and their sum. BART then normalises the sum (``layernorm_embedding``)."""
    from .internals import EmbeddingParts, _numpy

    model = translator.model
    stack = model.hf.get_encoder() if side == "source" else model.hf.get_decoder()
    vocab = translator.src_vocab if side == "source" else translator.tgt_vocab
    ids = torch.tensor([vocab.encode(tokens)], dtype=torch.long)  # (1, T)
    T = len(tokens)
    scale = 1.0 if hasattr(stack.embed_tokens, "embed_scale") else getattr(stack, "embed_scale",
                                                                            1.0)
    with torch.inference_mode():
        emb = stack.embed_tokens(ids)[0] * scale  # (T, D)
    if translator.positional_scheme == "relative":
        added, positions = np.zeros_like(_numpy(emb)), None
    else:
        added = translator.positional_encoding(T, side)
        positions = np.arange(T, dtype=np.int64)
    embedding = _numpy(emb)
    return EmbeddingParts(side=side, positional_mode="normal", tokens=tuple(tokens),
                          ids=ids[0].numpy().copy(), positions=positions, embedding=embedding,
                          positional=added, total=embedding + added)
