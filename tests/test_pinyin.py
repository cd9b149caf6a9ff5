"""Pinyin under Chinese tokens (ui.pinyin): words cut as the app cuts them (zh_segment), each
read as CC-CEDICT reads it or else as pypinyin reads that word alone, one reading per label,
and drawn as a second line on token axes (viz.axes)."""

from __future__ import annotations

import gzip
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from apptest_helpers import APP, chart_title, charts, heading
from hypothesis import given
from hypothesis import strategies as st
from pypinyin import Style, pinyin
from streamlit.testing.v1 import AppTest

from model.core import zh_segment
from model.training.classroom_set import read_set
from ui.pinyin import (
    PHRASES_FILE,
    PHRASES_INDEX,
    _syllables,
    phrase_lines,
    phrase_map,
    readings,
    segment,
    with_pinyin,
)
from viz import attention_heatmap
from viz.axes import label_px


def test_readings_follow_the_word_a_character_is_in():
    labels = ["<s>", "我", "们", "为", "什", "么", "工", "作", "？", "</s>"]
    got = readings(labels)
    assert got == ["", "wǒ", "men", "wèi", "shén", "me", "gōng", "zuò", "", ""]
    assert readings(["为什么"]) == ["wèi shén me"]  # 为 in 为什么 is wèi, not wéi
    assert readings(["1998", "年"]) == ["", "nián"]


def test_the_phrase_map_holds_every_phrase_of_pypinyin_read_without_heteronyms():
    with open(PHRASES_FILE, encoding="utf-8") as f:
        phrases = json.load(f)
    assert dict(phrase_map()) == {k: " ".join(r[0] for r in v) for k, v in phrases.items()}
    # The shipped index is a fresh build of the installed pypinyin's file (rebuild it with
    # `python -m ui.pinyin` after changing the parser or the pin).
    assert gzip.decompress(PHRASES_INDEX.read_bytes()).decode("utf-8") == phrase_lines()


# Sentences holding the phrases a review found glossed and read across word edges (在教
# "believer", 把手 "handle", 机关 "agency", 中学 "middle school", 请把 read as one, 都会
# "city"), each with its words as a Chinese reader splits it; and sentences where the same
# characters are one word.
REVIEW = {
    "老师在教室教学生。": ["老师", "在", "教室", "教", "学生", "。"],
    "他在教室中学习。": ["他", "在", "教室", "中", "学习", "。"],
    "请把书放在桌子上。": ["请", "把", "书", "放在", "桌子", "上", "。"],
    "我们都会游泳。": ["我们", "都", "会", "游泳", "。"],
    "你们都会来吗？": ["你们", "都", "会", "来", "吗", "？"],
    "门的把手坏了。": ["门", "的", "把手", "坏", "了", "。"],
    "我在教育机关工作。": ["我", "在", "教育", "机关", "工作", "。"],
    "他在中学教书。": ["他", "在", "中学", "教书", "。"],
}


def test_the_review_sentences_are_cut_as_a_chinese_reader_cuts_them():
    for text, expected in REVIEW.items():
        assert segment(text) == expected, text
    assert segment("1998年<s>我们") == ["1998", "年", "<s>", "我们"]
    assert segment("") == []


@given(st.text(alphabet="我们都会游泳请把手机关掉在教室中学习1a <>/s？。", max_size=16))
def test_segment_is_lossless_and_cuts_chinese_as_the_app_does(text):
    words = segment(text)
    assert "".join(words) == text and all(words)
    han = [w for w in words if "\u4e00" <= w[0] <= "\u9fff"]
    assert all("\u4e00" <= c <= "\u9fff" for w in han for c in w)
    runs = re.findall(r"[\u4e00-\u9fff]+", text)
    assert han == [w for run in runs for w in zh_segment.cut(run)]


def test_a_character_is_read_in_its_own_word():
    assert _syllables("我们都会游泳。")[2] == "dōu"  # 都 alone, not dū of 都会 "city"
    assert _syllables("北京是一个大都会。")[6] == "dū"  # 大都会, one word: a metropolis
    assert readings(["请", "把", "书"]) == ["qǐng", "bǎ", "shū"]


@pytest.mark.slow  # a fresh Python process
def test_a_server_reads_each_word_as_pypinyin_reads_it_alone_and_leaves_no_setting_behind():
    # The reference: a fresh process where pypinyin loads its own phrases (one json.loads)
    # and reads each word of the app's cut alone with them (as ui.pinyin reads a word
    # CC-CEDICT does not list: word_syllables); against it, ui.pinyin in a fresh
    # process (pypinyin without phrases, the packed map and pypinyin's segmentation within
    # each word), and ui.pinyin after pypinyin was imported with its phrases. None leaves
    # the variables that turn pypinyin's phrases off to the processes it starts.
    root = Path(__file__).resolve().parents[1]
    with open(root / "pretrained" / "en-zh-everyday" / "heldout.tsv", encoding="utf-8") as f:
        texts = [line.rstrip("\n").split("\t")[1] for line in f]
    texts += [item.zh for item in read_set()] + list(REVIEW)
    reference = ("import json, sys; from pypinyin import Style, pinyin;"
                 "words = json.load(sys.stdin);"
                 "print(json.dumps([[r[0] if r else '' for w in ws for r in pinyin("
                 "w, style=Style.TONE, errors=lambda run: [[''] for _ in run])] "
                 "for ws in words]))")
    ours = ("import json, os, sys; {first}; import ui.pinyin as p;"
            "assert not any(k.startswith('PYPINYIN') for k in os.environ);"
            "texts = json.load(sys.stdin);"
            "print(json.dumps([[s for w in p.segment(t) for s in p.word_syllables(w)]"
            " for t in texts] + [p._syllables(t) for t in texts]))")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYPINYIN")}

    def run(code: str, data: list) -> list:
        return json.loads(subprocess.run(
            [sys.executable, "-c", code], input=json.dumps(data), cwd=root,
            env=env, capture_output=True, text=True, check=True).stdout)

    fresh, after = run(ours.format(first="pass"), texts), run(
        ours.format(first="import pypinyin"), texts)
    got = [run(reference, [segment(t) for t in texts]), fresh[:len(texts)], after[:len(texts)]]
    assert got[0] == got[1] == got[2]
    # and the header's readings (CC-CEDICT's first, zh_readings.cedict_reading) are the same in
    # a fresh process, after pypinyin's phrases were loaded, and here
    assert fresh[len(texts):] == after[len(texts):] == [_syllables(t) for t in texts]
    assert sum(any(r) for r in got[0]) > len(texts) / 2  # Chinese sentences, read
    review = got[0][-len(REVIEW):]
    assert review[list(REVIEW).index("我们都会游泳。")][2] == "dōu"


@given(st.lists(st.text(alphabet="我们你好为什么行长abc123 <>/s？。", min_size=1, max_size=4),
                min_size=1, max_size=6))
def test_one_reading_per_label_and_one_syllable_per_chinese_character(labels):
    got = readings(labels)
    assert len(got) == len(labels)
    for label, reading in zip(labels, got, strict=True):
        han = [c for c in label if "\u4e00" <= c <= "\u9fff"]
        assert len(reading.split()) == len(han)
        alone = [r[0] for r in pinyin(label, style=Style.TONE, errors=lambda s: [[""]] * len(s))
                 if r[0]]
        assert len(alone) == len(han)


def test_with_pinyin_adds_a_second_line_only_to_chinese_labels():
    assert with_pinyin(["<s>", "我", "1998"]) == ("<s>", "我\nwǒ", "1998")


def test_token_axes_stack_pinyin_on_x_and_keep_it_on_one_line_on_y():
    rows, cols = ["<s> → 我\nwǒ", "我\nwǒ → 们\nmen"], ["why", "我\nwǒ"]
    fig = attention_heatmap(np.full((2, 2), 0.5), rows, cols)
    assert list(fig.layout.xaxis.ticktext) == ["why", "我<br>wǒ"]
    assert list(fig.layout.yaxis.ticktext) == ["&lt;s&gt; → 我 wǒ", "我 wǒ → 们 men"]
    assert label_px(["我\nwǒ"]) == label_px(["我 wǒ"])


def tick_labels(at: AppTest) -> list[str]:
    """Every tick label of every chart on the page."""
    return [label for f in charts(at) for axis in ("xaxis", "yaxis")
            for label in f["layout"].get(axis, {}).get("ticktext", [])]


def test_pinyin_starts_on_in_either_language_and_the_switch_turns_it_off():
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    assert at.toggle(key="pinyin").value and at.html  # the header's words with pinyin
    spoken = re.findall(r"<rt>(.*?)</rt>", at.html[0].value)
    at.slider(key="step").set_value(4)
    at.session_state["view"] = "cross"
    at.run()
    output = heading(at)
    toned = {syl for r in readings([output]) for syl in r.split() if not syl.isascii()}
    assert toned and any(syl in label for syl in toned for label in tick_labels(at))
    at.toggle(key="pinyin").set_value(False).run()
    assert not at.html and not at.exception
    assert not any(syl in label for syl in toned for label in tick_labels(at))
    zh = AppTest.from_file(APP, default_timeout=120)
    zh.query_params["lang"] = "简体中文"  # README's Chinese quick start: pinyin shown
    zh.run()
    assert not zh.exception and zh.toggle(key="pinyin").value
    (line,) = zh.html  # the translation's words with the same pinyin over them
    assert spoken and re.findall(r"<rt>(.*?)</rt>", line.value) == spoken
    zh.toggle(key="pinyin").set_value(False).run()
    assert not zh.exception and not zh.html


def test_a_link_turns_pinyin_over_in_either_language():
    for lang, value, on in (("English", "false", False), ("简体中文", "false", False),
                            ("简体中文", "true", True)):
        at = AppTest.from_file(APP, default_timeout=120)
        at.query_params.update({"lang": lang, "pinyin": value})
        at.run()
        assert not at.exception and at.toggle(key="pinyin").value is on
        assert bool(at.html) is on  # the header's words with pinyin over them
        assert not at.warning, [w.value for w in at.warning]  # nothing "does not fit"
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update({"pinyin": "maybe", "present": "false"})
    at.run()
    assert not at.exception and at.toggle(key="pinyin").value  # the default, and it says so
    (warning,) = [w.value for w in at.warning]
    assert "pinyin=maybe" in warning and "present" not in warning


def test_the_switch_puts_pinyin_on_the_output_line_and_the_cross_attention_rows():
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    assert at.toggle(key="pinyin").value  # on by default
    at.slider(key="step").set_value(4)
    at.session_state["view"] = "cross"
    at.run()
    assert not at.exception
    output = heading(at)
    (line,) = at.html  # the translation's words, pinyin over them (ui.gloss)
    spoken = re.findall(r"<rt>(.*?)</rt>", line.value)
    assert spoken and " ".join(spoken) == " ".join(r for r in readings([output]) if r)
    assert "".join(re.sub(r"<rt>.*?</rt>|<[^>]+>", "", line.value)) == output
    (fig,) = [f for f in charts(at) if f["layout"]["title"]["text"].startswith("Cross-attention")]
    rows = fig["layout"]["yaxis"]["ticktext"][:4]  # the first row of panels of the grid
    assert len(rows) == 4 and all(" → " in r for r in rows)
    produced = [r.split(" → ")[1] for r in rows]  # "们 men": the token, then its pinyin
    chinese = [p for p in produced if "\u4e00" <= p[0] <= "\u9fff"]
    assert chinese and all(p == f"{p.split()[0]} {readings([p.split()[0]])[0]}"
                           for p in chinese if len(p.split()[0]) == 1)
    (overview,) = [f for f in charts(at) if chart_title(f).startswith("Step 4, layer")]
    candidates = overview["layout"]["yaxis"]["ticktext"]  # the top-10 bars, each read alone
    chinese = [c for c in candidates if "\u4e00" <= c[0] <= "\u9fff" and len(c.split()) == 2]
    assert chinese and all(c.split()[1] == readings([c.split()[0]])[0] for c in chinese)
