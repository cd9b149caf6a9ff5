"""What a backend hands to the analysis code: the inputs of one attention head, the
parts of the first layer's input and a decoding as embeddings for attribution. Both
backends (their ``parts.Internals``, through ``Translator``) return these same types, so the
analysis never asks which backend it has.

Shape letters: B batch, S source tokens, T tokens, Tq / Tk query / key length, D d_model.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
import torch

from ..core.counts import TrainCounts


def to_numpy(x: torch.Tensor) -> np.ndarray:
    """A tensor as a float32 numpy array of its own (no memory shared with the model)."""
    return x.detach().float().cpu().numpy().copy()


class HeadInputs(NamedTuple):
    """What one head of one attention sublayer is recomputed from
    (``analysis.internals.head_internals``).

    Attributes:
        x_q: (Tq, D) the sublayer's query input; x_k: (Tk, D) its key and value input.
        linears: the layer's own (q, k, v) projections (``nn.Linear``, H * Dh outputs).
        scaling: what Q K^T is multiplied by (1 / sqrt(Dh); T5: 1.0).
        bias: (Tq, Tk) a position bias added to the scaled scores (T5's relative position
            bias, in self-attention), or None.
        kv_group: query heads per key/value head (grouped-query attention: head h reads
            key/value head h // kv_group, ``core.config.kv_head_of``); 1 = one each.
        head_norms: (q_norm, k_norm) applied to each head's q and k before RoPE (Qwen3's
            RMSNorm over Dh), or None.
        rope: (inv_freq (Dh/2,), attention_scaling) when q and k are rotated by position
            (``core.rope.rotate``, then times the scaling, as Hugging Face's rotary
            embedding gives cos and sin), or None.
    """

    x_q: torch.Tensor
    x_k: torch.Tensor
    linears: tuple[torch.nn.Linear, torch.nn.Linear, torch.nn.Linear]
    scaling: float
    bias: torch.Tensor | None
    kv_group: int = 1
    head_norms: tuple[torch.nn.Module, torch.nn.Module] | None = None
    rope: tuple[np.ndarray, float] | None = None


@dataclass(frozen=True)
class EmbeddingParts:
    """What the first layer receives, in its two parts (paper, sections 3.4 and 3.5):
    total = embedding + positional, embedding = E[token] * sqrt(D).

    Attributes:
        side: ``"source"`` or ``"target"``; positional_mode: ``"normal"``, ``"none"`` or
            ``"shuffled"`` (see ``layers.positional_tables``).
        tokens: the T tokens; ids: (T,) int64 (unknown tokens are ``<unk>``).
        positions: (T,) int64, the table row added at each position (0..T-1 normally, the
            seeded permutation when shuffled), or None when no encoding is added.
        embedding: (T, D) the scaled token embeddings.
        positional: (T, D) the encodings added (zeros for ``"none"``).
        total: (T, D) the model's own ``positional(embed(ids))`` (dropout is off in eval
            mode), which equals embedding + positional.
    """

    side: str
    positional_mode: str
    tokens: tuple[str, ...]
    ids: np.ndarray
    positions: np.ndarray | None
    embedding: np.ndarray
    positional: np.ndarray
    total: np.ndarray


@dataclass(frozen=True)
class SourceSentence:
    """A sentence as a backend reads it, once (``Translator.source``): everything the page,
    decoding and the analysis need of the source side, so nothing tokenises it again.

    Attributes:
        text: the sentence as given; src_lang: the source language it was read in (a
            multilingual model's code, else None); task: the T5-style task whose prefix
            was read before it, else None.
        pieces: the tokenizer's tokens of the text (after the task's prefix), without
            special tokens.
        tokens: the S encoder input tokens (pieces and special tokens such as ``</s>``; an
            unknown word keeps its spelling); ids: (S,) int64 their ids (``<unk>`` for an
            unknown word).
        labels: S readable labels (``Ġlearn`` -> ``learn``); words: S word indices (pieces
            of one word share one, ``subword.word_ids``).
        unknown_words: words outside the source vocabulary, each once, in order (always
            empty for a subword model); suggestions: for each of them, in-vocabulary words
            spelled like it (at most three).
        known_words: how many tokens are words of the vocabulary (alphanumeric, not unknown);
            a sentence with none has nothing to translate.
        start_id: a decoder-only model's decoder start, the prompt's last token (``<sep>``
            in our prefix LM; ``tokens`` and ``ids`` then hold the S tokens before it), or
            None: an encoder-decoder's decoder starts with its config's ``bos_id``.
        chat: the text was read inside the model's chat template (one user turn).
    """

    text: str
    src_lang: str | None
    task: str | None
    pieces: tuple[str, ...]
    tokens: tuple[str, ...]
    ids: np.ndarray
    labels: tuple[str, ...]
    words: tuple[int, ...]
    unknown_words: tuple[str, ...] = ()
    suggestions: tuple[tuple[str, ...], ...] = ()
    known_words: int = 0
    start_id: int | None = None
    chat: bool = False


@dataclass(frozen=True)
class ModelInfo:
    """What a model is, in one place, fixed when it is loaded (``Translator.info``): the one
    way to ask which backend a model has and what it offers.

    Attributes:
        backend: ``"ours"`` (a checkpoint of this project) or ``"huggingface"``.
        model_type: the Hugging Face ``model_type`` (``"marian"``, ``"t5"``, ...) or
            ``"transformer"`` for ours.
        subword: True when no word is ever unknown (a subword tokenizer; words may be
            several pieces).
        positional_scheme: ``"sinusoidal"`` (the paper's, sin and cos interleaved),
            ``"sinusoidal-halves"`` (Marian, M2M100), ``"learned"`` (BART) or
            ``"relative"`` (T5: a bias per head on the scores).
        languages: a multilingual model's language codes (``src_lang`` / ``tgt_lang``);
            empty otherwise.
        task_prefixes: text a T5-style model expects before the sentence, per task.
        examples: example sentences for the sidebar.
        eos_token: the end-of-sentence token as a string.
        max_source_words: the most source tokens a sentence may have (one position is kept
            for ``</s>``).
        default_max_new_tokens: the length limit ``generate`` uses when none is given.
        early_stopping: whether beam search stops once ``num_beams`` hypotheses finished.
        heldout: the folder's held-out (source, reference) pairs (``core.heldout``), or ().
        trained_source_tokens: the longest source the model was trained on, in tokens
            (``</s>`` included; the card's ``data.source_tokens.max``), or None when its
            card does not say: past it the model has seen no example.
        train_counts: how often each source word and piece occurred in training
            (``core.counts.TrainCounts``, the folder's ``train_counts.json``), or None
            (a Hugging Face model, or a folder without the file).
        source_language, target_language: what the model reads and writes, as ISO 639-1
            codes (``"en"``, ``"zh"``; a card's ``languages``, ours default to en -> zh),
            or ``""`` when not known (a multilingual model). The views put pinyin and
            glosses under whichever side is ``"zh"``.
        architecture: ``"encoder-decoder"`` or ``"decoder-only"`` (one stack: the prompt
            and the continuation in one sequence, ``backends.one_stack``; its traces hold
            one (L, H, N, N) self-attention map and no encoder or cross-attention).
        rope_base: a rotary model's base theta when its frequencies follow the paper's
            formula (``core.rope.inverse_frequencies``; Hugging Face's ``rope_type``
            "default"), else None (no RoPE, or a scaled variant).
        num_key_value_heads: the key/value heads a layer's query heads share under
            grouped-query attention (``core.config.kv_head_of``), or None: one per query
            head.
        chat_template: its tokenizer has a chat template (an instruct model): a prompt may
            be read as one user turn (``GenerationSettings.chat``).
    """

    backend: str
    model_type: str
    subword: bool
    positional_scheme: str
    languages: tuple[str, ...]
    task_prefixes: dict[str, str]
    examples: tuple[str, ...]
    eos_token: str
    max_source_words: int
    default_max_new_tokens: int
    early_stopping: bool
    heldout: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    trained_source_tokens: int | None = None
    train_counts: TrainCounts | None = field(default=None, repr=False, compare=False)
    source_language: str = "en"
    target_language: str = "zh"
    architecture: str = "encoder-decoder"
    rope_base: float | None = None
    num_key_value_heads: int | None = None
    chat_template: bool = False


@dataclass(frozen=True)
class AttributionInputs:
    """One decoding as embeddings, and the model as a function of them: what gradient
    attributions (``analysis.attribution``) need of either backend.

    Attributes:
        src: (1, S, D) the source tokens' embeddings, as the model reads them.
        tgt: (1, T, D) the decoder inputs' embeddings (``<s>`` and the tokens chosen but
            the last), in the same space.
        src_pad, tgt_pad: (D,) each side's ``<pad>`` embedding in that space: the baseline.
        step_function: ``step_function(t, token)`` is f(src (B, S, D), tgt (B, t + 1, D))
            -> (B,) the log-probability of ``token`` after decoder inputs 0..t.
    """

    src: torch.Tensor
    tgt: torch.Tensor
    src_pad: torch.Tensor
    tgt_pad: torch.Tensor
    step_function: Callable[[int, int], Callable[[torch.Tensor, torch.Tensor], torch.Tensor]]
