"""A real padded batch: 2 to 4 sentences greedy-decoded together, right-padded, with the
masks every layer uses and each sentence checked against decoding it alone.

An encoder-decoder's sources are padded and encoded once; a decoder-only model's prompts are
padded the same way and its ``<pad>`` tokens take no position
(``core.masks.position_ids_past_padding``), so every sentence's real tokens sit where they
sit alone. Everything runs under ``torch.inference_mode()`` and returns numpy arrays in a
frozen dataclass; nothing is stored on the shared model.

Shape letters: B batch, S source (prompt) length, T decoder inputs, N = S + T (one stack),
L layers, H heads, V target vocabulary size. Masks are boolean, True = blocked.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from ..backends.records import SourceSentence, to_numpy
from ..backends.translator import Translator
from ..core.config import ATTENTION_KINDS, end_ids
from ..core.masks import decoder_self_attention_mask, length_padding_mask, subsequent_mask
from ..decoding import (
    BatchGreedy,
    GenerationSettings,
    greedy_batch,
    join_blocks,
    pad_rows,
    split_at_prompt,
)
from ..decoding.settings import check
from ..errors import InputError

__all__ = ["MAX_BATCH", "MIN_BATCH", "BatchTrace", "batch_matches_single", "decode_batch"]

MIN_BATCH, MAX_BATCH = 2, 4  # sentences decode_batch takes


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

    def one_mask(self, b: int) -> np.ndarray:
        """A decoder-only model's (N, N) mask for sentence ``b`` over its one padded
        sequence, N = S + T (the padded prompt, then the decoder inputs), True = blocked:
        the look-ahead mask OR the key padding mask, as every layer of the stack uses it
        (the blocks are ``source_padding_mask``, ``cross_mask`` and ``decoder_mask``)."""
        S, T = self.src_ids.shape[1], self.tgt_ids.shape[1]
        out = np.triu(np.ones((S + T, S + T), bool), 1)  # (N, N) look-ahead
        out[:S, :S] |= self.source_padding_mask[b][None, :]
        out[S:, :S] = self.cross_mask[b]
        out[S:, S:] = self.decoder_mask[b]
        return out

    def one_map(self, b: int) -> np.ndarray:
        """A decoder-only model's (L, H, N, N) self-attention of sentence ``b`` over its
        one padded sequence (``decoding.join_blocks`` of its three blocks)."""
        return join_blocks(self.encoder_attentions[b], self.cross_attentions[b],
                           self.decoder_attentions[b])

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

    The sources are padded with ``<pad>`` to the longest (S) and encoded once; then
    ``decoding.greedy_batch`` (no cache: every step over the whole padded decoder input
    with the combined masks; a finished sentence fed ``<pad>``). The recorded maps and
    ``step_probs`` are those of the last step's pass, which is one teacher-forced pass over
    the final padded decoder input (B, T); causality makes its rows equal what each step
    saw. Over its real tokens each sentence's output and maps equal decoding it alone
    (``batch_matches_single``), a decoder-only model's too (``_starts``).

    Args:
        texts: 2 to 4 sentences in the model's source language (``MIN_BATCH``..``MAX_BATCH``).
        max_new_tokens: the most tokens per sentence (``</s>`` included); default max_len-1.

    Returns:
        BatchTrace (see its docstring for the shapes).

    Raises:
        InputError: not a list of 2 to 4 sentences, a sentence ``Translator.source``
            refuses (the message says which), or ``max_new_tokens`` outside
            ``settings.BOUNDS`` or above max_len - 1.
    """
    c, sources = translator.config, _batch_sources(translator, texts)
    if max_new_tokens is None:
        max_new_tokens = translator.info.default_max_new_tokens
    check("max_new_tokens", max_new_tokens, high=c.max_len - 1)
    src = pad_rows([s.ids.tolist() for s in sources], c.pad_id)  # (B, S)
    starts, max_new_tokens = _starts(translator, sources, max_new_tokens)
    pad = length_padding_mask([len(s.ids) for s in sources], src.size(1))  # (B, S)
    processors = translator.target.processors(max_new_tokens)  # what generate() applies
    with torch.inference_mode():
        run = greedy_batch(translator.model, src, GenerationSettings(
            max_new_tokens=max_new_tokens), processors, start_ids=starts,
            key_padding_mask=pad if starts is not None else None)
        arrays = _batch_arrays(run, pad)
    tgt_np, generated, ends = run.tgt_ids.numpy().copy(), run.generated, end_ids(c)
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
        output_tokens=tuple(tuple(vocab_tgt.decode(i for i in g if i not in ends))
                            for g in generated),
        finished=tuple(bool(g) and g[-1] in ends for g in generated),
        max_new_tokens=int(max_new_tokens),
        translations=tuple(_text(translator, int(tgt_np[b, 0]), g)
                           for b, g in enumerate(generated)),
    )


def _starts(translator: Translator, sources: list[SourceSentence], max_new_tokens: int
            ) -> tuple[list[int] | None, int]:
    """A decoder-only model's decoder start per sentence (else None) and the length limit
    its positions leave: the longest prompt and its continuation share max_len. (Its
    prompts are right-padded as sources are, the padding given by position, since a
    Hugging Face model's pad id may be a real token of a prompt; ``<pad>`` takes no
    position, so every continuation starts at its own prompt's length:
    ``masks.position_ids_past_padding``.)"""
    if sources[0].start_id is None:
        return None, max_new_tokens
    longest = max(len(s.ids) for s in sources)
    return [s.start_id for s in sources], min(max_new_tokens, translator.config.max_len - longest)


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


def _batch_arrays(run: BatchGreedy, src_pad: torch.Tensor) -> dict[str, np.ndarray]:
    """The masks and maps of ``BatchTrace`` from a ``greedy_batch`` run over (B, S)
    sources padded where ``src_pad`` (B, S) is True: the masks (bool, True = blocked), the
    attention maps (B, L, H, ., .) and ``step_probs`` (B, T, V) of its last pass over the
    (B, T) decoder inputs."""
    enc, out, T = run.encoder, run.decoder, run.tgt_ids.size(1)
    # Padding by position, not by id: some models start decoding with their <pad> id, and
    # a Hugging Face one-stack model's pad id may be a real token of a prompt.
    is_pad = length_padding_mask([len(g) for g in run.generated], T)  # (B, T)
    masks = dict(
        source_padding_mask=src_pad,
        target_padding_mask=is_pad,
        subsequent_mask=subsequent_mask(T),
        decoder_mask=decoder_self_attention_mask(is_pad.long(), 1),
        cross_mask=src_pad[:, None, :].expand(-1, T, -1),  # (B, T, S)
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
    ends = end_ids(translator.config)
    return "".join(translator.target.vocab.decode(i for i in generated if i not in ends))


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
        single = split_at_prompt(translator.generate(text, max_new_tokens=batch.max_new_tokens))
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
