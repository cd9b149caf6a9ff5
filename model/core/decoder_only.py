"""The decoder-only Transformer: one stack of masked self-attention and feed-forward layers
over one sequence, with no encoder and no cross-attention (GPT: Radford et al., 2018,
"Improving Language Understanding by Generative Pre-Training", and 2019, "Language Models
are Unsupervised Multitask Learners"). As a prefix language model for translation-like tasks
(Liu et al., 2018, "Generating Wikipedia by Summarizing Long Sequences", section 4.2) the
sequence is the source, a separator, then the target: the prompt's S tokens take the
encoder's role, and the target's tokens read them through the same self-attention that
reads the earlier target tokens.

It is built from the encoder-decoder's parts (``layers.py``): the scaled embedding, the
sinusoidal positions, and ``EncoderLayer`` run with the causal mask of ``masks.py`` and a
key/value cache, so one block is the encoder-decoder's decoder layer without its
cross-attention.

Shape letters: B batch, N = S + T positions of the one sequence (with a cache: N new
positions after N_past cached ones, N_all = N_past + N), L layers, H heads, Dh per-head
width, D d_model, V vocabulary size. Masks are boolean, True = blocked.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F

from .config import DecoderOnlyConfig
from .layers import EncoderLayerOutput, LayerCache, PositionalEncoding
from .layers import reorder_cache as _reorder_cache
from .masks import subsequent_mask
from .transformer import Embedding, init_parameters, self_attention_stack


@dataclass(frozen=True)
class DecoderOnlyOutput:
    """Named as in Hugging Face's outputs (``decoder_attentions``, ``past_key_values``).

    Attributes:
        logits: (B, N, V); position i predicts token i + 1.
        decoder_attentions: one (B, H, N, N_all) tensor per layer (``torch.stack`` gives
            (L, B, H, N, N_all)); rows sum to 1, cells above the causal diagonal and padded
            keys are exactly 0.
        decoder_scores: per layer (B, H, N, N_all) scaled pre-softmax scores, or None.
        past_key_values: per layer a ``LayerCache`` (``cross_kv`` None) covering every
            position so far, to pass to the next call.
        layers: with ``return_layers``, each layer's ``EncoderLayerOutput`` (its
            self-attention's input, and with ``return_scores`` the per-head contexts).
    """

    logits: torch.Tensor
    decoder_attentions: tuple[torch.Tensor, ...]
    decoder_scores: tuple[torch.Tensor, ...] | None = None
    past_key_values: tuple[LayerCache, ...] | None = None
    layers: tuple[EncoderLayerOutput, ...] | None = None


def _checked_input(ids: torch.Tensor | None, inputs_embeds: torch.Tensor | None
                   ) -> torch.Tensor:
    """What ``DecoderOnlyTransformer.forward`` reads the sequence from: ``inputs_embeds``
    (B, N, D) when given, else ``ids`` (B, N).

    Raises:
        ValueError: neither of those shapes.
    """
    if inputs_embeds is not None:
        if inputs_embeds.dim() != 3:
            raise ValueError(f"inputs_embeds must be (B, N, D), got {tuple(inputs_embeds.shape)}")
        return inputs_embeds
    if ids is None or ids.dim() != 2:
        raise ValueError(f"ids must be (B, N), got {None if ids is None else tuple(ids.shape)}")
    return ids


class DecoderOnlyTransformer(nn.Module):
    """Decoder-only Transformer: token embedding (scaled by sqrt(D)) + sinusoidal positions,
    L layers of causal self-attention + feed-forward, a final LayerNorm (pre-LN only), and
    the LM head: the embedding's transpose when ``tie_word_embeddings`` (Vaswani et al.,
    2017, section 3.4; GPT-2), else its own bias-free Linear.

    Holds weights only: ``forward`` is a pure function of its inputs (under ``eval()``), so
    one instance may be shared across threads under ``torch.inference_mode()``.
    """

    def __init__(self, config: DecoderOnlyConfig) -> None:
        super().__init__()
        c = config
        self.config = c
        self.embed = Embedding(c.vocab_size, c.d_model, c.pad_id)
        self.positional = PositionalEncoding(c.d_model, c.max_len, c.dropout)
        self.layers = self_attention_stack(c, c.num_layers)
        # Pre-LN stacks need a final LayerNorm (GPT-2, section 2.3); post-LN outputs are
        # already normalised.
        self.norm = nn.LayerNorm(c.d_model) if c.norm_first else nn.Identity()
        self.lm_head = (None if c.tie_word_embeddings
                        else nn.Linear(c.d_model, c.vocab_size, bias=False))
        init_parameters(self, (self.embed.lut,), c.pad_id)

    def forward(
        self,
        ids: torch.Tensor | None,
        key_padding_mask: torch.Tensor | None = None,
        *,
        past_key_values: tuple[LayerCache, ...] | None = None,
        return_scores: bool = False,
        return_layers: bool = False,
        pe_table: torch.Tensor | None = None,
        inputs_embeds: torch.Tensor | None = None,
        logits_to_keep: int = 0,
        position_ids: torch.Tensor | None = None,
    ) -> DecoderOnlyOutput:
        """Run the stack over one sequence per row, every position looking only back.

        Without a cache, all N positions at once; with the previous call's
        ``past_key_values``, only the N new ones, which attend to the cached ones (equal to
        the full pass's last rows). A fully blocked query gets all-zero weights, not NaN.

        Args:
            ids: (B, N) int64 token ids (None with ``inputs_embeds``).
            key_padding_mask: (B, N_all) bool, True = blocked key (``<pad>``; build it with
                ``masks.padding_mask(ids, pad_id)``), cached positions first; None = none.
            past_key_values: ``DecoderOnlyOutput.past_key_values`` of the previous call.
            return_scores, return_layers: also keep each layer's pre-softmax scores and
                per-head contexts, each layer's ``EncoderLayerOutput``.
            pe_table: (P, D) positional encodings, row p at position p; None = the table.
            inputs_embeds: (B, N, D) scaled token embeddings instead of ``embed(ids)``.
            logits_to_keep: only the last K positions' logits (B, K, V); 0 = all N (HF's
                argument: a prefix LM's loss scores only the continuation).
            position_ids: (B, N) int64 each row's positions (HF's name; a padded batch's,
                ``masks.position_ids_past_padding``); None = past..past+N-1.

        Returns:
            DecoderOnlyOutput: logits (B, N, V) (K with ``logits_to_keep``), per-layer
            attentions (B, H, N, N_all), the cache covering N_all positions.

        Raises:
            ValueError: ``ids`` not (B, N); a bad ``key_padding_mask``; N_all > max_len.
        """
        given = _checked_input(ids, inputs_embeds)  # (B, N) ids or (B, N, D) embeddings
        past = 0 if past_key_values is None else past_key_values[0].self_kv[0].size(2)
        causal = subsequent_mask(given.size(1), given.device, past)  # (N, N_all) True = ahead
        emb = self.embed(ids) if inputs_embeds is None else inputs_embeds  # (B, N, D)
        x = self.positional(emb, past, pe_table, position_ids)  # (B, N, D)
        outs = []
        for i, layer in enumerate(self.layers):
            cache = past_key_values[i].self_kv if past_key_values is not None else None
            outs.append(layer(x, key_padding_mask, attn_mask=causal,
                              return_scores=return_scores, past_key_value=cache))
            x = outs[-1].output  # (B, N, D)
        h = self.norm(x[:, -logits_to_keep:])  # (B, N, D) or (B, K, D)
        logits = self.lm_head(h) if self.lm_head is not None else F.linear(
            h, self.embed.lut.weight)  # (B, N, V)
        return DecoderOnlyOutput(
            logits, tuple(o.self_attention.weights for o in outs),
            tuple(o.self_attention.scores for o in outs) if return_scores else None,
            tuple(LayerCache(o.self_attention.key_value) for o in outs),
            tuple(outs) if return_layers else None,
        )

    @staticmethod
    def reorder_cache(cache: tuple[LayerCache, ...], index: torch.Tensor
                      ) -> tuple[LayerCache, ...]:
        """Select (and duplicate) rows of the cache along the batch axis, as beam search does
        when it keeps beams ``index`` (n,) int64; returns a new cache."""
        return _reorder_cache(cache, index)

    def attention(self, kind: str, layer: int):
        """The self-attention module of ``layer`` and the names of its query, key and value
        projections (as ``Transformer.attention``).

        Raises:
            ValueError: ``kind`` is not ``"decoder"`` (there is no encoder and no
                cross-attention).
        """
        if kind != "decoder":
            raise ValueError(f"a decoder-only model has only 'decoder' attention, got {kind!r}")
        return self.layers[layer].self_attn, ("q_proj", "k_proj", "v_proj")

    def num_parameters(self) -> int:
        """Number of trainable parameters (the sinusoidal table is not one; a tied LM head
        adds none)."""
        return sum(p.numel() for p in self.parameters() if p.requires_grad)
