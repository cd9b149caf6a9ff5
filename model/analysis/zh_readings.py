"""How each word of a Chinese sentence is read: CC-CEDICT's reading for a word of two or more
characters it lists (``cedict.build_pinyin`` picks one reading per word; its neutral tone is
tone 5 and is shown unmarked: 妈妈 ma1 ma5 -> mā ma), the particles 的 / 地 / 得 read as the
words around them show (``particle``), and None otherwise: the caller (``ui.pinyin``) reads
such a word with pypinyin. The words and their jieba tags are the app's one segmentation
(``model.core.zh_segment.segment_tagged``).
"""

from __future__ import annotations

from collections.abc import Sequence

from model.core.zh_segment import backward

from .cedict import gloss_dictionary, word_pinyin

MODIFIER_TAGS = frozenset({"a", "ad", "d", "z", "b", "i", "l"})  # 地 after one is de (jieba's
# adjectives, adverbs, state words, idioms; not zg, which it gives 块 and 掉)
SUBJECT_TAGS = ("r", "n", "t", "d", "x")  # 得 after one is a verb (dé, děi), not the particle
PARTICLE = "de5"


def _is_verb(pair: tuple[str, str]) -> bool:
    """Whether a (word, tag) pair is a verb or adverb, by jieba's tag or CC-CEDICT's first
    sense (``"to ..."``: 回家, which jieba tags a noun)."""
    word, t = pair
    gloss = gloss_dictionary().get(word, "") if word else ""
    return word != "了" and (t.startswith(("v", "d")) and t != "vn" or gloss.startswith("to "))


def _doubled(word: str) -> bool:
    """Whether ``word`` is a doubled word, AA or AABB (慢慢, 高高兴兴): an adverb before 地."""
    return (len(word) == 2 and word[0] == word[1]) or (
        len(word) == 4 and word[0] == word[1] and word[2] == word[3])


def particle(words: Sequence[tuple[str, str]], i: int) -> str | None:
    """The numbered reading of word ``i`` of ``words`` ((word, tag) pairs, as
    ``segment_tagged`` gives them) when it is 的, 地 or 得 alone, as the words around it show,
    else None:

    - 的: ``de5`` (its other readings, 目的 dì, 的确 dí, are inside words);
    - 地: ``de5`` after an adjective, adverb or idiom as jieba tags it (``MODIFIER_TAGS``:
      认真地听) or after a doubled word (``_doubled``: 慢慢地走, 高高兴兴地); else None (the
      noun dì: 这块地; jieba's own particle tag ``uv`` is not read, it tags that noun so too);
    - 得: ``de5`` after a word that can be a predicate, as jieba tags it (跑得快, 下得大);
      after a subject or adverb (``SUBJECT_TAGS``: pronouns, nouns, time words, adverbs) or
      first, ``dei3`` ("must") when a verb or adverb follows (``_is_verb``: 我得回家,
      你得好好学习), else None (dé, "to get": 他得了第一名).
    """
    word = words[i][0]
    before = words[i - 1][1] if i else ""
    after = words[i + 1] if i + 1 < len(words) else ("", "")
    if word == "的":
        return PARTICLE
    if word == "地":
        modifier = before in MODIFIER_TAGS or (i > 0 and _doubled(words[i - 1][0]))
        return PARTICLE if modifier else None
    if word == "得":
        if before and not before.startswith(SUBJECT_TAGS):
            return PARTICLE
        return "dei3" if _is_verb(after) else None
    return None


def _listed(word: str) -> list[str | None]:
    """One numbered syllable per character of ``word`` where CC-CEDICT reads it: the word
    itself, or else its longest listed parts from its end (``zh_segment.backward``:
    昨天晚上 -> 昨天 晚上, zuo2 tian1 wan3 shang5); None for a character of no listed part.
    A 得 inside a three-character word (看得见, CC-CEDICT's de2) is the particle, ``de5``."""
    out: list[str | None] = []
    for part in [word] if word in word_pinyin() else backward(word, word_pinyin()):
        reading = word_pinyin().get(part) if len(part) > 1 else None
        syllables: list[str | None] = list(reading.split(" ")) if reading else [None] * len(part)
        if len(part) == 3 and part[1] == "得":
            syllables[1] = PARTICLE
        out += syllables
    return out


def cedict_reading(words: Sequence[tuple[str, str]], i: int) -> list[str | None]:
    """Word ``i`` of ``words`` ((word, tag) pairs of ``segment_tagged``) in numbered pinyin,
    one entry per character (``["ma1", "ma5"]``), as CC-CEDICT (``_listed``) or the particle
    rule (``particle``) reads it; None for a character neither reads, which the caller
    reads with pypinyin (in the whole word)."""
    word = words[i][0]
    if len(word) == 1:
        return [particle(words, i)]
    return _listed(word)
