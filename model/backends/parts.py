"""The parts a backend supplies to ``translator.Translator``, each a small interface with
one implementation per backend (ours in ``ours``, Hugging Face's in ``hf`` and
``hf_tokenizer``). ``Translator`` holds one of each and writes, once, what both backends
share: reading a sentence into a ``SourceSentence``, ``generate``, ``teacher_force`` and the
``DecodeTrace``.

- ``EncoderDecoder``: the network (``core.transformer.Transformer``, ``hf.HFSeq2Seq``):
  ``encode``, one cached ``decode`` step, ``reorder_cache`` and one layer's ``attention``:
  what ``model.decoding`` and ``heads`` call.
- ``SourceSide``: the source tokenizer (``ours.OurSource``, ``hf_tokenizer.HFSource``): text
  to pieces, pieces to encoder input ids and tokens, their labels and words.
- ``TargetSide``: the target vocabulary and what ``generate()`` forces
  (``ours.OurTarget``, ``hf_tokenizer.HFTarget``); ``Translator.target`` is this part.
- ``Internals``: what the views and the analysis recompute of the model
  (``ours.OurInternals``, ``hf.HFInternals``): masks, positions, one head's inputs, the
  embeddings, the encoder's sublayers (``InternalsViews``, which ``protocol.Backend``
  offers too), and the tables of a positional experiment.

Shape letters: B batch, S source length, T decoder inputs, Tq / Tk query / key length,
D d_model, H heads, V vocabulary size. Masks are boolean, True = blocked.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np
import torch

from ..core.sublayers import SublayerNorms
from ..core.transformer import DecoderOutput, EncoderOutput
from ..core.vocab import TokenTable
from ..decoding import DecodeTrace, LogitsProcessor
from .records import EmbeddingParts, HeadInputs


@runtime_checkable
class EncoderDecoder(Protocol):
    """The network: ``Transformer`` or ``hf.HFSeq2Seq``, read-only and shared."""

    config: Any  # core.config.TransformerConfig

    def encode(self, src_ids: torch.Tensor, *, pe_table: torch.Tensor | None = None
               ) -> EncoderOutput:
        """(B, S) source ids -> memory (B, S, D), attentions, key padding mask (B, S)."""

    def decode(self, tgt_ids: torch.Tensor, memory: torch.Tensor,
               memory_key_padding_mask: torch.Tensor | None = None, *, past_key_values=None,
               pe_table: torch.Tensor | None = None) -> DecoderOutput:
        """(B, T) decoder inputs (only the new ones with ``past_key_values``) -> logits
        (B, T, V), attentions, the cache."""

    def reorder_cache(self, cache, index: torch.Tensor):
        """The cache of beams ``index`` (n,)."""

    def attention(self, kind: str, layer: int):
        """The attention module of ``kind`` in ``layer`` and its q, k, v names."""

    def num_parameters(self) -> int:
        """Number of parameters."""


@runtime_checkable
class SourceSide(Protocol):
    """The source tokenizer: ``ours.OurSource`` or ``hf_tokenizer.HFSource``.

    Attributes:
        vocab: the source token table (``unknown``, ``suggest``, ``in``).
    """

    vocab: TokenTable

    def tokenize(self, text: str) -> list[str]:
        """The pieces of ``text``, without special tokens."""

    def encode(self, pieces: list[str], src_lang: str | None = None) -> list[int]:
        """Pieces -> the S encoder input ids, special tokens (``</s>``) added."""

    def tokens(self, pieces: list[str], src_ids: list[int]) -> tuple[str, ...]:
        """The S encoder input tokens of ``pieces`` whose ids are ``src_ids``."""

    def labels(self, tokens: Sequence[str]) -> tuple[str, ...]:
        """What a person reads for each token (``Ġlearn`` -> ``learn``)."""

    def words(self, tokens: Sequence[str]) -> tuple[int, ...]:
        """The word index of each token (pieces of one word share one)."""


@runtime_checkable
class TargetSide(Protocol):
    """The target side: ``ours.OurTarget`` or ``hf_tokenizer.HFTarget``.

    Attributes:
        vocab: the target token table (``itos``, ``stoi``, ``encode``, ``decode``).
    """

    vocab: TokenTable

    def ids(self, tokens: str | Sequence[str], what: str = "prefix") -> list[int]:
        """Target text or tokens as ids (``InputError`` for one the model cannot produce)."""

    def forced_start(self, ids: list[int], tgt_lang: str | None = None) -> list[int]:
        """``ids`` with the token ``generate()`` forces first in front when missing."""

    def text(self, tgt_ids: np.ndarray) -> str | None:
        """The text of decoder ids ``<s> y1 .. yn``, or None for the tokens joined."""

    def labels(self, ids) -> tuple[str, ...]:
        """What a person reads for each of the ids."""

    def processors(self, max_new_tokens: int, tgt_lang: str | None = None
                   ) -> list[LogitsProcessor]:
        """What ``generate()`` does to each step's log-probabilities, in order (a list of
        ``decoding.LogitsProcessor``; empty for none)."""


@runtime_checkable
class InternalsViews(Protocol):
    """What the views and the analysis recompute of a model: the part of
    ``protocol.Backend`` that ``Translator`` hands to its ``Internals``."""

    def mask_views(self, src_tokens: list[str], tgt_tokens: list[str], pad: int = 0
                   ) -> dict[str, np.ndarray]:
        """The masks (bool, True = blocked) of a sentence pair padded by ``pad``."""

    def positional_encoding(self, length: int, side: str = "source") -> np.ndarray:
        """The (length, D) position vectors one side adds to its embeddings."""

    def relative_position_bias(self, q_len: int, k_len: int, side: str = "encoder"
                               ) -> np.ndarray | None:
        """A relative position bias (H, q_len, k_len) on the scores, or None."""

    def head_inputs(self, trace: DecodeTrace, kind: str, *, layer: int, head: int
                    ) -> HeadInputs:
        """What one head is recomputed from: its sublayer's inputs and projections."""

    def embedding_parts(self, tokens: Sequence[str], side: str, *, positional: str = "normal",
                        positional_seed: int = 0) -> EmbeddingParts:
        """The first layer's input as token embedding plus position vectors, (T, D) each."""

    def encoder_sublayers(self, trace: DecodeTrace) -> SublayerNorms | None:
        """What each encoder sublayer adds to each source token, or None where the backend
        does not take its layers apart."""


@runtime_checkable
class Internals(InternalsViews, Protocol):
    """A backend's internals: ``ours.OurInternals`` or ``hf.HFInternals``. ``Translator``
    offers the views (``InternalsViews``) under their own names and uses ``pe_tables``
    in its decoding."""

    def pe_tables(self, src_len: int, positional: str = "normal", positional_seed: int = 0
                  ) -> tuple[torch.Tensor | None, torch.Tensor | None]:
        """The (source (S, D), target) tables a positional experiment adds, or (None, None)
        (``InputError`` for an experiment the model does not have)."""
