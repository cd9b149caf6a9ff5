"""The numbers of a Chinese sentence, and whether an English translation writes them: the
verdict's number check for a Chinese source (``verdict.missing_numbers_english``), the mirror
of ``verdict.missing_numbers`` (English read into Chinese).

- **The numbers of the Chinese** (``chinese_numbers``): runs of 1-4 digits (full-width too;
  not the minutes or decimals after ``:``, ``.`` or 点) and runs of Chinese numerals read by
  ``cn2an`` (``cn2an.cn2an(run, "normal")``: 四十二 -> 42, 两百 -> 200, 一九九八 -> 1998)
  where jieba tags the word holding the run a numeral (``zh_segment.tag``: ``m``, ``mq``), so
  that idioms (三心二意) and nouns (三明治) are no numbers. Left out, as no number an English
  translation must write: 一 alone (an article or part of a word: 一个, 一起, 一些), 零 or 〇
  alone (零下, 零钱), two bare digits (三四个: three or four), a run next to 几 (十几: a
  dozen or so), a denominator (三分之一), a weekday (星期三), the words of ``numbers.toml``'s
  ``not_numbers`` (十分: very), and numbers over 9999 (as the English check's 1-4 digits).
- **Written in English** (``english_writes``): as digits (``1,000`` as ``1000``), or in words
  (``english_words``: cardinal, ordinal, ``a hundred``, years read in pairs as *nineteen
  ninety-eight*, with or without ``and`` and hyphens), a few other words (2: *both*, *pair*;
  12: *dozen*) and, before 月, the month's name. The words are data
  (``resources/numbers.toml``).
"""

from __future__ import annotations

import re
import tomllib
import unicodedata
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

NUMBERS_FILE = Path(__file__).with_name("resources") / "numbers.toml"
MAX_NUMBER = 9999  # larger numbers are not checked (as the English check's 1-4 digits)
DIGITS_ZH = re.compile(r"(?<![\d:.,点])\d{1,4}(?!\d)")  # not minutes or decimals
NUMERALS = re.compile(r"[零〇一二两三四五六七八九十百千万]+")
UNITS = set("十百千万")
NUMERAL_TAGS = ("m",)  # jieba's numeral tags start with m (m, mq)


@lru_cache(maxsize=1)
def table() -> dict:
    """``resources/numbers.toml``: English number words and the Chinese numerals that are no
    number (``english``, ``chinese``)."""
    return tomllib.loads(NUMBERS_FILE.read_text(encoding="utf-8"))


def english_words(n: int) -> str:
    """``n`` (0..9999) in English words: 15 -> ``fifteen``, 42 -> ``forty-two``, 365 ->
    ``three hundred and sixty-five``, 2008 -> ``two thousand and eight``.

    Raises:
        ValueError: ``n`` outside 0..9999.
    """
    if not 0 <= n <= MAX_NUMBER:
        raise ValueError(f"n must be in 0..{MAX_NUMBER}, got {n}")
    ones, tens = table()["english"]["ones"], table()["english"]["tens"]
    if n < 20:
        return ones[n]
    if n < 100:
        return tens[n // 10] + ("" if n % 10 == 0 else "-" + ones[n % 10])
    big, unit, rest = (n // 1000, "thousand", n % 1000) if n >= 1000 else (n // 100, "hundred",
                                                                            n % 100)
    head = f"{ones[big]} {unit}"
    if not rest:
        return head
    return f"{head} and {english_words(rest)}" if rest < 100 else f"{head} {english_words(rest)}"


def ordinal_words(n: int) -> str:
    """``n`` (0..9999) as an English ordinal: 1 -> ``first``, 12 -> ``twelfth``, 20 ->
    ``twentieth``, 42 -> ``forty-second``, 100 -> ``one hundredth``.

    Raises:
        ValueError: ``n`` outside 0..9999.
    """
    words = english_words(n)
    head, sep, last = words.rpartition(" " if "-" not in words.split(" ")[-1] else "-")
    irregular = table()["english"]["ordinals"]
    last = irregular.get(last) or (last[:-1] + "ieth" if last.endswith("y") else last + "th")
    return head + sep + last


def _normal(text: str) -> str:
    """English as the number check compares it: NFKC, lower case, hyphens as spaces,
    thousands commas dropped (1,000 -> 1000), no ``and``, single spaces."""
    text = unicodedata.normalize("NFKC", text).lower().replace("-", " ")
    text = re.sub(r"(?<=\d),(?=\d{3})", "", text)
    return " ".join(w for w in text.split() if w != "and")


def english_forms(n: int, month: bool = False) -> tuple[str, ...]:
    """The ways English writes ``n`` (0..9999) in words, as ``_normal`` leaves them: cardinal
    and ordinal, ``a hundred`` for ``one hundred``, a year in pairs (1998 -> ``nineteen
    ninety eight``, 1905 -> ``nineteen oh five``, 1500 -> ``fifteen hundred``), the
    ``also`` words of ``numbers.toml`` and, with ``month`` (the number comes before 月), the
    month's name (12 -> ``december``).

    Raises:
        ValueError: ``n`` outside 0..9999.
    """
    english = table()["english"]
    forms = [english_words(n), ordinal_words(n)]
    forms += ["a " + f[4:] for f in forms if f.startswith("one hundred") or
              f.startswith("one thousand")]
    if 1000 < n <= MAX_NUMBER and n % 1000:
        high, low = divmod(n, 100)
        forms.append(f"{english_words(high)} " + ("hundred" if low == 0 else
                                                    f"oh {english_words(low)}" if low < 10
                                                    else english_words(low)))
    forms += english["also"].get(str(n), [])
    if month and 1 <= n <= 12:
        forms.append(english["months"][n - 1])
    return tuple(dict.fromkeys(_normal(f) for f in forms))


@lru_cache(maxsize=1)
def number_words() -> frozenset[str]:
    """Every word of an English number 0..99, cardinal or ordinal, and ``hundred``,
    ``thousand`` and their ordinals: the words a number written in words is made of."""
    words = {w for k in range(100) for f in (english_words(k), ordinal_words(k))
             for w in _normal(f).split()}
    return frozenset(words | {"hundred", "hundredth", "thousand", "thousandth"})


def english_writes(n: int, english: str, month: bool = False) -> bool:
    """Whether English text ``english`` writes the number ``n`` (0..9999): as digits (not
    inside a longer number: 19 is not in 1998) or in words (``english_forms``: whole words,
    not inside a longer number in words: *twenty* is not in *twenty-five*)."""
    text = _normal(english)
    if re.search(rf"(?<!\d){n}(?!\d)", text):
        return True
    tokens = re.findall(r"[a-z]+", text)
    inside = number_words()
    for form in english_forms(n, month):
        f = form.split()
        for i in range(len(tokens) - len(f) + 1):
            if (tokens[i:i + len(f)] == f and (i == 0 or tokens[i - 1] not in inside)
                    and (i + len(f) == len(tokens) or tokens[i + len(f)] not in inside)):
                return True
    return False


class ChineseNumber(NamedTuple):
    """One number of a Chinese sentence (``chinese_numbers``): ``text`` as typed, its
    ``value``, and whether 月 follows it (``month``: 12月 is December)."""

    text: str
    value: int
    month: bool


def _words_of(text: str) -> list[tuple[str, str]]:
    """For each character of ``text``, (the word jieba cuts around it, the word's tag)
    (``zh_segment.tag``, the app's one segmentation)."""
    from model.core.zh_segment import tag as jieba_tag

    out: list[tuple[str, str]] = []
    for word, tag in jieba_tag(text):
        out += [(word, tag)] * len(word)
    return out + [("", "")] * (len(text) - len(out))


def _numeral_value(text: str, m: re.Match, word: tuple[str, str]) -> int | None:
    """The value of numeral run ``m`` of ``text`` (``word``: the jieba word holding its first
    character and the word's tag), or None when it is no number an English translation must
    write (module docstring)."""
    import cn2an

    run, start, end = m.group(), m.start(), m.end()
    chinese = table()["chinese"]
    bare = not UNITS & set(run)
    if (not word[1].startswith(NUMERAL_TAGS) or word[0] in chinese["not_numbers"]
            or run in ("一", "零", "〇") or (bare and len(run) == 2)
            or "几" in text[max(start - 1, 0):end + 1] or text[end:end + 2] == "分之"
            or text[max(start - 1, 0):start] == "点"
            or any(text[:start].endswith(w) for w in chinese["before_weekday"])):
        return None
    try:
        value = int(cn2an.cn2an(run, "normal"))
    except (ValueError, KeyError, TypeError):  # 万一, 千万: cn2an reads no number
        return None
    return value if value <= MAX_NUMBER else None


def chinese_numbers(text: str) -> tuple[ChineseNumber, ...]:
    """The numbers of Chinese text ``text``, digits or Chinese numerals (module docstring),
    in order: ``"我有三本书，翻到第42页"`` -> (三, 3), (42, 42)."""
    text = unicodedata.normalize("NFKC", text)
    found = [(m, int(m.group())) for m in DIGITS_ZH.finditer(text)]
    words = _words_of(text) if NUMERALS.search(text) else []
    found += [(m, value) for m in NUMERALS.finditer(text)
              if (value := _numeral_value(text, m, words[m.start()])) is not None]
    return tuple(ChineseNumber(m.group(), value, text[m.end():m.end() + 1] == "月")
                 for m, value in sorted(found, key=lambda f: f[0].start()))


def missing_numbers_english(src_text: str, output_text: str) -> tuple[str, ...]:
    """The numbers of Chinese ``src_text`` (``chinese_numbers``) that English
    ``output_text`` does not write (``english_writes``), as typed, each value once, in
    order."""
    out: dict[int, str] = {}
    for number in chinese_numbers(src_text):
        if number.value not in out and not english_writes(number.value, output_text,
                                                          number.month):
            out[number.value] = number.text
    return tuple(out.values())
