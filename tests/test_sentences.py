"""A typed text's sentences (model.analysis.sentences): where a paragraph is cut, in English
and Chinese, and where it is not (decimals, abbreviations, initials); the verdict's
"several sentences" signal on a real decoding."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from shipped import model_of

from model.analysis.sentences import abbreviations, split_sentences
from model.analysis.verdict import judge_trace


@pytest.mark.parametrize("text, expected", [
    ("I am Li Ming. I live in Chengdu! Do you like pandas?",
     ("I am Li Ming.", "I live in Chengdu!", "Do you like pandas?")),
    ("我叫李明。我住在成都！你喜欢熊猫吗？", ("我叫李明。", "我住在成都！", "你喜欢熊猫吗？")),
    ('She said "Stop." Then she left.', ('She said "Stop."', "Then she left.")),
    ("It costs 3.5 yuan. We paid 10.", ("It costs 3.5 yuan.", "We paid 10.")),
    ("Wait!! What happened?", ("Wait!!", "What happened?")),
    ("Is it (really)? Yes.", ("Is it (really)?", "Yes.")),
    ("I like tea. 我喜欢茶。", ("I like tea.", "我喜欢茶。")),
    ("We met at 5 p.m. Tom came later.", ("We met at 5 p.m.", "Tom came later.")),
    ("We bought pens, books, etc. Then we went home.",
     ("We bought pens, books, etc.", "Then we went home.")),
    ("他说：“我爱你。你呢？”我笑了。", ("他说：“我爱你。你呢？”", "我笑了。")),
    ('He said "Stop. Sit down." Then he left.', ('He said "Stop. Sit down."', "Then he left.")),
])
def test_a_paragraph_is_cut_after_each_sentence(text, expected):
    assert split_sentences(text) == expected


@pytest.mark.parametrize("text", [
    "Mr. Wang teaches us maths.", "Dr. Li and Prof. Zhang met at 5 p.m. today.",
    "J. K. Rowling wrote seven books.", "The river is 6.3 km long.",
    "We bought fruit, e.g. apples and pears.", "why do we work?", "Hello. how are you",
    "「你好。我是李明。」", "We met at 5 p.m. today.",
    "我们为什么工作？", "  One sentence with spaces around  "])
def test_one_sentence_stays_whole(text):
    assert split_sentences(text) == (text.strip(),)
    assert split_sentences("") == () and split_sentences("   ") == ()


SENTENCE = st.builds(lambda first, rest, end: f"{first.capitalize()} {rest}{end}",
                     st.sampled_from(["we", "my teacher", "the students", "it"]),
                     st.sampled_from(["read a book", "went home", "is 3.5 metres tall",
                                      "met Mr. Wang"]),
                     st.sampled_from([".", "!", "?", "...", "?!"]))


@settings(max_examples=80, deadline=None)
@given(st.lists(SENTENCE, min_size=1, max_size=6), st.sampled_from([" ", "  ", "\n"]))
def test_sentences_joined_by_white_space_come_back_apart(sentences, gap):
    assert split_sentences(gap.join(sentences)) == tuple(sentences)
    assert all(split_sentences(s) == (s,) for s in sentences)  # each alone: itself


def test_the_abbreviation_list_is_read_lower_case():
    assert {"mr", "dr", "e.g", "u.s"} <= abbreviations() and "p.m" not in abbreviations()
    assert all(w == w.lower() and not w.endswith(".") for w in abbreviations())


@pytest.mark.parametrize("model, paragraph", [
    ("en-zh-everyday", "My name is Li Ming. I live in Chengdu. I like pandas."),
    ("zh-en-everyday", "我叫李明。我住在成都。我喜欢熊猫。")])
def test_the_verdict_flags_a_paragraph_and_names_its_sentences(model, paragraph):
    m = model_of(model)
    v = judge_trace(m.generate(paragraph), m.info.train_counts, m.info.source_language)
    assert v.sentences == split_sentences(paragraph) and len(v.sentences) == 3
    assert v.signals[0] == "sentences" and v.flagged
    one = judge_trace(m.generate(v.sentences[0]), m.info.train_counts, m.info.source_language)
    assert one.sentences == () and "sentences" not in one.signals
