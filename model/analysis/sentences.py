"""Where one typed text holds several sentences (issue 54): the models translate one sentence
at a time (every training pair is one sentence), so a paragraph decoded as one long sentence
tends to be translated badly; the verdict says so and offers each sentence on its own.

A sentence ends at a full stop, question or exclamation mark (Chinese 。！？ or Latin .!?, any
run of them, then any closing quote or bracket) followed by more text: after a Latin mark the
next sentence starts after white space with a capital letter, a digit, an opening quote or a
Chinese character, so *3.5 km*, *e.g. this* and *Mr. Li* (``resources/abbreviations.txt``,
single capitals as initials) end nothing; after a Chinese mark it may start at once. No
sentence ends inside a quotation (more “ than ” before the mark, or 「 than 」, or an odd
number of ``"``): “我爱你。你呢？” is one. This is
the rule-based sentence boundary detection of Palmer & Hearst (1997, "Adaptive Multilingual
Sentence Boundary Disambiguation", the baseline rules: a period, a capital after white space,
an abbreviation list), which is enough for the one to five sentences a class pastes.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

ABBREVIATIONS_FILE = Path(__file__).with_name("resources") / "abbreviations.txt"
_CLOSE = "\"'”’」』)）]"
_CLOSING = f"[{re.escape(_CLOSE)}]*"  # any closing quotes or brackets after the mark
_LATIN_END = re.compile(rf"[.!?]+{_CLOSING}(?=\s+[A-Z0-9\"“‘'(\u4e00-\u9fff])")
_CHINESE_END = re.compile(rf"[。！？]+{_CLOSING}(?=\s*\S)")
_WORD_BEFORE = re.compile(r"([A-Za-z.]+)\.$")  # the word a full stop ends: "e.g." -> "e.g"
_QUOTES = (("“", "”"), ("「", "」"), ("『", "』"))  # opening, closing


@lru_cache(maxsize=1)
def abbreviations() -> frozenset[str]:
    """The abbreviations of ``ABBREVIATIONS_FILE``, lower case, without their last stop."""
    lines = ABBREVIATIONS_FILE.read_text(encoding="utf-8").splitlines()
    return frozenset(w for line in lines if not line.startswith("#") for w in line.split())


def _ends_here(text: str, end: re.Match) -> bool:
    """Whether Latin mark ``end`` ends a sentence: not a full stop after an abbreviation or a
    single capital letter (an initial)."""
    if not end.group().startswith(".") or len(end.group().rstrip(_CLOSE)) > 1:
        return True  # ! ? or an ellipsis
    word = _WORD_BEFORE.search(text[:end.start() + 1])
    if word is None:
        return True
    w = word.group(1)
    return not (w.lower() in abbreviations() or (len(w) == 1 and w.isupper()))


def _inside_quotation(before: str) -> bool:
    """Whether text ``before`` leaves a quotation open: more opening than closing curly or
    corner quotes, or an odd number of straight double quotes."""
    return (any(before.count(a) > before.count(b) for a, b in _QUOTES)
            or before.count('"') % 2 == 1)


def split_sentences(text: str) -> tuple[str, ...]:
    """The sentences of ``text`` in order, each stripped, empty ones dropped (a text with no
    boundary gives itself alone; "" gives ()). Boundaries: the module docstring.

    Example: ``split_sentences("I am Li. I live in Chengdu!")`` ->
    ``("I am Li.", "I live in Chengdu!")``.
    """
    ends = ({m.end() for m in _CHINESE_END.finditer(text)}
            | {m.end() for m in _LATIN_END.finditer(text) if _ends_here(text, m)})
    cuts = sorted(e for e in ends if not _inside_quotation(text[:e]))
    pieces = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
    return tuple(p.strip() for p in pieces if p.strip())
