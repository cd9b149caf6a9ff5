"""The one translator class: a pretrained encoder-decoder with its tokenizers, composed of
the parts each backend supplies (``parts``), with what both backends share written once
here: reading a sentence into a ``SourceSentence`` (``source``), ``generate`` and
``teacher_force`` through ``model.decoding``, and the ``DecodeTrace`` they return.

>>> from model import load_pretrained
>>> m = load_pretrained("en-zh")
>>> trace = m.generate("why do we work ?")
>>> trace.output_text
'我们为什么工作？'

Both backends are this class; a loader plugs in its backend's parts
(``ours.build_translator``, ``hf.build_translator``, called by ``load.load_pretrained``):

- ours: ``Transformer``, ``ours.OurSource``, ``ours.OurTarget``, ``ours.OurInternals``;
- Hugging Face: ``hf.HFSeq2Seq``, ``hf_tokenizer.HFSource``, ``hf_tokenizer.HFTarget``,
  ``hf.HFInternals``.

It keeps the name ``Translator``, which the app, the analysis and the tests use as the
type of any model (``from model import Translator``), so there is no second class for
Hugging Face models: which backend a model has is ``info.backend``, never its type. What it
offers is ``protocol.Backend``, all of it and nothing more.

Shape letters: S source length, T decoder inputs, D d_model.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Sequence

import numpy as np
import torch

from ..core.config import end_ids
from ..core.sublayers import SublayerNorms
from ..core.vocab import normalize_text, tokenize_en
from ..decoding import (
    BeamTrace,
    DecodeTrace,
    GenerationSettings,
    beam_search,
    greedy_decode,
    join_blocks,
    run_decoder,
    sample_decode,
)
from ..errors import InputError
from ..tasks import TASKS, get_task
from .heads import check_heads
from .heads import heads_off as ablation_heads_off
from .parts import EncoderDecoder, Internals, SourceSide, TargetSide
from .records import EmbeddingParts, HeadInputs, ModelInfo, SourceSentence

MAX_INPUT_CHARS = 300  # longer text is refused before any work is done


class Translator:
    """A pretrained encoder-decoder with its tokenizers: all that the app and the analysis
    use of a model (``protocol.Backend``). Read-only after construction: the same instance
    serves every caller (every browser session) at once.

    Attributes:
        name: the folder's name; card: the model card (dict); config: the
            ``TransformerConfig`` (the network's); model: the eval-mode network
            (``parts.EncoderDecoder``: ``Transformer`` or ``hf.HFSeq2Seq``);
        info: ``records.ModelInfo``, what the model is (backend, languages, positions...);
        target: the target side (``parts.TargetSide``: vocabulary, ids, text, forced tokens).
    The methods: ``source`` (read a sentence once), ``generate``, ``teacher_force``,
    ``grammar_translation``, and the internals' views ``mask_views``,
    ``positional_encoding``, ``relative_position_bias``, ``head_inputs``,
    ``embedding_parts`` and ``encoder_sublayers``.
    """

    def __init__(self, *, model: EncoderDecoder, source_side: SourceSide, target: TargetSide,
                 internals: Internals, info: ModelInfo, card: dict, name: str = "") -> None:
        self.model, self.card, self.name, self.info = model, card, name, info
        self.config = model.config
        self.target = target
        self._source_side, self._internals = source_side, internals

    def _check_input(self, text: str, prefix: str = "") -> list[str]:
        """Validate a sentence and return the pieces (``SourceSide.tokenize``) of ``prefix``
        (a task's) and the sentence.

        Raises:
            InputError: not a string, empty or only spaces/invisible characters, no word
                (only punctuation or symbols), longer than MAX_INPUT_CHARS characters, or
                more than ``info.max_source_words`` tokens.
        """
        if not isinstance(text, str):
            raise InputError(f"expected text, got {type(text).__name__}")
        if len(text) > MAX_INPUT_CHARS:
            raise InputError(
                f"The sentence is {len(text):,} characters long; the limit is "
                f"{MAX_INPUT_CHARS}. This model translates one short sentence at a time."
            )
        if not normalize_text(text).strip():
            raise InputError("Please type a sentence: the text is empty.")
        tokenize = self._source_side.tokenize
        tokens = tokenize(prefix + text)
        if self.info.subword:
            has_word = any(ch.isalnum() for ch in normalize_text(text))
        else:  # a word among the sentence's own tokens
            has_word = any(t.isalnum() for t in (tokenize(text) if prefix else tokens))
        if not has_word:
            raise InputError("Please type a sentence: the text has no words, only symbols.")
        limit = self.info.max_source_words
        if len(tokens) > limit:
            raise InputError(
                f"The sentence has {len(tokens)} tokens; this model takes at most "
                f"{limit}."
            )
        return tokens

    def source(self, text: str, src_lang: str | None = None, task: str | None = None,
               chat: bool = False) -> SourceSentence:
        """Read a sentence once: validate it, tokenise it, and give its encoder input
        tokens, ids, labels, words and unknown words (``records.SourceSentence``).
        ``generate`` and ``teacher_force`` take the result in place of the text.

        Args:
            text: the sentence; src_lang: its language for a multilingual model (one of
                ``info.languages``), else None; task: a T5-style model's task (one of
                ``info.task_prefixes``), whose prefix is read before the sentence; chat: an
                instruct model's chat template around it (``info.chat_template``).

        Raises:
            InputError: not a string, empty or only spaces/invisible characters, no word
                (only punctuation or symbols), longer than MAX_INPUT_CHARS characters, more
                than ``info.max_source_words`` tokens, or a language or task the model does
                not have.
        """
        GenerationSettings(src_lang=src_lang, task=task, chat=chat).check_for(
            self.config.max_len, self.info.languages, tasks=self.info.task_prefixes,
            chat=self.info.chat_template)
        pieces = self._check_input(text, self.info.task_prefixes[task] if task else "")
        side = self._source_side
        if chat:  # the template's ids (hf_causal.CausalSource, which has one)
            ids = side.chat_ids(text)
            pieces = list(side.tokens(pieces, ids))
        else:
            ids = side.encode(pieces, src_lang)  # (S,); a decoder-only model's prompt (P,)
        tokens = side.tokens(pieces, ids)
        start = None
        if self.info.architecture == "decoder-only":  # the last starts the decoder inputs
            ids, tokens, start = ids[:-1], tokens[:-1], int(ids[-1])
        vocab = side.vocab
        unknown = tuple(vocab.unknown(tokens))
        return SourceSentence(
            text=text, src_lang=src_lang, task=task, pieces=tuple(pieces), tokens=tokens,
            ids=np.asarray(ids, dtype=np.int64), labels=side.labels(tokens),
            words=side.words(tokens), unknown_words=unknown,
            suggestions=tuple(() if self.info.subword else tuple(vocab.suggest(w, 3))
                              for w in unknown),
            known_words=sum(tok.isalnum() and tok in vocab for tok in pieces), start_id=start,
            chat=chat)

    def _read(self, text: str | SourceSentence, settings: GenerationSettings
              ) -> SourceSentence:
        """``text`` as a SourceSentence in the settings' ``src_lang`` and ``task``: itself
        when it already is one (read so), else ``source``."""
        lang, task, chat = settings.src_lang, settings.task, settings.chat
        if isinstance(text, SourceSentence):
            if (text.src_lang, text.task, text.chat) == (lang, task, chat):
                return text
            text = text.text
        return self.source(text, lang, task, chat)

    def generate(self, text: str | SourceSentence, settings: GenerationSettings | None = None, *,
                 prefix: str | Sequence[str] | None = None, num_candidates: int = 10,
                 heads_off: Collection[tuple[str, int, int]] = (), **overrides) -> DecodeTrace:
        """Translate ``text`` one token at a time, recording every step.

        How to decode is a ``GenerationSettings`` (Hugging Face ``generate()``'s names),
        given whole or as keyword overrides of its fields (``generate(text, num_beams=4)``):
        greedy by default; beam search when ``num_beams`` > 1 (the trace's maps are those of
        the best hypothesis, and ``trace.beam`` records every beam); sampling when
        ``do_sample`` (``temperature``, ``top_k``, ``top_p``, reproducible for a ``seed``);
        the positional-encoding experiments ``positional="none"`` / ``"shuffled"``
        (``core.layers.positional_tables``); a multilingual model's ``src_lang`` /
        ``tgt_lang`` (the target language is forced first, as ``forced_bos_token_id``).
        A decoder-only model stops where its positions end. Nothing is stored on the model.

        Args:
            text: the source sentence, or a ``SourceSentence`` of it (``source``; read
                again if it was read in another language than ``settings.src_lang``).
            settings: how to decode (default ``GenerationSettings()``: greedy; its
                ``max_new_tokens`` None means ``default_max_new_tokens``).
            prefix: target tokens to force first (a Chinese string or a token list);
                decoding continues from there with the chosen strategy.
            num_candidates: how many next-token candidates each DecodeStep keeps (K).
            heads_off: (kind, layer, head) keys of heads to switch off (``backends.heads``:
                zeroed before W_O as Michel et al. 2019); kind ``encoder``, ``decoder``, ``cross``.
            overrides: ``GenerationSettings`` fields replacing those of ``settings``.

        Returns:
            DecodeTrace (float32 numpy arrays, shapes in its docstring), with the settings
            used and the heads switched off.

        Raises:
            InputError: see ``source``; a setting out of range (``GenerationSettings``: also
                max_new_tokens beyond the model's positions or shorter than the prefix, a
                language the model lacks); a prefix token outside the target vocabulary; a
                head in ``heads_off`` outside the model.
        """
        settings = (settings or GenerationSettings()).replace(**overrides)
        off = check_heads(heads_off, self.config)
        src = self._read(text, settings)
        forced = self.target.ids(prefix) if prefix is not None else []
        forced = self.target.forced_start(forced, settings.tgt_lang) if forced else forced
        settings.check_for(self.config.max_len, self.info.languages, len(forced),
                           self.info.task_prefixes, chat=self.info.chat_template)
        run = self._fit(src, settings.resolved(self.info.default_max_new_tokens,
                                               self.info.early_stopping))
        src_ids = torch.from_numpy(src.ids)[None]  # (1, S)
        tables = self._internals.pe_tables(src_ids.size(1), run.positional, run.positional_seed)
        processors = self.target.processors(run.max_new_tokens, run.tgt_lang)
        options = dict(forced=forced, pe_tables=tables, tgt_itos=self.target.vocab.itos,
                       start_id=src.start_id)
        with ablation_heads_off(self.model, off, self.config.nhead):  # decoding only
            if run.num_beams > 1:
                result, beam = self._beam_search(src_ids, run, processors, options,
                                                 num_candidates=num_candidates)
            else:
                decode = sample_decode if run.do_sample else greedy_decode
                result, beam = decode(self.model, src_ids, run, processors,
                                      num_candidates=num_candidates, **options), None
        return self._trace(src, result, settings=settings, heads_off=off, beam=beam)

    def _fit(self, src: SourceSentence, run: GenerationSettings) -> GenerationSettings:
        """``run`` with a decoder-only model's ``max_new_tokens`` cut to ``_room``."""
        if src.start_id is None:
            return run
        return run.replace(max_new_tokens=min(run.max_new_tokens, self._room(src)))

    def _room(self, src: SourceSentence) -> int:
        """How many decoder inputs fit after a decoder-only model's S prompt tokens:
        max_len - S (the decoding stops there, as at an encoder-decoder's max_len - 1)."""
        return self.config.max_len - len(src.ids)

    def _beam_search(self, src_ids: torch.Tensor, run: GenerationSettings,
                     processors: list, options: dict, *, num_candidates: int
                     ) -> tuple[DecodeTrace, BeamTrace]:
        """``generate``'s beam search of (1, S) ``src_ids`` with resolved settings ``run``
        (``decoding.beam_search``), and the trace of its best hypothesis: one pass that
        forces its tokens (``run_decoder``), its steps forced up to the prefix or the
        target side's forced first token. ``options``: ``forced``, ``pe_tables`` and
        ``tgt_itos``, as the strategies take them."""
        beam = beam_search(self.model, src_ids, run, processors, **options)
        best = beam.hypotheses[0].ids  # its maps: one pass that forces its tokens
        result = run_decoder(self.model, src_ids, run.replace(max_new_tokens=len(best)),
                             processors, **{**options, "forced": best},
                             num_candidates=num_candidates)
        lead = max(len(options["forced"]), len(self.target.forced_start([], run.tgt_lang)))
        result = dataclasses.replace(result, n_forced=min(lead, len(best)), steps=tuple(
            dataclasses.replace(step, forced=step.index < lead) for step in result.steps))
        return result, beam

    def teacher_force(self, text: str | SourceSentence, reference: str | Sequence[str],
                      settings: GenerationSettings | None = None, *, num_candidates: int = 10,
                      heads_off: Collection[tuple[str, int, int]] = (), **overrides
                      ) -> DecodeTrace:
        """Feed a reference translation to the decoder (teacher forcing) and record, at each
        step, the model's probability of the reference token and its attention.

        ``</s>`` is appended to the reference unless it ends with it or already fills the
        max_len - 1 tokens a decoding may produce (a decoding cut off at the length limit
        is scored as it is). Each step's ``prob`` is
        the model's probability of the reference token; ``top_tokens[0]`` is what the model
        would have chosen there itself. Of the ``settings`` (or ``overrides``), the languages
        and the positional experiment apply; ``heads_off`` switches heads off as in
        ``generate``.

        Raises:
            InputError: see ``source``; an empty reference, one longer than max_len - 1
                tokens, or with tokens outside the target vocabulary; a setting out of range
                or a language the model does not have; a head in ``heads_off`` outside the
                model.
        """
        settings = (settings or GenerationSettings()).replace(**overrides)
        settings.check_for(self.config.max_len, self.info.languages,
                           tasks=self.info.task_prefixes, chat=self.info.chat_template)
        off = check_heads(heads_off, self.config)
        src = self._read(text, settings)
        forced = self.target.ids(reference, "reference")
        if not forced:
            raise InputError("The reference translation is empty.")
        forced = self.target.forced_start(forced, settings.tgt_lang)
        limit = self.config.max_len - 1 if src.start_id is None else self._room(src)
        if forced[-1] not in end_ids(self.config) and len(forced) < limit:  # not cut off
            forced.append(self.config.eos_id)
        if len(forced) > limit:
            raise InputError(f"The reference has {len(forced)} tokens; at most {limit} fit.")
        src_ids = torch.from_numpy(src.ids)[None]  # (1, S)
        tables = self._internals.pe_tables(src_ids.size(1), settings.positional,
                                           settings.positional_seed)
        with ablation_heads_off(self.model, off, self.config.nhead):
            result = run_decoder(self.model, src_ids, GenerationSettings(
                max_new_tokens=len(forced)), forced=forced, pe_tables=tables,
                tgt_itos=self.target.vocab.itos, num_candidates=num_candidates,
                start_id=src.start_id)
        return self._trace(src, result, settings=settings, heads_off=off, teacher_forced=True)

    def _trace(self, src: SourceSentence, result: DecodeTrace, *,
               settings: GenerationSettings, heads_off: tuple, beam: BeamTrace | None = None,
               teacher_forced: bool = False) -> DecodeTrace:
        """``run_decoder``'s trace with the sentence's side filled in: the text, its tokens
        and their labels and words, unknown words, the settings, the heads switched off,
        the beams and the text; every target token with what a person reads for it
        (``target.labels``)."""
        labels = self.target.labels
        start = [self.config.bos_id if src.start_id is None else src.start_id]
        if beam is not None:
            beam = dataclasses.replace(beam, hypotheses=tuple(
                dataclasses.replace(h, text=self.target.text(np.array([*start, *h.ids])))
                for h in beam.hypotheses), steps=tuple(
                tuple(dataclasses.replace(c, label=labels([c.token_id])[0]) for c in step)
                for step in beam.steps))
        steps = tuple(dataclasses.replace(s, label=labels([s.token_id])[0],
                                          top_labels=labels(s.top_ids))
                      for s in result.steps)
        return dataclasses.replace(
            result,
            steps=steps,
            tgt_labels=labels(result.tgt_ids),
            src_text=src.text,
            src_tokens=src.tokens,
            src_ids=src.ids.copy(),
            unknown_words=src.unknown_words,
            settings=settings,
            heads_off=heads_off,
            teacher_forced=teacher_forced,
            beam=beam,
            src_labels=src.labels,
            src_words=src.words,
            output_text=self.target.text(result.tgt_ids),
            **self._one_map(result),
        )

    def _one_map(self, result: DecodeTrace) -> dict:
        """For a decoder-only model, the trace's maps as one sequence's
        (``decoding.join_blocks``: decoder_attentions (L, H, N, N), no encoder or
        cross-attention); nothing to change for an encoder-decoder."""
        if self.info.architecture != "decoder-only":
            return {}
        return {"architecture": "decoder-only", "encoder_attentions": None,
                "cross_attentions": None, "decoder_attentions": join_blocks(
                    result.encoder_attentions, result.cross_attentions,
                    result.decoder_attentions)}

    def grammar_translation(self, text: str) -> str | None:
        """The translation the model's synthetic grammar gives ``text``, or None when the
        sentence is outside that grammar (or the task has no parser). A model is only
        trained on sentences of its grammar: outside it, expect mistakes."""
        task = card_task(self.card)
        if task is None or not hasattr(task, "translate"):
            return None
        try:
            return task.translate(" ".join(tokenize_en(text)))
        except ValueError:
            return None

    # --- the internals' views (``parts.Internals``) -------------------------------------

    def mask_views(self, src_tokens: list[str], tgt_tokens: list[str], pad: int = 0
                   ) -> dict[str, np.ndarray]:
        """The model's masks for a sentence pair right-padded with ``pad`` ``<pad>`` tokens
        on both sides (as when it shares a batch with longer sentences): ``masks.mask_views``,
        bool arrays, True = blocked."""
        return self._internals.mask_views(src_tokens, tgt_tokens, pad)

    def positional_encoding(self, length: int, side: str = "source") -> np.ndarray:
        """The (length, D) float32 vectors the encoder (``side="source"``) or the decoder
        (``"target"``) adds at positions 0..length-1.

        Raises:
            ValueError or InputError: ``length`` outside 1..max_len; a model that adds no
                vectors (T5: ``relative_position_bias``).
        """
        return self._internals.positional_encoding(length, side)

    def relative_position_bias(self, q_len: int, k_len: int, side: str = "encoder"
                               ) -> np.ndarray | None:
        """The relative position bias (H, q_len, k_len) float32 that T5 adds to the scores,
        or None for a model that adds position vectors instead (``positional_encoding``)."""
        return self._internals.relative_position_bias(q_len, k_len, side)

    def head_inputs(self, trace: DecodeTrace, kind: str, *, layer: int, head: int
                    ) -> HeadInputs:
        """What one head of one attention sublayer is recomputed from: its sublayer's
        inputs x_q (Tq, D), x_k (Tk, D) in one teacher-forced pass over ``trace``'s tokens,
        the layer's own (q, k, v) projections, the scaling and a position bias or None.
        ``kind``, ``layer`` and ``head`` are checked by the caller
        (``analysis.internals.head_internals``)."""
        return self._internals.head_inputs(trace, kind, layer=layer, head=head)

    def embedding_parts(self, tokens: Sequence[str], side: str, *, positional: str = "normal",
                        positional_seed: int = 0) -> EmbeddingParts:
        """The first layer's input for T tokens in its two parts (paper, sections 3.4 and
        3.5): the scaled token embedding and the position vectors, (T, D) float32 each.
        Arguments are checked by the caller (``analysis.internals.embedding_parts``).

        Raises:
            InputError: a positional experiment the model does not have.
        """
        return self._internals.embedding_parts(tokens, side, positional=positional,
                                               positional_seed=positional_seed)

    def encoder_sublayers(self, trace: DecodeTrace) -> SublayerNorms | None:
        """What each encoder sublayer adds to each source token of ``trace``
        (``core.sublayers``), or None where the backend does not take its layers apart."""
        return self._internals.encoder_sublayers(trace)


# --- what a model card says, for either backend's ``ModelInfo`` ------------------------------


def card_task(card: dict):
    """The synthetic task named by the card (``grammar``, else ``task``), or None."""
    task = card.get("grammar", card.get("task"))
    return get_task(task) if task in TASKS else None


def card_examples(card: dict) -> tuple[str, ...]:
    """Example sentences: the card's ``examples`` list, else its task's (empty if neither
    has any)."""
    listed = card.get("examples")
    if isinstance(listed, list) and all(isinstance(x, str) for x in listed):
        return tuple(listed)
    task = card_task(card)
    return tuple(task.EXAMPLES) if task is not None else ()


def trained_source_tokens(card: dict) -> int | None:
    """The card's ``data.source_tokens.max`` when it is a positive integer, else None."""
    data = card.get("data")
    lengths = data.get("source_tokens") if isinstance(data, dict) else None
    longest = lengths.get("max") if isinstance(lengths, dict) else None
    return longest if isinstance(longest, int) and not isinstance(longest, bool) \
        and longest > 0 else None
