"""The encoder-decoder Transformer (Vaswani et al., 2017, figure 1) with ``encode`` and
``decode`` as in the Annotated Transformer, returning every attention map as data.

Shape letters: B batch, S source length, T target length, L layers, H heads, D d_model,
V vocabulary size. Masks are boolean, True = blocked.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn

from .config import TransformerConfig
from .layers import (
    DecoderLayer,
    DecoderLayerOutput,
    EncoderLayer,
    EncoderLayerOutput,
    LayerCache,
    PositionalEncoding,
    reorder_cache,
)
from .masks import decoder_self_attention_mask, padding_mask, subsequent_mask


@dataclass(frozen=True)
class EncoderOutput:
    """memory: (B, S, D) encoder output; attentions: one (B, H, S, S) tensor per layer;
    scores: per-layer (B, H, S, S) scaled pre-softmax scores, or None;
    key_padding_mask: (B, S) bool, True = ``<pad>``; layers: with ``return_layers``, each
    layer's full ``EncoderLayerOutput`` (its attention sublayer's input, and with
    ``return_scores`` the per-head contexts), else None."""

    memory: torch.Tensor
    attentions: tuple[torch.Tensor, ...]
    key_padding_mask: torch.Tensor
    scores: tuple[torch.Tensor, ...] | None = None
    layers: tuple[EncoderLayerOutput, ...] | None = None


@dataclass(frozen=True)
class DecoderOutput:
    """Named as in Hugging Face's ``Seq2SeqLMOutput``. logits: (B, T, V_tgt);
    decoder_attentions: per layer (B, H, T, T_all) where T_all counts cached positions too;
    cross_attentions: per layer (B, H, T, S); scores likewise, or None; past_key_values:
    per layer keys/values up to the last position, to pass to the next call;
    layers: with ``return_layers``, each layer's full ``DecoderLayerOutput`` (the inputs of
    its attention sublayers, and with ``return_scores`` the per-head contexts), else None."""

    logits: torch.Tensor
    decoder_attentions: tuple[torch.Tensor, ...]
    cross_attentions: tuple[torch.Tensor, ...]
    decoder_scores: tuple[torch.Tensor, ...] | None = None
    cross_scores: tuple[torch.Tensor, ...] | None = None
    past_key_values: tuple[LayerCache, ...] | None = None
    layers: tuple[DecoderLayerOutput, ...] | None = None


class Embedding(nn.Module):
    """Token embedding scaled by sqrt(d_model) (paper, section 3.4); ``<pad>`` row is zero."""

    def __init__(self, vocab_size: int, d_model: int, pad_id: int) -> None:
        super().__init__()
        self.lut = nn.Embedding(vocab_size, d_model, padding_idx=pad_id)
        self.scale = math.sqrt(d_model)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        """ids: (B, T) int64 -> (B, T, D) float."""
        return self.lut(ids) * self.scale


def self_attention_stack(config, n: int) -> nn.ModuleList:
    """``n`` ``EncoderLayer``s (self-attention + feed-forward) of ``config``'s geometry
    (``d_model``, ``nhead``, ``dim_feedforward``, ``dropout``, ``norm_first``, ``head_dim``
    of a ``TransformerConfig`` or a ``DecoderOnlyConfig``): the encoder's stack, and with a
    causal mask a decoder-only model's."""
    return nn.ModuleList(
        EncoderLayer(config.d_model, config.nhead, config.dim_feedforward, config.dropout,
                     norm_first=config.norm_first, head_dim=config.head_dim)
        for _ in range(n)
    )


def init_parameters(module: nn.Module, embeddings: tuple[nn.Embedding, ...],
                    pad_id: int) -> None:
    """Our Transformers' initialisation: Xavier-uniform (Glorot and Bengio, 2010) for every
    matrix of ``module``, then N(0, D^-0.5) for each embedding table (D its width, so that the
    sqrt(D)-scaled embeddings have unit variance) with the ``<pad>`` row zero."""
    for p in module.parameters():
        if p.dim() > 1:
            nn.init.xavier_uniform_(p)
    for emb in embeddings:
        nn.init.normal_(emb.weight, std=emb.weight.size(1) ** -0.5)
        with torch.no_grad():
            emb.weight[pad_id].zero_()


class Transformer(nn.Module):
    """Encoder-decoder Transformer. Holds weights only: no per-request state.

    ``encode`` and ``decode`` are pure functions of their inputs (under ``eval()``), so one
    instance may be shared across threads for inference under ``torch.inference_mode()``.
    """

    def __init__(self, config: TransformerConfig) -> None:
        super().__init__()
        c = config
        self.config = c
        self.src_embed = Embedding(c.src_vocab_size, c.d_model, c.pad_id)
        self.tgt_embed = Embedding(c.tgt_vocab_size, c.d_model, c.pad_id)
        self.positional = PositionalEncoding(c.d_model, c.max_len, c.dropout)
        self.encoder_layers = self_attention_stack(c, c.num_encoder_layers)
        self.decoder_layers = nn.ModuleList(
            DecoderLayer(c.d_model, c.nhead, c.dim_feedforward, c.dropout,
                         norm_first=c.norm_first, head_dim=c.head_dim)
            for _ in range(c.num_decoder_layers)
        )
        # Pre-LN stacks need a final LayerNorm; post-LN outputs are already normalised.
        self.encoder_norm = nn.LayerNorm(c.d_model) if c.norm_first else nn.Identity()
        self.decoder_norm = nn.LayerNorm(c.d_model) if c.norm_first else nn.Identity()
        self.generator = nn.Linear(c.d_model, c.tgt_vocab_size)  # the pre-softmax projection
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        init_parameters(self, (self.src_embed.lut, self.tgt_embed.lut), self.config.pad_id)

    def encode(self, src_ids: torch.Tensor, *, return_scores: bool = False,
               return_layers: bool = False, pe_table: torch.Tensor | None = None,
               src_embeds: torch.Tensor | None = None) -> EncoderOutput:
        """Encode a padded batch of source ids.

        A query whose keys are all ``<pad>`` (a source row of nothing but padding) gets
        all-zero attention weights, never NaN (``masked_softmax``).

        Args:
            src_ids: (B, S) int64, padded with ``pad_id`` on the right.
            return_scores: also keep each layer's pre-softmax scores (and per-head contexts).
            return_layers: also keep each layer's ``EncoderLayerOutput``.
            pe_table: (P >= S, D) positional encodings to add instead of the sinusoidal
                table (see ``PositionalEncoding.forward``); None = the normal table.
            src_embeds: (B, S, D) scaled token embeddings to use instead of
                ``src_embed(src_ids)`` (attribution: the input a gradient method varies);
                ``src_ids`` still gives the padding mask.

        Returns:
            EncoderOutput: memory (B, S, D), per-layer attentions (B, H, S, S), the padding
            mask (B, S).
        """
        key_padding_mask = padding_mask(src_ids, self.config.pad_id)  # (B, S)
        emb = self.src_embed(src_ids) if src_embeds is None else src_embeds  # (B, S, D)
        x = self.positional(emb, pe_table=pe_table)  # (B, S, D)
        attentions, scores, layers = [], [], []
        for layer in self.encoder_layers:
            out = layer(x, key_padding_mask, return_scores=return_scores)
            x = out.output
            attentions.append(out.self_attention.weights)
            scores.append(out.self_attention.scores)
            layers.append(out)
        return EncoderOutput(
            self.encoder_norm(x), tuple(attentions), key_padding_mask,
            tuple(scores) if return_scores else None,
            tuple(layers) if return_layers else None,
        )

    def decode(
        self,
        tgt_ids: torch.Tensor,
        memory: torch.Tensor,
        memory_key_padding_mask: torch.Tensor | None = None,
        *,
        return_scores: bool = False,
        past_key_values: tuple[LayerCache, ...] | None = None,
        return_layers: bool = False,
        pe_table: torch.Tensor | None = None,
        tgt_embeds: torch.Tensor | None = None,
    ) -> DecoderOutput:
        """Run the decoder over (shifted) target ids.

        Without a cache, all T positions at once (teacher forcing). With the
        ``past_key_values`` of a previous call, ``tgt_ids`` holds only the new positions (no
        padding), which attend to the cached ones; the result equals the full pass's last
        rows (a test checks 1e-5).
        A query whose keys are all blocked (a target row that starts with ``<pad>``, or a
        source row of nothing but ``<pad>``) gets all-zero weights, never NaN.

        Args:
            tgt_ids: (B, T) int64 decoder inputs starting with ``<s>``, right-padded; or,
                with a cache, the (B, T_new) ids that follow the cached positions.
            memory: (B, S, D) from ``encode``.
            memory_key_padding_mask: (B, S) bool, True = padded source position.
            past_key_values: ``DecoderOutput.past_key_values`` of the previous call, or
                None.
            return_layers: also keep each layer's ``DecoderLayerOutput``.
            pe_table: (P, D) positional encodings to add instead of the sinusoidal table,
                row p at decoder position p (pass the same table at every cached step);
                None = the normal table.
            tgt_embeds: (B, T, D) scaled token embeddings to use instead of
                ``tgt_embed(tgt_ids)`` (attribution); ``tgt_ids`` still gives the masks.

        Returns:
            DecoderOutput with logits (B, T, V_tgt): position t predicts token t + 1; its
            ``past_key_values`` cover every position so far.
        """
        cache = past_key_values
        if cache is None:
            past = 0
            self_mask = decoder_self_attention_mask(tgt_ids, self.config.pad_id)  # (B, T, T)
        else:
            past = cache[0].self_kv[0].size(2)
            self_mask = subsequent_mask(tgt_ids.size(1), tgt_ids.device, past)  # (T, past+T)
        emb = self.tgt_embed(tgt_ids) if tgt_embeds is None else tgt_embeds  # (B, T, D)
        x = self.positional(emb, offset=past, pe_table=pe_table)  # (B, T, D)
        layers = []
        for i, layer in enumerate(self.decoder_layers):
            layers.append(layer(x, memory, self_mask, memory_key_padding_mask,
                                return_scores=return_scores, cache=cache[i] if cache else None))
            x = layers[-1].output
        logits = self.generator(self.decoder_norm(x))  # (B, T, V)
        return _decoder_output(logits, layers, return_scores=return_scores,
                               return_layers=return_layers)

    @staticmethod
    def reorder_cache(cache: tuple[LayerCache, ...], index: torch.Tensor
                      ) -> tuple[LayerCache, ...]:
        """Select (and duplicate) rows of a decoder cache along the batch axis, as beam search
        does when it keeps beams ``index`` (n,) int64; returns a new cache."""
        return reorder_cache(cache, index)

    def forward(self, src_ids: torch.Tensor, tgt_ids: torch.Tensor) -> DecoderOutput:
        """Teacher-forced pass: (B, S) source and (B, T) decoder inputs -> logits (B, T, V)."""
        enc = self.encode(src_ids)
        return self.decode(tgt_ids, enc.memory, enc.key_padding_mask)

    def attention(self, kind: str, layer: int):
        """The attention module of ``kind`` (``encoder``, ``decoder``, ``cross``) in
        ``layer``, and the names of its query, key and value projections (as
        ``hf.HFSeq2Seq.attention``)."""
        if kind == "encoder":
            return self.encoder_layers[layer].self_attn, ("q_proj", "k_proj", "v_proj")
        block = self.decoder_layers[layer]
        return (block.cross_attn if kind == "cross" else block.self_attn,
                ("q_proj", "k_proj", "v_proj"))

    def num_parameters(self) -> int:
        """Number of trainable parameters (the sinusoidal table is not one)."""
        return sum(p.numel() for p in self.parameters() if p.requires_grad)


def _decoder_output(logits: torch.Tensor, layers: list[DecoderLayerOutput], *,
                    return_scores: bool, return_layers: bool) -> DecoderOutput:
    """``Transformer.decode``'s result from the logits (B, T, V) and each layer's output:
    the per-layer weights, the scores when asked for, the cache, and the layers' outputs
    when asked for."""
    return DecoderOutput(
        logits, tuple(o.self_attention.weights for o in layers),
        tuple(o.cross_attention.weights for o in layers),
        tuple(o.self_attention.scores for o in layers) if return_scores else None,
        tuple(o.cross_attention.scores for o in layers) if return_scores else None,
        tuple(o.cache for o in layers),
        tuple(layers) if return_layers else None,
    )
