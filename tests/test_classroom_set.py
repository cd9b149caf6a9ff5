"""The classroom set (model.training.classroom_set): its split rule, its right/wrong rule, and
that no sentence of it was written by a training frame or is a training pair."""

from __future__ import annotations

import difflib
import re
import tomllib
from collections import Counter

import pytest
from shipped import model_of

from model.training import synthetic
from model.training.classroom_set import (
    CATEGORIES,
    SET_FILE,
    SPLITS,
    classroom_scores,
    is_right,
    missing,
    pinyin_name,
    read_set,
)
from model.training.data import norm_key
from model.training.synthetic import RESOURCES

CLOSE = 0.75  # difflib ratio from which a training sentence counts as a set sentence's twin


def test_the_set_has_80_test_sentences_in_every_category():
    items = read_set()
    test, calibration = read_set(split="test"), read_set(split="calibration")
    assert len(test) >= 80 and len(calibration) >= 80 and len(items) == len(test) + len(calibration)
    assert all(i.id % 2 == 0 for i in test) and all(i.id % 2 == 1 for i in calibration)
    for half in (test, calibration):
        assert set(Counter(i.category for i in half)) == set(CATEGORIES)
    assert len({norm_key(i.en) for i in items}) == len(items)  # no sentence twice


def test_every_reference_is_right_and_a_missing_term_is_wrong():
    for item in read_set():
        assert is_right(item, item.zh), item
        for group in item.required:  # take one required group out of the reference
            broken = item.zh
            for alt in sorted(group, key=len, reverse=True):
                broken = broken.replace(alt, "")
            if group in missing(item, broken):
                assert not is_right(item, broken)
    zhang = next(i for i in read_set() if i.en.startswith("Zhang Wei lives in Hangzhou"))
    assert not is_right(zhang, "伊斯兰住在他的父母。")  # the wrong translation
    assert not is_right(zhang, "张伟和父母住在杭州。" * 4)  # runaway / loop
    page = next(i for i in read_set() if "page 42" in i.en)
    assert is_right(page, "请把书翻到第四十二页。")
    assert not is_right(page, "请打开你的书，请打开一页。")


def test_a_name_spelled_in_pinyin_is_right_in_any_characters_read_so():
    wu = next(i for i in read_set() if i.en.startswith("Wu Qiang"))
    assert is_right(wu, wu.zh.replace("吴强", "武强"))  # the English cannot say which Wu
    assert not is_right(wu, wu.zh.replace("吴强", "吴刚"))  # another given name
    assert not is_right(wu, wu.zh.replace("吴强", "李强"))  # another surname
    for item in read_set():
        names = [(g, a, spelt) for g in item.required for a in g
                 if (spelt := pinyin_name(a, item.en)) is not None]
        if item.category == "name":  # every sentence of the category spells a Chinese name
            assert names, item
        for group, alt, spelt in names:
            other = ("ma" if not spelt.startswith("Ma") else "li")  # a surname read otherwise
            assert other.title() + " " not in item.en
            broken = item.zh.replace(alt, {"ma": "马", "li": "李"}[other] + alt[1:])
            if not any(a in broken for a in group):
                assert group in missing(item, broken), (item, alt)
            assert pinyin_name(alt, item.en.lower()) is None  # spelled as a name only


SLOTS = {"mm": r"\d\d", "noun": r"[A-Za-z]+", "term": r"[A-Za-z' .-]+",
         "month": "|".join(synthetic.templates()["months"])}


def _frame_pattern(en: str) -> re.Pattern:
    """A frame's English as a regular expression: each slot matches what it is filled with
    (a number, a month, a noun, a term)."""
    parts = re.split(r"\{([a-z]+)\}", en)
    out = "".join(re.escape(p) if i % 2 == 0 else f"(?:{SLOTS.get(p, r'[0-9]+')})"
                  for i, p in enumerate(parts))
    return re.compile(out, re.IGNORECASE)


def test_an_app_sentence_requires_every_app_term_it_uses():
    school = tomllib.loads((RESOURCES / "entities.toml").read_text(encoding="utf-8"))["school"]
    app = school[school.index(["encoder", "编码器"]):]  # the app's vocabulary
    for item in read_set():
        for en, zh in app:
            if item.category == "app" and re.search(rf"\b{en}s?\b", item.en, re.I):
                assert any(zh in alt for group in item.required for alt in group), (item.id, en)


def test_no_sentence_of_the_set_was_written_by_a_training_frame():
    frames = [f for f in synthetic.templates()["frames"]]
    patterns = [_frame_pattern(en) for f in frames for en, _ in f["pairs"]]
    hits = [(i.en, p.pattern) for i in read_set() for p in patterns if p.fullmatch(i.en)]
    assert not hits
    _, sentences = synthetic.classroom()
    assert not {norm_key(i.en) for i in read_set()} & {norm_key(e) for e, _ in sentences}


def test_no_training_classroom_sentence_is_close_to_a_set_sentence():
    # The hand-written training sentences were written apart from the set; one that reads
    # almost like a set sentence (difflib ratio 0.75 or more) would teach its answer.
    # One matcher per training sentence (the side whose index difflib builds), and ratio()
    # only where its upper bounds, real_quick_ratio() and quick_ratio(), reach CLOSE: the
    # same pairs as ratio() alone, without computing it for every pair.
    _, sentences = synthetic.classroom()
    set_keys = [(i.en, norm_key(i.en)) for i in read_set()]
    close = []
    for t in (norm_key(e) for e, _ in sentences):
        matcher = difflib.SequenceMatcher(None, "", t)
        for en, key in set_keys:
            matcher.set_seq1(key)
            if (matcher.real_quick_ratio() >= CLOSE and matcher.quick_ratio() >= CLOSE
                    and matcher.ratio() >= CLOSE):
                close.append((en, t))
    assert not close


@pytest.mark.parametrize("bad, what", [
    ("1\tname\tHi.\t你好。", "expected id"), ("1\tpoem\tHi.\t你好。\t你好", "expected id"),
    ("1\tname\tHi.\t你好。\t你好\n1\tname\tYo.\t哟。\t哟", "again")])
def test_a_bad_set_file_names_the_line(tmp_path, bad, what):
    path = tmp_path / SET_FILE.name
    path.write_text(bad + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=what):
        read_set(path)


@pytest.mark.slow  # decodes the whole classroom set with each shipped model
def test_the_shipped_cards_classroom_figures_are_the_models_own():
    m = model_of("en-zh-everyday")
    card, now = m.card["metrics"]["classroom"], classroom_scores(m)
    for split in SPLITS:
        keys = ("n", "right", "flagged_wrong", "flagged_right", "right_by_category")
        assert {k: now[split][k] for k in keys} == {k: card[split][k] for k in keys}, split
