"""The app's one Chinese segmentation and its readings (model.core.zh_segment and
model.analysis.zh_readings, read by ui.pinyin): hand-written classroom sentences
(tests/data/zh_words.toml) cut into the words a Chinese reader sees and read as CC-CEDICT reads
them, neutral tones unmarked and 的 / 地 / 得 read de where they are particles; the cut is
lossless and the same everywhere the app cuts."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from model.analysis import cedict
from model.analysis.cedict import gloss_dictionary
from model.analysis.lexicon_zh import untranslated_zh
from model.analysis.numbers import _words_of
from model.backends.ours import chinese_words
from model.core import zh_segment
from ui.gloss import words as gloss_words
from ui.pinyin import _syllables, segment

DATA = Path(__file__).with_name("data") / "zh_words.toml"
SENTENCES = tomllib.loads(DATA.read_text(encoding="utf-8"))["sentence"]


def word_readings(text: str) -> list[tuple[str, str]]:
    """(word, its pinyin) for each word of ``text``, as the header shows them."""
    syllables, out, i = _syllables(text), [], 0
    for word in segment(text):
        out.append((word, " ".join(syllables[i:i + len(word)])))
        i += len(word)
    return out


def test_the_set_is_large_and_varied():
    assert len(SENTENCES) >= 30
    checked = [item.split(" ", 1)[0] for s in SENTENCES for item in s["pinyin"]]
    for particle in "的地得":
        assert checked.count(particle) >= 2, particle


@pytest.mark.parametrize("item", SENTENCES, ids=[s["text"] for s in SENTENCES])
def test_each_sentence_is_cut_as_a_reader_cuts_it(item):
    assert segment(item["text"]) == item["words"].split(" ")


@pytest.mark.parametrize("item", SENTENCES, ids=[s["text"] for s in SENTENCES])
def test_each_word_that_matters_is_read_right(item):
    pairs, start = word_readings(item["text"]), 0
    for expected in item["pinyin"]:
        word, reading = expected.split(" ", 1)
        k = next(k for k in range(start, len(pairs)) if pairs[k][0] == word)
        assert pairs[k] == (word, reading), expected
        start = k + 1


@pytest.mark.parametrize("item", SENTENCES, ids=[s["text"] for s in SENTENCES])
def test_every_part_of_the_app_reads_the_same_words(item):
    text = item["text"]
    words = segment(text)
    assert [w for w, _ in gloss_words(text, gloss_dictionary())] == words  # the header's glosses
    assert [w for w, _ in zh_segment.tag(text)] == words  # the verdict's checks
    per_char = _words_of(text)  # the number check: each character's word
    assert [per_char[i][0] for i in range(len(text))] == [w for w in words for _ in w]
    ids = chinese_words([*text, "</s>"])  # the charts' and Side by side's word grouping
    assert ids == tuple(k for k, w in enumerate(words) for _ in w) + (len(words),)


def test_the_reported_sentences_of_issue_54_stay_fixed():
    assert segment("请把手机关掉") == ["请", "把", "手机", "关掉"]
    assert word_readings("雨下得太多了")[:3] == [("雨", "yǔ"), ("下", "xià"), ("得", "de")]
    assert word_readings("妈妈告诉我")[:2] == [("妈妈", "mā ma"), ("告诉", "gào su")]
    # the verdict no longer names 机关 ("mechanism") for a right translation
    assert untranslated_zh("请把手机关掉", "Please turn off your phone.") == ()


def test_words_jieba_joins_but_cc_cedict_does_not_list_are_cut_again():
    assert segment("这个地方很漂亮") == ["这个", "地方", "很", "漂亮"]
    assert segment("地上有一本书") == ["地上", "有", "一", "本", "书"]
    assert segment("李明是我的同学") == ["李明", "是", "我", "的", "同学"]  # a name stays whole
    assert segment("四川菜很好吃")[0] == "四川菜"  # ambiguous (四川 菜, 四 川菜): jieba's
    assert segment("我们班有三十个学生")[2:5] == ["有", "三十", "个"]  # number, measure word
    assert segment("张老师来了")[0] == "张老师"


def test_the_particles_are_read_by_the_words_around_them():
    def at(text: str, word: str) -> str:
        return dict(word_readings(text))[word]

    assert at("他高兴地笑了", "地") == "de"
    assert at("这块地很大", "地") == "dì"
    assert at("我们得到了", "得到") == "dé dào"
    assert at("你得好好学习", "得") == "děi"
    assert at("这是我的目的地", "目的地") == "mù dì dì"
    assert at("我看得见", "看得见") == "kàn de jiàn"  # CC-CEDICT's de2 inside a word: de


def test_a_word_cc_cedict_lacks_is_read_by_its_listed_parts():
    assert dict(word_readings("他昨天晚上睡得很晚"))["昨天晚上"] == "zuó tiān wǎn shang"
    assert dict(word_readings("爷爷奶奶都很好"))["爷爷"] == "yé ye"


def test_cc_cedict_readings_pick_the_entry_with_the_most_senses():
    entries = [
        {"simplified": "东西", "pinyin": "dong1 xi1", "definitions": ["east and west"]},
        {"simplified": "东西", "pinyin": "dong1 xi5", "definitions": ["thing", "stuff"]},
        {"simplified": "李明", "pinyin": "Li3 Ming2", "definitions": ["a", "b", "c"]},
        {"simplified": "女儿", "pinyin": "nu:3 er2", "definitions": ["daughter"]},
        {"simplified": "一点儿", "pinyin": "yi1 dian3 r5", "definitions": ["a bit"]},
        {"simplified": "好", "pinyin": "hao3", "definitions": ["good"]},
        {"simplified": "得", "pinyin": "de2", "definitions": ["to get", "CL:x", "variant of y"]},
        {"simplified": "卡拉OK", "pinyin": "ka3 la1 O K", "definitions": ["karaoke"]},
    ]
    assert cedict.build_pinyin(entries) == {"东西": "dong1 xi5", "女儿": "nv3 er2",
                                            "一点儿": "yi1 dian3 r5", "李明": "li3 ming2"}
    name_first = [{"simplified": "黄山", "pinyin": "Huang2 shan1", "definitions": ["a", "b"]},
                  {"simplified": "黄山", "pinyin": "huang2 shan5", "definitions": ["c"]}]
    assert cedict.build_pinyin(name_first) == {"黄山": "huang2 shan5"}  # a common word first
    shipped = cedict.word_pinyin()
    assert shipped["妈妈"] == "ma1 ma5" and shipped["地方"] == "di4 fang5"
    assert shipped["便宜"] == "pian2 yi5" and shipped["不是"] == "bu4 shi4"


def test_the_user_dictionary_reads_as_documented(tmp_path):
    path = tmp_path / "words.txt"
    path.write_text("# a comment\n手机 1000 n\n关掉\n雨/下 n/v  # split\n\n", encoding="utf-8")
    joins, splits = zh_segment.read_user_words(path)
    assert joins == [("手机", 1000, "n"), ("关掉", None, "x")]
    assert splits == {"雨下": (("雨", "n"), ("下", "v"))}
    path.write_text("雨/下 n\n", encoding="utf-8")
    with pytest.raises(ValueError, match="tags"):
        zh_segment.read_user_words(path)
    joins, splits = zh_segment.read_user_words()  # the shipped file parses, words are Chinese
    assert joins and splits
    assert all(zh_segment.HAN_RUN.fullmatch(w) for w, _, _ in joins)
    assert all(zh_segment.HAN_RUN.fullmatch(p) for parts in splits.values() for p, _ in parts)


@given(st.text(alphabet="我们都请把手机关掉雨下得太多了地的很漂亮说对一本书38a <>/s？。",
               max_size=20))
def test_segment_and_tag_are_lossless(text):
    words = segment(text)
    assert "".join(words) == text and all(words)
    assert "".join(w for w, _ in zh_segment.tag(text)) == text
    han = [w for w in words if zh_segment.HAN_RUN.fullmatch(w)]
    assert han == [w for run in zh_segment.HAN_RUN.findall(text) for w in zh_segment.cut(run)]
    assert len(_syllables(text)) == len(text)
