"""The verdict's checks of an English translation against its Chinese source
(model.analysis.faithful_zh): a negation dropped and a word said twice. Rules on sentences
made here (none from the classroom set), properties over made-up outputs, the verdict's
wiring (a Chinese source only), and both lines in the app and on the take-home page."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from model.analysis import faithful_zh as F
from model.analysis.verdict import chinese_function_words, judge

SKIP = chinese_function_words()


@pytest.mark.parametrize(("src", "positive", "negative", "named", "said"), [
    ("他不是老师。", "He is a teacher.", "He is not a teacher.", "不是老师", "teacher"),
    ("我今天不想去学校。", "I want to go to school today.",
     "I don't want to go to school today.", "不想去", "go"),
    ("这个苹果不好吃。", "This apple is delicious.", "This apple isn't delicious.",
     "不好吃", "delicious"),
    ("我没有钱。", "I have money.", "I have no money.", "没有钱", "money"),
    ("他从来不喝咖啡。", "He drinks coffee.", "He never drinks coffee.", "从来不喝", "drinks"),
    ("他不会游泳。", "He can swim.", "He is unable to swim.", "不会游泳", "swim"),
])
def test_a_dropped_negation_is_named_and_a_negation_clears_it(src, positive, negative, named,
                                                                 said):
    assert F.negation_dropped(src, positive, skip=SKIP) == (F.Negated(named, (said,)),)
    assert F.negation_dropped(src, negative, skip=SKIP) == ()


@pytest.mark.parametrize(("src", "output"), [
    ("我不舒服。", "I feel unwell."),  # the opposite in another word: none of 舒服's senses
    ("我不喜欢猫。", "I hate cats."),
    ("这个问题不容易。", "This problem is hard."),
    ("你去不去学校？", "Do you go to school?"),  # A不A: a question, no negation
    ("你有没有钱？", "Do you have money?"),
    ("我们明天去学校。", "We go to school tomorrow."),  # no negator at all
])
def test_no_negation_is_claimed_where_none_is_dropped(src, output):
    assert F.negation_dropped(src, output, skip=SKIP) == ()


@pytest.mark.parametrize("text", ["I can't swim.", "I cannot swim.", "He couldn\u2019t come.",
                                  "He is unhappy.", "It was careless.", "Never again.",
                                  "I dislike it."])
def test_english_says_not_in_many_ways(text):
    assert F.english_negation(text)


@pytest.mark.parametrize("text", ["The unit is under the bridge.", "Bless you.",
                                  "I like it.", "Noted."])
def test_words_that_only_look_negative_are_not(text):
    assert not F.english_negation(text)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["I", "have", "money", "teacher", "go", "school", "happy",
                                 "know", "delicious"]), min_size=1, max_size=8),
       st.sampled_from(["not", "never", "don't", "no"]))
def test_an_output_with_a_negation_never_drops_one(words, negation):
    output = " ".join([*words, negation]) + "."
    for src in ("他不是老师。", "我不知道。", "我没有钱。", "这个苹果不好吃。"):
        assert F.negation_dropped(src, output, skip=SKIP) == ()


@pytest.mark.parametrize(("src", "output", "word", "times", "sources"), [
    ("我们的老师很好。", "Our teacher is a good teacher.", "teacher", 2, 1),
    ("外面在下雨。", "It's raining and rain outside.", "raining", 2, 1),
    ("我们班有二十个女生。", "Our class has 20 girls are 20 girls.", "girls", 2, 1),
    ("周杰来了。", "Zhou Jie met Zhou Jie.", "Zhou", 2, 1),
])
def test_a_word_said_twice_in_one_clause_is_named(src, output, word, times, sources):
    found = F.said_twice(src, output)
    assert found[0] == F.Repeated(word, times, sources)


@pytest.mark.parametrize(("src", "output"), [
    ("天气越来越冷。", "It is getting colder and colder."),  # an idiom of degree
    ("我一天比一天好。", "I get better day by day."),
    ("老师来了，又走了。", "The teacher came, and the teacher left."),  # two clauses
    ("我看书，他也看书。", "I read books and he reads books too."),  # 书 twice in the source
    ("我的朋友的朋友来了。", "My friend's friend came."),  # 朋友 twice
    ("我要去北京。", "I am going to go to Beijing."),  # going to: the future
    ("他有两个哥哥。", "He has two brothers, two older brothers."),
])
def test_what_the_sentence_also_says_twice_or_english_repeats_is_not_named(src, output):
    assert F.said_twice(src, output) == ()


@settings(max_examples=80, deadline=None)
@given(st.lists(st.sampled_from(["teacher", "school", "apple", "river", "book", "friend",
                                 "city", "music"]), min_size=1, max_size=6, unique=True))
def test_a_clause_is_named_exactly_when_it_says_a_word_again(words):
    once = "The " + " and the ".join(words) + "."
    assert F.said_twice("我们喜欢学习。", once) == ()
    again = "The " + " and the ".join([*words, words[0]]) + "."
    assert [r.word for r in F.said_twice("我们喜欢学习。", again)] == [words[0]]


def _judge(src: str, output: str, language: str):
    attn = np.full((1, 1, 1, 2), 0.5)  # (L, H, T, S): one step, looking at both tokens
    return judge(src, [src, "</s>"], [0, 1], attn, probs=[0.9], forced=[False],
                 output_text=output, finished=True, counts=None, source_language=language)


def test_the_verdict_reads_both_checks_for_a_chinese_source_only():
    v = _judge("他不是老师。", "He is a teacher teacher.", "zh")
    assert v.negation and v.repeated and v.flagged
    assert {"negation", "repeated"} <= set(v.signals)
    v = _judge("他不是老师。", "He is not a teacher.", "zh")
    assert not v.negation and not v.repeated
    v = _judge("The teacher is not here.", "老师在这里。", "en")
    assert not v.negation and not v.repeated
