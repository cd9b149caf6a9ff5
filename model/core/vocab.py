"""Vocabularies and tokenizers.

English is split into lower-cased words and punctuation (``friend's`` -> ``friend 's``);
Chinese is one token per character or punctuation mark, as in the source documents'
为 / 什 / 么 example. The special tokens have the same ids in every vocabulary:
``<pad>``=0, ``<unk>``=1, ``<s>``=2, ``</s>``=3.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections.abc import Iterable, Sequence

from ..errors import short_repr as _short

PAD, UNK, BOS, EOS = "<pad>", "<unk>", "<s>", "</s>"
SPECIALS = (PAD, UNK, BOS, EOS)

# A word, the possessive clitic, a number, or any other single visible character.
_EN_TOKEN = re.compile(r"'s\b|[a-z]+|[0-9]+|[^\sa-z0-9]")


def normalize_text(text: str) -> str:
    """Fold what people type into what the tokenizer expects.

    NFKC-normalises (full-width letters -> ASCII), strips accents (``whý`` -> ``why``),
    maps curly apostrophes to ``'``, removes format characters (zero-width spaces, bidi
    marks) and lone surrogates, and turns control characters (NUL, ESC, ...) into spaces.
    """
    text = unicodedata.normalize("NFKD", text.replace("\u2019", "'").replace("\u2018", "'"))
    out = []
    for ch in text:
        cat = unicodedata.category(ch)
        if cat in ("Mn", "Cf", "Cs"):  # combining marks, invisible format chars, surrogates
            continue
        out.append(" " if cat == "Cc" else ch)
    return unicodedata.normalize("NFKC", "".join(out))


def tokenize_en(text: str) -> list[str]:
    """Split English text into the model's source tokens.

    >>> tokenize_en("Why do we work?")
    ['why', 'do', 'we', 'work', '?']
    >>> tokenize_en("my friend's house")
    ['my', 'friend', "'s", 'house']
    """
    return _EN_TOKEN.findall(normalize_text(text).lower())


# Chinese text uses full-width punctuation; ASCII marks typed by a person map onto it.
_ZH_PUNCT = str.maketrans({"?": "？", ".": "。", ",": "，", "!": "！", ":": "：", ";": "；"})


def tokenize_zh(text: str) -> list[str]:
    """One token per non-space character, as the target vocabulary has them.

    Unlike ``normalize_text`` (for English), full-width punctuation is kept and ASCII
    ``? . , ! : ;`` become ``？ 。 ， ！ ： ；``; invisible format characters are dropped.

    >>> tokenize_zh("我们 为什么工作?")
    ['我', '们', '为', '什', '么', '工', '作', '？']
    """
    text = unicodedata.normalize("NFC", text).translate(_ZH_PUNCT)
    return [ch for ch in text
            if not ch.isspace() and unicodedata.category(ch) not in ("Cc", "Cf", "Cs")]


class TokenTable:
    """Token strings <-> ids: ``itos`` (id -> token) and ``stoi`` (token -> id)."""

    def __init__(self, tokens: Sequence[str]) -> None:
        self.itos: list[str] = list(tokens)
        self.stoi: dict[str, int] = {t: i for i, t in enumerate(self.itos)}

    def __len__(self) -> int:
        return len(self.itos)

    def __contains__(self, token: str) -> bool:
        return token in self.stoi

    def decode(self, ids: Iterable[int]) -> list[str]:
        """Ids -> token strings.

        Raises:
            ValueError: an id outside the vocabulary.
        """
        out = []
        for i in ids:
            if not 0 <= int(i) < len(self.itos):
                raise ValueError(f"id {i} is outside a vocabulary of {len(self.itos)}")
            out.append(self.itos[int(i)])
        return out


class Vocab(TokenTable):
    """A token <-> id table whose first four entries are the special tokens.

    Raises:
        ValueError: from the constructor if an entry is not a non-empty string, contains
            whitespace or invisible characters, the specials are not first, or a token
            repeats (the message says which).
    """

    def __init__(self, tokens: Sequence[str]) -> None:
        tokens = list(tokens)
        for i, t in enumerate(tokens):  # before any hashing: a list or dict is unhashable
            if not isinstance(t, str) or not t:
                raise ValueError(f"entry {i} is {_short(t)}; every entry must be a non-empty "
                                 "string")
            if any(ch.isspace() or unicodedata.category(ch) in ("Cc", "Cf", "Cs") for ch in t):
                raise ValueError(f"entry {i} ({_short(t)}) contains a space or an invisible "
                                 "character")
        if tuple(tokens[:4]) != SPECIALS:
            raise ValueError(f"the first 4 entries must be {list(SPECIALS)}, got "
                             f"{_short(tokens[:4])}")
        seen: set[str] = set()
        repeated = list(dict.fromkeys(t for t in tokens if t in seen or seen.add(t)))
        if repeated:
            raise ValueError(f"{len(repeated)} token(s) listed twice, e.g. {_short(repeated[:3])}")
        super().__init__(tokens)

    @classmethod
    def build(cls, tokens: Iterable[str]) -> Vocab:
        """The specials followed by the distinct ``tokens`` in sorted order."""
        return cls(list(SPECIALS) + sorted(set(tokens) - set(SPECIALS)))

    def encode(self, tokens: Iterable[str]) -> list[int]:
        """Token strings -> ids; unknown tokens become ``<unk>`` (id 1)."""
        return [self.stoi.get(t, 1) for t in tokens]

    def unknown(self, tokens: Iterable[str]) -> list[str]:
        """The tokens that are not in the vocabulary, in order, each once."""
        return list(dict.fromkeys(t for t in tokens if t not in self.stoi))

    def suggest(self, token: str, n: int = 3) -> list[str]:
        """Up to ``n`` in-vocabulary tokens spelled most like ``token`` (difflib ratio)."""
        words = [t for t in self.itos[4:] if t.isalpha()]
        return difflib.get_close_matches(token, words, n=n, cutoff=0.6)
