"""The classroom set: sentences a class in China types, and when a translation of one is right.

``resources/classroom_set.tsv`` holds 170 sentences written as people write them (no frame of
``templates.toml`` made them; a test checks), in six categories: Chinese names in pinyin,
Chinese places, school, this app's vocabulary, typos, and everyday sentences with omission
traps (a name, place or number that must appear). Each has a reference and its *required*
Chinese: groups that must all appear, each group a set of alternatives
(``张伟|杭州|父母``; ``妹妹/姐姐``).

The Chinese -> English model has its own set, ``resources/classroom_set_zh_en.tsv`` (72
Chinese sentences in six categories: names, places, school, numbers in digits or Chinese
numerals, this app's vocabulary, everyday sentences; ``read_set(direction="zh-en")``), its
required groups English and met in any case.

Split rule, fixed: an odd id is CALIBRATION (the verdict's thresholds are chosen on it), an even
id is TEST (reported, never used to choose anything). Neither is trained on: ``data.py``
removes every TRAIN pair equal to one of them.

Right (``is_right``): every required group has an alternative in the output (a digit
alternative also as its Chinese numeral, ``synthetic.number_written``; a Chinese name that the
English spells in pinyin, ``Wu Qiang`` for 吴强, also as any characters read so, 武强: the
English does not say which characters the name has, ``pinyin_name``), no loop
(``confidence.loops_against``) and no runaway (at most twice the reference's characters plus
5). A rule, not a judge: it checks what a class would check first (the names, places, numbers
and key words), not fluency.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from ..analysis.confidence import loops_against
from ..analysis.lexicon import lexicon, spelt_in, syllables_of
from ..analysis.verdict import Verdict, judge_trace
from .synthetic import RESOURCES, number_written

SET_FILE = RESOURCES / "classroom_set.tsv"
ZH_EN_SET_FILE = RESOURCES / "classroom_set_zh_en.tsv"  # the Chinese -> English model's set
SPLITS = ("calibration", "test")
CATEGORIES = ("name", "place", "school", "app", "typo", "omission")
CATEGORIES_ZH_EN = ("name", "place", "school", "number", "app", "everyday")
DIGITS = re.compile(r"\d{1,4}")


@dataclass(frozen=True)
class Item:
    """One sentence of the set: ``id`` (its split: odd = calibration, even = test),
    ``category`` (one of CATEGORIES, or CATEGORIES_ZH_EN), ``en``, ``zh``, ``required``
    (groups of alternatives, all groups needed, in the target language) and ``direction``:
    ``"en-zh"`` (``en`` is typed, ``zh`` a reference) or ``"zh-en"`` (the other way)."""

    id: int
    category: str
    en: str
    zh: str
    required: tuple[tuple[str, ...], ...]
    direction: str = "en-zh"

    @property
    def source(self) -> str:
        """The sentence a class types: ``en`` for en-zh, ``zh`` for zh-en."""
        return self.zh if self.direction == "zh-en" else self.en

    @property
    def reference(self) -> str:
        """The reference translation: ``zh`` for en-zh, ``en`` for zh-en."""
        return self.en if self.direction == "zh-en" else self.zh

    @property
    def split(self) -> str:
        """``"calibration"`` for an odd id, ``"test"`` for an even one."""
        return SPLITS[1 - self.id % 2]


def read_set(path: Path | None = None, split: str | None = None,
             direction: str = "en-zh") -> list[Item]:
    """The items of a set file (``#`` lines are comments), all or one ``split``: the
    English -> Chinese set (SET_FILE: id, category, English, Chinese, required Chinese) or,
    with ``direction="zh-en"``, the Chinese -> English one (ZH_EN_SET_FILE: id, category,
    Chinese, English, required English).

    Raises:
        ValueError: a line without 5 tab-separated fields, an unknown category, a repeated
            id, an unknown split or direction; the message names the line.
    """
    if split is not None and split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
    if direction not in ("en-zh", "zh-en"):
        raise ValueError(f"direction must be en-zh or zh-en, got {direction!r}")
    zh_en = direction == "zh-en"
    path = path or (ZH_EN_SET_FILE if zh_en else SET_FILE)
    categories = CATEGORIES_ZH_EN if zh_en else CATEGORIES
    items, seen = [], set()
    for lineno, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split("\t")
        if len(parts) != 5 or parts[1] not in categories or not parts[0].isdigit():
            raise ValueError(f"{path}, line {lineno}: expected id, category, source, "
                             f"reference, required (category one of {categories})")
        if int(parts[0]) in seen:
            raise ValueError(f"{path}, line {lineno}: id {parts[0]} again")
        seen.add(int(parts[0]))
        required = tuple(tuple(a for a in g.split("/") if a) for g in parts[4].split("|"))
        en, zh = (parts[3], parts[2]) if zh_en else (parts[2], parts[3])
        items.append(Item(int(parts[0]), parts[1], en, zh, required, direction))
    return [i for i in items if split is None or i.split == split]


NAME = re.compile(r"(?=\b([A-Z][a-z]+ [A-Z][a-z]+)\b)")  # surname, given name (overlapping)


def pinyin_name(alternative: str, source: str) -> str | None:
    """The pinyin spelling (``WuQiang``) of ``alternative`` (two to four Chinese characters)
    when ``source`` spells it as English text spells a Chinese name, surname then given name
    (吴强 in ``Wu Qiang``: ``lexicon.spelt_in``, the characters' CC-CEDICT readings, one
    syllable a character); None when it does not."""
    if not 2 <= len(alternative) <= 4 or not all(unicodedata.name(c, "").startswith("CJK")
                                                 for c in alternative):
        return None
    lex = lexicon()
    for name in NAME.findall(source):
        spelt = name.replace(" ", "")
        if (len(syllables_of(spelt, lex)) == len(alternative)
                and spelt_in(spelt, alternative, lex)):
            return spelt
    return None


def group_met(group: tuple[str, ...], output: str, source: str = "") -> bool:
    """Whether ``output`` has one of the alternatives of ``group``; a number alternative
    (``42``) is also met by its Chinese numeral (``四十二``), and a Chinese name that
    ``source`` (the English) spells in pinyin by any characters read so (``pinyin_name``)."""
    text = unicodedata.normalize("NFKC", output)
    return any(a in text or (DIGITS.fullmatch(a) and number_written(a, text))
               or ((name := pinyin_name(a, source)) is not None
                   and spelt_in(name, text, lexicon()))
               for a in group)


def missing(item: Item, output: str) -> list[tuple[str, ...]]:
    """The required groups of ``item`` that ``output`` lacks."""
    return [g for g in item.required if not group_met(g, output, item.en)]


def english_met(alternative: str, text: str) -> bool:
    """Whether lower-case English ``text`` has ``alternative`` where a word starts (a stem:
    ``translat`` meets *translation*; ``no`` does not meet *know*, nor ``AI`` *said*; a
    suffix such as ``n't`` anywhere), and a number as a whole number (``30`` does not meet
    *300*)."""
    head = r"(?<![a-z0-9])" if alternative[:1].isalnum() and "'" not in alternative else ""
    tail = r"(?![0-9])" if alternative[-1:].isdigit() else ""
    return re.search(rf"{head}{re.escape(alternative.lower())}{tail}", text) is not None


def is_right(item: Item, output: str) -> bool:
    """The set's rule (module docstring): every required group met, no loop, no runaway
    (at most twice the reference's characters plus 5). For a zh-en item the groups are
    English, met in any case where a word starts (``english_met``: ``Li Ming``, ``li ming``),
    and the runaway bound is twice the reference plus 10."""
    if item.direction == "zh-en":
        text = unicodedata.normalize("NFKC", output).lower()
        return (all(any(english_met(a, text) for a in group) for group in item.required)
                and not loops_against(text, item.en.lower())
                and len(output) <= 2 * len(item.en) + 10)
    return (not missing(item, output) and not loops_against(output, item.zh)
            and len(output) <= 2 * len(item.zh) + 5)


@dataclass(frozen=True)
class Scored:
    """One item decoded: its ``output`` (greedy, as the app shows it first), whether it is
    ``right`` (``is_right``), and the ``verdict`` on it (``analysis.verdict.judge_trace``)."""

    item: Item
    output: str
    right: bool
    verdict: Verdict


def direction_of(translator) -> str:
    """``"zh-en"`` for a model that reads Chinese, else ``"en-zh"``: which set it is judged on."""
    return "zh-en" if translator.info.source_language == "zh" else "en-zh"


def decode_set(translator, items: list[Item] | None = None) -> list[Scored]:
    """Every item (default: the set of the model's direction, ``direction_of``) translated
    greedily by ``translator`` and judged with its training counts
    (``ModelInfo.train_counts``)."""
    out = []
    for item in items if items is not None else read_set(direction=direction_of(translator)):
        trace = translator.generate(item.source)
        text = trace.output_text or ""
        out.append(Scored(item, text, is_right(item, text),
                          judge_trace(trace, translator.info.train_counts,
                                      translator.info.source_language)))
    return out


def share(part: int, whole: int) -> float | None:
    """``part / whole`` in percent, one decimal; None when ``whole`` is 0."""
    return round(100 * part / whole, 1) if whole else None


def summary(scored: list[Scored], flagged=lambda s: s.verdict.flagged) -> dict:
    """The set's figures for one split: n, right (percent), the share of wrong and of right
    translations ``flagged`` (default: the verdict flags them), each signal's share of wrong
    and right, right per category, and chrF (sacrebleu) against the references."""
    import sacrebleu

    wrong = [s for s in scored if not s.right]
    right = [s for s in scored if s.right]
    signals = sorted({k for s in scored for k in s.verdict.signals})
    return {
        "n": len(scored), "right": share(len(right), len(scored)),
        "flagged_wrong": share(sum(map(flagged, wrong)), len(wrong)),
        "flagged_right": share(sum(map(flagged, right)), len(right)),
        "signals": {k: {"wrong": share(sum(k in s.verdict.signals for s in wrong), len(wrong)),
                        "right": share(sum(k in s.verdict.signals for s in right), len(right))}
                    for k in signals},
        "right_by_category": {c: share(sum(s.right for s in scored if s.item.category == c),
                                       sum(s.item.category == c for s in scored))
                              for c in dict.fromkeys(s.item.category for s in scored)},
        "chrf": round(sacrebleu.corpus_chrf([s.output for s in scored],
                                            [[s.item.reference for s in scored]]).score, 2),
    }


def classroom_scores(translator) -> dict:
    """``summary`` of each split (``calibration``, ``test``) for the model card."""
    scored = decode_set(translator)
    return {split: summary([s for s in scored if s.item.split == split]) for split in SPLITS}
