"""The verdict's dictionary check (model.analysis.lexicon): a small dictionary made here for
each rule, and the real one (CC-CEDICT and the classroom lists) on sentences whose right and
wrong translations are known."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from model.analysis import lexicon as X
from model.analysis.verdict import judge

ENTRIES = [
    {"simplified": "北京", "pinyin": "Bei3 jing1",
     "definitions": ["Beijing, capital of the People's Republic of China"]},
    {"simplified": "中财", "pinyin": "Zhong1 cai2",
     "definitions": ["Central University of Finance and Economics, Beijing"]},
    {"simplified": "课本", "pinyin": "ke4 ben3", "definitions": ["textbook", "CL:本[ben3]"]},
    {"simplified": "奶奶", "pinyin": "nai3 nai5",
     "definitions": ["(informal) grandma (paternal grandmother)"]},
    {"simplified": "孩子", "pinyin": "hai2 zi5", "definitions": ["child"]},
    {"simplified": "张", "pinyin": "Zhang1", "definitions": ["surname Zhang"]},
    {"simplified": "伟", "pinyin": "wei3", "definitions": ["big", "great"]},
    {"simplified": "公里", "pinyin": "gong1 li3", "definitions": ["kilometer"]},
    {"simplified": "主意", "pinyin": "zhu3 yi5", "definitions": ["idea", "Beijing pr. [zhu2 yi5]"]},
]
SMALL = X.build_lexicon(ENTRIES, [("token", "词元")])


def test_the_dictionary_is_read_backwards_best_translation_first():
    assert SMALL.senses["beijing"][0] == "北京"  # its own definition, before a mention
    assert SMALL.senses["textbook"] == ("课本",) and "ben" not in SMALL.senses  # no notes
    assert "奶奶" in SMALL.senses["grandmother"]  # an aside is read too
    assert "主意" not in SMALL.senses.get("beijing", ())  # a pronunciation note is not
    assert SMALL.senses["token"] == ("词元",) and SMALL.senses["zhang"] == ("张",)
    assert SMALL.readings["张"] == {"zhang"} and "bei" in SMALL.syllables


def test_inflected_and_british_words_meet_their_definitions():
    assert {"child", "children"} <= X.lemmas("children")
    assert "kilometer" in X.lemmas("kilometres") and "go" in X.lemmas("went")
    out = X.untranslated("Three children ran 5 kilometres.", "三个孩子跑了5公里。", SMALL)
    assert out == ()


def test_a_noun_none_of_whose_translations_is_written_is_named_once():
    out = X.untranslated("Beijing, Beijing! Read the textbook.", "读课本。", SMALL)
    assert [m.word for m in out] == ["Beijing"] and out[0].translations[0] == "北京"  # read
    assert out[0].pinyin == ("bei", "jing")
    # verbs, function words, words the dictionary lacks and non-Chinese output: no claim
    assert X.untranslated("I read it quickly to Bob.", "我。", SMALL) == ()
    assert X.untranslated("Read the textbook.", "Lies das Buch.", SMALL) == ()


def test_a_name_in_pinyin_is_found_by_its_characters_readings():
    assert X.spelt_in("Zhang", "张伟住在这里", SMALL) and X.spelt_in("Zhangwei", "我和张伟", SMALL)
    assert not X.spelt_in("Zhang", "伊斯兰", SMALL) and not X.spelt_in("Weizhang", "张伟", SMALL)
    assert X.untranslated("Zhang Wei is here.", "张伟在这里。", SMALL) == ()
    missing = X.untranslated("Zhang Wei is here.", "伊斯兰在这里。", SMALL)
    assert [(m.word, m.translations, m.pinyin) for m in missing] == [
        ("Zhang", ("张",), ("zhang",)), ("Wei", (), ("wei",))]  # Wei: a name, no entry
    assert X.untranslated("Wei is here.", "伟在这里。", SMALL) == ()  # read in the output
    assert X.is_name("Xiaoming") and not X.is_name("Read") and not X.is_name("xiaoming")


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(["北京", "课本", "奶奶", "孩子", "张伟", "公里", "词元"]),
       st.text(alphabet="的了是在我你他们有个这那", max_size=8))
def test_writing_a_translation_anywhere_satisfies_the_check(zh, noise):
    src = "Beijing textbook grandmother child Zhang kilometer token"
    named = {m.word for m in X.untranslated(src, noise + zh + noise, SMALL)}
    words_of = {"北京": "Beijing", "课本": "textbook", "奶奶": "grandmother", "孩子": "child",
                "张伟": "Zhang", "公里": "kilometer", "词元": "token"}
    assert words_of[zh] not in named and len(named) == 6


@pytest.mark.parametrize("en, right, wrong, word", [
    ("My grandmother was born in Beijing in 1956.", "我奶奶1956年出生在北京。",
     "我祖母出生于1956年。", "Beijing"),
    ("Zhang Wei lives in Hangzhou with his parents.", "张伟和父母住在杭州。",
     "伊斯兰住在他的父母。", "Zhang"),
    ("Where did you put my computer science textbook?", "你把我的计算机科学课本放哪儿了？",
     "你在哪里把我的科学科学？", "textbook"),
    ("Every token gets its own vector.", "每个词元都有自己的向量。", "每个都有自己的。", "token"),
])
def test_the_real_dictionary_on_the_issues_sentences(en, right, wrong, word):
    assert X.untranslated(en, right) == ()
    assert word in [m.word for m in X.untranslated(en, wrong)]


def test_the_verdict_names_the_untranslated_noun_only_for_english_input():
    attn = np.array([[[[1.0, 0.0]]]])  # (L, H, T, S): one step, all on the one word
    kwargs = dict(labels=["▁Beijing", "</s>"], word_of=[0, 1], cross_attentions=attn,
                  probs=[0.9], forced=[False], finished=True, counts=None)
    v = judge("Beijing", output_text="上海", **kwargs)
    assert "untranslated" in v.signals and v.untranslated[0].word == "Beijing"
    assert "untranslated" not in judge("Beijing", output_text="北京", **kwargs).signals
    for language in ("", "zh"):  # a source that is not (known to be) English
        assert judge("Beijing", output_text="上海", source_language=language,
                     **kwargs).untranslated == ()
