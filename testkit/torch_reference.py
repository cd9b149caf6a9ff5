"""Our layers' weights copied into ``torch.nn``'s own layers, the reference implementation
the model tests compare against (``nn.MultiheadAttention``, ``nn.TransformerEncoderLayer``,
``nn.TransformerDecoderLayer``): same parameters, so equal outputs to float32 rounding."""

from __future__ import annotations

import torch
from torch import nn


def copy_mha(ours, ref: nn.MultiheadAttention) -> None:
    """Copy a ``model.core.layers.MultiHeadAttention`` (separate q/k/v projections, D x D
    each) into ``ref`` (one packed ``in_proj_weight`` (3D, D) and ``in_proj_bias`` (3D,))."""
    with torch.no_grad():
        ref.in_proj_weight.copy_(torch.cat([ours.q_proj.weight, ours.k_proj.weight,
                                            ours.v_proj.weight]))
        ref.in_proj_bias.copy_(torch.cat([ours.q_proj.bias, ours.k_proj.bias,
                                          ours.v_proj.bias]))
        ref.out_proj.weight.copy_(ours.out_proj.weight)
        ref.out_proj.bias.copy_(ours.out_proj.bias)


def copy_ffn_and_norms(ours, ref, n_norms: int) -> None:
    """Copy an encoder or decoder layer's feed-forward net and its ``n_norms`` sublayers'
    LayerNorms into ``ref``'s ``linear1``, ``linear2`` and ``norm1``..``norm{n_norms}``."""
    with torch.no_grad():
        ref.linear1.load_state_dict(ours.feed_forward.linear1.state_dict())
        ref.linear2.load_state_dict(ours.feed_forward.linear2.state_dict())
        for i in range(1, n_norms + 1):
            getattr(ref, f"norm{i}").load_state_dict(
                getattr(ours, f"sublayer{i}").norm.state_dict())
