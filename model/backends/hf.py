"""Hugging Face encoder-decoder models behind the interface of our own Transformer.

``HFSeq2Seq`` wraps an ``AutoModelForSeq2SeqLM`` (Marian, BART / mBART, T5 / mT5, M2M100 /
NLLB) with the three calls that ``model.decoding`` makes of ``Transformer``: ``encode``,
one ``decode`` step with a key/value cache (Hugging Face's ``past_key_values``) and
``reorder_cache``. ``HFTranslator`` is a ``Translator`` whose tokens come from the model's
own tokenizer, so greedy, beam, sampling, forced prefixes, teacher forcing and every view
run through the same code as for our models, and the traces are the same type.

Attention weights come from ``attn_implementation="eager"``, the only implementation that
returns them; ``output_attentions=True`` gives per layer (B, H, Tq, Tk) arrays named as in
``Seq2SeqLMOutput`` (``encoder_attentions``, ``decoder_attentions``, ``cross_attentions``).

Loading is ``model.backends.hf_load`` (offline and safe: ``local_files_only=True``, never
``trust_remote_code``; weights from safetensors, pickle weights only when allowed).

Shape letters: B batch, S source length, T target length, L layers, H heads, D d_model,
V vocabulary size. Masks are boolean, True = blocked.
"""

from __future__ import annotations

import dataclasses
import re
import threading
from collections.abc import Sequence

import numpy as np
import torch

from ..core.config import TransformerConfig
from ..core.masks import mask_views
from ..core.subword import piece_label
from ..core.transformer import DecoderOutput, EncoderOutput
from ..core.vocab import TokenTable, normalize_text
from ..decoding import DecodeTrace
from ..errors import InputError
from ..errors import short_repr as _short
from . import hf_hooks
from .ours import Target, Translator
from .records import EmbeddingParts, HeadInputs, ModelInfo

# model_type -> how the family encodes positions (``ModelInfo.positional_scheme``):
# "sinusoidal-halves" (Marian, M2M100: sin in the first half of the dimensions, cos in the
# second, not interleaved), "learned" (BART: a trained table whose row p + 2 serves position
# p) or "relative" (T5: a learned bias per head and relative-distance bucket on the scores).
FAMILIES = {
    "marian": "sinusoidal-halves", "m2m_100": "sinusoidal-halves",
    "bart": "learned", "mbart": "learned", "t5": "relative", "mt5": "relative",
}
MAX_TOKENS = 128  # the longest source or output the app decodes with a Hugging Face model
FIXED_POSITIONS = ("A Hugging Face model keeps the positions it was trained with; positional "
                   "experiments need one of our own models.")
BYTE_PIECE = re.compile(r"<0x([0-9A-Fa-f]{2})>")  # SentencePiece's byte fallback piece
# A language token: M2M100 "__en__" (code "en"), NLLB "eng_Latn", mBART "en_XX".
LANGUAGE_TOKEN = re.compile(r"__([a-z]{2,3})__|[a-z]{3}_[A-Z][a-z]{3}|[a-z]{2}_[A-Z]{2}")


class HFSeq2Seq:
    """An ``AutoModelForSeq2SeqLM`` with the interface ``model.decoding`` uses.

    Read-only after construction and shared by every caller: the cache lives in each
    call's result (``DecoderOutput.past_key_values`` is Hugging Face's
    ``EncoderDecoderCache``).

    Attributes:
        hf: the eval-mode Hugging Face model (eager attention).
        config: its hyper-parameters as a ``TransformerConfig`` (``bos_id`` is the
            ``decoder_start_token_id``; ``max_len`` is capped at ``MAX_TOKENS``).
        model_type: ``hf.config.model_type``.
    """

    def __init__(self, hf, config: TransformerConfig) -> None:
        self.hf, self.config = hf, config
        self.model_type = hf.config.model_type

    @staticmethod
    def _fixed_positions(pe_table) -> None:
        if pe_table is not None:
            raise InputError(FIXED_POSITIONS)

    def encode(self, src_ids: torch.Tensor, pe_table: None = None) -> EncoderOutput:
        """Encode (B, S) source ids, right-padded with ``pad_id``.

        Returns:
            EncoderOutput: memory (B, S, D), per-layer attentions (B, H, S, S), the key
            padding mask (B, S).

        Raises:
            InputError: a ``pe_table`` (positional experiments are for our models only).
        """
        self._fixed_positions(pe_table)
        key_padding_mask = src_ids == self.config.pad_id  # (B, S)
        out = self.hf.get_encoder()(input_ids=src_ids, attention_mask=(~key_padding_mask).long(),
                                    output_attentions=True, return_dict=True)
        return EncoderOutput(out.last_hidden_state, tuple(out.attentions), key_padding_mask)

    def decode(self, tgt_ids: torch.Tensor, memory: torch.Tensor,
               memory_key_padding_mask: torch.Tensor | None = None, past_key_values=None,
               pe_table: None = None) -> DecoderOutput:
        """Run the decoder over ``tgt_ids`` (B, T): all positions (teacher forcing), or with
        the ``cache`` of the previous call only the new ones, as ``generate()`` does.

        Returns:
            DecoderOutput: logits (B, T, V), per-layer decoder self-attentions
            (B, H, T, T_all) and cross-attentions (B, H, T, S), and the cache
            (``past_key_values``) covering every position so far.
        """
        from transformers.modeling_outputs import BaseModelOutput

        self._fixed_positions(pe_table)
        enc_mask = None if memory_key_padding_mask is None else (~memory_key_padding_mask).long()
        out = self.hf(encoder_outputs=BaseModelOutput(last_hidden_state=memory),
                      attention_mask=enc_mask, decoder_input_ids=tgt_ids,
                      past_key_values=past_key_values,
                      use_cache=True, output_attentions=True, return_dict=True)
        return DecoderOutput(out.logits, tuple(out.decoder_attentions),
                             tuple(out.cross_attentions), past_key_values=out.past_key_values)

    @staticmethod
    def reorder_cache(cache, index: torch.Tensor):
        """Keep (and duplicate) beams ``index`` (n,) of an ``EncoderDecoderCache``: the
        cache Hugging Face's beam search reorders, in place; returns it."""
        cache.reorder_cache(index)
        return cache

    def num_parameters(self) -> int:
        """Number of parameters (shared embeddings counted once)."""
        return sum(p.numel() for p in self.hf.parameters())

    def attention(self, kind: str, layer: int):
        """The attention module of ``kind`` (``encoder``, ``decoder``, ``cross``) in
        ``layer``, and the names of its query, key and value projections."""
        if self.model_type in ("t5", "mt5"):
            stack = self.hf.encoder if kind == "encoder" else self.hf.decoder
            block = stack.block[layer].layer
            module = block[1].EncDecAttention if kind == "cross" else block[0].SelfAttention
            return module, ("q", "k", "v")
        stack = self.hf.get_encoder() if kind == "encoder" else self.hf.get_decoder()
        lay = stack.layers[layer]
        module = lay.encoder_attn if kind == "cross" else lay.self_attn
        return module, ("q_proj", "k_proj", "v_proj")


class TokenizerTable(TokenTable):
    """A Hugging Face tokenizer's vocabulary with the interface of ``vocab.Vocab``. No word
    is ever unknown to a subword tokenizer."""

    def __init__(self, tokenizer, size: int) -> None:
        tokens = tokenizer.convert_ids_to_tokens(list(range(size)))
        super().__init__([t if isinstance(t, str) else f"<id {i}>" for i, t in enumerate(tokens)])

    def encode(self, tokens) -> list[int]:
        """Token strings -> ids (a token outside the table raises KeyError)."""
        return [self.stoi[t] for t in tokens]

    def unknown(self, tokens) -> list[str]:
        """Always empty: a subword tokenizer has a piece for every word."""
        return []

    def suggest(self, token: str, n: int = 3) -> list[str]:
        """Always empty (see ``unknown``)."""
        return []


class HFTarget(Target):
    """A Hugging Face model's target side: its tokenizer's vocabulary, target text tokenized
    as the tokenizer's target side, the tokenizer's detokenised text, and what
    ``generate()`` forces from the generation config (a multilingual model's target
    language first, ``forced_bos_token_id``, ``forced_eos_token_id``, banned
    ``bad_words_ids``)."""

    def __init__(self, vocab: TokenizerTable, config: TransformerConfig, tokenizer, lock,
                 generation, lang_ids: dict[str, int]) -> None:
        super().__init__(vocab, config)
        self._tokenizer, self._lock = tokenizer, lock
        self._generation, self._lang_ids = generation, lang_ids
        self._specials = frozenset(tokenizer.all_special_tokens)
        decoder = getattr(getattr(tokenizer, "backend_tokenizer", None), "decoder", None)
        self._byte_level = type(decoder).__name__ == "ByteLevel"  # BART's GPT-2 bytes
        self._label_of: dict[str, str] = {}  # token -> label, filled as tokens are seen

    def label(self, token: str) -> str:
        """What a person reads for one of the tokenizer's tokens: its text without the
        word-start mark (SentencePiece's ``▁我们`` -> ``我们``, byte-level ``Ġlearn`` ->
        ``learn``), byte-level BPE decoded to characters (``ä»Ĭ`` -> ``今``), the bytes of a
        token that holds only part of a character in hex (``⟨e4 bb⟩``, as a byte-fallback
        piece ``<0xE4>`` -> ``⟨e4⟩``), a bare space ``␣``; special tokens unchanged."""
        label = self._label_of.get(token)
        if label is None:
            if token in self._specials:
                label = token
            elif self._byte_level:
                label = piece_label(token)
            elif m := BYTE_PIECE.fullmatch(token):
                label = f"⟨{m.group(1).lower()}⟩"
            else:
                with self._lock:
                    label = self._tokenizer.convert_tokens_to_string([token]).strip() or "␣"
            self._label_of[token] = label
        return label

    def labels(self, ids) -> tuple[str, ...]:
        """``label`` of each of the ids ((n,) int)."""
        return tuple(self.label(self.vocab.itos[int(i)]) for i in ids)

    def ids(self, tokens: str | Sequence[str], what: str = "prefix") -> list[int]:
        """A target text (tokenized as the tokenizer's target side) or a token list as ids.

        Raises:
            InputError: a token outside the vocabulary, the decoder's start token or
                ``<pad>``, or ``</s>`` anywhere but last.
        """
        if isinstance(tokens, str):
            text = " ".join(normalize_text(tokens).split())
            with self._lock:
                ids = self._tokenizer(text_target=text, add_special_tokens=False)["input_ids"]
            tokens = self.vocab.decode(ids)
        tokens = list(tokens)
        c = self._config
        bad = [t for i, t in enumerate(tokens) if t not in self.vocab
               or self.vocab.stoi[t] in (c.pad_id, c.bos_id)
               or (self.vocab.stoi[t] == c.eos_id and i != len(tokens) - 1)]
        if bad:
            shown = ", ".join(_short(t, 12) for t in list(dict.fromkeys(bad))[:5])
            raise InputError(f"The {what} has tokens the model cannot produce: {shown}")
        return self.vocab.encode(tokens)

    def text(self, tgt_ids: np.ndarray) -> str:
        """The tokenizer's text of the generated ids, special tokens skipped."""
        with self._lock:
            return self._tokenizer.decode([int(i) for i in tgt_ids[1:]],
                                          skip_special_tokens=True)

    def _forced_bos(self, tgt_lang: str | None) -> int | None:
        """The token ``generate()`` forces first: the target language's, else the
        generation config's ``forced_bos_token_id``, else None."""
        return self._lang_ids[tgt_lang] if tgt_lang is not None else \
            self._generation.forced_bos_token_id

    def forced_start(self, ids: list[int], tgt_lang: str | None = None) -> list[int]:
        """``ids`` with the forced first token (``_forced_bos``) in front when missing."""
        bos = self._forced_bos(tgt_lang)
        return ids if bos is None or ids[:1] == [bos] else [bos, *ids]

    def processor(self, max_new_tokens: int, tgt_lang: str | None = None):
        """``generate()``'s processors from the generation config, as a
        ``decoding.LogitsProcessor`` (or None when there is nothing to do)."""
        gen = self._generation
        # Like generate()'s NoBadWordsLogitsProcessor, </s> is never banned this way.
        ends = gen.eos_token_id if isinstance(gen.eos_token_id, list) else [gen.eos_token_id]
        ends = {*ends, self._config.eos_id}
        banned = [ids[0] for ids in (gen.bad_words_ids or [])
                  if len(ids) == 1 and ids[0] not in ends]
        bos = self._forced_bos(tgt_lang)
        eos = gen.forced_eos_token_id
        eos = eos[0] if isinstance(eos, list | tuple) else eos
        if not banned and bos is None and eos is None:
            return None

        def process(t: int, logp: torch.Tensor, input_ids: torch.Tensor) -> torch.Tensor:
            # (n, V) -> (n, V); the inputs so far (n, t + 1) do not matter here
            logp = logp.clone()
            if banned:
                logp[:, banned] = float("-inf")
            force = bos if t == 0 else (eos if t == max_new_tokens - 1 else None)
            if force is not None:
                logp[:] = float("-inf")
                logp[:, force] = 0.0
            return logp

        return process


class HFTranslator(Translator):
    """A Hugging Face encoder-decoder model with its tokenizer, as a ``Translator``: same
    ``generate`` / ``teacher_force`` / ``mask_views`` and the same ``DecodeTrace``.

    What ``generate()`` takes from the model's generation config is applied the same way:
    ``bad_words_ids`` of one token are banned, ``forced_bos_token_id`` (or the target
    language of a multilingual model) is forced first, ``forced_eos_token_id`` is forced at
    the length limit, and ``early_stopping`` governs beam search (``HFTarget``).
    """

    def __init__(self, model: HFSeq2Seq, tokenizer, card: dict, name: str = "") -> None:
        self._tokenizer = tokenizer
        self._generation = model.hf.generation_config
        # Tokenizers keep state (src_lang, Marian's source/target mode): one call at a time.
        self._lock = threading.RLock()
        self._special_tokens = frozenset(tokenizer.all_special_tokens)
        self._lang_ids = _languages(tokenizer)
        table = TokenizerTable(tokenizer, model.config.tgt_vocab_size)
        super().__init__(model, table, table, card, name=name, src_tokenizer=tokenizer)

    def _make_target(self, vocab: TokenizerTable) -> HFTarget:
        return HFTarget(vocab, self.config, self._tokenizer, self._lock, self._generation,
                        self._lang_ids)

    def _make_info(self, heldout: tuple[tuple[str, str], ...]) -> ModelInfo:
        """Ours' with what the model's configs say: its family and positions
        (``FAMILIES``), languages, task prefixes, length limit and ``early_stopping``."""
        gen, c = self._generation, self.config
        limit = gen.max_new_tokens or (gen.max_length - 1 if gen.max_length else None)
        params = getattr(self.model.hf.config, "task_specific_params", None) or {}
        return dataclasses.replace(
            super()._make_info(heldout), backend="huggingface",
            model_type=self.model.model_type, subword=True,
            positional_scheme=FAMILIES[self.model.model_type],
            languages=tuple(self._lang_ids),
            task_prefixes={name: p["prefix"] for name, p in params.items()
                           if isinstance(p, dict) and isinstance(p.get("prefix"), str)
                           and p["prefix"]},
            # generate()'s length limit: max_new_tokens, else max_length minus the start
            # token (transformers' default max_length is 20), at most max_len - 1.
            default_max_new_tokens=max(1, min(c.max_len - 1, limit or c.max_len - 1)),
            early_stopping=gen.early_stopping is True)

    # --- the source side ----------------------------------------------------------------

    def _tokenize(self, text: str) -> list[str]:
        """The tokenizer's pieces of ``text``; a typed special token (``</s>``) is split
        into ordinary pieces (``split_special_tokens``).

        Raises:
            InputError: the tokenizer still makes a special token other than ``<unk>`` of
                the text (some tokenizers ignore ``split_special_tokens``).
        """
        words = " ".join(normalize_text(text).split())
        with self._lock:
            tokens = self._tokenizer.tokenize(words, split_special_tokens=True)
        unk = self._tokenizer.unk_token
        typed = [t for t in tokens if t in self._special_tokens and t != unk]
        if typed:
            raise InputError(f"The text contains {_short(typed[0], 20)}, one of this model's "
                             "special tokens; please leave it out.")
        return tokens

    def _encode_source(self, pieces: list[str], src_lang: str | None = None) -> list[int]:
        """Pieces -> S ids with the special tokens the tokenizer adds around a sentence
        (``</s>``; a source-language token for multilingual models)."""
        before, after = self._source_specials(src_lang)
        ids = self._tokenizer.convert_tokens_to_ids(list(pieces))
        return [*before, *ids, *after]

    def _source_specials(self, src_lang: str | None) -> tuple[list[int], list[int]]:
        """The ids the tokenizer puts before and after a sentence's pieces."""
        with self._lock:
            if src_lang is not None:
                self._tokenizer.src_lang = src_lang
            full = self._tokenizer("x")["input_ids"]
            plain = self._tokenizer("x", add_special_tokens=False)["input_ids"]
        for i in range(len(full) - len(plain) + 1):
            if full[i: i + len(plain)] == plain:
                return full[:i], full[i + len(plain):]
        return [], [self.config.eos_id]

    def _source_tokens(self, pieces: list[str], src_ids: list[int]) -> tuple[str, ...]:
        """The S encoder input tokens, special tokens included."""
        return tuple(self._src_vocab.decode(src_ids))

    def _source_labels(self, tokens: Sequence[str]) -> tuple[str, ...]:
        """Readable labels, as the target side's (one tokenizer): ``HFTarget.label``."""
        return tuple(self.target.label(t) for t in tokens)

    def _source_words(self, src_tokens: Sequence[str]) -> tuple[int, ...]:
        """Word index of each token: a word starts at a piece with a word-start mark
        (``▁`` sentencepiece, ``Ġ`` byte-level BPE), at a special token or punctuation, and
        after one; other pieces continue the word before them."""
        specials = set(self._tokenizer.all_special_tokens)
        labels = self._source_labels(src_tokens)
        out: list[int] = []
        prev_word = False
        for tok, label in zip(src_tokens, labels, strict=True):
            word = tok not in specials and any(ch.isalnum() for ch in label)
            starts = not out or not word or not prev_word or tok[:1] in ("▁", "Ġ")
            out.append(out[-1] + 1 if out and starts else (out[-1] if out else 0))
            prev_word = word
        return tuple(out)

    def mask_views(self, src_tokens: list[str], tgt_tokens: list[str], pad: int = 0
                   ) -> dict[str, np.ndarray]:
        """The masks for a sentence pair right-padded with ``pad`` ``<pad>`` tokens on both
        sides (``masks.mask_views``); padding is known by position, since some models
        start decoding with their ``<pad>`` token."""
        return mask_views([1] * len(src_tokens) + [0] * pad, [1] * len(tgt_tokens) + [0] * pad,
                          pad_id=0)

    # --- positions ----------------------------------------------------------------------

    def _pe_tables(self, src_len: int, positional: str = "normal", positional_seed: int = 0):
        """(None, None): a Hugging Face model keeps its own positions.

        Raises:
            InputError: any experiment other than ``"normal"``.
        """
        if positional != "normal":
            raise InputError(FIXED_POSITIONS)
        return None, None

    def positional_encoding(self, length: int, side: str = "source") -> np.ndarray:
        """The vectors the encoder (``side="source"``) or decoder (``"target"``) adds at
        positions 0..length-1: (length, D) float32, read from the model's own table
        (Marian's sinusoidal rows from row 0; M2M100's from row padding_idx + 1 = 2, so its
        first token gets sin(2w), cos(2w); BART's learned rows from row 2, a table per side).

        Raises:
            InputError: a relative-position model (T5 adds no vectors; see
                ``relative_position_bias``), or ``length`` outside 1..max_len.
        """
        if not 1 <= length <= self.config.max_len:
            raise InputError(f"length must be in [1, {self.config.max_len}], got {length}")
        if self.info.positional_scheme == "relative":
            raise InputError("T5 adds no position vectors: it adds a learned bias per head to "
                             "the attention scores (relative_position_bias).")
        stack = self.model.hf.get_encoder() if side == "source" else self.model.hf.get_decoder()
        table = stack.embed_positions
        weight = getattr(table, "weights", None)
        weight = table.weight if weight is None else weight  # M2M100 keeps a buffer
        # M2M100 numbers positions from padding_idx + 1 (its table's row 0 is never used);
        # BART's learned table has an offset of 2; Marian starts at row 0.
        offset = (table.padding_idx + 1 if weight is getattr(table, "weights", None)
                  else getattr(table, "offset", 0))
        return weight[offset: offset + length].detach().float().numpy().copy()

    def relative_position_bias(self, q_len: int, k_len: int, side: str = "encoder"
                               ) -> np.ndarray | None:
        """T5's position bias (H, q_len, k_len) float32 that layer 0 of the encoder
        (bidirectional buckets) or the decoder (causal buckets) adds to every layer's
        scores: bias[h, i, j] = table[bucket(j - i), h] (Raffel et al., 2020, section 2.1);
        None for a model that adds position vectors instead (``info.positional_scheme``
        is not ``"relative"``).

        Raises:
            InputError: an unknown side, or a length outside 1..max_len.
        """
        if self.info.positional_scheme != "relative":
            return None
        if side not in ("encoder", "decoder"):
            raise InputError(f"side must be encoder or decoder, got {_short(side, 20)}")
        for n in (q_len, k_len):
            if not 1 <= n <= self.config.max_len:
                raise InputError(f"lengths must be in [1, {self.config.max_len}], got {n}")
        module, _ = self.model.attention(side, 0)
        with torch.inference_mode():
            bias = module.compute_bias(q_len, k_len)  # (1, H, q_len, k_len)
        return bias[0].float().numpy().copy()

    # --- what the analysis recomputes (hooks on the model's own modules) -----------------

    def head_inputs(self, trace: DecodeTrace, kind: str, layer: int, head: int) -> HeadInputs:
        """One head's inputs, recorded by hooks during one teacher-forced pass
        (``hf_hooks.head_inputs``): x_q (Tq, D), x_k (Tk, D), the (q, k, v) projections,
        the scaling and T5's position bias (Tq, Tk) or None."""
        return hf_hooks.head_inputs(self, trace, kind, layer, head)

    def encoder_sublayers(self, trace: DecodeTrace) -> None:
        """None: the sublayers of a Hugging Face model are not taken apart (each family
        names and orders them its own way; the lesson says so)."""
        return None

    def embedding_parts(self, tokens: Sequence[str], side: str, positional: str = "normal",
                        positional_seed: int = 0) -> EmbeddingParts:
        """The scaled token embeddings and the position vectors the model adds for T
        tokens (``hf_hooks.embedding_parts``); a Hugging Face model has no positional
        experiments.

        Raises:
            InputError: any ``positional`` other than ``"normal"``.
        """
        self._pe_tables(len(tokens), positional, positional_seed)  # refuses experiments
        return hf_hooks.embedding_parts(self, tokens, side)


def _languages(tokenizer) -> dict[str, int]:
    """Language code -> token id of a multilingual tokenizer (M2M100 ``__en__`` is ``en``,
    mBART ``en_XX``, NLLB ``eng_Latn``); empty for a one-pair tokenizer."""
    table = getattr(tokenizer, "lang_code_to_id", None)
    if isinstance(table, dict) and table:
        return {str(k): int(v) for k, v in table.items()}
    out = {}
    for tok in tokenizer.all_special_tokens:
        if m := LANGUAGE_TOKEN.fullmatch(tok):
            out[m.group(1) or tok] = int(tokenizer.convert_tokens_to_ids(tok))
    return out
