"""Our own checkpoints as a backend: a trained Transformer with its vocabularies, behind
the interface every backend offers (``hf.HFTranslator`` subclasses it): validated input,
``generate`` and ``teacher_force`` returning a ``DecodeTrace``, the masks, the positional
encodings, and what the analysis code recomputes one head or the embeddings from
(``head_inputs``, ``embedding_parts``).

>>> from model import load_pretrained
>>> m = load_pretrained("en-zh")
>>> trace = m.generate("why do we work ?")
>>> trace.output_text
'我们为什么工作？'

Shape letters: S source length, T decoder inputs, Tq / Tk query / key length, D d_model.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Collection, Sequence

import numpy as np
import torch

from ..core.counts import TrainCounts
from ..core.layers import positional_tables, shuffled_positions
from ..core.masks import mask_views
from ..core.sublayers import SublayerNorms, encoder_sublayer_norms
from ..core.subword import piece_label, pieces, word_ids
from ..core.transformer import Transformer
from ..core.vocab import EOS, SPECIALS, Vocab, normalize_text, tokenize_en, tokenize_zh
from ..decoding import (
    BeamTrace,
    DecodeTrace,
    GenerationSettings,
    beam_search,
    greedy_decode,
    run_decoder,
    sample_decode,
)
from ..errors import InputError
from ..errors import short_repr as _short
from ..tasks import TASKS, get_task
from .heads import check_heads
from .heads import heads_off as ablation_heads_off
from .records import EmbeddingParts, HeadInputs, ModelInfo, SourceSentence, to_numpy

MAX_INPUT_CHARS = 300  # longer text is refused before any work is done


class Target:
    """The target side of one of our models: its vocabulary (one token per Chinese
    character) and how target text and ids convert (``Translator.target``). A Hugging Face
    model's (``hf.HFTarget``) also forces what its ``generate()`` forces.

    Attributes:
        vocab: the target ``Vocab`` (``itos``, ``stoi``, ``encode``, ``decode``).
    """

    def __init__(self, vocab: Vocab, config) -> None:
        self.vocab, self._config = vocab, config

    def ids(self, tokens: str | Sequence[str], what: str = "prefix") -> list[int]:
        """Target tokens (a Chinese string, one token per character, or a token list) as ids.

        Raises:
            InputError: a token outside the target vocabulary, or a special token other
                than a final ``</s>`` (the message names the ``what``, and lists them).
        """
        if isinstance(tokens, str):
            tokens = tokenize_zh(tokens)
        tokens = list(tokens)
        bad = [t for i, t in enumerate(tokens) if t not in self.vocab
               or (t in SPECIALS and not (t == EOS and i == len(tokens) - 1))]
        if bad:
            shown = ", ".join(_short(t, 12) for t in list(dict.fromkeys(bad))[:5])
            raise InputError(f"The {what} has tokens the model cannot produce: {shown}")
        return self.vocab.encode(tokens)

    def forced_start(self, ids: list[int], tgt_lang: str | None = None) -> list[int]:
        """Target ids with the token ``generate()`` forces first (a multilingual model's
        target language) put in front when missing; ours force nothing."""
        return ids

    def text(self, tgt_ids: np.ndarray) -> str | None:
        """The text of decoder ids ``<s> y1 .. yn`` ((n + 1,) int), or None for the trace's
        default (the output tokens joined without spaces)."""
        return None

    def labels(self, ids) -> tuple[str, ...]:
        """What a person reads for each of the ids ((n,) int): ours are characters, so
        the tokens themselves."""
        return tuple(self.vocab.itos[int(i)] for i in ids)

    def processor(self, max_new_tokens: int, tgt_lang: str | None = None):
        """What ``generate()`` would do to each step's log-probabilities
        (``decoding.LogitsProcessor``), or None: our models use their distribution as is."""
        return None


class Translator:
    """A pretrained Transformer with its tokenizers: the interface every backend offers
    (``hf.HFTranslator`` subclasses it), and all that the app and the analysis use of a
    model. Read-only after construction: the same instance serves every caller (every
    browser session) at once.

    Attributes:
        name: the folder's name; card: the model card (dict); config: the
            TransformerConfig; model: the eval-mode ``nn.Module`` (``Transformer``, or
            ``hf.HFSeq2Seq``) with ``encode`` / ``decode``;
        info: ``records.ModelInfo``, what the model is (backend, languages, positions...);
        target: the target side (``Target``: vocabulary, ids, text, forced tokens).
    The methods: ``source`` (read a sentence once), ``generate``, ``teacher_force``,
    ``grammar_translation``, ``mask_views``, ``positional_encoding``,
    ``relative_position_bias``, ``head_inputs`` and ``embedding_parts``.
    """

    def __init__(self, model: Transformer, src_vocab: Vocab, tgt_vocab: Vocab, card: dict,
                 name: str = "", src_tokenizer=None,
                 heldout: tuple[tuple[str, str], ...] = (),
                 train_counts: TrainCounts | None = None) -> None:
        self.model, self.card, self.name = model, card, name
        self._train_counts = train_counts
        self.config = model.config
        self._src_vocab = src_vocab
        self._src_tokenizer = src_tokenizer  # byte-level BPE (core.subword), or None
        self.target = self._make_target(tgt_vocab)
        self.info = self._make_info(tuple(heldout))

    def _make_target(self, vocab: Vocab) -> Target:
        return Target(vocab, self.config)

    def _make_info(self, heldout: tuple[tuple[str, str], ...]) -> ModelInfo:
        c = self.config
        return ModelInfo(
            backend="ours", model_type="transformer", subword=self._src_tokenizer is not None,
            positional_scheme="sinusoidal", languages=(), task_prefixes={},
            examples=tuple(self._examples()), eos_token=self.target.vocab.itos[c.eos_id],
            max_source_words=c.max_len - 1, default_max_new_tokens=c.max_len - 1,
            early_stopping=True, heldout=heldout, trained_source_tokens=self._trained_length(),
            train_counts=self._train_counts)

    def _trained_length(self) -> int | None:
        """The card's ``data.source_tokens.max`` when it is a positive integer, else None."""
        data = self.card.get("data")
        lengths = data.get("source_tokens") if isinstance(data, dict) else None
        longest = lengths.get("max") if isinstance(lengths, dict) else None
        return longest if isinstance(longest, int) and not isinstance(longest, bool) \
            and longest > 0 else None

    def _tokenize(self, text: str) -> list[str]:
        """The source tokens of ``text`` (without ``</s>``): byte-level BPE pieces for a
        subword model (``Ġlearn``, ``ing``; never ``<unk>``), else ``vocab.tokenize_en``."""
        if self._src_tokenizer is None:
            return tokenize_en(text)
        words = " ".join(normalize_text(text).split())  # no leading or repeated spaces
        return pieces(self._src_tokenizer, words)

    @staticmethod
    def _source_labels(tokens: Sequence[str]) -> tuple[str, ...]:
        """Readable labels of source tokens (``subword.piece_label``: ``Ġlearn`` -> ``learn``);
        word-level tokens are their own labels."""
        return tuple(piece_label(tok) for tok in tokens)

    def _check_input(self, text: str, prefix: str = "") -> list[str]:
        """Validate a sentence and return the pieces (``_tokenize``) of ``prefix`` (a task's)
        and the sentence.

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
        tokens = self._tokenize(prefix + text)
        if self.info.subword:
            has_word = any(ch.isalnum() for ch in normalize_text(text))
        else:  # a word among the sentence's own tokens
            has_word = any(t.isalnum() for t in (self._tokenize(text) if prefix else tokens))
        if not has_word:
            raise InputError("Please type a sentence: the text has no words, only symbols.")
        limit = self.info.max_source_words
        if len(tokens) > limit:
            raise InputError(
                f"The sentence has {len(tokens)} tokens; this model takes at most "
                f"{limit}."
            )
        return tokens

    def source(self, text: str, src_lang: str | None = None, task: str | None = None
               ) -> SourceSentence:
        """Read a sentence once: validate it, tokenise it, and give its encoder input
        tokens, ids, labels, words and unknown words (``records.SourceSentence``).
        ``generate`` and ``teacher_force`` take the result in place of the text.

        Args:
            text: the sentence; src_lang: its language for a multilingual model (one of
                ``info.languages``), else None; task: a T5-style model's task (one of
                ``info.task_prefixes``), whose prefix is read before the sentence.

        Raises:
            InputError: not a string, empty or only spaces/invisible characters, no word
                (only punctuation or symbols), longer than MAX_INPUT_CHARS characters, more
                than ``info.max_source_words`` tokens, or a language or task the model does
                not have.
        """
        GenerationSettings(src_lang=src_lang, task=task).check_for(
            self.config.max_len, self.info.languages, tasks=self.info.task_prefixes)
        pieces = self._check_input(text, self.info.task_prefixes[task] if task else "")
        ids = self._encode_source(pieces, src_lang)  # (S,)
        tokens = self._source_tokens(pieces, ids)
        vocab = self._src_vocab
        unknown = tuple(vocab.unknown(tokens))
        return SourceSentence(
            text=text, src_lang=src_lang, task=task, pieces=tuple(pieces), tokens=tokens,
            ids=np.asarray(ids, dtype=np.int64), labels=self._source_labels(tokens),
            words=self._source_words(tokens), unknown_words=unknown,
            suggestions=tuple(() if self.info.subword else tuple(vocab.suggest(w, 3))
                              for w in unknown),
            known_words=sum(tok.isalnum() and tok in vocab for tok in pieces))

    def _encode_source(self, pieces: list[str], src_lang: str | None = None) -> list[int]:
        """Source pieces -> S ids with ``</s>`` appended (``src_lang`` is for
        multilingual models; ours have none)."""
        return self._src_vocab.encode([*pieces, EOS])

    def _read(self, text: str | SourceSentence, settings: GenerationSettings
              ) -> SourceSentence:
        """``text`` as a SourceSentence in the settings' ``src_lang`` and ``task``: itself
        when it already is one (read so), else ``source``."""
        lang, task = settings.src_lang, settings.task
        if isinstance(text, SourceSentence):
            if (text.src_lang, text.task) == (lang, task):
                return text
            text = text.text
        return self.source(text, lang, task)

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
        Nothing is stored on the model.

        Args:
            text: an English sentence, or a ``SourceSentence`` of it (``source``; read
                again if it was read in another language than ``settings.src_lang``).
            settings: how to decode (default ``GenerationSettings()``: greedy; its
                ``max_new_tokens`` None means ``default_max_new_tokens``).
            prefix: target tokens to force first (a Chinese string or a token list);
                decoding continues from there with the chosen strategy.
            num_candidates: how many next-token candidates each DecodeStep keeps (K).
            heads_off: (kind, layer, head) keys of heads to switch off
                (``backends.heads``: their output is zeroed before W_O, as Michel et al.
                2019 mask heads); kind is ``encoder``, ``decoder`` or ``cross``.
            overrides: ``GenerationSettings`` fields replacing those of ``settings``.

        Returns:
            DecodeTrace (float32 numpy arrays; see its docstring for the shapes); its
            ``settings`` are the settings used, ``heads_off`` the heads switched off.

        Raises:
            InputError: see ``source``; a setting out of range
                (``GenerationSettings``: also max_new_tokens beyond the model's positions or
                shorter than the prefix, a language the model does not have); a prefix
                token outside the target vocabulary; a head in ``heads_off`` outside the
                model.
        """
        settings = (settings or GenerationSettings()).replace(**overrides)
        off = check_heads(heads_off, self.config)
        src = self._read(text, settings)
        forced = self.target.ids(prefix) if prefix is not None else []
        forced = self.target.forced_start(forced, settings.tgt_lang) if forced else forced
        settings.check_for(self.config.max_len, self.info.languages, len(forced),
                           self.info.task_prefixes)
        s = settings
        run = s.resolved(self.info.default_max_new_tokens, self.info.early_stopping)
        max_new_tokens = run.max_new_tokens
        src_ids = torch.from_numpy(src.ids)[None]  # (1, S)
        tables = self._pe_tables(src_ids.size(1), s.positional, s.positional_seed)
        processor = run.logits_processor(self.target)
        labels = dict(tgt_itos=self.target.vocab.itos, num_candidates=num_candidates)
        with ablation_heads_off(self.model, off, self.config.nhead):  # decoding only
            beam = None
            if s.num_beams > 1:
                beam = beam_search(self.model, src_ids, s.num_beams, max_new_tokens,
                                   s.length_penalty, forced, tables, processor, run.early_stopping,
                                   tgt_itos=self.target.vocab.itos)
                best = beam.hypotheses[0].ids  # its maps: one pass that forces its tokens
                result = run_decoder(self.model, src_ids, len(best), None, best, tables, processor,
                                     **labels)
                lead = max(len(forced), len(self.target.forced_start([], s.tgt_lang)))
                result = dataclasses.replace(result, n_forced=min(lead, len(best)), steps=tuple(
                    dataclasses.replace(step, forced=step.index < lead) for step in result.steps))
            elif s.do_sample:
                result = sample_decode(self.model, src_ids, max_new_tokens, s.temperature,
                                       s.top_k, s.top_p, s.seed, forced, tables, processor,
                                       **labels)
            else:
                result = greedy_decode(self.model, src_ids, max_new_tokens, forced, tables,
                                       processor, **labels)
        return self._trace(src, result, s, off, beam)

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
                           tasks=self.info.task_prefixes)
        off = check_heads(heads_off, self.config)
        src = self._read(text, settings)
        forced = self.target.ids(reference, "reference")
        if not forced:
            raise InputError("The reference translation is empty.")
        forced = self.target.forced_start(forced, settings.tgt_lang)
        limit = self.config.max_len - 1
        if forced[-1] != self.config.eos_id and len(forced) < limit:  # not a cut-off decoding
            forced.append(self.config.eos_id)
        if len(forced) > limit:
            raise InputError(f"The reference has {len(forced)} tokens; at most {limit} fit.")
        src_ids = torch.from_numpy(src.ids)[None]  # (1, S)
        tables = self._pe_tables(src_ids.size(1), settings.positional, settings.positional_seed)
        with ablation_heads_off(self.model, off, self.config.nhead):
            result = run_decoder(self.model, src_ids, len(forced), None, forced, tables,
                                 tgt_itos=self.target.vocab.itos, num_candidates=num_candidates)
        return self._trace(src, result, settings, off, None, teacher_forced=True)

    def _trace(self, src: SourceSentence, result: DecodeTrace, settings: GenerationSettings,
               heads_off: tuple, beam: BeamTrace | None, teacher_forced: bool = False
               ) -> DecodeTrace:
        """``run_decoder``'s trace with the sentence's side filled in: the text, its tokens
        and their labels and words, unknown words, the settings, the heads switched off,
        the beams and the text; every target token with what a person reads for it
        (``target.labels``)."""
        labels = self.target.labels
        if beam is not None:
            start = [self.config.bos_id]
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
        )

    def _source_tokens(self, pieces: list[str], src_ids: list[int]) -> tuple[str, ...]:
        """The S encoder input tokens of ``pieces`` whose ids are ``src_ids``: the words
        as typed (an unknown one keeps its spelling) and ``</s>``."""
        return (*pieces, EOS)

    def _source_words(self, src_tokens: Sequence[str]) -> tuple[int, ...]:
        """The word index of each encoder input token (``subword.word_ids``)."""
        return word_ids(src_tokens)

    def grammar_translation(self, text: str) -> str | None:
        """The translation the model's synthetic grammar gives ``text``, or None when the
        sentence is outside that grammar (or the task has no parser). A model is only
        trained on sentences of its grammar: outside it, expect mistakes."""
        task = self._task()
        if task is None or not hasattr(task, "translate"):
            return None
        try:
            return task.translate(" ".join(tokenize_en(text)))
        except ValueError:
            return None

    def _task(self):
        """The synthetic task named by the card (``grammar``, else ``task``), or None."""
        task = self.card.get("grammar", self.card.get("task"))
        return get_task(task) if task in TASKS else None

    def _examples(self) -> list[str]:
        """Example sentences: the card's ``examples`` list, else the model's task's (empty
        if neither has any)."""
        listed = self.card.get("examples")
        if isinstance(listed, list) and all(isinstance(x, str) for x in listed):
            return list(listed)
        task = self._task()
        return list(task.EXAMPLES) if task is not None else []

    def mask_views(self, src_tokens: list[str], tgt_tokens: list[str], pad: int = 0
                   ) -> dict[str, np.ndarray]:
        """The model's masks for a sentence pair right-padded with ``pad`` ``<pad>`` tokens
        on both sides (as when it shares a batch with longer sentences).

        Returns:
            ``masks.mask_views`` of the padded ids: bool arrays, True = blocked.
        """
        pad_id = self.config.pad_id
        return mask_views(self._src_vocab.encode(src_tokens) + [pad_id] * pad,
                          self.target.vocab.encode(tgt_tokens) + [pad_id] * pad, pad_id)

    def _pe_tables(self, src_len: int, positional: str = "normal", positional_seed: int = 0
                   ) -> tuple[torch.Tensor | None, torch.Tensor | None]:
        """The (source (S, D), target (max_len, D)) positional encodings that a
        positional-encoding experiment adds instead of the sinusoidal table, or (None, None)
        for ``"normal"``; see ``layers.positional_tables``.

        Args:
            src_len: S, the source length with ``</s>``.
            positional: one of ``"normal"``, ``"none"``, ``"shuffled"``.
            positional_seed: the seed of the ``"shuffled"`` permutations.

        Raises:
            InputError: an unknown mode, a seed that is not an integer in [0, MAX_SEED], or S
                outside 1..max_len.
        """
        GenerationSettings(positional=positional, positional_seed=positional_seed)  # checks
        if not 1 <= src_len <= self.config.max_len:
            raise InputError(f"the source must have 1 to {self.config.max_len} tokens")
        return positional_tables(self.model.positional.pe, positional, src_len,
                                 int(positional_seed))

    def positional_encoding(self, length: int, side: str = "source") -> np.ndarray:
        """The model's sinusoidal table for ``length`` positions: (length, D) float32 (the
        same for both sides; ``side`` matters for Hugging Face models)."""
        if not 1 <= length <= self.config.max_len:
            raise ValueError(f"length must be in [1, {self.config.max_len}], got {length}")
        return self.model.positional.pe[:length].numpy().astype(np.float32)

    def relative_position_bias(self, q_len: int, k_len: int, side: str = "encoder"
                               ) -> np.ndarray | None:
        """A relative position bias (H, q_len, k_len) added to the scores, as T5 has
        (``hf.HFTranslator``); None: ours add sinusoidal vectors to the embeddings instead
        (``positional_encoding``)."""
        return None

    def head_inputs(self, trace: DecodeTrace, kind: str, layer: int, head: int) -> HeadInputs:
        """What one head of one attention sublayer is recomputed from: its sublayer's inputs
        from one teacher-forced pass over ``trace``'s tokens with the positional encodings
        the trace was decoded with (``trace.settings``), and the layer's own projections
        (x_q (Tq, D), x_k (Tk, D); scaling 1 / sqrt(Dh), paper section 3.2.1; no bias).
        ``kind``, ``layer`` and ``head`` are checked by the caller
        (``analysis.internals.head_internals``)."""
        model = self.model
        src_ids = torch.from_numpy(trace.src_ids)[None]  # (1, S)
        tgt_ids = torch.from_numpy(trace.tgt_ids[:-1])[None]  # (1, T) the decoder inputs
        src_pe, tgt_pe = self._pe_tables(src_ids.size(1), trace.settings.positional,
                                        trace.settings.positional_seed)
        enc = model.encode(src_ids, return_layers=True, pe_table=src_pe)
        if kind == "encoder":
            attn = model.encoder_layers[layer].self_attn
            x_q = x_k = enc.layers[layer].self_attention_input[0]  # (S, D)
        else:
            dec = model.decode(tgt_ids, enc.memory, enc.key_padding_mask,
                               return_layers=True, pe_table=tgt_pe)
            out = dec.layers[layer]
            if kind == "decoder":
                attn = model.decoder_layers[layer].self_attn
                x_q = x_k = out.self_attention_input[0]  # (T, D)
            else:
                attn = model.decoder_layers[layer].cross_attn
                x_q, x_k = out.cross_attention_input[0], enc.memory[0]  # (T, D), (S, D)
        return HeadInputs(x_q, x_k, (attn.q_proj, attn.k_proj, attn.v_proj),
                          1 / math.sqrt(self.config.head_dim), None)

    def encoder_sublayers(self, trace: DecodeTrace) -> SublayerNorms:
        """What each encoder sublayer adds to each source token of ``trace``, with the
        positional encodings it was decoded with (``core.sublayers``)."""
        src_ids = torch.from_numpy(trace.src_ids)[None]  # (1, S)
        src_pe, _ = self._pe_tables(src_ids.size(1), trace.settings.positional,
                                    trace.settings.positional_seed)
        return encoder_sublayer_norms(self.model, src_ids, src_pe)

    def embedding_parts(self, tokens: Sequence[str], side: str, positional: str = "normal",
                        positional_seed: int = 0) -> EmbeddingParts:
        """The first layer's input for T tokens in its two parts (paper, sections 3.4 and
        3.5): the scaled token embedding and the positional encoding the experiment
        ``positional`` adds (``_pe_tables``). Arguments are checked by the caller
        (``analysis.internals.embedding_parts``).

        Returns:
            EmbeddingParts with (T, D) float32 arrays.
        """
        c, model = self.config, self.model
        tokens = tuple(tokens)
        T = len(tokens)
        src_table, tgt_table = self._pe_tables(T, positional, positional_seed)
        vocab = self._src_vocab if side == "source" else self.target.vocab
        embed = model.src_embed if side == "source" else model.tgt_embed
        table = src_table if side == "source" else tgt_table
        ids = torch.tensor([vocab.encode(tokens)], dtype=torch.long)  # (1, T)
        with torch.inference_mode():
            emb = embed(ids)  # (1, T, D)
            total = model.positional(emb, pe_table=table)  # (1, T, D)
            added = (model.positional.pe if table is None else table)[:T]  # (T, D)
        if positional == "normal":
            positions = np.arange(T, dtype=np.int64)
        elif positional == "shuffled":
            n = T if side == "source" else c.max_len  # as layers.positional_tables
            positions = shuffled_positions(n, positional_seed)[:T].numpy().copy()
        else:
            positions = None
        return EmbeddingParts(
            side=side, positional_mode=positional, tokens=tokens, ids=ids[0].numpy().copy(),
            positions=positions, embedding=to_numpy(emb[0]), positional=to_numpy(added),
            total=to_numpy(total[0]),
        )
