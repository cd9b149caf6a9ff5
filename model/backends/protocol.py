"""The one interface every backend offers (``ours.Translator``, ``hf.HFTranslator``): what
the app and the analysis use of a model, and all of it. Code that holds a model never asks
which backend it has; what differs is in ``info`` (``records.ModelInfo``).

Shape letters: S source length, T decoder inputs, Tq / Tk query / key length, D d_model,
H heads.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ..core.sublayers import SublayerNorms
from ..decoding import DecodeTrace, GenerationSettings
from .records import EmbeddingParts, HeadInputs, ModelInfo, SourceSentence


@runtime_checkable
class Backend(Protocol):
    """A pretrained encoder-decoder with its tokenizers, read-only and shared by every
    caller. Sixteen members:

    - ``name``, ``card`` (the model card, a dict), ``config`` (``TransformerConfig``),
      ``model`` (the ``nn.Module`` with ``encode`` / ``decode``), ``info`` (``ModelInfo``)
      and ``target`` (the target side: ``vocab``, ``ids``, ``forced_start``, ``text``,
      ``processor``; ``ours.Target``);
    - reading and decoding: ``source``, ``generate``, ``teacher_force``,
      ``grammar_translation``;
    - what the views and the analysis recompute: ``mask_views``, ``positional_encoding``,
      ``relative_position_bias``, ``head_inputs``, ``embedding_parts``,
      ``encoder_sublayers``.

    Each method's arguments, shapes and errors are in ``ours.Translator``'s docstrings.
    """

    name: str
    card: dict
    config: Any
    model: Any
    info: ModelInfo
    target: Any

    def source(self, text: str, src_lang: str | None = None) -> SourceSentence:
        """The sentence read once: tokens, (S,) ids, labels, words, unknown words."""

    def generate(self, text: str | SourceSentence, settings: GenerationSettings | None = None,
                 *, prefix: str | Sequence[str] | None = None, num_candidates: int = 10,
                 heads_off: Collection[tuple[str, int, int]] = (), **overrides) -> DecodeTrace:
        """Decode one token at a time (greedy, beam search or sampling), recording all."""

    def teacher_force(self, text: str | SourceSentence, reference: str | Sequence[str],
                      settings: GenerationSettings | None = None, *, num_candidates: int = 10,
                      heads_off: Collection[tuple[str, int, int]] = (), **overrides
                      ) -> DecodeTrace:
        """Feed a reference to the decoder and record each step."""

    def grammar_translation(self, text: str) -> str | None:
        """The synthetic grammar's translation of ``text``, or None outside it."""

    def mask_views(self, src_tokens: list[str], tgt_tokens: list[str], pad: int = 0
                   ) -> dict[str, np.ndarray]:
        """The masks (bool, True = blocked) of a sentence pair padded by ``pad``."""

    def positional_encoding(self, length: int, side: str = "source") -> np.ndarray:
        """The (length, D) position vectors one side adds to its embeddings."""

    def relative_position_bias(self, q_len: int, k_len: int, side: str = "encoder"
                               ) -> np.ndarray | None:
        """A relative position bias (H, q_len, k_len) on the scores, or None."""

    def head_inputs(self, trace: DecodeTrace, kind: str, layer: int, head: int
                    ) -> HeadInputs:
        """What one head is recomputed from: its sublayer's inputs and projections."""

    def embedding_parts(self, tokens: Sequence[str], side: str, positional: str = "normal",
                        positional_seed: int = 0) -> EmbeddingParts:
        """The first layer's input as token embedding plus position vectors, (T, D) each."""

    def encoder_sublayers(self, trace: DecodeTrace) -> SublayerNorms | None:
        """What each encoder sublayer adds to each source token, or None where the backend
        does not take its layers apart."""
