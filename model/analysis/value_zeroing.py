"""Value zeroing for the encoder-decoder (Mohebbi et al. 2023, "Quantifying Context Mixing in
Transformers"), written here for our Transformer and our decoder-only model (its prompt in
place of the source), and, through hooks, for Hugging Face encoder-decoders and causal
language models:
how much decoder layer l's output at step t changes when one token's value vectors are zeroed
in that layer, in every head.

- **cross**: source token j's value vectors zeroed in the cross-attention;
- **decoder**: decoder position j's value vectors zeroed in the masked self-attention (only
  j <= t can matter; the look-ahead mask hides the rest, whose scores are 0).

The score is the cosine distance between the layer's output with and without the zeroing,
with the layer's input left as it was (the paper's per-layer definition; attention weights are
not changed, only what they average). ``ValueZeroing.normalised`` divides each step's scores
by their sum over the source tokens and the decoder positions together, so a row is a share
of the step's context mixing, and ``source_share`` is the part that came from the sentence
(as ALTI+ reports, Ferrando et al. 2022).

Shape letters: S source tokens, T decoder steps, L decoder layers.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from ..backends.hf_causal import HFCausal
from ..backends.one_stack import OneStack
from ..core.decoder_only import DecoderOnlyTransformer
from ..core.masks import decoder_self_attention_mask, subsequent_mask
from ..core.transformer import Transformer


@dataclass(frozen=True)
class ValueZeroing:
    """The scores of one decoding.

    Attributes:
        cross: (L, T, S) cosine distances, source tokens' values zeroed.
        decoder: (L, T, T) cosine distances, decoder positions' values zeroed; 0 above the
            diagonal.
    """

    cross: np.ndarray
    decoder: np.ndarray

    def normalised(self) -> tuple[np.ndarray, np.ndarray]:
        """(cross (L, T, S), decoder (L, T, T)) each row divided by the sum of both parts'
        row (a row of zeros stays zero)."""
        total = self.cross.sum(-1, keepdims=True) + self.decoder.sum(-1, keepdims=True)
        total = np.where(total > 0, total, 1.0)
        return self.cross / total, self.decoder / total

    def source_share(self) -> np.ndarray:
        """(L, T) the share of each step's normalised scores on the source tokens."""
        return self.normalised()[0].sum(-1)


def _distance(base: torch.Tensor, changed: torch.Tensor) -> torch.Tensor:
    """1 - cos(base[t], changed[j, t]) for (T, D) ``base`` and (J, T, D) ``changed``:
    (J, T), clipped at 0."""
    return (1.0 - F.cosine_similarity(changed, base.unsqueeze(0), dim=-1)).clamp_min(0.0)


def value_zeroing(model, src_ids: torch.Tensor, tgt_ids: torch.Tensor) -> ValueZeroing:
    """Value zeroing of one sentence and its decoder inputs (no padding).

    Args:
        model: our Transformer, our decoder-only model (``OneStack``: ``_one_stack``), or
            a Hugging Face ``HFSeq2Seq`` or ``HFCausal`` (its layers' value projections
            zeroed by hooks, ``backends.hf_attribution``), in ``eval()`` mode.
        src_ids: (S,) int64 the source ids, ``</s>`` included (one stack: the prompt
            before ``<sep>``).
        tgt_ids: (T,) int64 the decoder inputs, ``<s>`` first (one stack: ``<sep>``).

    Returns:
        ``ValueZeroing`` with cross (L, T, S) and decoder (L, T, T) float32.

    Raises:
        ValueError: ids that are not 1-D, or empty.
    """
    if src_ids.dim() != 1 or tgt_ids.dim() != 1 or not len(src_ids) or not len(tgt_ids):
        raise ValueError(f"expected 1-D, non-empty ids, got {tuple(src_ids.shape)} and "
                         f"{tuple(tgt_ids.shape)}")
    if isinstance(model, OneStack):
        return _one_stack_scores(_one_stack(model.model, src_ids, tgt_ids), len(src_ids))
    if isinstance(model, HFCausal):
        from ..backends.hf_attribution import zeroed_one_stack_outputs

        ids = torch.cat([src_ids, tgt_ids])  # (N,) the one sequence
        return _one_stack_scores(zeroed_one_stack_outputs(model, ids), len(src_ids))
    if not isinstance(model, Transformer):
        from ..backends.hf_attribution import zeroed_layer_outputs

        scores = [(_distance(base, out_s).T, torch.tril(_distance(base, out_t).T))
                  for base, out_s, out_t in zeroed_layer_outputs(model, src_ids, tgt_ids)]
        return ValueZeroing(torch.stack([c for c, _ in scores]).float().numpy(),
                            torch.stack([d for _, d in scores]).float().numpy())
    S, T = len(src_ids), len(tgt_ids)
    cross, decoder = [], []
    with torch.inference_mode():
        enc = model.encode(src_ids[None])
        memory, pad = enc.memory, enc.key_padding_mask  # (1, S, D), (1, S)
        self_mask = decoder_self_attention_mask(tgt_ids[None], model.config.pad_id)[0]  # (T, T)
        x = model.positional(model.tgt_embed(tgt_ids[None]))  # (1, T, D)
        for layer in model.decoder_layers:
            base = layer(x, memory, self_mask, pad).output[0]  # (T, D)
            zero_src = torch.eye(S, dtype=torch.bool)  # (S, S): batch row j zeroes token j
            out = layer(x.expand(S, T, -1), memory.expand(S, S, -1), self_mask,
                        pad.expand(S, S), zero_cross_values=zero_src).output  # (S, T, D)
            cross.append(_distance(base, out).T)  # (T, S)
            zero_tgt = torch.eye(T, dtype=torch.bool)  # (T, T): batch row j zeroes position j
            out = layer(x.expand(T, T, -1), memory.expand(T, S, -1), self_mask,
                        pad.expand(T, S), zero_self_values=zero_tgt).output  # (T, T, D)
            decoder.append(torch.tril(_distance(base, out).T))  # (T, T): j <= t only
            x = base[None]  # the next layer's input, as it was (1, T, D)
    return ValueZeroing(torch.stack(cross).float().numpy(), torch.stack(decoder).float().numpy())


def _one_stack(stack: DecoderOnlyTransformer, src_ids: torch.Tensor, tgt_ids: torch.Tensor
               ) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
    """Our decoder-only stack over its one sequence, prompt (S) then decoder inputs (T),
    N = S + T: per layer, its output (N, D) in the unchanged pass and (N, N, D) with batch
    row j's position j's value vectors zeroed in every head (the layer's input as it was)."""
    N = len(src_ids) + len(tgt_ids)
    with torch.inference_mode():
        causal = subsequent_mask(N)  # (N, N) True = ahead
        x = stack.positional(stack.embed(torch.cat([src_ids, tgt_ids])[None]))  # (1, N, D)
        zero = torch.eye(N, dtype=torch.bool)  # (N, N): batch row j zeroes position j
        for layer in stack.layers:
            base = layer(x, attn_mask=causal).output[0]  # (N, D)
            yield base, layer(x.expand(N, N, -1), attn_mask=causal, zero_values=zero).output
            x = base[None]  # the next layer's input, as it was (1, N, D)


def _one_stack_scores(layers: Iterable[tuple[torch.Tensor, torch.Tensor]], S: int
                      ) -> ValueZeroing:
    """``ValueZeroing`` of a one stack from each layer's (base (N, D), zeroed (N, N, D))
    outputs: each decoder input's (the positions after the S prompt tokens) distance from
    the unchanged pass; the prompt's columns are where cross-attention went (``cross``
    (L, T, S)), the rest the tokens written (``decoder`` (L, T, T), 0 above the diagonal)."""
    cross, decoder = [], []
    for base, out in layers:
        d = _distance(base[S:], out[:, S:])  # (N, T): position j zeroed, decoder row t
        cross.append(d[:S].T)  # (T, S)
        decoder.append(torch.tril(d[S:].T))  # (T, T): j <= t only
    return ValueZeroing(torch.stack(cross).float().numpy(), torch.stack(decoder).float().numpy())
