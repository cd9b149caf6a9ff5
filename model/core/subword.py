"""Subword source tokens with Hugging Face ``tokenizers``: byte-level BPE for English.

Byte-level BPE (as GPT-2's) never produces an unknown token: any typed text, emoji
included, falls back to its UTF-8 bytes. The tokenizer is saved as ``src_tokenizer.json``
beside the model, a standard file that ``tokenizers.Tokenizer.from_file`` loads. The
special tokens ``<pad> <unk> <s> </s>`` keep ids 0-3, as in ``model.core.vocab``.

Token strings are byte-level symbols (``Ġlearn`` = " learn"); ``piece_label`` turns them
into what a person reads (``learn``), and ``word_ids`` groups the pieces of one word.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import lru_cache
from pathlib import Path

from .vocab import SPECIALS, Vocab

SRC_TOKENIZER = "src_tokenizer.json"
TGT_TOKENIZER = "tgt_tokenizer.json"  # an English target's pieces (a zh-en model)


def train_bpe(texts: Iterable[str], vocab_size: int = 8000, min_frequency: int = 2,
              individual_digits: bool = False):
    """Train a byte-level BPE tokenizer on ``texts``.

    Normalisation: NFKC, curly quotes to straight ones. Pre-tokenisation: GPT-2's regex
    (words, numbers, punctuation, contractions ``'s 't 're``) with a space added before the
    first word, so a word has the same pieces at the start of a sentence as elsewhere; then
    with ``individual_digits`` every digit on its own (``Ġ1998`` -> ``Ġ 1 9 9 8``, as
    LLaMA's tokenizer), so any number has pieces the model has seen, digit by digit.

    Returns:
        tokenizers.Tokenizer whose first four ids are ``<pad> <unk> <s> </s>``.
    """
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.normalizer = normalizers.Sequence([
        normalizers.NFKC(),
        normalizers.Replace("\u2019", "'"), normalizers.Replace("\u2018", "'"),
        normalizers.Replace("\u201c", '"'), normalizers.Replace("\u201d", '"'),
    ])
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True)
    if individual_digits:
        tok.pre_tokenizer = pre_tokenizers.Sequence(
            [tok.pre_tokenizer, pre_tokenizers.Digits(individual_digits=True)])
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size, min_frequency=min_frequency, special_tokens=list(SPECIALS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False,
    )
    tok.train_from_iterator(texts, trainer)
    return tok


def pieces(tok, text: str) -> list[str]:
    """The BPE pieces of user ``text``: normalise, pre-tokenise, then BPE each word, so a
    typed ``<unk>`` or ``</s>`` is plain text, never a special token (``tok.encode`` would
    match the special tokens' strings first). Equal to ``tok.encode(text).tokens`` for any
    text without them."""
    out: list[str] = []
    for word, _ in tok.pre_tokenizer.pre_tokenize_str(tok.normalizer.normalize_str(text)):
        out += [t.value for t in tok.model.tokenize(word)]
    return out


def load_tokenizer(path: Path):
    """``tokenizers.Tokenizer.from_file``.

    Raises:
        ValueError: the file is not a tokenizer file (the message names it).
    """
    from tokenizers import Tokenizer

    try:
        return Tokenizer.from_file(str(path))
    except Exception as exc:  # tokenizers raises its own Exception subclass
        raise ValueError(f"{Path(path).name} is not a tokenizers file: {exc}") from exc


def tokenizer_vocab(tok) -> Vocab:
    """The tokenizer's token strings in id order, as a ``Vocab``.

    Raises:
        ValueError: ids with gaps, or the specials not at ids 0-3.
    """
    table = tok.get_vocab(with_added_tokens=True)
    itos = sorted(table, key=table.get)
    if [table[t] for t in itos] != list(range(len(itos))):
        raise ValueError("the tokenizer's ids are not 0..N-1 without gaps")
    return Vocab(itos)


@lru_cache(maxsize=1)
def _byte_decoder() -> dict[str, int]:
    """GPT-2's byte-to-symbol table, inverted: symbol -> byte."""
    from tokenizers import pre_tokenizers

    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) \
        + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    table = {chr(c): b for b, c in zip(bs, cs, strict=True)}
    assert set(table) == set(pre_tokenizers.ByteLevel.alphabet())
    return table


def bytes_label(raw: bytes) -> str:
    """UTF-8 bytes as text, each run of bytes that is not a whole character shown as its
    bytes in hex: ``b"\\xe4\\xbb\\x8a"`` -> ``今``, ``b"\\xe4\\xbb"`` -> ``⟨e4 bb⟩``,
    ``b"\\x8a\\xe5\\xa4\\xa9"`` -> ``⟨8a⟩天`` (a byte-level token may hold part of a
    character; its neighbour holds the rest)."""
    text = raw.decode("utf-8", errors="surrogateescape")  # a stray byte b -> U+DC00 + b
    return _STRAY_BYTES.sub(lambda m: "⟨" + " ".join(f"{ord(c) - 0xDC00:02x}" for c in m.group())
                            + "⟩", text)


_STRAY_BYTES = re.compile("[\udc80-\udcff]+")


def piece_label(token: str) -> str:
    """What a person reads for one byte-level BPE token: ``Ġlearn`` -> ``learn``, ``ing`` ->
    ``ing``, ``ä»Ĭ`` -> ``今``, a space -> ``␣``; bytes that are only part of a character
    -> ``⟨e4 bb⟩`` (``bytes_label``). Special tokens and tokens of word-level vocabularies
    come back unchanged."""
    table = _byte_decoder()
    if token in SPECIALS or not all(ch in table for ch in token):
        return token
    return bytes_label(bytes(table[ch] for ch in token)).strip() or "␣"


def word_ids(tokens: Sequence[str]) -> tuple[int, ...]:
    """The word index of every token: a new word starts at a token that begins with a
    space (``Ġ``), at a punctuation mark, after one, and at a special token; the other
    pieces continue the word before them (``Ġlearn ing`` -> one word), an apostrophe
    attached to a word keeps it going (``Ġdon 't``, ``Ġdon ' t``), and a lone space piece
    (``Ġ``) belongs to the word after it. Word-level tokens (no ``Ġ`` anywhere) are each
    their own word.

    >>> word_ids(["Ġlearn", "ing", "Ġmachines", "?", "Ġ", "Why", "</s>"])
    (0, 0, 1, 2, 3, 3, 4)
    """
    byte_level = any(t.startswith("Ġ") for t in tokens)
    out: list[int] = []
    prev_alnum = prev_space = prev_apostrophe = False
    for i, t in enumerate(tokens):
        label = piece_label(t)
        alnum = any(ch.isalnum() for ch in label) and t not in SPECIALS
        attached = byte_level and not t.startswith("Ġ")
        apostrophe = attached and label.startswith("'") and prev_alnum
        starts = (i == 0 or not byte_level or t.startswith("Ġ") or not alnum or not prev_alnum)
        if attached and ((prev_space and alnum) or apostrophe or (prev_apostrophe and alnum)):
            starts = False
        out.append(out[-1] + 1 if out and starts else (out[-1] if out else 0))
        prev_alnum = alnum or apostrophe
        prev_space, prev_apostrophe = label == "␣", apostrophe and label == "'"
    return tuple(out)
