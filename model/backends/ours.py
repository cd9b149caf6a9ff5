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

from ..core.layers import positional_tables, shuffled_positions
from ..core.masks import mask_views
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
from .records import EmbeddingParts, HeadInputs, to_numpy

MAX_INPUT_CHARS = 300  # longer text is refused before any work is done


class Translator:
    """A pretrained Transformer with its vocabularies. Read-only after construction: the
    same instance serves every caller (every browser session) at once.

    Attributes:
        name: the folder's name; model: the eval-mode Transformer; src_vocab, tgt_vocab;
        card: the model card (dict); config: the TransformerConfig; src_tokenizer: the
        ``tokenizers.Tokenizer`` of a subword model (byte-level BPE, ``model.core.subword``), or
        None for a word-level model (``vocab.tokenize_en``).
    """

    def __init__(self, model: Transformer, src_vocab: Vocab, tgt_vocab: Vocab, card: dict,
                 name: str = "", src_tokenizer=None,
                 heldout: tuple[tuple[str, str], ...] = ()) -> None:
        self.model, self.src_vocab, self.tgt_vocab = model, src_vocab, tgt_vocab
        self.card, self.name = card, name
        self.heldout = tuple(heldout)  # the folder's held-out pairs (heldout.read_heldout)
        self.config = model.config
        self.src_tokenizer = src_tokenizer

    @property
    def subword(self) -> bool:
        """True for a subword model: no word is ever unknown, words may be several pieces."""
        return self.src_tokenizer is not None

    @property
    def eos_token(self) -> str:
        """The end-of-sentence token as a string (``</s>`` in ours and most Hugging Face
        models' vocabularies)."""
        return self.tgt_vocab.itos[self.config.eos_id]

    @property
    def max_source_words(self) -> int:
        """The most source tokens a sentence may have (one position is kept for ``</s>``)."""
        return self.config.max_len - 1

    def tokenize(self, text: str) -> list[str]:
        """The source tokens of ``text`` (without ``</s>``): byte-level BPE pieces for a
        subword model (``Ġlearn``, ``ing``; never ``<unk>``), else ``vocab.tokenize_en``."""
        if self.src_tokenizer is None:
            return tokenize_en(text)
        words = " ".join(normalize_text(text).split())  # no leading or repeated spaces
        return pieces(self.src_tokenizer, words)

    @staticmethod
    def source_labels(tokens: Sequence[str]) -> tuple[str, ...]:
        """Readable labels of source tokens (``subword.piece_label``: ``Ġlearn`` -> ``learn``);
        word-level tokens are their own labels."""
        return tuple(piece_label(tok) for tok in tokens)

    def check_input(self, text: str) -> list[str]:
        """Validate a sentence and return its source tokens.

        Raises:
            InputError: not a string, empty or only spaces/invisible characters, no word
                (only punctuation or symbols), longer than MAX_INPUT_CHARS characters, or
                more than ``max_source_words`` tokens.
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
        tokens = self.tokenize(text)
        has_word = (any(ch.isalnum() for ch in normalize_text(text)) if self.subword
                    else any(t.isalnum() for t in tokens))
        if not has_word:
            raise InputError("Please type a sentence: the text has no words, only symbols.")
        if len(tokens) > self.max_source_words:
            raise InputError(
                f"The sentence has {len(tokens)} tokens; this model takes at most "
                f"{self.max_source_words}."
            )
        return tokens

    def unknown_words(self, text: str) -> list[str]:
        """Source tokens of ``text`` outside the vocabulary (each once, in order); always
        empty for a subword model."""
        return self.src_vocab.unknown(self.tokenize(text))

    def suggestions(self, word: str, n: int = 3) -> list[str]:
        """In-vocabulary words spelled most like ``word`` (none for a subword model)."""
        return [] if self.subword else self.src_vocab.suggest(word, n)

    def encode_source(self, tokens: list[str], src_lang: str | None = None) -> torch.Tensor:
        """Source tokens -> (1, S) int64 ids with ``</s>`` appended (``src_lang`` is for
        multilingual models; ours have none)."""
        return torch.tensor([self.src_vocab.encode([*tokens, EOS])], dtype=torch.long)

    def target_ids(self, tokens: str | Sequence[str], what: str = "prefix") -> list[int]:
        """Target tokens (a Chinese string, one token per character, or a token list) as ids.

        Raises:
            InputError: a token outside the target vocabulary, or a special token other
                than a final ``</s>`` (the message lists them).
        """
        if isinstance(tokens, str):
            tokens = tokenize_zh(tokens)
        tokens = list(tokens)
        bad = [t for i, t in enumerate(tokens) if t not in self.tgt_vocab
               or (t in SPECIALS and not (t == EOS and i == len(tokens) - 1))]
        if bad:
            shown = ", ".join(_short(t, 12) for t in list(dict.fromkeys(bad))[:5])
            raise InputError(f"The {what} has tokens the model cannot produce: {shown}")
        return self.tgt_vocab.encode(tokens)

    def generate(self, text: str, settings: GenerationSettings | None = None, *,
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
            text: an English sentence.
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
            InputError: see ``check_input``; a setting out of range
                (``GenerationSettings``: also max_new_tokens beyond the model's positions or
                shorter than the prefix, a language the model does not have); a prefix
                token outside the target vocabulary; a head in ``heads_off`` outside the
                model.
        """
        settings = (settings or GenerationSettings()).replace(**overrides)
        off = check_heads(heads_off, self.config)
        tokens = self.check_input(text)
        forced = self.target_ids(prefix) if prefix is not None else []
        forced = self.with_forced_start(forced, settings.tgt_lang) if forced else forced
        settings.check_for(self.config.max_len, self.languages, len(forced))
        s = settings
        max_new_tokens = self.default_max_new_tokens if s.max_new_tokens is None \
            else s.max_new_tokens
        src_ids = self.encode_source(tokens, s.src_lang)
        tables = self.pe_tables(src_ids.size(1), s.positional, s.positional_seed)
        processor = self.logits_processor(max_new_tokens, s.tgt_lang)
        labels = dict(tgt_itos=self.tgt_vocab.itos, num_candidates=num_candidates)
        with ablation_heads_off(self.model, off, self.config.nhead):  # decoding only
            beam = None
            if s.num_beams > 1:
                early = self.early_stopping if s.early_stopping is None else s.early_stopping
                beam = beam_search(self.model, src_ids, s.num_beams, max_new_tokens,
                                   s.length_penalty, forced, tables, processor, early,
                                   tgt_itos=self.tgt_vocab.itos)
                best = beam.hypotheses[0].ids  # its maps: one pass that forces its tokens
                result = run_decoder(self.model, src_ids, len(best), None, best, tables, processor,
                                     **labels)
                lead = max(len(forced), len(self.with_forced_start([], s.tgt_lang)))
                result = dataclasses.replace(result, n_forced=min(lead, len(best)), steps=tuple(
                    dataclasses.replace(step, forced=step.index < lead) for step in result.steps))
            elif s.do_sample:
                result = sample_decode(self.model, src_ids, max_new_tokens, s.temperature,
                                       s.top_k, s.top_p, s.seed, forced, tables, processor,
                                       **labels)
            else:
                result = greedy_decode(self.model, src_ids, max_new_tokens, forced, tables,
                                       processor, **labels)
        return self._trace(text, tokens, src_ids, result, s, off, beam)

    def teacher_force(self, text: str, reference: str | Sequence[str],
                      settings: GenerationSettings | None = None, *, num_candidates: int = 10,
                      heads_off: Collection[tuple[str, int, int]] = (), **overrides
                      ) -> DecodeTrace:
        """Feed a reference translation to the decoder (teacher forcing) and record, at each
        step, the model's probability of the reference token and its attention.

        ``</s>`` is appended to the reference unless it ends with it. Each step's ``prob`` is
        the model's probability of the reference token; ``top_tokens[0]`` is what the model
        would have chosen there itself. Of the ``settings`` (or ``overrides``), the languages
        and the positional experiment apply; ``heads_off`` switches heads off as in
        ``generate``.

        Raises:
            InputError: see ``check_input``; an empty reference, one longer than max_len - 1
                tokens, or with tokens outside the target vocabulary; a setting out of range
                or a language the model does not have; a head in ``heads_off`` outside the
                model.
        """
        settings = (settings or GenerationSettings()).replace(**overrides)
        settings.check_for(self.config.max_len, self.languages)
        off = check_heads(heads_off, self.config)
        tokens = self.check_input(text)
        forced = self.target_ids(reference, "reference")
        if not forced:
            raise InputError("The reference translation is empty.")
        forced = self.with_forced_start(forced, settings.tgt_lang)
        if forced[-1] != self.config.eos_id:
            forced.append(self.config.eos_id)
        limit = self.config.max_len - 1
        if len(forced) > limit:
            raise InputError(f"The reference has {len(forced)} tokens; at most {limit} fit.")
        src_ids = self.encode_source(tokens, settings.src_lang)
        tables = self.pe_tables(src_ids.size(1), settings.positional, settings.positional_seed)
        with ablation_heads_off(self.model, off, self.config.nhead):
            result = run_decoder(self.model, src_ids, len(forced), None, forced, tables,
                                 tgt_itos=self.tgt_vocab.itos, num_candidates=num_candidates)
        return self._trace(text, tokens, src_ids, result, settings, off, None,
                           teacher_forced=True)

    def _trace(self, text: str, tokens: list[str], src_ids: torch.Tensor,
               result: DecodeTrace, settings: GenerationSettings, heads_off: tuple,
               beam: BeamTrace | None, teacher_forced: bool = False) -> DecodeTrace:
        """``run_decoder``'s trace with the sentence's side filled in: the text, its tokens
        and their labels and words, unknown words, the settings, the heads switched off,
        the beams and the text."""
        src_tokens = self.source_tokens(tokens, src_ids)
        if beam is not None:
            start = [self.config.bos_id]
            beam = dataclasses.replace(beam, hypotheses=tuple(
                dataclasses.replace(h, text=self.output_text(np.array([*start, *h.ids])))
                for h in beam.hypotheses))
        return dataclasses.replace(
            result,
            src_text=text,
            src_tokens=src_tokens,
            unknown_words=tuple(self.src_vocab.unknown(src_tokens)),
            settings=settings,
            heads_off=heads_off,
            teacher_forced=teacher_forced,
            beam=beam,
            src_labels=self.source_labels(src_tokens),
            src_words=self.source_words(src_tokens),
            output_text=self.output_text(result.tgt_ids),
        )

    def source_tokens(self, tokens: list[str], src_ids: torch.Tensor) -> tuple[str, ...]:
        """The S encoder input tokens of ``tokens`` whose (1, S) ids are ``src_ids``: the
        words as typed (an unknown one keeps its spelling) and ``</s>``."""
        return (*tokens, EOS)

    def source_words(self, src_tokens: Sequence[str]) -> tuple[int, ...]:
        """The word index of each encoder input token (``subword.word_ids``)."""
        return word_ids(src_tokens)

    def output_text(self, tgt_ids: np.ndarray) -> str | None:
        """The text of decoder ids ``<s> y1 .. yn``, or None for the trace's default (the
        output tokens joined without spaces)."""
        return None

    # How the model encodes positions: the paper's sinusoids, sin and cos interleaved
    # (``layers.sinusoidal_table``); Hugging Face families differ (``hf.FAMILIES``).
    positional_scheme = "sinusoidal"

    # Generation settings a Hugging Face model reads from its generation config; ours are
    # fixed: beam search stops once num_beams hypotheses have finished.
    early_stopping = True

    @property
    def languages(self) -> tuple[str, ...]:
        """The language codes of a multilingual model (none for ours)."""
        return ()

    @property
    def default_max_new_tokens(self) -> int:
        """The length limit ``generate`` uses when none is given: as many tokens as fit."""
        return self.config.max_len - 1

    @property
    def task_prefixes(self) -> dict[str, str]:
        """Text a T5-style model expects before the sentence, per task (none for ours)."""
        return {}

    def with_forced_start(self, ids: list[int], tgt_lang: str | None = None) -> list[int]:
        """Target ids with the token ``generate()`` forces first (a multilingual model's
        target language) put in front when missing; ours force nothing."""
        return ids

    def logits_processor(self, max_new_tokens: int, tgt_lang: str | None = None):
        """What ``generate()`` would do to each step's log-probabilities
        (``decoding.LogitsProcessor``), or None: our models use their distribution as is."""
        return None

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

    @property
    def examples(self) -> list[str]:
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
        return mask_views(self.src_vocab.encode(src_tokens) + [pad_id] * pad,
                          self.tgt_vocab.encode(tgt_tokens) + [pad_id] * pad, pad_id)

    def pe_tables(self, src_len: int, positional: str = "normal", positional_seed: int = 0
                  ) -> tuple[torch.Tensor | None, torch.Tensor | None]:
        """The (source (S, D), target (max_len, D)) positional encodings that a
        positional-encoding experiment adds instead of the sinusoidal table, or (None, None)
        for ``"normal"``; see ``layers.positional_tables``.

        Args:
            src_len: S, the source length with ``</s>``.
            positional: one of ``"normal"``, ``"none"``, ``"shuffled"``.
            positional_seed: the seed of the ``"shuffled"`` permutations.

        Raises:
            InputError: an unknown mode, a seed that is not an integer in [0, 2**63), or S
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

    def head_inputs(self, trace: DecodeTrace, kind: str, layer: int, head: int) -> HeadInputs:
        """What one head of one attention sublayer is recomputed from: its sublayer's inputs
        from one teacher-forced pass over ``trace``'s tokens with the positional encodings
        the trace was decoded with (``trace.settings``), and the layer's own projections
        (x_q (Tq, D), x_k (Tk, D); scaling 1 / sqrt(Dh), paper section 3.2.1; no bias).
        ``kind``, ``layer`` and ``head`` are checked by the caller
        (``analysis.internals.head_internals``)."""
        model = self.model
        src_ids = self.src_vocab.encode(trace.src_tokens)
        tgt_ids = self.tgt_vocab.encode(trace.decoder_input_tokens)
        src_pe, tgt_pe = self.pe_tables(len(trace.src_tokens), trace.settings.positional,
                                        trace.settings.positional_seed)
        enc = model.encode(torch.tensor([src_ids]), return_layers=True, pe_table=src_pe)
        if kind == "encoder":
            attn = model.encoder_layers[layer].self_attn
            x_q = x_k = enc.layers[layer].self_attention_input[0]  # (S, D)
        else:
            dec = model.decode(torch.tensor([tgt_ids]), enc.memory, enc.key_padding_mask,
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

    def embedding_parts(self, tokens: Sequence[str], side: str, positional: str = "normal",
                        positional_seed: int = 0) -> EmbeddingParts:
        """The first layer's input for T tokens in its two parts (paper, sections 3.4 and
        3.5): the scaled token embedding and the positional encoding the experiment
        ``positional`` adds (``pe_tables``). Arguments are checked by the caller
        (``analysis.internals.embedding_parts``).

        Returns:
            EmbeddingParts with (T, D) float32 arrays.
        """
        c, model = self.config, self.model
        tokens = tuple(tokens)
        T = len(tokens)
        src_table, tgt_table = self.pe_tables(T, positional, positional_seed)
        vocab = self.src_vocab if side == "source" else self.tgt_vocab
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
