"""Switching heads off (Michel et al., 2019), for either backend, without changing the
shared model.

A multi-head attention layer concatenates its H heads' outputs and projects them with W_O:
``MultiHead(Q, K, V) = Concat(head_1, .., head_H) W_O`` (Vaswani et al., 2017, section
3.2.2). Switching head h off multiplies its slice of the concatenation by a gate
xi_h = 0 before W_O, as Michel, Levy and Neubig, "Are Sixteen Heads Really Better than
One?" (NeurIPS 2019, section 2) mask heads. The head's attention weights are still computed
(and shown); what it passes on is zero.

Both backends are changed only through forward pre-hooks on the output projection (our
``out_proj``; Hugging Face's ``out_proj``, ``o`` in T5, ``o_proj`` in Llama-like causal
models, ``c_proj`` in GPT-2), registered for one call and
acting only on passes made by the thread that registered them: the model, shared by every
session, keeps no state, and another session's pass at the same time is untouched.

Shape letters: B batch, T decoder inputs, H heads, Dh the per-head width. A head is named
by its key (kind, layer, head), kind one of ``ATTENTION_KINDS``.
"""

from __future__ import annotations

import threading
from collections.abc import Collection
from contextlib import contextmanager

import numpy as np
import torch

from ..core.config import ATTENTION_KINDS, layer_counts
from ..errors import InputError

HeadKey = tuple[str, int, int]  # (kind, layer, head)


def check_heads(heads: Collection, config) -> tuple[HeadKey, ...]:
    """``heads`` as sorted (kind, layer, head) keys, each checked against ``config``.

    Raises:
        InputError: a key that is not a (kind, layer, head) triple, an unknown kind, a
            kind the model does not have (a decoder-only model's are all ``"decoder"``), or a
            layer or head outside the model.
    """
    counts, keys = layer_counts(config), set()
    for key in heads:
        if not (isinstance(key, tuple | list) and len(key) == 3):
            raise InputError(f"A head is (kind, layer, head), got {key!r}.")
        kind, layer, head = key
        if kind not in ATTENTION_KINDS:
            raise InputError(f"A head's kind is one of {ATTENTION_KINDS}, got {kind!r}.")
        if not counts[kind]:
            raise InputError(f"This model has no {kind} attention (one stack: its heads are "
                             f"all 'decoder').")
        for name, value, n in (("layer", layer, counts[kind]), ("head", head, config.nhead)):
            if isinstance(value, bool) or not isinstance(value, int | np.integer) or not (
                    0 <= value < n):
                raise InputError(f"{kind} {name} {value!r} is outside 0..{n - 1}.")
        keys.add((kind, int(layer), int(head)))
    return tuple(sorted(keys))


OUTPUT_PROJECTIONS = ("out_proj", "o_proj", "c_proj", "o")  # W_O's name, first found


def output_projection(backend, kind: str, layer: int) -> torch.nn.Module:
    """W_O of the attention of ``kind`` in ``layer``: the linear map whose input is the
    (B, T, H * Dh) concatenation of the heads (our ``out_proj``; Hugging Face's
    ``out_proj``, Llama-like ``o_proj``, GPT-2's ``c_proj`` (a ``Conv1D``), T5's ``o``)."""
    module, _ = backend.attention(kind, layer)
    return getattr(module, next(n for n in OUTPUT_PROJECTIONS if hasattr(module, n)))


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
