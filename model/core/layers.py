"""The Transformer's building blocks, written from "Attention Is All You Need" (Vaswani et
al., 2017). Every module returns what it computed, attention weights included, as a frozen
dataclass; nothing is stashed on the module, so one model can serve many callers at once.

Shape letters: B batch, Tq query length, Tk key length, T sequence length, D d_model,
H heads, Dh = D / H. Masks are boolean, True = blocked (torch.nn.MultiheadAttention's
convention).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F


def sinusoidal_table(max_len: int, d_model: int) -> torch.Tensor:
    """Sinusoidal positional encodings (paper, section 3.5).

    PE(pos, 2i) = sin(pos / 10000^(2i / d_model)),  PE(pos, 2i+1) = cos(pos / 10000^(2i / d_model)).

    Args:
        max_len: number of positions, T.
        d_model: D, must be even.

    Returns:
        (T, D) float32 table; row ``pos`` is the encoding added at position ``pos``.

    Raises:
        ValueError: if ``d_model`` is odd or either size is not positive.
    """
    if max_len <= 0 or d_model <= 0 or d_model % 2:
        raise ValueError(f"need max_len > 0 and an even d_model > 0, got {max_len}, {d_model}")
    pos = torch.arange(max_len, dtype=torch.float64)[:, None]  # (T, 1)
    two_i = torch.arange(0, d_model, 2, dtype=torch.float64)  # (D/2,) the even dims 2i
    angle = pos / torch.pow(10000.0, two_i / d_model)  # (T, D/2), radians
    pe = torch.empty(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(angle)
    pe[:, 1::2] = torch.cos(angle)
    return pe.float()


class PositionalEncoding(nn.Module):
    """Adds the fixed sinusoidal table to scaled embeddings, then applies dropout.

    The table is a non-persistent buffer: it is derived from the config, not stored in
    checkpoints.
    """

    def __init__(self, d_model: int, max_len: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("pe", sinusoidal_table(max_len, d_model), persistent=False)

    def forward(self, x: torch.Tensor, offset: int = 0,
                pe_table: torch.Tensor | None = None,
                position_ids: torch.Tensor | None = None) -> torch.Tensor:
        """x: (B, T, D) at positions offset..offset+T-1 -> dropout(x + PE[offset:offset+T]).

        Args:
            x: (B, T, D) scaled token embeddings.
            offset: the position of x's first row (positions already decoded and cached).
            pe_table: (P, D) encodings to add instead of the sinusoidal table, row p at
                position p (an experiment: zeros, or the table's rows permuted; see
                ``positional_tables``). None = the model's own table, the normal behaviour.
                Nothing is stored: the table is used for this call only.
            position_ids: (B, T) int64, each row's own positions instead of
                offset..offset+T-1 (Hugging Face's name: a padded batch whose ``<pad>``
                tokens take no position, so each sentence is numbered as alone).

        Raises:
            ValueError: if a position reaches the table's length, or ``pe_table`` is not
                (P, D).
        """
        T = x.size(1)
        table = self.pe if pe_table is None else pe_table
        if table.dim() != 2 or table.size(1) != self.pe.size(1):
            raise ValueError(f"pe_table must be (P, {self.pe.size(1)}), got "
                             f"{tuple(table.shape)}")
        last = offset + T
        if position_ids is not None:
            last = int(position_ids.max()) + 1 if position_ids.numel() else 0
        if last > table.size(0):
            raise ValueError(f"positions up to {last} exceed max_len {table.size(0)}")
        if position_ids is not None:
            return self.dropout(x + table[position_ids])  # (B, T, D)
        return self.dropout(x + table[offset : offset + T])  # (B, T, D)


POSITIONAL_MODES = ("normal", "none", "shuffled")  # see positional_tables


def shuffled_positions(n: int, seed: int = 0) -> torch.Tensor:
    """A seeded permutation of the positions 0..n-1: (n,) int64, the same for the same seed.

    Raises:
        ValueError: if ``n`` < 1.
    """
    if n < 1:
        raise ValueError(f"need at least one position, got {n}")
    return torch.randperm(n, generator=torch.Generator().manual_seed(int(seed)))


def positional_tables(
    pe: torch.Tensor, mode: str, src_len: int, seed: int = 0
) -> tuple[torch.Tensor | None, torch.Tensor | None]:
    """The encodings a positional-encoding experiment adds, for ``PositionalEncoding``'s
    ``pe_table`` argument: (source table, target table).

    ``"normal"``: (None, None), the model's own table (results unchanged).
    ``"none"``: zeros, so the model sees bag-of-words embeddings with no order at all.
    ``"shuffled"``: source position p gets PE(pi_S(p)) with pi_S a seeded permutation of
    0..S-1 (the same positions, in a scrambled order: for the encoder, which has no other
    sense of order, this is the same as reading the words scrambled); decoder position t
    gets PE(pi_P(t)) with pi_P a permutation of all P = max_len table rows (the output's
    length is not known in advance). Both use ``shuffled_positions(., seed)``.

    Args:
        pe: (P, D) the model's sinusoidal table (``PositionalEncoding.pe``).
        mode: one of ``POSITIONAL_MODES``.
        src_len: S, the source length (``</s>`` included), 1 <= S <= P.

    Returns:
        (source (S, D), target (P, D)) float tensors, or (None, None) for ``"normal"``.

    Raises:
        ValueError: an unknown mode or ``src_len`` outside 1..P.
    """
    if mode not in POSITIONAL_MODES:
        raise ValueError(f"positional mode must be one of {POSITIONAL_MODES}, got {mode!r}")
    P = pe.size(0)
    if not 1 <= src_len <= P:
        raise ValueError(f"src_len must be in [1, {P}], got {src_len}")
    if mode == "normal":
        return None, None
    if mode == "none":
        return pe.new_zeros(src_len, pe.size(1)), pe.new_zeros(P, pe.size(1))
    return pe[shuffled_positions(src_len, seed)], pe[shuffled_positions(P, seed)]


@dataclass(frozen=True)
class AttentionOutput:
    """What one multi-head attention call computed.

    Attributes:
        output: (B, Tq, D) the heads' weighted values, concatenated and projected by W_O.
        weights: (B, H, Tq, Tk) softmax weights; rows sum to 1, blocked cells are exactly 0,
            a row whose keys are all blocked is all 0.
        scores: (B, H, Tq, Tk) the scaled scores QK^T / sqrt(Dh) before masking, or None
            unless ``return_scores=True``.
        key_value: the projected keys and values, each (B, H, Tk, Dh), for a cache.
        context: (B, H, Tq, Dh) each head's output before W_O, weights @ V (after attention
            dropout, so exactly weights @ V in eval mode), or None unless
            ``return_scores=True``.
    """

    output: torch.Tensor
    weights: torch.Tensor
    scores: torch.Tensor | None = None
    key_value: tuple[torch.Tensor, torch.Tensor] | None = None
    context: torch.Tensor | None = None


def combine_masks(key_padding_mask: torch.Tensor | None, attn_mask: torch.Tensor | None,
                  shape: tuple[int, int, int]) -> torch.Tensor | None:
    """Merge a key padding mask and an attention mask into one (B, 1, Tq, Tk) bool mask.

    Args:
        shape: (B, Tq, Tk), the batch, query and key lengths.
        key_padding_mask: (B, Tk) bool, True = that key is blocked for every query.
        attn_mask: (Tq, Tk) or (B, Tq, Tk) bool, True = blocked.

    Returns:
        (B, 1, Tq, Tk) bool (broadcast over heads) or None if both are None.

    Raises:
        ValueError: a mask that is not boolean or has the wrong shape.
    """
    B, Tq, Tk = shape
    mask = None
    if key_padding_mask is not None:
        if key_padding_mask.dtype != torch.bool or key_padding_mask.shape != (B, Tk):
            raise ValueError(
                f"key_padding_mask must be bool (B={B}, Tk={Tk}), got "
                f"{key_padding_mask.dtype} {tuple(key_padding_mask.shape)}"
            )
        mask = key_padding_mask[:, None, None, :].expand(B, 1, Tq, Tk)
    if attn_mask is not None:
        if attn_mask.dtype != torch.bool or attn_mask.shape not in ((Tq, Tk), (B, Tq, Tk)):
            raise ValueError(
                f"attn_mask must be bool (Tq, Tk) or (B, Tq, Tk) with Tq={Tq}, Tk={Tk}, "
                f"got {attn_mask.dtype} {tuple(attn_mask.shape)}"
            )
        am = attn_mask.expand(B, Tq, Tk)[:, None]  # (B, 1, Tq, Tk)
        mask = am if mask is None else (mask | am)
    return mask


def masked_softmax(scores: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
    """Softmax over the last axis that gives blocked cells exactly 0 and never NaN.

    Blocked cells are filled with the dtype's most negative finite number (not -inf, which
    makes a fully blocked row 0/0 = NaN), and zeroed again after the softmax, so a row whose
    keys are all blocked comes out as all zeros.

    Args:
        scores: (..., Tq, Tk) float.
        mask: bool broadcastable to ``scores``, True = blocked; None = nothing blocked.

    Returns:
        Weights of the same shape as ``scores``.
    """
    if mask is None:
        return scores.softmax(dim=-1)
    filled = scores.masked_fill(mask, torch.finfo(scores.dtype).min)
    return filled.softmax(dim=-1).masked_fill(mask, 0.0)


class MultiHeadAttention(nn.Module):
    """Multi-head scaled dot-product attention (paper, sections 3.2.1-3.2.2), by hand.

    head_h = softmax(Q W_Q^h (K W_K^h)^T / sqrt(Dh) + mask) V W_V^h;
    MultiHead(Q, K, V) = Concat(head_1..head_H) W_O.

    Parameter layout matches ``torch.nn.MultiheadAttention`` after splitting its
    ``in_proj_weight`` into ``q_proj``, ``k_proj`` and ``v_proj`` (each D x D, with bias).
    With an explicit ``head_dim`` Dh (H * Dh need not be D) the projections are
    D -> H * Dh and ``out_proj`` H * Dh -> D.

    Raises:
        ValueError: ``d_model`` not divisible by ``nhead`` when ``head_dim`` is not given.
    """

    def __init__(self, d_model: int, nhead: int, dropout: float = 0.0,
                 head_dim: int | None = None) -> None:
        super().__init__()
        if head_dim is None and d_model % nhead:
            raise ValueError(f"d_model ({d_model}) must be divisible by nhead ({nhead})")
        self.d_model, self.nhead = d_model, nhead
        self.head_dim = d_model // nhead if head_dim is None else head_dim
        inner = nhead * self.head_dim  # H * Dh, the heads' concatenation
        self.q_proj = nn.Linear(d_model, inner)
        self.k_proj = nn.Linear(d_model, inner)
        self.v_proj = nn.Linear(d_model, inner)
        self.out_proj = nn.Linear(inner, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(
        self,
        query: torch.Tensor,
        key: torch.Tensor,
        value: torch.Tensor,
        key_padding_mask: torch.Tensor | None = None,
        *,
        attn_mask: torch.Tensor | None = None,
        return_scores: bool = False,
        past_key_value: tuple[torch.Tensor, torch.Tensor] | None = None,
        precomputed_key_value: tuple[torch.Tensor, torch.Tensor] | None = None,
        zero_values: torch.Tensor | None = None,
    ) -> AttentionOutput:
        """Attend from ``query`` positions to ``key``/``value`` positions.

        Args:
            query: (B, Tq, D).
            key, value: (B, Tk_new, D); ignored when ``precomputed_key_value`` is given.
            key_padding_mask: (B, Tk) bool, True = blocked key (e.g. ``<pad>``).
            attn_mask: (Tq, Tk) or (B, Tq, Tk) bool, True = blocked (e.g. look-ahead).
            return_scores: also return the scaled, unmasked scores QK^T / sqrt(Dh) and each
                head's context (weights @ V, before W_O).
            past_key_value: cached projected keys and values (B, H, Tk_past, Dh) of earlier
                positions; the new ones are appended (incremental self-attention).
            precomputed_key_value: projected keys and values (B, H, Tk, Dh) to use as they are
                (cross-attention over a memory projected once).
            zero_values: (B, Tk) bool, True = that key position's value vector is zeroed in
                every head (value zeroing, Mohebbi et al. 2023; the weights are unchanged).

        Returns:
            AttentionOutput with output (B, Tq, D), weights (B, H, Tq, Tk) (before attention
            dropout), the projected ``key_value`` for the next call's cache, and with
            ``return_scores`` the scores and the per-head context (B, H, Tq, Dh).

        Raises:
            ValueError: mismatched shapes or a malformed mask.
        """
        B, Tq, D = query.shape
        H, Dh = self.nhead, self.head_dim
        if D != self.d_model:
            raise ValueError(f"expected query (B, Tq, {self.d_model}), got {tuple(query.shape)}")
        q = self.q_proj(query).view(B, Tq, H, Dh).transpose(1, 2)  # (B, H, Tq, Dh)
        if precomputed_key_value is not None:
            k, v = precomputed_key_value  # (B, H, Tk, Dh) each
        else:
            k, v = self._keys_values(key, value, B, past_key_value)
        Tk = k.size(2)
        if zero_values is not None:
            v = v.masked_fill(zero_values[:, None, :, None], 0.0)  # (B, H, Tk, Dh)
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(Dh)  # (B, H, Tq, Tk)
        mask = combine_masks(key_padding_mask, attn_mask, (B, Tq, Tk))  # (B, 1, Tq, Tk)
        weights = masked_softmax(scores, mask)  # (B, H, Tq, Tk)
        heads = self.dropout(weights) @ v  # (B, H, Tq, Dh): each head's weighted values
        context = heads.transpose(1, 2).reshape(B, Tq, H * Dh)  # heads concatenated
        return AttentionOutput(self.out_proj(context), weights,
                               scores if return_scores else None, (k, v),
                               heads if return_scores else None)

    def _keys_values(self, key: torch.Tensor, value: torch.Tensor, B: int,
                     past_key_value: tuple[torch.Tensor, torch.Tensor] | None
                     ) -> tuple[torch.Tensor, torch.Tensor]:
        """The projected keys and values (B, H, Tk, Dh) of ``key``, ``value`` (B, Tn, D),
        after the cached ``past_key_value`` ones when given (Tk = Tk_past + Tn).

        Raises:
            ValueError: key or value not (B, Tn, D).
        """
        H, Dh, D, Tn = self.nhead, self.head_dim, self.d_model, key.size(1)
        if key.shape != (B, Tn, D) or value.shape != (B, Tn, D):
            raise ValueError(
                f"expected key/value (B={B}, Tk, {self.d_model}), got "
                f"{tuple(key.shape)}, {tuple(value.shape)}"
            )
        k = self.k_proj(key).view(B, Tn, H, Dh).transpose(1, 2)  # (B, H, Tn, Dh)
        v = self.v_proj(value).view(B, Tn, H, Dh).transpose(1, 2)  # (B, H, Tn, Dh)
        if past_key_value is not None:
            k = torch.cat([past_key_value[0], k], dim=2)  # (B, H, Tk_past + Tn, Dh)
            v = torch.cat([past_key_value[1], v], dim=2)
        return k, v


class PositionwiseFeedForward(nn.Module):
    """FFN(x) = max(0, x W_1 + b_1) W_2 + b_2 (paper, section 3.3), applied at each position."""

    def __init__(self, d_model: int, dim_feedforward: int, dropout: float = 0.0) -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, dim_feedforward)
        self.linear2 = nn.Linear(dim_feedforward, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x: (B, T, D) -> (B, T, D)."""
        return self.linear2(self.dropout(F.relu(self.linear1(x))))


class SublayerConnection(nn.Module):
    """Residual connection around a sublayer with LayerNorm (paper, section 5.4 / 3.1).

    Post-LN (``norm_first=False``, the paper): x + dropout(f(x)), then LayerNorm.
    Pre-LN (``norm_first=True``): x + dropout(f(LayerNorm(x))).
    """

    def __init__(self, d_model: int, dropout: float, norm_first: bool) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)
        self.norm_first = norm_first

    def forward(self, x: torch.Tensor, sublayer) -> tuple[torch.Tensor, object]:
        """x: (B, T, D); ``sublayer(x) -> (y (B, T, D), extra)``. Returns (new x, extra)."""
        if self.norm_first:
            y, extra = sublayer(self.norm(x))
            return x + self.dropout(y), extra
        y, extra = sublayer(x)
        return self.norm(x + self.dropout(y)), extra


@dataclass(frozen=True)
class EncoderLayerOutput:
    """output: (B, S, D); self_attention: AttentionOutput with weights (B, H, S, S);
    self_attention_input: (B, S, D) what the self-attention received as query, key and
    value: the layer's input x (post-LN) or LayerNorm(x) (pre-LN, ``norm_first``)."""

    output: torch.Tensor
    self_attention: AttentionOutput
    self_attention_input: torch.Tensor | None = None


class EncoderLayer(nn.Module):
    """Self-attention then feed-forward, each wrapped in a residual + LayerNorm sublayer.

    With a causal ``attn_mask`` (and a key/value cache) the same layer is one block of a
    decoder-only stack (GPT, Radford et al. 2018): a decoder layer without cross-attention,
    as ``torch.nn.TransformerEncoderLayer`` with a causal mask is.
    """

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int, dropout: float, *,
                 norm_first: bool = False, head_dim: int | None = None) -> None:
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, nhead, dropout, head_dim)
        self.feed_forward = PositionwiseFeedForward(d_model, dim_feedforward, dropout)
        self.sublayer1 = SublayerConnection(d_model, dropout, norm_first)
        self.sublayer2 = SublayerConnection(d_model, dropout, norm_first)

    def forward(self, x: torch.Tensor, key_padding_mask: torch.Tensor | None = None, *,
                return_scores: bool = False, attn_mask: torch.Tensor | None = None,
                past_key_value: tuple[torch.Tensor, torch.Tensor] | None = None,
                zero_values: torch.Tensor | None = None) -> EncoderLayerOutput:
        """Run one layer.

        Args:
            x: (B, S, D) (with ``past_key_value``: only the S new positions).
            key_padding_mask: (B, S_all) bool, True = ``<pad>`` (blocked), over every key
                (cached ones first), S_all = S_past + S.
            attn_mask: (S, S_all) or (B, S, S_all) bool, True = blocked (a decoder-only
                stack's causal mask, ``masks.subsequent_mask``); None for the encoder.
            past_key_value: projected keys and values (B, H, S_past, Dh) of earlier
                positions; the output's ``self_attention.key_value`` has them with the new.
            zero_values: (B, S_all) bool, positions whose value vectors are zeroed in every
                head (value zeroing, ``analysis.value_zeroing``); the weights are unchanged.

        Raises:
            ValueError: mismatched shapes or a malformed mask (``MultiHeadAttention``).
        """

        def attend(h: torch.Tensor):
            a = self.self_attn(h, h, h, key_padding_mask=key_padding_mask,
                               attn_mask=attn_mask, return_scores=return_scores,
                               past_key_value=past_key_value, zero_values=zero_values)
            return a.output, (a, h)

        x, (attn, attn_input) = self.sublayer1(x, attend)  # (B, S, D)
        x, _ = self.sublayer2(x, lambda h: (self.feed_forward(h), None))  # (B, S, D)
        return EncoderLayerOutput(x, attn, attn_input)


@dataclass(frozen=True)
class LayerCache:
    """One decoder layer's projected keys and values, each (B, H, ., Dh): ``self_kv`` for the
    positions decoded so far (grows by one per step), ``cross_kv`` for the memory (fixed;
    None in a decoder-only stack, which has no cross-attention)."""

    self_kv: tuple[torch.Tensor, torch.Tensor]
    cross_kv: tuple[torch.Tensor, torch.Tensor] | None = None


def reorder_cache(cache: tuple[LayerCache, ...], index: torch.Tensor
                  ) -> tuple[LayerCache, ...]:
    """Select (and duplicate) rows of a cache along the batch axis, as beam search does when
    it keeps beams ``index`` (n,) int64; returns a new cache (``cross_kv`` None stays None).
    """
    def pick(kv):
        return None if kv is None else tuple(x.index_select(0, index) for x in kv)

    return tuple(LayerCache(pick(layer.self_kv), pick(layer.cross_kv)) for layer in cache)


@dataclass(frozen=True)
class DecoderLayerOutput:
    """output: (B, T, D); self_attention weights (B, H, T, T_all); cross_attention
    (B, H, T, S); cache: this layer's keys/values including the new positions;
    self_attention_input and cross_attention_input: (B, T, D) the queries' input to each
    attention sublayer (post-LN: the residual stream entering it; pre-LN: its LayerNorm).
    Cross-attention's keys and values come from the memory."""

    output: torch.Tensor
    self_attention: AttentionOutput
    cross_attention: AttentionOutput
    cache: LayerCache | None = None
    self_attention_input: torch.Tensor | None = None
    cross_attention_input: torch.Tensor | None = None


class DecoderLayer(nn.Module):
    """Masked self-attention, encoder-decoder (cross) attention over ``memory``, feed-forward."""

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int, dropout: float, *,
                 norm_first: bool = False, head_dim: int | None = None) -> None:
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, nhead, dropout, head_dim)
        self.cross_attn = MultiHeadAttention(d_model, nhead, dropout, head_dim)
        self.feed_forward = PositionwiseFeedForward(d_model, dim_feedforward, dropout)
        self.sublayer1 = SublayerConnection(d_model, dropout, norm_first)
        self.sublayer2 = SublayerConnection(d_model, dropout, norm_first)
        self.sublayer3 = SublayerConnection(d_model, dropout, norm_first)

    def forward(
        self,
        x: torch.Tensor,
        memory: torch.Tensor,
        self_attn_mask: torch.Tensor | None = None,
        memory_key_padding_mask: torch.Tensor | None = None,
        *,
        return_scores: bool = False,
        cache: LayerCache | None = None,
        zero_self_values: torch.Tensor | None = None,
        zero_cross_values: torch.Tensor | None = None,
    ) -> DecoderLayerOutput:
        """Run one decoder layer.

        Args:
            x: (B, T, D) decoder states (with a cache: only the T new positions).
            memory: (B, S, D) encoder output.
            self_attn_mask: (T, T_all) or (B, T, T_all) bool, the combined padding OR
                look-ahead mask over all T_all = T_past + T key positions.
            memory_key_padding_mask: (B, S) bool, True = padded source key.
            cache: keys/values of earlier positions and of the memory (None = no cache).
            zero_self_values: (B, T_all) bool, decoder positions whose self-attention value
                vectors are zeroed; zero_cross_values: (B, S) bool, the same for the memory's
                (value zeroing, ``model.analysis.value_zeroing``).
        """

        def self_attend(h: torch.Tensor):
            a = self.self_attn(h, h, h, attn_mask=self_attn_mask, return_scores=return_scores,
                               past_key_value=cache.self_kv if cache else None,
                               zero_values=zero_self_values)
            return a.output, (a, h)

        def cross_attend(h: torch.Tensor):
            a = self.cross_attn(h, memory, memory, key_padding_mask=memory_key_padding_mask,
                                return_scores=return_scores,
                                precomputed_key_value=cache.cross_kv if cache else None,
                                zero_values=zero_cross_values)
            return a.output, (a, h)

        x, (self_attn, self_input) = self.sublayer1(x, self_attend)  # (B, T, D)
        x, (cross_attn, cross_input) = self.sublayer2(x, cross_attend)  # (B, T, D)
        x, _ = self.sublayer3(x, lambda h: (self.feed_forward(h), None))  # (B, T, D)
        return DecoderLayerOutput(x, self_attn, cross_attn,
                                  LayerCache(self_attn.key_value, cross_attn.key_value),
                                  self_input, cross_input)
