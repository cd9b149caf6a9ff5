"""Teaching computations on top of the model: what happens inside one attention head and
what the positional encodings contribute (a real padded batch: ``batch``).

Everything here runs the model's own modules (``Transformer.encode``/``decode`` with
``return_layers``, the layers' projections, ``masked_softmax``, ``model.core.masks``) under
``torch.inference_mode()`` and returns float32 numpy arrays in frozen dataclasses; nothing is
stored on the shared model. Positional-encoding experiments themselves are
``Translator.generate(..., positional="none" | "shuffled")``; this module adds the views of
the encodings (``pe_similarity``, ``embedding_parts``).

Shape letters: B batch, S source length, T target length (decoder inputs), Tq query length,
Tk key length, L layers, H heads, D d_model, Dh the head width (``config.head_dim``: D / H
for our models, T5's d_kv), V target vocabulary size. Masks are boolean, True = blocked.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from ..backends.records import EmbeddingParts, HeadInputs, to_numpy
from ..backends.translator import Translator
from ..core import rope
from ..core.config import ATTENTION_KINDS
from ..core.layers import masked_softmax
from ..decoding import (
    DecodeTrace,
)
from ..errors import InputError

__all__ = ["ATTENTION_KINDS", "EmbeddingParts", "HeadInternals", "embedding_parts",
           "head_internals", "pe_similarity"]
EMBEDDING_SIDES = ("source", "target")


def _check_index(name: str, value, size: int) -> int:
    """``value`` as an int in [0, size), else InputError naming ``name``."""
    ok = isinstance(value, int | np.integer) and not isinstance(value, bool)
    if not ok or not 0 <= value < size:
        raise InputError(f"{name} must be an integer from 0 to {size - 1}; got {value!r}")
    return int(value)


# --- inside one head ---------------------------------------------------------------------


@dataclass(frozen=True)
class HeadInternals:
    """Every intermediate of one head of one attention sublayer, for one sentence
    (paper, section 3.2.1, equation 1):

    Q = x_q W_Q^h + b_Q^h,  K = x_k W_K^h + b_K^h,  V = x_k W_V^h + b_V^h,
    Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k) + mask) V.

    W_Q^h is head h's D x Dh slice of W_Q (columns h*Dh .. (h+1)*Dh - 1 of ``q_proj``'s
    x W^T + b); the head's output is one Dh-wide slice of the concatenation that W_O
    projects. Arrays are float32 numpy unless stated.

    Attributes:
        kind: ``"encoder"`` (encoder self-attention), ``"decoder"`` (masked decoder
            self-attention) or ``"cross"`` (decoder queries, encoder memory keys/values).
        layer, head: which layer (0-based) and head (0-based).
        query_tokens: the Tq query labels (source tokens for the encoder, decoder inputs
            ``<s> y1 ..`` otherwise). key_tokens: the Tk key labels.
        query_positions: (Tq,) int64, each row's position in the sentence (all of them, or
            the one ``query`` asked for).
        d_k: Dh, the width of one head's queries and keys.
        x_query: (Tq, D) the attention sublayer's input at the query positions (post-LN:
            the residual stream entering the sublayer; pre-LN: its LayerNorm).
        x_key: (Tk, D) what the keys and values are projected from: x_query's full sequence
            for self-attention, the encoder output (memory) for cross-attention.
        w_q, w_k, w_v: (D, Dh) this head's projection matrices; b_q, b_k, b_v: (Dh,) biases.
        q: (Tq, Dh) queries; k, v: (Tk, Dh) keys and values.
        raw_scores: (Tq, Tk) Q K^T (dot products).
        scaled_scores: (Tq, Tk) Q K^T / sqrt(d_k), the model's ``scores``.
        mask: (Tq, Tk) bool, True = blocked: look-ahead (and target padding) for the decoder,
            source padding for the encoder and cross-attention (nothing, for one sentence).
        masked_scores: (Tq, Tk) the scaled scores with blocked cells set to -inf (for display;
            the model fills them with the most negative finite float instead).
        weights: (Tq, Tk) softmax over keys of the masked scores; blocked cells exactly 0,
            rows sum to 1 (a row with every key blocked is all 0). Equal to the model's own
            attention for this head.
        output: (Tq, Dh) weights @ V, the head's output before W_O.
        scaling: the factor on Q K^T: 1 / sqrt(d_k) (the paper; Marian, BART, M2M100), 1 for
            T5, which scales nothing.
        position_bias: (Tq, Tk) what T5 adds to the scores for the keys' relative distance
            (``Translator.relative_position_bias``), or None: scaled_scores = raw_scores *
            scaling + position_bias.
        q_projected, k_projected: (Tq, Dh), (Tk, Dh) x W + b before Qwen3's q/k norm and
            RoPE's rotation (``q`` and ``k`` are after them: what the scores use), or None
            for a model that does neither.
        rotated: q and k are rotated by position (RoPE; Su et al. 2021): q_m = R(m) q'_m,
            so q_m . k_n depends on the positions only through n - m. normed: each head's
            q and k are RMS-normalised first (Qwen3).
        kv_head: the key/value head this head reads (its own number, but for grouped-query
            attention, where several query heads share one).
    """

    kind: str
    layer: int
    head: int
    query_tokens: tuple[str, ...]
    key_tokens: tuple[str, ...]
    query_positions: np.ndarray
    d_k: int
    x_query: np.ndarray
    x_key: np.ndarray
    w_q: np.ndarray
    w_k: np.ndarray
    w_v: np.ndarray
    b_q: np.ndarray
    b_k: np.ndarray
    b_v: np.ndarray
    q: np.ndarray
    k: np.ndarray
    v: np.ndarray
    raw_scores: np.ndarray
    scaled_scores: np.ndarray
    mask: np.ndarray
    masked_scores: np.ndarray
    weights: np.ndarray
    output: np.ndarray
    scaling: float = 1.0
    position_bias: np.ndarray | None = None
    q_projected: np.ndarray | None = None
    k_projected: np.ndarray | None = None
    rotated: bool = False
    normed: bool = False
    kv_head: int = 0


def head_internals(translator: Translator, trace: DecodeTrace, kind: str, *, layer: int,
                   head: int, query: int | None = None) -> HeadInternals:
    """Recompute one head of one attention sublayer, step by step, for a decoded sentence.

    The sentence is ``trace.src_tokens`` (encoder input) and ``trace.decoder_input_tokens``
    (decoder input); the model runs one teacher-forced pass over them (with the positional
    encodings the trace was decoded with, from ``trace.settings``) and keeps each layer's
    sublayer inputs. From the sublayer input x this head's Q, K, V come from the layer's own
    projections, then Q K^T, / sqrt(Dh) (Dh = ``config.head_dim``; T5 instead adds its
    position bias, unscaled), the mask, ``masked_softmax`` and weights @ V (paper, section
    3.2.1). The weights equal the trace's maps (``trace.encoder_attentions[layer,
    head]`` etc.) to float32 rounding (tests check 1e-6).

    Args:
        translator: the model the trace was decoded with.
        trace: a ``DecodeTrace`` from ``translator.generate`` or ``teacher_force``.
        kind: one of ``ATTENTION_KINDS``: ``"encoder"``, ``"decoder"``, ``"cross"``.
        layer: 0-based layer of that stack; head: 0-based head.
        query: one query position to keep (Tq = 1), or None for every position.

    Returns:
        HeadInternals with Tq = S (encoder) or T (decoder, cross) or 1, Tk = S (encoder,
        cross) or T (decoder); a decoder-only model's (kind ``"decoder"``) over its one
        sequence, Tq = Tk = S + T, its weights ``one_map(trace)[layer, head]``.

    Raises:
        InputError: an unknown kind, or a layer, head or query position out of range.
    """
    c = translator.config
    if kind not in ATTENTION_KINDS:
        raise InputError(f"kind must be one of {', '.join(ATTENTION_KINDS)}; got {kind!r}")
    n_layers = c.num_encoder_layers if kind == "encoder" else c.num_decoder_layers
    layer = _check_index("layer", layer, n_layers)
    head = _check_index("head", head, c.nhead)
    src_tokens, dec_tokens = tuple(trace.src_tokens), tuple(trace.decoder_input_tokens)
    src_shown = tuple(trace.src_labels)  # what a person reads for the tokens
    dec_shown = tuple(trace.decoder_input_labels)
    query_tokens = src_shown if kind == "encoder" else dec_shown
    key_tokens = dec_shown if kind == "decoder" else src_shown
    one = translator.info.architecture == "decoder-only"
    if one:  # one sequence: the prompt's tokens, then the decoder inputs, as queries and keys
        query_tokens = key_tokens = src_shown + dec_shown
    if query is None:
        rows = slice(None)
    else:
        query = _check_index("query", query, len(query_tokens))
        rows = slice(query, query + 1)
    with torch.inference_mode():
        inputs = translator.head_inputs(trace, kind, layer=layer, head=head)
        mask = torch.from_numpy(translator.mask_views(
            list(src_tokens), list(dec_tokens))["self" if one else kind])  # (Tq, Tk)
        which = _Head(kind, layer, head, c.head_dim, query_tokens, key_tokens, rows)
        return _head_record(which, inputs, mask)


@dataclass(frozen=True)
class _Head:
    """Which head ``head_internals`` recomputes: its sublayer's kind, the layer and head
    (0-based), Dh (``config.head_dim``, the per-head width: not D / H for T5 v1.1's
    d_kv), the query and key labels and the query rows kept."""

    kind: str
    layer: int
    head: int
    head_dim: int
    query_tokens: tuple[str, ...]
    key_tokens: tuple[str, ...]
    rows: slice


def _rotated(inputs: HeadInputs, q: torch.Tensor, k: torch.Tensor
             ) -> tuple[torch.Tensor, torch.Tensor]:
    """q (Tq, Dh) and k (Tk, Dh) as the scores use them: each normalised (Qwen3's
    ``head_norms``), then rotated by its position 0.. (``inputs.rope``: RoPE,
    ``core.rope.rotate``, times Hugging Face's attention scaling)."""
    if inputs.head_norms is not None:
        q, k = inputs.head_norms[0](q), inputs.head_norms[1](k)
    if inputs.rope is not None:
        inv_freq, factor = inputs.rope
        q, k = (torch.from_numpy(rope.rotate(x.numpy(), np.arange(len(x)), inv_freq)
                                 * factor).float() for x in (q, k))
    return q, k


def _head_record(which: _Head, inputs: HeadInputs, mask: torch.Tensor) -> HeadInternals:
    """One head recomputed from its sublayer's inputs x_q (Tq, D), x_k (Tk, D) and the
    layer's own q/k/v projections (``nn.Linear``, D -> H * Dh, keys and values -> KV * Dh
    under grouped-query attention): q and k normalised and rotated where the model does
    (``_rotated``), scores = Q K^T * scaling (+ bias), the mask (Tq, Tk, True = blocked),
    ``masked_softmax``, weights @ V."""
    x_q, x_k, (q_lin, k_lin, v_lin), scaling, bias = inputs[:5]
    head, rows, query_tokens = which.head, which.rows, which.query_tokens
    Dh = which.head_dim
    cols = slice(head * Dh, (head + 1) * Dh)  # this head's slice of the query projection
    kv = head // inputs.kv_group  # the key/value head it reads
    kv_cols = slice(kv * Dh, (kv + 1) * Dh)
    q_proj = q_lin(x_q)[:, cols]  # (Tq, Dh)
    k_proj = k_lin(x_k)[:, kv_cols]  # (Tk, Dh)
    v = v_lin(x_k)[:, kv_cols]  # (Tk, Dh)
    q, k = _rotated(inputs, q_proj, k_proj)  # (Tq, Dh), (Tk, Dh)
    raw = q @ k.T  # (Tq, Tk)
    scaled = raw * scaling + (0 if bias is None else bias)  # (Tq, Tk)
    weights = masked_softmax(scaled, mask)  # (Tq, Tk)
    output = weights @ v  # (Tq, Dh)
    masked = scaled.masked_fill(mask, float("-inf"))

    def proj(linear: torch.nn.Linear, part: slice) -> tuple[np.ndarray, np.ndarray]:
        # nn.Linear computes x W^T + b: this head's W is rows ``part`` of W, transposed.
        b = linear.bias[part] if linear.bias is not None else torch.zeros(Dh)  # T5: no bias
        return to_numpy(linear.weight[part].T), to_numpy(b)

    (w_q, b_q), (w_k, b_k), (w_v, b_v) = (proj(q_lin, cols), proj(k_lin, kv_cols),
                                          proj(v_lin, kv_cols))
    turned = inputs.rope is not None or inputs.head_norms is not None
    positions = np.arange(len(query_tokens), dtype=np.int64)[rows]
    return HeadInternals(
        kind=which.kind, layer=which.layer, head=head,
        query_tokens=tuple(query_tokens[i] for i in positions),
        key_tokens=tuple(which.key_tokens),
        query_positions=positions, d_k=Dh,
        x_query=to_numpy(x_q[rows]), x_key=to_numpy(x_k),
        w_q=w_q, w_k=w_k, w_v=w_v, b_q=b_q, b_k=b_k, b_v=b_v,
        q=to_numpy(q[rows]), k=to_numpy(k), v=to_numpy(v),
        raw_scores=to_numpy(raw[rows]), scaled_scores=to_numpy(scaled[rows]),
        mask=mask[rows].numpy().copy(), masked_scores=to_numpy(masked[rows]),
        weights=to_numpy(weights[rows]), output=to_numpy(output[rows]),
        scaling=float(scaling), position_bias=None if bias is None else to_numpy(bias[rows]),
        q_projected=to_numpy(q_proj[rows]) if turned else None,
        k_projected=to_numpy(k_proj) if turned else None,
        rotated=inputs.rope is not None, normed=inputs.head_norms is not None, kv_head=kv,
    )


# --- positional encodings ----------------------------------------------------------------


def pe_similarity(pe: np.ndarray | torch.Tensor) -> np.ndarray:
    """Dot-product similarity of positions: sim[i, j] = PE_i . PE_j.

    For the sinusoidal table, sim[i, j] = sum_k cos(w_k (i - j)) depends only on i - j
    (paper, section 3.5: PE_{pos+k} is a linear function of PE_pos), and the diagonal is
    D / 2 (sin^2 + cos^2 = 1 for each of the D / 2 pairs).

    Args:
        pe: (T, D) positional encodings (e.g. ``Translator.positional_encoding(T)``).

    Returns:
        (T, T) float32, symmetric.

    Raises:
        ValueError: ``pe`` is not 2-D.
    """
    table = np.asarray(pe.detach().cpu() if isinstance(pe, torch.Tensor) else pe,
                       dtype=np.float64)
    if table.ndim != 2:
        raise ValueError(f"pe must be (T, D), got shape {table.shape}")
    return (table @ table.T).astype(np.float32)


def embedding_parts(translator: Translator, tokens: Sequence[str], side: str, *,
                    positional: str = "normal", positional_seed: int = 0) -> EmbeddingParts:
    """Split the encoder's (``side="source"``) or decoder's (``"target"``) input for a token
    sequence into the scaled token embedding and the positional encoding.

    The experiment modes give what ``Translator.generate(text, positional=...,
    positional_seed=...)`` adds, provided ``tokens`` is the whole source with ``</s>``
    (``trace.src_tokens``; the source permutation depends on its length) or the decoder
    inputs (``trace.decoder_input_tokens``).

    Args:
        tokens: T token strings, 1 <= T <= max_len.
        side: one of ``EMBEDDING_SIDES``.

    Returns:
        EmbeddingParts with (T, D) float32 arrays.

    Raises:
        InputError: an unknown side or mode, a bad seed, or T outside 1..max_len.
    """
    c = translator.config
    if side not in EMBEDDING_SIDES:
        raise InputError(f"side must be one of {', '.join(EMBEDDING_SIDES)}; got {side!r}")
    tokens = tuple(tokens)
    T = len(tokens)
    if not 1 <= T <= c.max_len:
        raise InputError(f"need 1 to {c.max_len} tokens, got {T}")
    return translator.embedding_parts(tokens, side, positional=positional,  # checks
                                      positional_seed=positional_seed)
    # the mode and the seed (a Hugging Face model refuses every experiment)
