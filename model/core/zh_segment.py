"""Chinese text cut into words as a Chinese reader splits them: the app's one segmentation.
The header's pinyin and glosses (``ui.pinyin``, ``ui.gloss``), the verdict's dictionary checks
(``analysis.lexicon_zh``, ``analysis.numbers``), the word grouping of a Chinese source in the
charts and in Side by side (``backends.ours.chinese_words`` -> ``DecodeTrace.src_words``) all
read the words of ``tag`` / ``segment``; ``analysis.zh_readings`` reads them aloud.

The segmenter is jieba, as ``rjieba`` gives it (jieba-rs: Rust, MIT licence, kept up to date,
a fraction of a millisecond a sentence, already a dependency of the app; its most probable
path through jieba's dictionary, unknown words found by its HMM, and jieba's part-of-speech
tags, which the verdict reads). jieba's dictionary was counted from news and web text, and on
a class's sentences it joins across the words a reader sees. Plain corrections follow it:

- a user dictionary of classroom and everyday words (``USER_WORDS``, a data file next to this
  module): words jieba must keep whole with the frequency that makes it (请把手机关掉 -> 请 把
  手机 关掉, not 请 把手 机关 掉), and odd joined entries it must split (雨下 -> 雨 下, 太贵 ->
  太 贵);
- a word of two to four characters that jieba's dictionary joins but CC-CEDICT does not list
  (``CEDICT_WORDS``, the words ``analysis.cedict`` prebuilds with their readings), and that is
  no name, place, number or time (``KEPT_TAGS``) nor a plural (``KEPT_SUFFIXES``), is cut again into
  CC-CEDICT's words by maximum matching (Wong & Chan 1996, "Chinese word segmentation based
  on maximum matching and word binding force"), where matching from its end and from its
  start agree (where they differ the word is ambiguous and stays as jieba cut it: 四川菜):
  很漂亮 -> 很 漂亮, 说得对 -> 说 得 对, 一本书 -> 一 本 书 (jieba: 一 本书), 刮得 -> 刮 得;
- a number jieba joins to its measure word is split from it (三十个 -> 三十 个, ``_counted``);
- a 们 jieba cuts alone joins the noun or pronoun before it (孩子们).

jieba's dictionary is loaded once per process (``jieba``, about 33 MB, a quarter of a second;
``ui.warm.warm_up`` loads it before the first visit), under a lock (``packed.once``): the
server's sessions share it; rjieba's ``cut`` and ``tag`` only read it after that.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from pathlib import Path
from types import ModuleType

from .packed import PackedMap, once, read_gz

USER_WORDS = Path(__file__).with_name("zh_user_words.txt")
# Written by ``python -m model.analysis.cedict`` (``cedict.build_pinyin``: CC-CEDICT's words of
# 2 to MAX_WORD characters and their readings); only its words are read here.
CEDICT_WORDS = Path(__file__).parents[1] / "analysis" / "resources" / "cedict_pinyin.tsv.gz"
MAX_WORD = 4  # characters: the longest word cut again, and the longest CC-CEDICT word it reads
HAN_RUN = re.compile(r"([\u3007\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f]+)")
KEPT_TAGS = ("nr", "ns", "nt", "nz", "m", "t", "eng")  # jieba's tags (prefixes) never cut
# again: names, places, organisations, numbers, time words (昨天晚上), Latin words
KEPT_SUFFIXES = ("们",)  # the plural suffix stays with its noun: 孩子们, 同学们


@once
def cedict_words() -> PackedMap[str]:
    """CC-CEDICT's words of 2 to ``MAX_WORD`` characters (``CEDICT_WORDS``, packed; its values
    are their readings, ``analysis.zh_readings`` reads them), once per process."""
    return PackedMap(read_gz(CEDICT_WORDS))


Join = tuple[str, int | None, str]  # (word, freq or None, jieba tag)
Split = tuple[tuple[str, str], ...]  # (part, jieba tag) pairs


def read_user_words(path: Path = USER_WORDS) -> tuple[list[Join], dict[str, Split]]:
    """The user dictionary's entries (format in its header): (word, freq or None, tag) to
    join, in file order, and joined word -> its (part, tag) pairs to split. Raises
    ``OSError`` if the file cannot be read, ``ValueError`` on a frequency that is not a whole
    number or a split with not as many tags as parts."""
    joins: list[Join] = []
    splits: dict[str, Split] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        fields = line.split("#", 1)[0].split()
        if not fields:
            continue
        if "/" in fields[0]:
            parts = fields[0].split("/")
            tags = fields[1].split("/") if len(fields) > 1 else ["x"] * len(parts)
            if len(tags) != len(parts):
                raise ValueError(f"{path}: {line!r} has {len(tags)} tags for {len(parts)} parts")
            splits["".join(parts)] = tuple(zip(parts, tags, strict=True))
            continue
        freq = int(fields[1]) if len(fields) > 1 else None
        joins.append((fields[0], freq, fields[2] if len(fields) > 2 else "x"))
    return joins, splits


@once
def jieba() -> ModuleType:
    """``rjieba`` with the user dictionary's words added (``rjieba.add_word``; a word without
    a frequency gets ``rjieba.suggest_freq``'s), once per process."""
    import rjieba

    for word, freq, tag in read_user_words()[0]:
        rjieba.add_word(word, freq if freq is not None else rjieba.suggest_freq(word), tag)
    return rjieba


@once
def _splits() -> dict[str, Split]:
    """The user dictionary's splits (``read_user_words``), once per process."""
    return read_user_words()[1]


@once
def _joined() -> frozenset[str]:
    """The user dictionary's words to keep whole (``read_user_words``), once per process."""
    return frozenset(word for word, _, _ in read_user_words()[0])


def backward(word: str, known: Collection[str]) -> list[str]:
    """``word`` cut by backward maximum matching: from its end, the longest CC-CEDICT word
    (``known``; at most ``MAX_WORD`` characters) that ends there, else one character."""
    out: list[str] = []
    end = len(word)
    while end:
        start = next((s for s in range(max(0, end - MAX_WORD), end - 1)
                      if word[s:end] in known), end - 1)
        out.append(word[start:end])
        end = start
    return out[::-1]


def forward(word: str, known: Collection[str]) -> list[str]:
    """``word`` cut by forward maximum matching: from its start, the longest word of
    ``known`` (at most ``MAX_WORD`` characters) that starts there, else one character. The
    parts joined give ``word``."""
    out: list[str] = []
    start = 0
    while start < len(word):
        end = next((e for e in range(min(len(word), start + MAX_WORD), start + 1, -1)
                    if word[start:e] in known), start + 1)
        out.append(word[start:end])
        start = end
    return out


def _counted(word: str, tag: str) -> bool:
    """Whether ``word`` is a number and its measure word that jieba joins and CC-CEDICT does
    not list (三十个, 两个: tagged a numeral, ``m``; its last character a measure word, ``q``,
    as jieba tags it alone): a reader splits it, 三十 个."""
    return (tag.startswith("m") and 2 <= len(word) <= MAX_WORD and HAN_RUN.fullmatch(word)
            is not None and word not in cedict_words()
            and [t for _, t in jieba().tag(word[-1])] == ["q"])


def _recut(word: str, tag: str) -> list[tuple[str, str]]:
    """The user dictionary's split of ``word`` (with its tags), a number split from its
    measure word (``_counted``), or its CC-CEDICT cut (module docstring; a part tagged as
    jieba tags it alone), or ``[(word, tag)]`` (also for a word the user dictionary joins)."""
    if word in _splits():
        return list(_splits()[word])
    if _counted(word, tag):
        return [(word[:-1], jieba().tag(word[:-1])[0][1]), (word[-1], "q")]
    if not (2 <= len(word) <= MAX_WORD and HAN_RUN.fullmatch(word)
            and not tag.startswith(KEPT_TAGS) and not word.endswith(KEPT_SUFFIXES)
            and word not in cedict_words() and word not in _joined()):
        return [(word, tag)]
    parts = backward(word, cedict_words())
    if len(parts) == 1 or parts != forward(word, cedict_words()):
        return [(word, tag)]  # one word, or ambiguous (四川菜: 四川 菜 or 四 川菜): jieba's
    return [(p, t[0][1] if len(t := jieba().tag(p)) == 1 else "x") for p in parts]


def _plurals(pairs: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """``pairs`` with each 们 that jieba cuts alone joined to the noun or pronoun before it
    (孩子 们 -> 孩子们, tagged as the noun): the plural suffix is part of its word."""
    out: list[tuple[str, str]] = []
    for word, t in pairs:
        if word == "们" and out and out[-1][1].startswith(("n", "r")):
            out[-1] = (out[-1][0] + word, out[-1][1])
        else:
            out.append((word, t))
    return out


def tag(text: str) -> list[tuple[str, str]]:
    """``text`` as (word, jieba part-of-speech tag) pairs, as jieba cuts and tags it
    (``rjieba.tag``: digits and Latin letters are words too, ``"38"`` tagged ``m``) with the
    module's corrections. Lossless where jieba is: the words joined give ``text``."""
    return _plurals([pair for word, t in jieba().tag(text) for pair in _recut(word, t)])


def cut(text: str) -> list[str]:
    """The words of ``tag(text)``."""
    return [word for word, _ in tag(text)]


def segment_tagged(text: str) -> list[tuple[str, str]]:
    """``text`` as (word, tag) pairs: each run of Chinese characters (``HAN_RUN``) as ``tag``
    gives it, every run of other characters one piece tagged ``"x"``. Lossless: the words
    joined give ``text`` (a run whose cut would not give it back whole stays one piece,
    tagged ``"x"``); ``[]`` for ``""``."""
    out: list[tuple[str, str]] = []
    for i, piece in enumerate(HAN_RUN.split(text)):
        if not piece:
            continue
        pairs = tag(piece) if i % 2 else [(piece, "x")]
        out.extend(pairs if "".join(w for w, _ in pairs) == piece else [(piece, "x")])
    return out


def segment(text: str) -> list[str]:
    """The words of ``segment_tagged(text)``: ``"1998年<s>我们"`` -> ``1998 年 <s> 我们``."""
    return [word for word, _ in segment_tagged(text)]
