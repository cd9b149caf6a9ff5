"""Is each noun of a Chinese sentence in its English translation? The verdict's dictionary
check (``lexicon.untranslated``) for a model that reads Chinese.

A Chinese -> English model can write a fluent sentence that drops a word (我们暑假去成都看熊猫。
-> *We go to the summer vacation.*: no Chengdu, no panda) or swaps one (现在是下午三点。 ->
*It's three o'clock now.*: no afternoon); its probabilities often cannot tell. The check
(Specia et al. 2018, "Quality Estimation for Machine Translation", ch. 3: source words with no
dictionary translation in the output) reads the sentence as the app cuts and tags it
(``zh_segment.tag``: jieba with a classroom user dictionary) and names each word it checks
whose translation the output lacks:

- Which words: nouns, verbal nouns, proper nouns, names of people and places, and time words
  (jieba's tags ``CHECKED_TAGS``: 熊猫, 训练, 英语, 李明, 成都, 下午), not the Chinese function
  words (``verdict.chinese_function_words``). A word tagged a noun whose first dictionary sense
  is a verb (生病 "to fall ill") is left alone: its English varies too much (*was sick*). Nor
  are a measure word (部 in 这部电影) and one character after a place (人 in 美国人) read.
- Found when an English word of the output, as a lemma (``lexicon.lemmas``: *pandas* ->
  *panda*; *word's* -> *word*), is a content word of the word's senses: the app's gloss
  dictionary (``cedict.gloss_dictionary``: CC-CEDICT's first senses) and the classroom lists of
  ``entities.toml`` (天安门广场 -> Tiananmen Square); or when the full CC-CEDICT read backwards
  (``Lexicon.senses``) gives the word, or a part of it of two characters or more, for an English
  word of the output (张老师: *teacher* -> 老师); or when the output has English that
  ``resources/senses_zh.toml`` gives for it and CC-CEDICT does not say (人 -> *someone*,
  时候 -> *when*, 日本 -> *Japanese*, 钱 -> *yuan*: ``said_otherwise``). A word whose sense
  holds another word's (后天 "the day after tomorrow": *tomorrow* is 明天) is found only by
  a whole phrase of that file's ``[strict]`` table.
- Names: a name of a person (tags ``nr``...) is also found when the output spells its pinyin,
  one word after another from a word's start (李明 in *Li Ming is ...*, toneless, any reading of
  each character: ``Lexicon.readings``); a place (``ns``) also when it spells all but its last
  character (黄山 in *Mount Huang*). A name the dictionary lacks (黄晓明) is named with its
  pinyin.
- A word neither the dictionary nor the readings know is never named (no claim without
  evidence), and an output with no English word gets () (not an English translation).
"""

from __future__ import annotations

import itertools
import re
import tomllib
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path

from .cedict import gloss_dictionary
from .lexicon import (
    ENGLISH_WORD,
    HAN,
    LEADS,
    SHOWN,
    Lexicon,
    Missing,
    classroom_terms,
    function_words,
    lemmas,
    lexicon,
)

CHECKED_TAGS = frozenset({"n", "vn", "nz", "nt", "t", "ns", "nr", "nrt", "nrfg"})  # jieba's
PLACE_TAGS = frozenset({"ns"})
SPELLINGS = 64  # at most this many pinyin spellings of one word are tried (polyphones)
SENSES_FILE = Path(__file__).with_name("resources") / "senses_zh.toml"
MEASURED = frozenset("这那哪每几某此各")  # a measure word may follow these (这部电影)
_ASIDE = re.compile(r"\(.*?\)|…")
_HYPHENATED = re.compile(r"[A-Za-z]+(?:-[A-Za-z]+)+")
_CAPITALISED = re.compile(r"^(?:[A-Z][\w'-]*\s?)+")


@lru_cache(maxsize=1)
def classroom_senses() -> Mapping[str, tuple[str, ...]]:
    """Chinese -> its English in the classroom lists of ``entities.toml`` (``EXTRA_LISTS``:
    landmarks, subjects, school and app words: 天安门广场 -> ("Tiananmen Square",))."""
    out: dict[str, tuple[str, ...]] = {}
    for en, zh in classroom_terms():
        out[zh] = (*out.get(zh, ()), en)
    return out


def senses_of(word: str, gloss: Mapping[str, str]) -> tuple[str, ...]:
    """The English senses the check reads for Chinese ``word``: the classroom lists' first,
    then the gloss dictionary's (``;``-separated), asides in brackets and the ellipsis of a
    cut gloss removed, each once (case-insensitively), in order."""
    found = list(classroom_senses().get(word, ()))
    if (text := gloss.get(word)) is not None:
        found += [_ASIDE.sub("", s).strip() for s in text.split(";")]
    kept: dict[str, str] = {}
    for sense in found:
        kept.setdefault(sense.lower(), sense)
    return tuple(s for s in kept.values() if s)


def readings_of(word: str, lex: Lexicon) -> list[list[str]] | None:
    """Each character's toneless pinyin readings (``Lexicon.readings``), in alphabetical
    order; None when a character has none."""
    readings = [sorted(lex.readings.get(ch, ())) for ch in word]
    return readings if all(readings) else None


def spellings(word: str, lex: Lexicon) -> tuple[str, ...]:
    """The toneless pinyin spellings of ``word``, one reading per character
    (``readings_of``), at most SPELLINGS of them; () when a character has no reading."""
    readings = readings_of(word, lex) or [[]]
    return tuple("".join(p) for p in itertools.islice(itertools.product(*readings), SPELLINGS))


def spelt(word: str, output_text: str, lex: Lexicon, place: bool = False) -> bool:
    """Whether ``output_text`` spells ``word`` in pinyin from the start of one of its words,
    across spaces, apostrophes and hyphens (李明 in *Li Ming*, 西安 in *Xi'an*); with
    ``place``, all but its last character may do (黄山 in *Mount Huang*)."""
    words = [w.lower() for w in re.findall(r"[A-Za-z]+", output_text.replace("'", ""))]
    tails = ["".join(words[i:]) for i in range(len(words))]
    whole = [word] + ([word[:-1]] if place and len(word) >= 2 else [])
    return any(t.startswith(s) for w in whole for s in spellings(w, lex) for t in tails)


def content_forms(senses: tuple[str, ...]) -> frozenset[str]:
    """The lemmas of the content words of ``senses`` (no function word, no leading *to*), a
    hyphenated word also written as one (*desk-mate*: *desk*, *mate*, *deskmate*)."""
    words = {w for s in senses for w in ENGLISH_WORD.findall(s)
             if w.lower() not in LEADS and w.lower() not in function_words()}
    words |= {w.replace("-", "") for s in senses for w in _HYPHENATED.findall(s)}
    return frozenset(f for w in words for f in lemmas(w))


def parts(word: str) -> set[str]:
    """``word`` and its parts of two characters or more (张老师: 张老, 老师, ...)."""
    return {word} | {word[i:j] for i in range(len(word)) for j in range(i + 2, len(word) + 1)}


def _shown(senses: tuple[str, ...], name: bool) -> tuple[str, ...]:
    """Up to SHOWN senses to print; for a name or place with a capitalised sense, the leading
    capitalised words of those (``Chengdu subprovincial city ...`` -> ``Chengdu``)."""
    names = tuple(m.group().strip() for s in senses if (m := _CAPITALISED.match(s)))
    return tuple(dict.fromkeys(names if name and names else senses))[:SHOWN]


def extra_senses(table: str = "senses") -> Mapping[str, tuple[str, ...]]:
    """``resources/senses_zh.toml``'s ``table``, lower case: ``"senses"``, Chinese word ->
    English that translates it where CC-CEDICT's senses do not say it (人 -> someone, 日本
    -> japanese); ``"strict"``, the words only whole phrases translate (后天 -> the day
    after tomorrow: its word *tomorrow* is 明天's)."""
    return _senses_tables()[table]


@lru_cache(maxsize=1)
def _senses_tables() -> dict[str, dict[str, tuple[str, ...]]]:
    tables = tomllib.loads(SENSES_FILE.read_text(encoding="utf-8"))
    return {name: {zh: tuple(e.lower() for e in en) for zh, en in rows.items()}
            for name, rows in tables.items()}


def said_otherwise(word: str, output_text: str, out_forms: frozenset[str],
                   table: str = "senses") -> bool:
    """Whether ``output_text`` has English of ``extra_senses(table)`` for Chinese ``word``:
    a phrase as whole words in any case (*at the moment*), a single word also as a lemma of
    an output word (``out_forms``: *Americans* -> american)."""
    text = output_text.lower().replace("\u2019", "'")
    return any(e in out_forms or re.search(rf"(?<![\w']){re.escape(e)}(?![\w'])", text)
               for e in extra_senses(table).get(word, ()))


def _read(pairs: list[tuple[str, str]], i: int, skip: frozenset[str]) -> bool:
    """Whether the check reads word ``i`` of ``pairs`` (jieba's (word, tag)): a Chinese word
    of CHECKED_TAGS, not in ``skip``, not a measure word (one character after a numeral or a
    demonstrative, ``MEASURED``, and before a noun: 部 in 这部电影, 支 in 3支笔), and not one
    character after a place (人 in 美国人: *American*)."""
    word, tag = pairs[i]
    if tag not in CHECKED_TAGS or word in skip or not HAN.search(word):
        return False
    if len(word) > 1 or i == 0:
        return True
    before, before_tag = pairs[i - 1]
    if before_tag in PLACE_TAGS:  # 美国人 (American), 北京话: the place's check reads both
        return False
    after_tag = pairs[i + 1][1] if i + 1 < len(pairs) else ""
    return not ((before_tag.startswith("m") or before in MEASURED) and after_tag.startswith("n"))


def untranslated_zh(src_text: str, output_text: str, lex: Lexicon | None = None, *,
                    gloss: Mapping[str, str] | None = None,
                    skip: frozenset[str] = frozenset()) -> tuple[Missing, ...]:
    """The words of Chinese ``src_text`` that the check reads (module docstring) whose
    translation ``output_text`` lacks, in sentence order, each once: ``Missing(word, up to
    SHOWN of its English senses, ())``, or for a name the dictionary lacks ``Missing(word,
    (), its pinyin syllables)`` (one reading per character).

    Args:
        src_text: the Chinese sentence as typed; output_text: its English translation.
        lex: the dictionary read backwards and the readings (default ``lexicon()``).
        gloss: Chinese word -> its short English gloss (default ``cedict.gloss_dictionary``).
        skip: words never named (``verdict.chinese_function_words``).
    """
    from model.core.zh_segment import tag as jieba_tag

    if not ENGLISH_WORD.search(output_text):
        return ()
    if lex is None:
        lex = lexicon()
    if gloss is None:
        gloss = gloss_dictionary()
    out_forms = frozenset(f for w in ENGLISH_WORD.findall(output_text)
                          for f in lemmas(re.sub(r"'s$", "", w)))
    out_zh: set[str] | None = None  # the Chinese the output's words translate (when needed)
    found: dict[str, Missing] = {}
    pairs = jieba_tag(src_text)
    for i, (word, tag) in enumerate(pairs):
        if word in found or not _read(pairs, i, skip):
            continue
        name = tag.startswith("nr") or tag in PLACE_TAGS  # a person's (nr, nrt, nrfg) or a place's
        senses = senses_of(word, gloss)
        if senses and tag != "vn" and senses[0].startswith("to ") and not name:
            continue  # a verb jieba tagged a noun
        if word in extra_senses("strict"):  # only its whole phrases say it
            if not said_otherwise(word, output_text, out_forms, "strict"):
                found[word] = Missing(word, _shown(senses, name), ())
            continue
        if content_forms(senses) & out_forms or said_otherwise(word, output_text, out_forms):
            continue
        if out_zh is None:
            out_zh = {zh for f in out_forms for zh in lex.senses.get(f, ())}
        if not parts(word).isdisjoint(out_zh):
            continue
        if name and spelt(word, output_text, lex, place=tag in PLACE_TAGS):
            continue
        shown = _shown(senses, name)
        if shown:
            found[word] = Missing(word, shown, ())
        elif name and (sound := syllables(word, lex)):
            found[word] = Missing(word, (), sound)
    return tuple(found.values())


def syllables(word: str, lex: Lexicon) -> tuple[str, ...]:
    """``word``'s pinyin syllables, each character's first reading in alphabetical order
    (``("huang", "xiao", "ming")``); () when a character has none (``readings_of``)."""
    return tuple(r[0] for r in readings_of(word, lex) or ())
