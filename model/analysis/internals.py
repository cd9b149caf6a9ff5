"""Teaching computations on top of the model: what happens inside one attention head, what a
real padded batch looks like, and what the positional encodings contribute.

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

from ..backends.records import EmbeddingParts, HeadInputs, SourceSentence, to_numpy
from ..backends.translator import Translator
from ..core.config import ATTENTION_KINDS
from ..core.layers import masked_softmax
from ..core.masks import (
    cross_attention_mask,
    decoder_self_attention_mask,
    padding_mask,
    subsequent_mask,
)
from ..decoding import BatchGreedy, DecodeTrace, GenerationSettings, greedy_batch, pad_rows
from ..decoding.settings import check
from ..errors import InputError

__all__ = ["ATTENTION_KINDS", "BatchTrace", "EmbeddingParts", "HeadInternals",
           "batch_matches_single", "decode_batch", "embedding_parts", "head_internals",
           "pe_similarity"]

MIN_BATCH, MAX_BATCH = 2, 4  # sentences decode_batch takes
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


def _head_record(which: _Head, inputs: HeadInputs, mask: torch.Tensor) -> HeadInternals:
    """One head recomputed from its sublayer's inputs x_q (Tq, D), x_k (Tk, D) and the
    layer's own q/k/v projections (``nn.Linear``, D -> H * Dh): scores = Q K^T * scaling
    (+ bias), the mask (Tq, Tk, True = blocked), ``masked_softmax``, weights @ V."""
    x_q, x_k, (q_lin, k_lin, v_lin), scaling, bias = inputs
    head, rows, query_tokens = which.head, which.rows, which.query_tokens
    Dh = which.head_dim
    cols = slice(head * Dh, (head + 1) * Dh)  # this head's slice of the projections
    q = q_lin(x_q)[:, cols]  # (Tq, Dh)
    k = k_lin(x_k)[:, cols]  # (Tk, Dh)
    v = v_lin(x_k)[:, cols]  # (Tk, Dh)
    raw = q @ k.T  # (Tq, Tk)
    scaled = raw * scaling + (0 if bias is None else bias)  # (Tq, Tk)
    weights = masked_softmax(scaled, mask)  # (Tq, Tk)
    output = weights @ v  # (Tq, Dh)
    masked = scaled.masked_fill(mask, float("-inf"))

    def proj(linear: torch.nn.Linear) -> tuple[np.ndarray, np.ndarray]:
        # nn.Linear computes x W^T + b: this head's W is rows ``cols`` of W, transposed.
        b = linear.bias[cols] if linear.bias is not None else torch.zeros(Dh)  # T5: no bias
        return to_numpy(linear.weight[cols].T), to_numpy(b)

    (w_q, b_q), (w_k, b_k), (w_v, b_v) = proj(q_lin), proj(k_lin), proj(v_lin)
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
    )


# --- a real padded batch -----------------------------------------------------------------


@dataclass(frozen=True)
class BatchTrace:
    """B sentences greedy-decoded together as one right-padded batch, and the maps of the
    final teacher-forced pass over the padded decoder inputs.

    Arrays are numpy: ids int64, masks bool (True = blocked), the rest float32. Rows of
    ``<pad>`` queries are computed by the model like any other (they attend to the real
    keys), but no real position ever reads them: every ``<pad>`` key column is exactly 0.

    Attributes:
        texts: the B sentences as given.
        src_ids: (B, S) source ids (words, ``</s>``, then ``<pad>``); src_tokens: the same
            as strings, B tuples of S; src_labels: their readable labels (subword pieces
            without byte-level marks, ``SourceSentence.labels``).
        tgt_ids: (B, T) decoder inputs ``<s> y1 .. y_{n-1}`` then ``<pad>`` once a sentence
            has finished (n = tokens it generated, ``</s>`` included); tgt_tokens: strings;
            tgt_labels: what a person reads for them (``TargetSide.labels``).
        src_lengths: (B,) real source tokens (``</s>`` included); tgt_lengths: (B,) real
            decoder inputs, n.
        source_padding_mask: (B, S) the key padding mask (``masks.padding_mask``).
        target_padding_mask: (B, T) ``<pad>`` decoder inputs.
        subsequent_mask: (T, T) the look-ahead mask (``masks.subsequent_mask``).
        decoder_mask: (B, T, T) padding OR look-ahead (``masks.decoder_self_attention_mask``).
        cross_mask: (B, T, S) (``masks.cross_attention_mask``).
        encoder_attentions: (B, L, H, S, S); decoder_attentions: (B, L, H, T, T);
            cross_attentions: (B, L, H, T, S).
        step_probs: (B, T, V) next-token distributions (row t predicts y_{t+1}).
        output_tokens: each sentence's generated tokens without ``</s>``.
        finished: whether each sentence produced ``</s>`` within ``max_new_tokens``.
        max_new_tokens: the length limit used.
        tgt_labels: B tuples of T labels (``TargetSide.labels``), () when not given.
        translations: each sentence's translation as its target side writes it
            (``TargetSide.text``: an English target's pieces detokenised, with spaces),
            () when not given (``output_texts`` then joins the tokens).
    """

    texts: tuple[str, ...]
    src_ids: np.ndarray
    src_tokens: tuple[tuple[str, ...], ...]
    src_labels: tuple[tuple[str, ...], ...]
    tgt_ids: np.ndarray
    tgt_tokens: tuple[tuple[str, ...], ...]
    src_lengths: np.ndarray
    tgt_lengths: np.ndarray
    source_padding_mask: np.ndarray
    target_padding_mask: np.ndarray
    subsequent_mask: np.ndarray
    decoder_mask: np.ndarray
    cross_mask: np.ndarray
    encoder_attentions: np.ndarray
    decoder_attentions: np.ndarray
    cross_attentions: np.ndarray
    step_probs: np.ndarray
    output_tokens: tuple[tuple[str, ...], ...]
    finished: tuple[bool, ...]
    max_new_tokens: int
    tgt_labels: tuple[tuple[str, ...], ...] = ()
    translations: tuple[str, ...] = ()

    @property
    def output_texts(self) -> tuple[str, ...]:
        """Each sentence's translation as text: ``translations`` when given (what
        ``DecodeTrace.output_text`` of the sentence alone is), else its tokens joined
        without spaces (a Chinese target, one character per token)."""
        if self.translations:
            return self.translations
        return tuple("".join(tokens) for tokens in self.output_tokens)

    def unpadded(self, b: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Sentence ``b``'s maps over its real tokens only: encoder (L, H, S_b, S_b),
        decoder (L, H, T_b, T_b), cross (L, H, T_b, S_b), with S_b = ``src_lengths[b]`` and
        T_b = ``tgt_lengths[b]`` (the shapes of its single ``DecodeTrace``).

        Raises:
            IndexError: ``b`` outside 0..B-1.
        """
        if not 0 <= b < len(self.texts):
            raise IndexError(f"sentence {b} outside 0..{len(self.texts) - 1}")
        S, T = int(self.src_lengths[b]), int(self.tgt_lengths[b])
        return (self.encoder_attentions[b, :, :, :S, :S],
                self.decoder_attentions[b, :, :, :T, :T],
                self.cross_attentions[b, :, :, :T, :S])


def decode_batch(translator: Translator, texts: Sequence[str],
                 max_new_tokens: int | None = None) -> BatchTrace:
    """Greedy-decode 2 to 4 sentences together as one right-padded batch.

    The sources are padded with ``<pad>`` to the longest (S) and encoded once. At each step
    the decoder runs over the whole padded decoder input so far with the model's combined
    masks (no cache), every unfinished sentence takes its most probable token, and a
    sentence that has produced ``</s>`` is fed ``<pad>`` from then on; decoding stops when
    all have finished or after ``max_new_tokens`` steps. The recorded maps and
    ``step_probs`` are those of the last step's pass, which is one teacher-forced pass over
    the final padded decoder input (B, T); causality makes its rows equal what each step
    saw. Over its real tokens each sentence's output and maps equal decoding it alone
    (``batch_matches_single`` measures this).

    Args:
        translator: the model.
        texts: 2 to 4 sentences in the model's source language (``MIN_BATCH``..``MAX_BATCH``).
        max_new_tokens: the most tokens per sentence (``</s>`` included); default max_len-1.

    Returns:
        BatchTrace (see its docstring for the shapes).

    Raises:
        InputError: not a list of 2 to 4 sentences, a sentence ``Translator.source`` refuses (the
            message says which), or ``max_new_tokens`` outside ``settings.BOUNDS`` or above
            max_len - 1.
    """
    c = translator.config
    sources = _batch_sources(translator, texts)
    if max_new_tokens is None:
        max_new_tokens = translator.info.default_max_new_tokens
    check("max_new_tokens", max_new_tokens, high=c.max_len - 1)
    src = pad_rows([s.ids.tolist() for s in sources], c.pad_id)  # (B, S)
    processors = translator.target.processors(max_new_tokens)  # what generate() applies
    with torch.inference_mode():
        run = greedy_batch(translator.model, src, GenerationSettings(
            max_new_tokens=max_new_tokens), processors)
        arrays = _batch_arrays(run, c.pad_id)
    tgt_np, generated = run.tgt_ids.numpy().copy(), run.generated
    vocab_tgt = translator.target.vocab
    pad = vocab_tgt.itos[c.pad_id]  # the <pad> token (one id and spelling on both sides)
    S = src.size(1)
    return BatchTrace(
        texts=tuple(texts),
        src_ids=src.numpy().copy(),
        src_tokens=tuple((*s.tokens, *[pad] * (S - len(s.tokens))) for s in sources),
        src_labels=tuple((*s.labels, *[pad] * (S - len(s.tokens))) for s in sources),
        tgt_ids=tgt_np,
        tgt_tokens=tuple(tuple(vocab_tgt.decode(row)) for row in tgt_np),
        tgt_labels=tuple(translator.target.labels(row) for row in tgt_np),
        src_lengths=np.array([len(s.ids) for s in sources], dtype=np.int64),
        tgt_lengths=np.array([len(g) for g in generated], dtype=np.int64),
        **arrays,
        output_tokens=tuple(tuple(vocab_tgt.decode(i for i in g if i != c.eos_id))
                            for g in generated),
        finished=tuple(bool(g) and g[-1] == c.eos_id for g in generated),
        max_new_tokens=int(max_new_tokens),
        translations=tuple(_text(translator, int(tgt_np[b, 0]), g)
                           for b, g in enumerate(generated)),
    )


def _batch_sources(translator: Translator, texts: Sequence[str]) -> list[SourceSentence]:
    """Each of 2 to 4 ``texts`` as the model reads it (``Translator.source``).

    Raises:
        InputError: not a list of 2 to 4 sentences, or a sentence the model refuses (the
            message says which).
    """
    if isinstance(texts, str) or not isinstance(texts, Sequence):
        raise InputError(f"Give a list of {MIN_BATCH} to {MAX_BATCH} sentences.")
    if not MIN_BATCH <= len(texts) <= MAX_BATCH:
        raise InputError(f"Give {MIN_BATCH} to {MAX_BATCH} sentences to decode as a batch; "
                         f"got {len(texts)}.")
    sources = []
    for i, text in enumerate(texts):
        try:
            sources.append(translator.source(text))
        except InputError as exc:
            raise InputError(f"Sentence {i + 1}: {exc}") from exc
    return sources


def _batch_arrays(run: BatchGreedy, pad_id: int) -> dict[str, np.ndarray]:
    """The masks and maps of ``BatchTrace`` from a ``greedy_batch`` run over (B, S)
    sources: the masks (bool, True = blocked), the attention maps (B, L, H, ., .) and
    ``step_probs`` (B, T, V) of its last pass over the (B, T) decoder inputs."""
    src, enc, out, T = run.src_ids, run.encoder, run.decoder, run.tgt_ids.size(1)
    lengths = torch.tensor([len(g) for g in run.generated])  # (B,) real decoder inputs
    # Padding by position, not by id: some models start decoding with their <pad> id.
    is_pad = torch.arange(T)[None, :] >= lengths[:, None]  # (B, T)
    masks = dict(
        source_padding_mask=padding_mask(src, pad_id),
        target_padding_mask=is_pad,
        subsequent_mask=subsequent_mask(T),
        decoder_mask=decoder_self_attention_mask(is_pad.long(), 1),
        cross_mask=cross_attention_mask(src, T, pad_id),
    )
    return dict(
        **{k: v.numpy().copy() for k, v in masks.items()},
        encoder_attentions=to_numpy(torch.stack(enc.attentions, dim=1)),  # (B, L, H, S, S)
        decoder_attentions=to_numpy(torch.stack(out.decoder_attentions, dim=1)),
        cross_attentions=to_numpy(torch.stack(out.cross_attentions, dim=1)),
        step_probs=to_numpy(out.logits.float().softmax(-1)),  # (B, T, V)
    )


def _text(translator: Translator, start: int, generated: Sequence[int]) -> str:
    """The translation of one sentence's ``generated`` ids (``</s>`` included where
    produced) after the start id ``start``, as ``Translator.generate`` writes its
    ``output_text``: the target side's text of ``<s> y1 .. yn``, else (a side that gives
    none) the tokens joined without spaces."""
    text = translator.target.text(np.array([start, *generated], dtype=np.int64))
    if text is not None:
        return text
    eos = translator.config.eos_id
    return "".join(translator.target.vocab.decode(i for i in generated if i != eos))


def _max_abs(a: np.ndarray, b: np.ndarray) -> float:
    """max |a - b| over equal-shaped arrays (0.0 when empty)."""
    return float(np.abs(a - b).max()) if a.size else 0.0


def batch_matches_single(translator: Translator, batch: BatchTrace) -> dict:
    """Compare each sentence of a batch with the same sentence decoded alone.

    Each sentence is decoded again with ``translator.generate(text,
    max_new_tokens=batch.max_new_tokens)`` (greedy, one sentence, no padding). Its output
    tokens are compared, and its attention over its real tokens (``BatchTrace.unpadded``):
    the encoder maps in full, the decoder and cross maps over the first P decoder positions,
    P = how many decoder inputs the two runs share (all of them when the outputs agree).

    Returns:
        ``{"sentences": [...], "max_abs_diff": {"encoder", "decoder", "cross": float},
        "pad_weight": float, "all_same_output": bool}`` where each sentence's entry has
        ``text``, ``batch_output`` and ``single_output`` (strings), ``same_output`` (bool),
        ``compared_positions`` (P), the max absolute differences ``encoder``, ``decoder``
        and ``cross`` (attention-weight units, 0..1), and ``pad_weight``: the most weight
        any query of that sentence puts on a ``<pad>`` key (0.0: padding is invisible).
        Plain Python types, ready to show as a table.

    Raises:
        InputError: a sentence the translator refuses (cannot happen for a batch it made).
    """
    rows = []
    for b, text in enumerate(batch.texts):
        single = translator.generate(text, max_new_tokens=batch.max_new_tokens)
        enc, dec, cross = batch.unpadded(b)
        S_b, T_b = int(batch.src_lengths[b]), int(batch.tgt_lengths[b])
        mine = batch.tgt_tokens[b][:T_b]
        theirs = single.decoder_input_tokens
        P = 0
        while P < min(len(mine), len(theirs)) and mine[P] == theirs[P]:
            P += 1
        pad_weight = max(
            float(batch.encoder_attentions[b, ..., S_b:].max(initial=0.0)),
            float(batch.decoder_attentions[b, ..., T_b:].max(initial=0.0)),
            float(batch.cross_attentions[b, ..., S_b:].max(initial=0.0)),
        )
        rows.append(dict(
            text=text,
            batch_output=batch.output_texts[b],
            single_output=single.output_text,
            same_output=batch.output_tokens[b] == single.output_tokens
            and batch.finished[b] == single.finished,
            compared_positions=P,
            encoder=_max_abs(enc, single.encoder_attentions),
            decoder=_max_abs(dec[:, :, :P, :P], single.decoder_attentions[:, :, :P, :P]),
            cross=_max_abs(cross[:, :, :P], single.cross_attentions[:, :, :P]),
            pad_weight=pad_weight,
        ))
    return dict(
        sentences=rows,
        max_abs_diff={k: max(r[k] for r in rows) for k in ATTENTION_KINDS},
        pad_weight=max(r["pad_weight"] for r in rows),
        all_same_output=all(r["same_output"] for r in rows),
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
