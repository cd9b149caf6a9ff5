"""What each sublayer of the encoder adds to each token's vector.

Each encoder layer has two sublayers, self-attention and the position-wise feed-forward
network, each wrapped in a residual connection and layer normalisation (paper, sections
3.1 and 3.3): post-LN ``LayerNorm(x + Sublayer(x))``, or pre-LN ``x + Sublayer(LayerNorm(x))``.
The size of what a sublayer adds, ``||Sublayer(.)||``, next to the size of the residual
stream ``||x||`` it is added to, says how much that sublayer changes the token there
(Kobayashi et al., "Attention is Not Only a Weight: Analyzing Transformers with Vector
Norms", EMNLP 2020, measure attention by such norms).

Shape letters: L encoder layers, S source tokens, D d_model.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from .masks import padding_mask


@dataclass(frozen=True)
class SublayerNorms:
    """Per encoder layer and source token, float64 L2 norms (same units as the vectors):

    Attributes:
        stream: (L, S) ``||x||``, the residual stream entering the layer.
        attention: (L, S) ``||SelfAttention(.)||``, what the attention sublayer adds.
        feed_forward: (L, S) ``||FFN(.)||``, what the feed-forward sublayer adds.
        outputs: (L, S, D) float32 each layer's output, as ``Transformer.encode`` computes it.
    """

    stream: np.ndarray
    attention: np.ndarray
    feed_forward: np.ndarray
    outputs: np.ndarray


def _norms(x: torch.Tensor) -> np.ndarray:
    """(1, S, D) -> (S,) float64 L2 norms."""
    return torch.linalg.vector_norm(x[0].double(), dim=-1).numpy()


def encoder_sublayer_norms(model, src_ids: torch.Tensor, pe_table: torch.Tensor | None = None
                           ) -> SublayerNorms:
    """Run the encoder of ``model`` (a ``model.core.transformer.Transformer`` in eval mode)
    sublayer by sublayer with its own modules, keeping what each one adds.

    Args:
        src_ids: (1, S) int64 source ids.
        pe_table: (P >= S, D) positional encodings instead of the sinusoidal table, as
            ``Transformer.encode``; None: the normal table.

    Returns:
        SublayerNorms of the S tokens.

    Raises:
        ValueError: ``src_ids`` is not one sentence (1, S).
    """
    if src_ids.dim() != 2 or src_ids.size(0) != 1:
        raise ValueError(f"src_ids must be (1, S), got shape {tuple(src_ids.shape)}")
    key_padding_mask = padding_mask(src_ids, model.config.pad_id)  # (1, S) True = <pad>
    stream, attention, feed_forward, outputs = [], [], [], []
    with torch.inference_mode():
        x = model.positional(model.src_embed(src_ids), pe_table=pe_table)  # (1, S, D)
        for layer in model.encoder_layers:
            first, second = layer.sublayer1, layer.sublayer2
            pre_ln = first.norm_first
            q = first.norm(x) if pre_ln else x  # (1, S, D) what self-attention reads
            a = layer.self_attn(q, q, q, key_padding_mask=key_padding_mask).output  # (1, S, D)
            h = x + a if pre_ln else first.norm(x + a)  # (1, S, D)
            f = layer.feed_forward(second.norm(h) if pre_ln else h)  # (1, S, D)
            out = h + f if pre_ln else second.norm(h + f)  # (1, S, D)
            stream.append(_norms(x))
            attention.append(_norms(a))
            feed_forward.append(_norms(f))
            outputs.append(out[0].float().numpy())
            x = out
    return SublayerNorms(np.stack(stream), np.stack(attention), np.stack(feed_forward),
                         np.stack(outputs))
