"""How much each head matters: Michel et al.'s head importance (NeurIPS 2019).

Head importance is their proxy (section 4.1): I_h = E_x |dL(x)/dxi_h| at xi = 1, the
expected absolute gradient of the teacher-forced loss with respect to the head's gate
(``backends.heads.gated_heads``: the gate multiplies head h's slice of the heads'
concatenation before W_O), over sentence pairs x.

Shape letters: B batch, T decoder inputs, S source length, L layers, H heads, V target
vocabulary size. A head is named by its key (kind, layer, head).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import torch
import torch.nn.functional as F

from ..backends.heads import HeadKey, gated_heads
from ..core.config import ATTENTION_KINDS, layer_counts


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
    keys = [(float(v[layer, head]), ATTENTION_KINDS.index(kind), layer, head, kind)
            for kind, v in importance.items()
            for layer in range(v.shape[0]) for head in range(v.shape[1])]
    return [(kind, layer, head) for _, _, layer, head, kind in sorted(keys)]
