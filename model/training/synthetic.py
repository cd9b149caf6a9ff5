"""Synthetic sentence pairs for the cases real corpora are thin on, and the fixed test sets
that measure them: numbers, dictionary terms (names, places, rare nouns) and long input.

The frames are data (``resources/templates.toml``, ``resources/classroom.tsv``); every draw
is seeded, so the same seed writes the same files. A frame marked ``split = "test"`` never
makes a training or validation pair.

- ``number_pairs``: years, ages, counts with their classifier, prices, clock times, dates,
  the digits copied into the Chinese (``1998`` -> ``1998年``).
- ``term_pairs``: a dictionary term alone (``kingfisher`` -> ``翠鸟``) and in frames.
- ``joined_pairs``: 2-4 consecutive pairs joined into one (document-level augmentation:
  the model sees 20-60 token inputs).
"""

from __future__ import annotations

import random
import re
import tomllib
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

from ..analysis.verdict import number_written
from .terms import Term

RESOURCES = Path(__file__).resolve().parent / "resources"
Pair = tuple[str, str]


@lru_cache(maxsize=1)
def templates() -> dict:
    """``resources/templates.toml``: months, counted nouns and the frames by kind and split."""
    return tomllib.loads((RESOURCES / "templates.toml").read_text(encoding="utf-8"))


def frames(kind: str, split: str, stage: int = 1) -> list[Pair]:
    """The (English, Chinese) frames of one kind (``"year"``, ``"noun"`` ...) and split
    (``"train"`` or ``"test"``) that training stage ``stage`` uses: a frame's ``stage``
    (default 1) at most ``stage`` (the third stage adds frames the first two never saw).

    Raises:
        KeyError: no such kind or split in the templates.
    """
    found = [tuple(p) for f in templates()["frames"] if f["kind"] == kind and f["split"] == split
             and f.get("stage", 1) <= stage for p in f["pairs"]]
    if not found:
        raise KeyError(f"no {split} frames of kind {kind!r}")
    return found


def classroom() -> tuple[list[Term], list[Pair]]:
    """The classroom glossary (one- or two-word entries of ``resources/classroom.tsv``, as
    noun terms) and its whole sentences."""
    glossary, sentences = [], []
    for line in (RESOURCES / "classroom.tsv").read_text(encoding="utf-8").splitlines():
        en, zh = line.split("\t")
        if len(en.split()) <= 2:
            glossary.append(Term(en, zh, "noun"))
        else:
            sentences.append((en, zh))
    return glossary, sentences


def _number(rng: random.Random, low: int, high: int) -> int:
    """A number from low to high whose digit count is drawn first (as many 2-digit numbers
    as 4-digit ones)."""
    digits = rng.randint(len(str(low)), len(str(high)))
    return rng.randint(max(low, 10 ** (digits - 1)), min(high, 10**digits - 1))


def repeat_digit(value: int, rng: random.Random, keep: int = 0) -> int:
    """``value`` with one digit copied onto the next (``1234`` -> ``1134``, ``1224`` or
    ``1233``; ``57`` -> ``55``), its first ``keep`` digits left as they are (a year keeps its
    century, ``keep=1``: ``1911``-like, never ``1134``); unchanged when it has too few digits.
    Runs of equal digits are where a copying model loses its place (``1911`` -> ``191``);
    these draws drill them."""
    digits = list(str(value))
    if len(digits) - 2 < keep:
        return value
    i = rng.randint(keep, len(digits) - 2)
    digits[i + 1] = digits[i]
    return int("".join(digits))


def fill(frame: Pair, rng: random.Random, term: Term | None = None,
         repeats: float = 0.0) -> Pair:
    """One frame with its slots drawn (module docstring of ``templates.toml``); with
    probability ``repeats`` each number slot gets a repeated digit (``repeat_digit``)."""
    t = templates()
    noun = rng.choice(t["counted"])
    month = rng.randrange(12)
    values = {
        "year": rng.randint(1900, 2030) if rng.random() < 0.7 else rng.randint(1000, 2099),
        "age": rng.randint(2, 99), "n": _number(rng, 2, 9999), "price": _number(rng, 2, 9999),
        "h": rng.randint(1, 23), "mm": f"{rng.randrange(60):02d}", "day": rng.randint(1, 28),
        "month": t["months"][month], "m": month + 1,
        "noun": noun[1], "cl": noun[2], "zh": noun[3],
    }
    if repeats:
        for key, keep in (("year", 1), ("age", 0), ("n", 0), ("price", 0)):
            if rng.random() < repeats:
                values[key] = repeat_digit(values[key], rng, keep)
    en, zh = frame
    if term is not None:
        en, zh = en.replace("{term}", term.en), zh.replace("{term}", term.zh)
    en = en.format(**values)
    en = en[:1].upper() + en[1:]
    return en, zh.format(**values)


def number_pairs(n: int, split: str, seed: int, *, stage: int = 1,
                 repeats: float = 0.0) -> list[Pair]:
    """``n`` pairs from the number frames (every kind but terms) of ``split`` and ``stage``
    (``frames``), a number slot given a repeated digit with probability ``repeats``."""
    rng = random.Random(seed)
    kinds = ["year", "age", "count", "price", "time", "date", "two"]
    pool = [f for k in kinds for f in frames(k, split, stage)]
    return [fill(rng.choice(pool), rng, repeats=repeats) for _ in range(n)]


def term_pairs(terms: Sequence[Term], split: str, per_term: int, seed: int, *,
               alone: bool = True, stage: int = 1, reuse: bool = False) -> list[Pair]:
    """For each term ``per_term`` sentences from the frames of its kind, ``split`` and
    ``stage`` (``frames``), and with ``alone`` the bare dictionary pair (``kingfisher`` ->
    ``翠鸟``). Each frame is used once per term (``per_term`` capped at the frames there are)
    or, with ``reuse``, again (with other slot draws) once all are used."""
    rng = random.Random(seed)
    out = []
    for term in terms:
        pool = frames(term.kind, split, stage)
        if alone:
            out.append((term.en, term.zh))
        if not reuse:
            chosen = rng.sample(pool, min(per_term, len(pool)))
        else:
            chosen = [f for _ in range(0, per_term, len(pool)) for f in rng.sample(pool, len(pool))]
        out += [fill(f, rng, term) for f in chosen[:per_term]]
    return out


def joined_pairs(pairs: Sequence[Pair], n: int, seed: int) -> list[Pair]:
    """``n`` pairs, each 2-4 consecutive ``pairs`` joined: English with spaces, Chinese as is."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        k = rng.randint(2, 4)
        start = rng.randrange(len(pairs) - k)
        part = pairs[start : start + k]
        out.append((" ".join(e for e, _ in part), "".join(z for _, z in part)))
    return out


def join_threes(pairs: Sequence[Pair], groups: int) -> list[Pair]:
    """The long test: the first ``3 * groups`` pairs joined in consecutive threes."""
    return [(" ".join(e for e, _ in pairs[i : i + 3]), "".join(z for _, z in pairs[i : i + 3]))
            for i in range(0, 3 * groups, 3)]


NUMBER = re.compile(r"(?<![\d:])\d{2,4}(?![\d])")


def numbers_in(text: str) -> list[str]:
    """The 2-4 digit numbers of ``text``, not a clock's minutes (``"at 7:30 in 1998"`` ->
    ``["1998"]``, ``"at 17:30"`` -> ``["17"]``)."""
    return NUMBER.findall(text)


def pairs_with_numbers(pairs: Sequence[Pair]) -> list[Pair]:
    """The pairs whose English has a 2-4 digit number and whose Chinese writes every such
    number (``number_written``; ``30 percent discount`` -> ``七折`` is left out)."""
    return [(e, z) for e, z in pairs
            if numbers_in(e) and all(number_written(n, z) for n in numbers_in(e))]


def tatoeba_with_terms(pairs: Sequence[Pair], terms: Sequence[Term]
                       ) -> list[tuple[str, str, str]]:
    """(English, Chinese, term) for each pair whose English has a term's English form as a
    word and whose Chinese has its Chinese: the first such term of ``terms`` per pair."""
    out = []
    by_word = {t.en: t for t in terms}
    for en, zh in pairs:
        for word in re.findall(r"[A-Za-z]+(?: [A-Z][a-z]+)?", en):
            term = by_word.get(word) or by_word.get(word.split()[0])
            if term is not None and term.zh in zh:
                out.append((en, zh, term.zh))
                break
    return out
