"""Switching heads off, and how much each head matters (Michel et al., 2019).

A multi-head attention layer concatenates its H heads' outputs and projects them with W_O:
``MultiHead(Q, K, V) = Concat(head_1, .., head_H) W_O`` (Vaswani et al., 2017, section
3.2.2). Switching head h off multiplies its slice of the concatenation by a gate
xi_h = 0 before W_O, as Michel, Levy and Neubig, "Are Sixteen Heads Really Better than
One?" (NeurIPS 2019, section 2) mask heads. The head's attention weights are still computed
(and shown); what it passes on is zero.

Both backends are changed only through forward pre-hooks on the output projection (our
``out_proj``; Hugging Face's ``out_proj``, or ``o`` in T5), registered for one call and
acting only on passes made by the thread that registered them: the model, shared by every
session, keeps no state, and another session's pass at the same time is untouched.

Head importance is Michel et al.'s proxy (section 4.1): I_h = E_x |dL(x)/dxi_h| at
xi = 1, the expected absolute gradient of the teacher-forced loss with respect to the
head's gate, over sentence pairs x.

Shape letters: B batch, T decoder inputs, S source length, L layers, H heads, D d_model,
Dh = D / H. A head is named by its key (kind, layer, head), kind one of ``KINDS``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection, Sequence
from contextlib import contextmanager

import numpy as np
import torch
import torch.nn.functional as F

from .errors import InputError
from .internals import ATTENTION_KINDS as KINDS  # encoder self-, decoder self-, cross-attention

HeadKey = tuple[str, int, int]  # (kind, layer, head)


def layer_counts(config) -> dict[str, int]:
    """Layers per attention kind of a ``TransformerConfig``."""
    return {"encoder": config.num_encoder_layers, "decoder": config.num_decoder_layers,
            "cross": config.num_decoder_layers}


def check_heads(heads: Collection, config) -> tuple[HeadKey, ...]:
    """``heads`` as sorted (kind, layer, head) keys, each checked against ``config``.

    Raises:
        InputError: a key that is not a (kind, layer, head) triple, an unknown kind, or a
            layer or head outside the model.
    """
    counts, keys = layer_counts(config), set()
    for key in heads:
        if not (isinstance(key, tuple | list) and len(key) == 3):
            raise InputError(f"A head is (kind, layer, head), got {key!r}.")
        kind, layer, head = key
        if kind not in KINDS:
            raise InputError(f"A head's kind is one of {KINDS}, got {kind!r}.")
        for name, value, n in (("layer", layer, counts[kind]), ("head", head, config.nhead)):
            if isinstance(value, bool) or not isinstance(value, int | np.integer) or not (
                    0 <= value < n):
                raise InputError(f"{kind} {name} {value!r} is outside 0..{n - 1}.")
        keys.add((kind, int(layer), int(head)))
    return tuple(sorted(keys))


def output_projection(backend, kind: str, layer: int) -> torch.nn.Linear:
    """W_O of the attention of ``kind`` in ``layer``: the linear map whose input is the
    (B, T, H * Dh) concatenation of the heads (our ``out_proj``; Hugging Face's
    ``out_proj``, T5's ``o``)."""
    module, _ = backend.attention(kind, layer)
    return module.out_proj if hasattr(module, "out_proj") else module.o


@contextmanager
def gated_heads(backend, gates: dict[tuple[str, int], torch.Tensor], nhead: int):
    """Multiply each head's slice of the heads' concatenation by a gate, for passes made by
    this thread during the ``with`` block.

    Args:
        backend: our ``Transformer`` or ``hf.HFSeq2Seq`` (anything with ``attention``).
        gates: (kind, layer) -> (H,) gate values; 1 keeps a head, 0 switches it off; a
            tensor that requires grad makes the output differentiable in the gates.
        nhead: H.
    """
    me = threading.get_ident()

    def hook_for(gate: torch.Tensor):
        def hook(module, args):
            if threading.get_ident() != me:
                return None
            x = args[0]  # (B, T, H * Dh)
            B, T, width = x.shape
            x = (x.view(B, T, nhead, width // nhead) * gate[:, None]).view(B, T, width)
            return (x, *args[1:])
        return hook

    handles = [output_projection(backend, kind, layer).register_forward_pre_hook(hook_for(g))
               for (kind, layer), g in gates.items()]
    try:
        yield
    finally:
        for h in handles:
            h.remove()


@contextmanager
def heads_off(backend, heads: Collection[HeadKey], nhead: int):
    """Switch ``heads`` off (their gates xi_h = 0) for this thread's passes in the block.

    Args:
        heads: checked (kind, layer, head) keys (``check_heads``).
    """
    gates: dict[tuple[str, int], torch.Tensor] = {}
    for kind, layer, head in heads:
        gates.setdefault((kind, layer), torch.ones(nhead))[head] = 0.0
    with gated_heads(backend, gates, nhead):
        yield


def head_importance(backend, config, pairs: Sequence[tuple[torch.Tensor, torch.Tensor]],
                    progress: Callable[[int, int], None] | None = None
                    ) -> dict[str, np.ndarray]:
    """Michel et al.'s head importance over sentence pairs.

    I_h = mean over pairs of |dL/dxi_h| at xi = 1, where L is the pair's teacher-forced
    cross-entropy (summed over its target tokens, as their section 4.1 uses the loss of one
    example) and xi_h the gate of head h (``gated_heads``). Only the gates get gradients;
    the shared model's parameters are neither changed nor given ``.grad``.

    Args:
        backend: our ``Transformer`` or ``hf.HFSeq2Seq``.
        config: its ``TransformerConfig`` (layer counts, H, ``bos_id``).
        pairs: (src_ids (1, S), tgt_ids (1, T + 1)) tensors: the source and the target
            starting with the decoder start token and ending with ``</s>``.
        progress: called as ``progress(i, n)`` after each pair.

    Returns:
        kind -> (L, H) float64 importance (>= 0).

    Raises:
        ValueError: no pairs, or a target shorter than two tokens.
    """
    if not pairs:
        raise ValueError("head_importance needs at least one sentence pair.")
    counts = layer_counts(config)
    total = {k: np.zeros((n, config.nhead)) for k, n in counts.items()}
    for i, (src_ids, tgt_ids) in enumerate(pairs):
        if tgt_ids.size(1) < 2:
            raise ValueError("A target needs its start token and at least one token more.")
        gates = {(k, layer): torch.ones(config.nhead, requires_grad=True)
                 for k, n in counts.items() for layer in range(n)}
        with torch.enable_grad(), gated_heads(backend, gates, config.nhead):
            enc = backend.encode(src_ids)
            out = backend.decode(tgt_ids[:, :-1], enc.memory, enc.key_padding_mask)
            logits = out.logits[0]  # (T, V): position t predicts token t + 1
            loss = F.cross_entropy(logits.float(), tgt_ids[0, 1:], reduction="sum")
            grads = torch.autograd.grad(loss, list(gates.values()))
        for (kind, layer), g in zip(gates, grads, strict=True):
            total[kind][layer] += g.abs().double().numpy()
        if progress is not None:
            progress(i + 1, len(pairs))
    return {k: v / len(pairs) for k, v in total.items()}


def pruning_order(importance: dict[str, np.ndarray]) -> list[HeadKey]:
    """Every head, least important first (ties by kind, layer, head): the order in which
    Michel et al. (section 4.2) prune."""
    keys = [(float(v[layer, head]), KINDS.index(kind), layer, head, kind)
            for kind, v in importance.items()
            for layer in range(v.shape[0]) for head in range(v.shape[1])]
    return [(kind, layer, head) for _, _, layer, head, kind in sorted(keys)]
