"""The one interface every backend offers (``translator.Translator``, with our parts or
Hugging Face's, ``parts``): what the app and the analysis use of a model, and all of it.
Code that holds a model never asks which backend it has; what differs is in ``info``
(``records.ModelInfo``).

Shape letters: S source length, T decoder inputs, Tq / Tk query / key length, D d_model,
H heads.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any, Protocol, runtime_checkable

from ..decoding import DecodeTrace, GenerationSettings
from .parts import EncoderDecoder, InternalsViews, TargetSide
from .records import ModelInfo, SourceSentence


@runtime_checkable
class Backend(InternalsViews, Protocol):
    """A pretrained encoder-decoder with its tokenizers, read-only and shared by every
    caller. Sixteen members:

    - ``name``, ``card`` (the model card, a dict), ``config`` (``TransformerConfig``),
      ``model`` (the ``nn.Module`` with ``encode`` / ``decode``), ``info`` (``ModelInfo``)
      and ``target`` (the target side, ``parts.TargetSide``: ``vocab``, ``ids``,
      ``forced_start``, ``text``, ``labels``, ``processor``);
    - reading and decoding: ``source``, ``generate``, ``teacher_force``,
      ``grammar_translation``;
    - what the views and the analysis recompute (``parts.InternalsViews``): ``mask_views``,
      ``positional_encoding``, ``relative_position_bias``, ``head_inputs``,
      ``embedding_parts``, ``encoder_sublayers``.

    Each method's arguments, shapes and errors are in ``translator.Translator``'s docstrings.
    """

    name: str
    card: dict
    config: Any
    model: EncoderDecoder
    info: ModelInfo
    target: TargetSide

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
