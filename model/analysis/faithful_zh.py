"""Does the English say what the Chinese says? Two checks of an English translation against
its Chinese source that the dictionary check (``lexicon_zh.untranslated_zh``, nouns only)
and the probabilities miss, both read in ``resources/faithful_zh.toml``:

- **A negation dropped** (``negation_dropped``): the sentence negates a word (我有点**不**舒服)
  and the translation writes that word's meaning with no negation at all (*I have a little
  comfortable*). A negator (``[negation] chinese``, as jieba cuts the sentence:
  ``zh_segment.tag``; or a word made of 不, 没 or 别 and a word passed over, such as 不想)
  negates the next word that is not a function word (``between``, and
  ``verdict.chinese_function_words``: 不是老师 negates 老师); the word's dictionary senses
  (``lexicon_zh.senses_of``) must be in the output as lemmas, and the output must have no
  English negation (``english_negation``: *not*, *n't*, *never*, *unable*, *unhappy*,
  *careless* ...). A question of the form A不A (好不好, 有没有) negates nothing. A translation
  that says the opposite in another word (不舒服 -> *unwell*, 不喜欢 -> *hate*) writes none of
  the word's senses, so is never named.
- **A word said twice** (``said_twice``): one clause of the output (between punctuation)
  writes a content word (as a lemma: *raining*, *rain*) more often than the Chinese has
  words that translate it (*Our class has 38 students and 20 girls are 20 girls*: 女生
  once). Over-translation, the coverage problem of Tu et al. 2016 ("Modeling Coverage for
  Neural Machine Translation"): the decoder attends to a source word again after writing
  it. Not counted: function words (``lexicon.function_words``), number words (the number
  check's), ``[repetition] not_counted`` (*like*, *out* ...), and two copies joined as an
  idiom (*more and more*, *day by day*: ``links``). A word of the Chinese translates it when
  the senses of the word or of a part of it have its lemma (书 in 看书 for *books*) or the
  word's pinyin spells it (周杰 for *Zhou*).

On the 5,762 Tatoeba TEST pairs of the everyday corpus, read with their human English as the
"output", the two fire on 0.17 % and 0.30 % (false alarms by construction:
``benchmarks/verdict.py --references``).
"""

from __future__ import annotations

import re
import tomllib
from collections import Counter
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

from .cedict import gloss_dictionary
from .lemmas import all_lemmas
from .lexicon import ENGLISH_WORD, LEADS, Lexicon, function_words, lemmas, lexicon
from .lexicon_zh import content_forms, parts, senses_of, spellings
from .numbers import table as number_table

CHECKS_FILE = Path(__file__).with_name("resources") / "faithful_zh.toml"
_PUNCTUATION = re.compile(r"^[\W_]+$")
_CLAUSE_END = re.compile(r"[,;:.!?\"“”()\[\]，。；：！？、（）]")
_MIN_STEM = 4  # letters a negative prefix or -less must leave (unhappy: happy)


class Negated(NamedTuple):
    """A negation the translation drops: ``negated``, the text from the negator to the word
    it negates as typed (``不舒服``, ``不会再联络``), and ``english``, the output's words
    that write that word (its senses' lemmas), as written (``("comfortable",)``)."""

    negated: str
    english: tuple[str, ...]


class Repeated(NamedTuple):
    """A word said twice: ``word`` as the output first writes it, ``times`` it is written in
    one clause, and ``sources``, the words of the Chinese that translate it (fewer than
    ``times``, at least 1 counted)."""

    word: str
    times: int
    sources: int


@lru_cache(maxsize=1)
def checks() -> dict:
    """``resources/faithful_zh.toml`` (``negation``, ``repetition``)."""
    return tomllib.loads(CHECKS_FILE.read_text(encoding="utf-8"))


def _words(text: str) -> list[str]:
    """The English words of ``text``, a curly apostrophe read as ``'`` (*couldn’t*)."""
    return ENGLISH_WORD.findall(text.replace("\u2019", "'"))


def _negative_affix(word: str) -> bool:
    """Whether English ``word`` (lower case) is an English word made from another by a
    negative prefix (``unhappy``, ``dislike``) or by ``-less`` (``careless``)."""
    if not all_lemmas(word):
        return False
    stems = [word[len(p):] for p in checks()["negation"]["prefixes"] if word.startswith(p)]
    if word.endswith("less"):
        stems.append(word[:-4])
    return any(len(s) >= _MIN_STEM and all_lemmas(s) for s in stems)


def english_negation(text: str) -> bool:
    """Whether English ``text`` says "not" (``[negation] english``: *not*, *no*, *never*,
    *unable* ...; a word ending in *n't*; a negative prefix or *-less*:
    ``_negative_affix``)."""
    said = frozenset(checks()["negation"]["english"])
    return any(w.lower() in said or w.lower().endswith("n't") or _negative_affix(w.lower())
               for w in _words(text))


def _negated_words(src_text: str, skip: frozenset[str]) -> list[tuple[str, str]]:
    """(the text from a negator to the word it negates, that word) for each negator of
    ``src_text`` that negates a word (module docstring; A不A questions left out), in order:
    ``("不会再联络", "联络")``."""
    from model.core.zh_segment import tag

    negators = frozenset(checks()["negation"]["chinese"])
    between = frozenset(checks()["negation"]["between"]) | skip
    heads = tuple(checks()["negation"]["heads"])
    words = [w for w, _ in tag(src_text)]
    starts = [0]
    for w in words:
        starts.append(starts[-1] + len(w))
    out = []
    for i, word in enumerate(words):
        at = starts[i]  # the negator's first character, 不 or 没 in 不要, 没有
        negator = word in negators or (word.startswith(heads) and word[1:] in between)
        if not negator or (0 < at and at + 1 < len(src_text)
                           and src_text[at - 1] == src_text[at + 1]):
            continue  # not a negator (不想 is one: 想 is passed over), or A不A: 好不好, 有没有
        for j in range(i + 1, len(words)):
            if _PUNCTUATION.match(words[j]):
                break
            if words[j] not in between:
                out.append((src_text[at:starts[j + 1]], words[j]))
                break
    return out


def negation_dropped(src_text: str, output_text: str, *,
                     gloss: Mapping[str, str] | None = None,
                     skip: frozenset[str] = frozenset()) -> tuple[Negated, ...]:
    """The negations of Chinese ``src_text`` that English ``output_text`` drops (module
    docstring): each negated word whose senses the output writes while it has no English
    negation, in sentence order, each once; () for an output with a negation or no
    English word.

    Args:
        src_text: the Chinese sentence as typed; output_text: its English translation.
        gloss: Chinese word -> its short English gloss (default ``cedict.gloss_dictionary``).
        skip: Chinese function words, passed over as ``between`` is
            (``verdict.chinese_function_words``).
    """
    words = _words(output_text)
    if not words or english_negation(output_text):
        return ()
    gloss = gloss_dictionary() if gloss is None else gloss
    found: dict[str, Negated] = {}
    for span, word in _negated_words(src_text, skip):
        forms = content_forms(senses_of(word, gloss))
        said = tuple(dict.fromkeys(w for w in words if lemmas(w) & forms))
        if said and span not in found:
            found[span] = Negated(span, said)
    return tuple(found.values())


@lru_cache(maxsize=1)
def _not_counted() -> frozenset[str]:
    """The words ``said_twice`` never counts: function words, number words, ``not_counted``."""
    english = number_table()["english"]
    numbers = {*english["ones"], *english["tens"], "hundred", "thousand", "million"}
    return (function_words() | frozenset(LEADS) | numbers
            | frozenset(checks()["repetition"]["not_counted"])) - {""}


def _key(word: str) -> str | None:
    """The form ``said_twice`` counts ``word`` by (its first lemma other than itself, or
    itself: *raining* -> *rain*), or None for a word never counted (``_not_counted``,
    a contraction's ending dropped first: *that's* -> *that*)."""
    low = re.sub(r"'.*$", "", word.lower())
    if len(low) < 2 or low in _not_counted():
        return None
    key = min(lemmas(low) - {low}, default=low)
    return None if key in _not_counted() else key


def said_twice(src_text: str, output_text: str, lex: Lexicon | None = None, *,
               gloss: Mapping[str, str] | None = None) -> tuple[Repeated, ...]:
    """The content words one clause of English ``output_text`` writes more often than
    Chinese ``src_text`` has words translating them (module docstring), each once, in order.

    Args:
        src_text: the Chinese sentence as typed; output_text: its English translation.
        lex: the readings of names (default ``lexicon.lexicon()``).
        gloss: Chinese word -> its short English gloss (default ``cedict.gloss_dictionary``).
    """
    from model.core.zh_segment import tag

    links = "|".join(checks()["repetition"]["links"])
    text = re.sub(rf"\b([A-Za-z]+) (?:{links}) \1\b", r"\1", output_text.replace("\u2019", "'"),
                  flags=re.IGNORECASE)  # more and more, day by day: once
    found: dict[str, Repeated] = {}
    sources: list[str] | None = None  # the Chinese words, cut when first needed
    for clause in _CLAUSE_END.split(text):
        written = [(k, w) for w in _words(clause) if (k := _key(w)) is not None]
        for key, times in Counter(k for k, _ in written).items():
            if times < 2 or key in found:
                continue
            if sources is None:
                sources = [w for w, _ in tag(src_text) if not _PUNCTUATION.match(w)]
                gloss = gloss_dictionary() if gloss is None else gloss
                lex = lexicon() if lex is None else lex
            n = sum(any(key in content_forms(senses_of(p, gloss)) for p in {*w, *parts(w)})
                    or any(key in s for s in spellings(w, lex)) for w in sources)
            if times > max(1, n):
                found[key] = Repeated(next(w for k, w in written if k == key), times, n)
    return tuple(found.values())
