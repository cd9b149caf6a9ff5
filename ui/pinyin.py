"""Pinyin under Chinese tokens, for readers who don't read Chinese (pypinyin, MIT licence).

Each target token's label gets its pinyin as a second line (``"们\\nmen"``): the ``viz``
token axes draw it under the token on an x axis and beside it on a y axis
(``viz.axes.token_axis``); the header shows the translation's words with their pinyin over
them and their English gloss on hover (``ui.gloss``). Readings come from the whole output
at once, so that a character with several readings is read in its word (为什么 -> wèi
shén me, not wéi).
The sidebar switch (``PINYIN_KEY``, ``?pinyin=false`` in a link) is on by default when the
page is in English (a reader of the English page may not read Chinese) and off in Chinese.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import streamlit as st
from pypinyin import Style, pinyin

from model import DecodeTrace

from .i18n import lang, t

PINYIN_KEY = "pinyin"


def _syllables(text: str) -> list[str]:
    """One reading per character of ``text`` ("" for a character that is not Chinese)."""
    return [r[0] if r else "" for r in
            pinyin(text, style=Style.TONE, errors=lambda run: [[""] for _ in run])]


def readings(labels: Sequence[str]) -> list[str]:
    """The pinyin (tone marks) of each label's Chinese characters, read in the context of
    all the labels joined, syllables separated by spaces; "" for a label without any.

    Args:
        labels: N token labels (``<s>``, ``我``, ``们``, ``1998``, ``</s>``...).

    Returns:
        N strings.
    """
    text = "".join(labels)
    per_char = _syllables(text)
    if len(per_char) != len(text):  # not one reading per character: each label alone
        return [" ".join(p for p in _syllables(label) if p) for label in labels]
    out, i = [], 0
    for label in labels:
        out.append(" ".join(p for p in per_char[i:i + len(label)] if p))
        i += len(label)
    return out


def with_pinyin(labels: Sequence[str]) -> tuple[str, ...]:
    """Each label with its pinyin as a second line (``"们\\nmen"``) where it has one."""
    return tuple(f"{label}\n{reading}" if reading else label
                 for label, reading in zip(labels, readings(labels), strict=True))


def alone(labels: Sequence[str]) -> tuple[str, ...]:
    """Each label with its pinyin as a second line, each read by itself (candidates for one
    step are alternatives, not a sentence), when the switch is on; ``labels`` when off."""
    if not is_on():
        return tuple(labels)
    return tuple(with_pinyin([label])[0] for label in labels)


def switch() -> bool:
    """The sidebar's pinyin switch, True when on. Its default is on when the page is in
    English and off in Chinese (called after ``i18n.language_selector``, so a link's
    ``lang`` counts); in links as ``pinyin=false`` / ``pinyin=true`` where it differs from
    that default (``bind="query-params"``; the key is the switch's identity, so turning the
    language over keeps the reader's choice)."""
    return st.sidebar.toggle(t("pinyin_switch"), value=lang() == "en", key=PINYIN_KEY,
                             help=t("pinyin_help"), bind="query-params")


def annotate(trace: DecodeTrace) -> DecodeTrace:
    """``trace`` with its target labels carrying their pinyin when the switch is on (the
    views then show it on every target axis); ``trace`` itself when off."""
    if not is_on():
        return trace
    return dataclasses.replace(trace, tgt_labels=with_pinyin(trace.tgt_labels))


def is_on() -> bool:
    """Whether the pinyin switch is on in this session."""
    return bool(st.session_state.get(PINYIN_KEY))
