"""A translation pair as one sequence over one vocabulary, for the decoder-only model: the
prefix language model of Liu et al. (2018, "Generating Wikipedia by Summarizing Long
Sequences", section 4.2; Raffel et al. 2020, "Exploring the Limits of Transfer Learning with
a Unified Text-to-Text Transformer", section 3.2.1, call it a prefix LM):

    <s> English ids <sep> Chinese ids </s>

The prompt ``<s> English <sep>`` (P tokens) takes the encoder's role; the continuation
``Chinese </s>`` (C tokens) is what the model writes, and only it is scored by the loss.

Id layout (V_en = the English tokenizer's size, V_zh = the Chinese vocabulary's, both
counting the 4 specials; the two vocabularies are the default model's, unchanged):

    0 .. 3                    <pad> <unk> <s> </s>, shared by both languages
    4 .. V_en - 1             the English byte-level BPE pieces, their own ids
    V_en                      <sep> (``sep_id``)
    V_en + 1 .. V - 1         the Chinese characters: Chinese id c (c >= 4) -> V_en + c - 3
    V = V_en + V_zh - 3       (``vocab_size``)

A Chinese character outside the Chinese vocabulary is the shared ``<unk>`` (1). ``sep_id``
is the ``DecoderOnlyConfig`` field of that name: generation appends it to every prompt and
the views split the sequence there, reading only the config; no existing special could
serve, since ``</s>`` would then both end the English and stop generation.

Shape letters: N = P + C positions of one sequence. The ``scored`` mask is not an attention
mask: True = this token is a target of the loss (the Chinese tokens and the closing
``</s>``); attention masks elsewhere are True = blocked.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .vocab import BOS, EOS, PAD, UNK, Vocab, tokenize_zh

N_SPECIAL = 4  # <pad> <unk> <s> </s>: ids 0-3 in both vocabularies
PAD_ID, UNK_ID, BOS_ID, EOS_ID = 0, 1, 2, 3


@dataclass(frozen=True)
class PrefixLayout:
    """The id layout above, from the two vocabularies' sizes.

    Raises:
        ValueError: a size not above the 4 specials.
    """

    en_size: int  # V_en, specials included
    zh_size: int  # V_zh, specials included

    def __post_init__(self) -> None:
        if min(self.en_size, self.zh_size) <= N_SPECIAL:
            raise ValueError(f"both vocabularies must exceed the {N_SPECIAL} specials, got "
                             f"{self.en_size} and {self.zh_size}")

    @property
    def sep_id(self) -> int:
        """``<sep>``: V_en."""
        return self.en_size

    @property
    def vocab_size(self) -> int:
        """V = V_en + V_zh - 3 (the Chinese specials are the shared ones; one ``<sep>``)."""
        return self.en_size + self.zh_size - N_SPECIAL + 1

    def from_chinese(self, c: int) -> int:
        """A Chinese vocabulary id -> its id here (specials keep theirs)."""
        return c if c < N_SPECIAL else self.en_size + c - N_SPECIAL + 1

    def to_chinese(self, i: int) -> int | None:
        """An id here -> the Chinese vocabulary's id; None for an English piece or ``<sep>``."""
        if i < N_SPECIAL:
            return i
        return i - self.en_size + N_SPECIAL - 1 if i > self.en_size else None

    def check(self, config) -> None:
        """A ``DecoderOnlyConfig`` must have this layout's ``vocab_size`` and ``sep_id`` and
        the shared specials.

        Raises:
            ValueError: a field that disagrees (the message names it).
        """
        want = {"vocab_size": self.vocab_size, "sep_id": self.sep_id, "pad_id": PAD_ID,
                "unk_id": UNK_ID, "bos_id": BOS_ID, "eos_id": EOS_ID}
        for name, value in want.items():
            if getattr(config, name) != value:
                raise ValueError(f"{name} is {getattr(config, name)} but the vocabularies "
                                 f"({self.en_size} English, {self.zh_size} Chinese) make it "
                                 f"{value}")


@dataclass(frozen=True)
class PrefixExample:
    """One encoded pair: ``ids`` (N,) and ``scored`` (N,), True where the token is a target
    of the loss (the continuation: Chinese ids and the closing ``</s>``)."""

    ids: tuple[int, ...]
    scored: tuple[bool, ...]


class PrefixCodec:
    """Encode pairs to, and decode continuations from, the one vocabulary.

    Args:
        tokenizer: the English ``tokenizers.Tokenizer`` (byte-level BPE, ids 0-3 the
            specials; a folder's ``src_tokenizer.json``).
        zh_vocab: the Chinese characters' ``Vocab`` (a folder's ``tgt_vocab.json``).
    """

    def __init__(self, tokenizer, zh_vocab: Vocab) -> None:
        self.tokenizer, self.zh_vocab = tokenizer, zh_vocab
        self.layout = PrefixLayout(tokenizer.get_vocab_size(with_added_tokens=True),
                                   len(zh_vocab))
        specials = [tokenizer.token_to_id(t) for t in (PAD, UNK, BOS, EOS)]
        if specials != [PAD_ID, UNK_ID, BOS_ID, EOS_ID]:
            raise ValueError(f"the English tokenizer's specials must be ids 0-3, got {specials}")

    def prompt(self, english: str) -> list[int]:
        """``<s> English <sep>``: (P,) ids, what generation starts from."""
        return [BOS_ID, *self.tokenizer.encode(english).ids, self.layout.sep_id]

    def continuation(self, chinese: str) -> list[int]:
        """``Chinese </s>``: (C,) ids, one per character (``vocab.tokenize_zh``)."""
        return [*map(self.layout.from_chinese, self.zh_vocab.encode(tokenize_zh(chinese))),
                EOS_ID]

    def encode(self, english: str, chinese: str) -> PrefixExample:
        """One pair -> ``PrefixExample``: ids (N,) = prompt + continuation, ``scored`` False
        on the P prompt positions and True on the C continuation positions."""
        p, c = self.prompt(english), self.continuation(chinese)
        return PrefixExample(tuple(p + c), (False,) * len(p) + (True,) * len(c))

    def encode_corpus(self, pairs: Sequence[tuple[str, str]], max_len: int
                      ) -> tuple[list[tuple[list[int], list[int]]], list[tuple[str, str]]]:
        """(prompt ids, continuation ids) per (English, Chinese) pair, the encoded pairs
        ``trainer.prefix_lm_loss`` takes, and the pairs kept: those whose N = P + C
        exceeds ``max_len`` are dropped. English is encoded in one batch (fast)."""
        english = self.tokenizer.encode_batch([e for e, _ in pairs])
        out, kept = [], []
        for enc, pair in zip(english, pairs, strict=True):
            p = [BOS_ID, *enc.ids, self.layout.sep_id]
            c = self.continuation(pair[1])
            if len(p) + len(c) <= max_len:
                out.append((p, c))
                kept.append(pair)
        return out, kept

    def decode(self, ids: Sequence[int]) -> str:
        """The Chinese text of a sequence: the ids after its first ``<sep>`` (all of them
        when there is none) up to the first ``</s>``; ``<pad>`` and ``<s>`` skipped,
        ``<unk>`` written ``<unk>``, an English piece the model wrote there decoded by the
        tokenizer (so nothing it wrote is hidden).

        Raises:
            ValueError: an id outside [0, V).
        """
        ids = [int(i) for i in ids]
        for i in ids:
            if not 0 <= i < self.layout.vocab_size:
                raise ValueError(f"id {i} is outside the vocabulary of "
                                 f"{self.layout.vocab_size}")
        if self.layout.sep_id in ids:
            ids = ids[ids.index(self.layout.sep_id) + 1:]
        out: list[str] = []
        for i in ids:
            if i == EOS_ID:
                break
            c = self.layout.to_chinese(i)
            if i in (PAD_ID, BOS_ID, self.layout.sep_id):
                continue
            out.append(self.zh_vocab.itos[c] if c is not None
                       else self.tokenizer.decode([i]).strip())
        return "".join(out)
