"""The verdict for a Chinese source (model.analysis.verdict with ``source_language="zh"``,
model.analysis.numbers): not Chinese, characters barely seen, Chinese function words never
named as left out, numbers of the Chinese (digits or numerals) the English leaves out, nouns
and names the English lacks (the dictionary check read the other way); the typo check stays
off. Rules on inputs made here, then invariants on the shipped
Chinese -> English model (whatever its translations: no output is asserted)."""

from __future__ import annotations

import cn2an
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from shipped import model_of

from model.analysis import lexicon_zh as LZ
from model.analysis import numbers as N
from model.analysis import verdict as V
from model.backends.ours import chinese_words
from model.core.counts import count_sources
from model.core.vocab import tokenize_zh

ZH_COUNTS = count_sources(["我们喜欢学习。"] * 5 + ["他有三本书。"] * 3,
                          [tokenize_zh("我们喜欢学习。")] * 5 + [tokenize_zh("他有三本书。")] * 3)


# -- English number words ------------------------------------------------------------------------

def test_english_words_and_ordinals():
    assert [N.english_words(n) for n in (0, 15, 42, 100, 365, 2008)] == [
        "zero", "fifteen", "forty-two", "one hundred", "three hundred and sixty-five",
        "two thousand and eight"]
    assert [N.ordinal_words(n) for n in (1, 2, 3, 12, 20, 42, 100)] == [
        "first", "second", "third", "twelfth", "twentieth", "forty-second", "one hundredth"]
    for bad in (-1, 10_000):
        with pytest.raises(ValueError, match="0..9999"):
            N.english_words(bad)


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 9999), st.integers(0, 9999))
def test_a_number_is_written_by_its_digits_and_words_and_no_other_numbers(n, m):
    for text in (str(n), N.english_words(n), N.ordinal_words(n),
                 N.english_words(n).upper().replace("-", " ").replace(" and ", " "),
                 f"I saw {N.english_words(n)} birds, then {n:,} more."):
        assert N.english_writes(n, text), text
    if m != n:  # twenty is not in twenty-five, 19 not in 1998
        for text in (str(m), N.english_words(m), N.ordinal_words(m), f"page {m}."):
            assert not N.english_writes(n, text), (n, text)


def test_other_ways_english_writes_a_number():
    assert N.english_writes(1998, "born in nineteen ninety-eight")
    assert N.english_writes(100, "A hundred people") and N.english_writes(1000, "1,000 people")
    assert N.english_writes(2, "Both of them came") and N.english_writes(12, "a dozen eggs")
    assert N.english_writes(12, "It is December.", month=True)
    assert not N.english_writes(12, "It is December.")  # no 月 after it: no month
    assert N.english_writes(3, "the 3rd time") and not N.english_writes(3, "it is 13.")


# -- the numbers of the Chinese -----------------------------------------------------------------

@settings(max_examples=150, deadline=None)
@given(st.integers(2, 9999))
def test_a_number_in_chinese_numerals_or_digits_missing_from_the_english_is_flagged(n):
    for typed in (cn2an.an2cn(n), str(n)):
        src = f"他们有{typed}个学生。"
        assert N.missing_numbers_english(src, "They have many students.") == (typed,)
        assert N.missing_numbers_english(src, f"They have {n} students.") == ()
        assert N.missing_numbers_english(src, f"They have {N.english_words(n)} students.") == ()
        assert N.missing_numbers_english(src, f"They have {n + 1} students.") == (typed,)


@pytest.mark.parametrize("text", [
    "我有一个问题。", "我们一起去吧。", "他十分喜欢你。", "万一下雨怎么办？", "千万别忘了！",
    "这是三心二意。", "星期三见。", "我要三四个。", "十几个人来了。", "三分之一", "我爱吃三明治。",
    "零下的天气", "现在九点三十分。"])
def test_numerals_that_say_no_number_an_english_translation_must_write(text):
    assert [n.value for n in N.chinese_numbers(text)] == ([9] if "九点" in text else [])


def test_chinese_numbers_in_order_each_once_with_months():
    found = N.chinese_numbers("今天是十二月三十一日，我有3本书和两支笔，一九九八年出生。")
    assert [(n.text, n.value, n.month) for n in found] == [
        ("十二", 12, True), ("三十一", 31, False), ("3", 3, False), ("两", 2, False),
        ("一九九八", 1998, False)]
    assert N.missing_numbers_english("我有3本书，还有三本。", "I have books.") == ("3",)
    assert N.missing_numbers_english("十二月很冷。", "December is cold.") == ()
    assert N.missing_numbers_english("十二月很冷。", "Winter is cold.") == ("十二",)


# -- not Chinese, characters barely seen, function words ---------------------------------------

@pytest.mark.parametrize("text, script", [
    ("Why do we work?", "latin"), ("women gongzuo", "latin"), ("我们为什么工作？", None),
    ("我喜欢 Python 和 machine learning", None), ("123 ?!", None), ("", None),
    ("こんにちは", None), ("Привет", None)])
def test_not_chinese_names_latin_text_without_chinese_characters(text, script):
    assert V.not_chinese(text) == script


@settings(max_examples=80, deadline=None)
@given(st.text(), st.sampled_from("我们工作书"))
def test_a_sentence_with_a_chinese_character_is_never_called_not_chinese(text, han):
    assert V.not_chinese(text + han) is None
    assert V.not_chinese(han + text) is None


def test_rare_characters_are_named_once_in_order_and_punctuation_never():
    assert V.rare_characters("我们喜欢猫和狗，猫！", ZH_COUNTS) == (("猫", 0), ("和", 0), ("狗", 0))
    assert V.rare_characters("他有三本书。", ZH_COUNTS, below=4) == (("他", 3), ("有", 3),
                                                                   ("三", 3), ("本", 3), ("书", 3))
    assert V.rare_characters("我们喜欢学习。", ZH_COUNTS, below=5) == ()


def test_chinese_function_words_are_never_named_as_left_out():
    assert {"的", "了", "吗", "呢", "吧", "啊", "着", "过", "地", "得", "是", "在", "和", "也",
            "都", "就"} <= V.chinese_function_words()
    labels = ["我", "的", "书", "吗", "？", "</s>"]
    cover = np.zeros(len(labels))  # nothing looked at
    skip = V.chinese_function_words()
    assert [w for _, w, _ in V.left_out(labels, [0, 1, 2, 3, 4, 5], cover, 0.2, skip=skip)] == [
        "我", "书"]
    assert "的" in [w for _, w, _ in V.left_out(labels, [0, 1, 2, 3, 4, 5], cover, 0.2)]


# -- judge with a Chinese source ---------------------------------------------------------------

def _judge(src: str, output: str, language: str, counts=ZH_COUNTS, **kw) -> V.Verdict:
    labels = [*tokenize_zh(src), "</s>"]
    S, T = len(labels), 4
    attn = np.full((1, 1, T, S), 1.0 / S)  # (L, H, T, S)
    return V.judge(src, labels, chinese_words(labels), attn, probs=[0.9] * T,
                   forced=[False] * T, output_text=output, finished=True, counts=counts,
                   source_language=language, **kw)


def test_judge_a_chinese_source():
    v = _judge("他有三本书。", "He has books.", "zh", coverage_min=0.0)
    assert v.source_language == "zh" and v.script is None and v.typos == ()
    assert v.numbers == ("三",) and v.signals == ("number",) and v.flagged
    assert v.untranslated == ()  # books: 书's translation (the dictionary check)
    ok = _judge("他有三本书。", "He has three books.", "zh", coverage_min=0.0)
    assert ok.numbers == () and not ok.flagged
    rare = _judge("他有三只猫。", "He has three cats.", "zh", coverage_min=0.0)
    assert rare.rare == (("只", 0), ("猫", 0)) and rare.signals == ("rare",)
    assert _judge("他有三只猫。", "x", "zh", counts=None).rare == ()


def test_the_script_signal_follows_the_source_language():
    english = _judge("He has three books.", "He has three books.", "zh")
    assert english.script == "latin" and "not_chinese" in english.signals
    assert "not_english" not in english.signals and english.typos == ()
    chinese = _judge("他有三本书。", "他有三本书。", "en", counts=None)
    assert chinese.script == "han" and "not_english" in chinese.signals
    assert "not_chinese" not in chinese.signals
    assert _judge("他有三本书。", "x", "", counts=None).script is None  # not known: no check


# -- the dictionary check read the other way (lexicon_zh) ---------------------------------------

def _missing(src: str, output: str) -> dict[str, LZ.Missing]:
    return {m.word: m for m in LZ.untranslated_zh(src, output, skip=V.chinese_function_words())}


@pytest.mark.parametrize(("src", "wrong", "right", "named"), [
    ("我们暑假去成都看熊猫。", "We go to the summer vacation.",
     "In the summer holidays we went to Chengdu to see the pandas.", ("成都", "熊猫")),
    ("现在是下午三点。", "It's three o'clock now.", "It is three in the afternoon now.",
     ("下午",)),
    ("编码器和解码器有什么区别？", "What do the encoder and the decoder do?",
     "What is the difference between an encoder and a decoder?", ("区别",)),
    ("赵磊和黄晓明是好朋友。", "Zhao Lei and Huang Ming are good friends.",
     "Zhao Lei and Huang Xiaoming are good friends.", ("黄晓明",)),
])
def test_a_noun_or_name_the_english_lacks_is_named_and_its_translation_clears_it(
        src, wrong, right, named):
    missing = _missing(src, wrong)
    assert tuple(missing) == named
    for word, m in missing.items():
        assert word in src and m.word == word
        senses = LZ.senses_of(word, LZ.gloss_dictionary()) if m.translations else ()
        # what is shown is the dictionary's (a name's leading capitalised words) or its pinyin
        assert all(any(sense.startswith(t) for sense in senses) for t in m.translations)
        assert m.translations or "".join(m.pinyin) in LZ.spellings(word, LZ.lexicon())
        assert not any(t.lower() in wrong.lower() for t in m.translations)
    assert _missing(src, right) == {}


@pytest.mark.parametrize(("src", "output"), [
    ("李明是我的同桌。", "Li Ming is my deskmate."),  # a name spelt in pinyin
    ("我爷爷住在西安。", "My grandfather lives in Xi'an."),  # across the apostrophe
    ("黄山上的风景美极了", "The scenery on Mount Huang is beautiful."),  # a place, less 山
    ("王小红昨天生病了。", "Wang Xiaohong was sick yesterday."),  # 生病 "to fall ill": a verb
    ("这个词的注意力最高。", "This word's attention is the highest."),  # word's -> word
    ("张老师今天没布置作业。", "Teacher Zhang gave no homework today."),  # teacher -> 老师
    ("明天我们去天安门广场看升旗。", "Tomorrow we will see the flag raised on Tiananmen Square."),
])
def test_a_translation_the_dictionary_or_the_pinyin_knows_is_found(src, output):
    assert _missing(src, output) == {}


@pytest.mark.parametrize(("src", "output"), [
    ("有人在敲门。", "Someone is knocking at the door."),  # 人 as a pronoun
    ("你回家的时候给我打电话。", "Call me when you get home."),  # 时候 as a conjunction
    ("他是美国人。", "He is American."),  # a demonym; 人 after a place
    ("这部电影很好看。", "This film is great."),  # 部: a measure word
    ("这本书三十块钱。", "This book is 30 yuan."),  # a currency for 钱
    ("爷爷在看报纸。", "Grandpa is reading the paper."),  # as a child says it
])
def test_english_the_dictionary_lacks_or_a_measure_word_is_no_false_alarm(src, output):
    assert _missing(src, output) == {}


@pytest.mark.parametrize(("src", "output", "named"), [
    ("我们班有三十个人。", "Our class has thirty.", "人"),  # no stand-in at all
    ("这部电影很好看。", "This is great.", "电影"),  # the measure word's noun still read
    ("他是美国人。", "He is a teacher.", "美国"),
])
def test_the_words_around_them_are_still_read(src, output, named):
    assert named in _missing(src, output)


@pytest.mark.parametrize(("src", "wrong", "right", "named"), [
    ("我们后天去北京。", "We go to Beijing after tomorrow.",
     "We go to Beijing the day after tomorrow.", "后天"),  # tomorrow is 明天
    ("他前天来了。", "He came yesterday.", "He came two days ago.", "前天"),
    ("王芳是我的同桌。", "Wang Fang is my desk.", "Wang Fang is my deskmate.", "同桌"),
])
def test_a_word_whose_sense_holds_another_word_needs_its_whole_phrase(src, wrong, right, named):
    assert named in _missing(src, wrong) and named not in _missing(src, right)


def test_every_extra_sense_clears_its_word():
    named = [w for w in LZ.extra_senses() if w in _missing(w + "。", "Look: a tree.")]
    assert len(named) > len(LZ.extra_senses()) / 2  # the check reads most of them alone
    for word in named:
        for e in LZ.extra_senses()[word]:
            assert word not in _missing(word + "。", f"Look: {e}."), (word, e)


def test_an_output_with_no_english_word_is_not_judged_and_skipped_words_never_named():
    assert _missing("我们暑假去成都看熊猫。", "我们暑假。") == {}
    named = [m.word for m in LZ.untranslated_zh("我们暑假去成都看熊猫。", "We went.",
                                                 skip=frozenset({"熊猫"}))]
    assert "成都" in named and "熊猫" not in named


SENTENCE_CHARS = ("我们他她的了在是有去看成都上海熊猫夏天下午"
                  "老师学生作业书李明王芳黄山考试电脑手机，。？")


@settings(max_examples=60, deadline=None)
@given(st.text(SENTENCE_CHARS, min_size=1, max_size=20),
       st.sampled_from(["We went there.", "It is.", "Teacher!", ""]))
def test_writing_what_the_check_names_clears_it(src, output):
    missing = LZ.untranslated_zh(src, output, skip=V.chinese_function_words())
    assert all(m.word in src for m in missing) and len({m.word for m in missing}) == len(missing)
    added = " ".join(m.translations[0] if m.translations
                     else "".join(m.pinyin).capitalize() for m in missing)
    assert LZ.untranslated_zh(src, f"{output} {added}", skip=V.chinese_function_words()) == ()


def test_judge_names_the_missing_noun_of_a_chinese_source():
    v = _judge("我们暑假去成都看熊猫。", "We go to the summer vacation.", "zh", counts=None,
               coverage_min=0.0)
    assert [m.word for m in v.untranslated] == ["成都", "熊猫"]
    assert v.signals == ("untranslated",) and v.flagged


# -- the shipped Chinese -> English model (any model of this direction) -----------------------

@pytest.fixture(scope="module")
def zh_en():
    return model_of("zh-en-everyday")


def test_the_zh_en_model_is_judged_as_reading_chinese(zh_en):
    info, counts = zh_en.info, zh_en.info.train_counts
    assert (info.source_language, info.target_language) == ("zh", "en") and counts is not None
    trace = zh_en.generate("我有三本书。")
    v = V.judge_trace(trace, counts, info.source_language)
    assert v.source_language == "zh" and v.script is None and v.typos == ()
    assert v.coverage.shape == (len(trace.src_labels),)
    assert v.untranslated == LZ.untranslated_zh("我有三本书。", trace.output_text,
                                                skip=V.chinese_function_words())
    assert (v.numbers == ("三",)) == (not N.english_writes(3, trace.output_text))
    unseen = next(chr(c) for c in range(0x4E00, 0x9FA5) if chr(c) not in counts.pieces)
    assert (unseen, 0) in V.judge_trace(zh_en.generate(f"我有{unseen}。"), counts, "zh").rare
    typed = V.judge_trace(zh_en.generate("Why do we work?"), counts, info.source_language)
    assert typed.script == "latin" and "not_chinese" in typed.signals and typed.flagged
