"""A Hugging Face model's tokenizer as the two sides of a ``translator.Translator``
(``parts``): ``HFSource`` (text to pieces, the special tokens around a sentence, words)
and ``HFTarget`` (target text to ids, the detokenised text, and what ``generate()``
forces from the generation config), over one ``TokenizerTable`` and one ``PieceLabels``.

A tokenizer keeps state (``src_lang``, Marian's source/target mode), so both sides call it
under one lock, one call at a time.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence

import numpy as np
import torch

from ..core.config import TransformerConfig, end_ids
from ..core.subword import piece_label
from ..core.vocab import TokenTable, normalize_text
from ..decoding.processors import LogitsProcessor
from ..errors import InputError
from ..errors import short_repr as _short

BYTE_PIECE = re.compile(r"<0x([0-9A-Fa-f]{2})>")  # SentencePiece's byte fallback piece
# A language token: M2M100 "__en__" (code "en"), NLLB "eng_Latn", mBART "en_XX".
LANGUAGE_TOKEN = re.compile(r"__([a-z]{2,3})__|[a-z]{3}_[A-Z][a-z]{3}|[a-z]{2}_[A-Z]{2}")


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


class PieceLabels:
    """What a person reads for each of a tokenizer's tokens, on either side (one
    tokenizer), remembered as tokens are seen."""

    def __init__(self, tokenizer, lock: threading.RLock) -> None:
        self._tokenizer, self._lock = tokenizer, lock
        self._specials = frozenset(tokenizer.all_special_tokens)
        decoder = getattr(getattr(tokenizer, "backend_tokenizer", None), "decoder", None)
        self._byte_level = type(decoder).__name__ == "ByteLevel"  # BART's GPT-2 bytes
        self._label_of: dict[str, str] = {}  # token -> label, filled as tokens are seen

    def label(self, token: str) -> str:
        """One token's text without the word-start mark (SentencePiece's ``▁我们`` ->
        ``我们``, byte-level ``Ġlearn`` -> ``learn``), byte-level BPE decoded to characters
        (``ä»Ĭ`` -> ``今``), the bytes of a token that holds only part of a character in hex
        (``⟨e4 bb⟩``, as a byte-fallback piece ``<0xE4>`` -> ``⟨e4⟩``), a bare space ``␣``;
        special tokens unchanged."""
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

    def labels(self, tokens: Sequence[str]) -> tuple[str, ...]:
        """``label`` of each token."""
        return tuple(self.label(t) for t in tokens)


class HFSource:
    """A Hugging Face model's source side (``parts.SourceSide``): the tokenizer's pieces,
    the special tokens it puts around a sentence (``</s>``; a source-language token for a
    multilingual model), and words found by word-start marks.

    Attributes:
        vocab: the tokenizer's ``TokenizerTable`` (no word is ever unknown); tokenizer:
            the Hugging Face tokenizer (called under the lock).
    """

    def __init__(self, *, tokenizer, lock: threading.RLock, vocab: TokenizerTable,
                 piece_labels: PieceLabels, eos_id: int) -> None:
        self.vocab, self.tokenizer = vocab, tokenizer
        self._lock, self._piece_labels = lock, piece_labels
        self._specials = frozenset(tokenizer.all_special_tokens)
        self._eos_id = eos_id

    def tokenize(self, text: str) -> list[str]:
        """The tokenizer's pieces of ``text``; a typed special token (``</s>``) is split
        into ordinary pieces (``split_special_tokens``).

        Raises:
            InputError: the tokenizer still makes a special token other than ``<unk>`` of
                the text (some tokenizers ignore ``split_special_tokens``).
        """
        words = " ".join(normalize_text(text).split())
        with self._lock:
            tokens = self.tokenizer.tokenize(words, split_special_tokens=True)
        unk = self.tokenizer.unk_token
        typed = [t for t in tokens if t in self._specials and t != unk]
        if typed:
            raise InputError(f"The text contains {_short(typed[0], 20)}, one of this model's "
                             "special tokens; please leave it out.")
        return tokens

    def encode(self, pieces: list[str], src_lang: str | None = None) -> list[int]:
        """Pieces -> S ids with the special tokens the tokenizer adds around a sentence
        (``</s>``; a source-language token for multilingual models)."""
        before, after = self._specials_around(src_lang)
        ids = self.tokenizer.convert_tokens_to_ids(list(pieces))
        return [*before, *ids, *after]

    def _specials_around(self, src_lang: str | None) -> tuple[list[int], list[int]]:
        """The ids the tokenizer puts before and after a sentence's pieces."""
        with self._lock:
            if src_lang is not None:
                self.tokenizer.src_lang = src_lang
            full = self.tokenizer("x")["input_ids"]
            plain = self.tokenizer("x", add_special_tokens=False)["input_ids"]
        for i in range(len(full) - len(plain) + 1):
            if full[i: i + len(plain)] == plain:
                return full[:i], full[i + len(plain):]
        return [], [self._eos_id]

    def tokens(self, pieces: list[str], src_ids: list[int]) -> tuple[str, ...]:
        """The S encoder input tokens, special tokens included."""
        return tuple(self.vocab.decode(src_ids))

    def labels(self, tokens: Sequence[str]) -> tuple[str, ...]:
        """Readable labels, as the target side's (one tokenizer): ``PieceLabels``."""
        return self._piece_labels.labels(tokens)

    def words(self, tokens: Sequence[str]) -> tuple[int, ...]:
        """Word index of each token: a word starts at a piece with a word-start mark
        (``▁`` sentencepiece, ``Ġ`` byte-level BPE), at a special token or punctuation, and
        after one; other pieces continue the word before them."""
        out: list[int] = []
        prev_word = False
        for tok, label in zip(tokens, self.labels(tokens), strict=True):
            word = tok not in self._specials and any(ch.isalnum() for ch in label)
            starts = not out or not word or not prev_word or tok[:1] in ("▁", "Ġ")
            out.append(out[-1] + 1 if out and starts else (out[-1] if out else 0))
            prev_word = word
        return tuple(out)


class HFTarget:
    """A Hugging Face model's target side (``parts.TargetSide``): its tokenizer's
    vocabulary, target text tokenized as the tokenizer's target side, the tokenizer's
    detokenised text, and what ``generate()`` forces from the generation config (a
    multilingual model's target language first, ``forced_bos_token_id``,
    ``forced_eos_token_id``, banned ``bad_words_ids``).

    Attributes:
        vocab: the tokenizer's ``TokenizerTable``.
    """

    def __init__(self, *, vocab: TokenizerTable, config: TransformerConfig, tokenizer,
                 lock: threading.RLock, piece_labels: PieceLabels, generation,
                 lang_ids: dict[str, int]) -> None:
        self.vocab, self._config = vocab, config
        self._tokenizer, self._lock, self._piece_labels = tokenizer, lock, piece_labels
        self._generation, self._lang_ids = generation, lang_ids

    def labels(self, ids) -> tuple[str, ...]:
        """What a person reads for each of the ids ((n,) int): ``PieceLabels``."""
        return self._piece_labels.labels([self.vocab.itos[int(i)] for i in ids])

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
        c, ends = self._config, end_ids(self._config)
        bad = [t for i, t in enumerate(tokens) if t not in self.vocab
               or self.vocab.stoi[t] in (c.pad_id, c.bos_id)
               or (self.vocab.stoi[t] in ends and i != len(tokens) - 1)]
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

    def processors(self, max_new_tokens: int, tgt_lang: str | None = None
                   ) -> list[LogitsProcessor]:
        """``generate()``'s processors from the generation config (its bad words, forced
        first and last tokens), as a list of one ``decoding.LogitsProcessor``, or empty
        when there is nothing to do."""
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
            return []

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

        return [process]


def languages(tokenizer) -> dict[str, int]:
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
