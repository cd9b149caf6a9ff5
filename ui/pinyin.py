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
import json
import os
import re
from collections.abc import Sequence

# pypinyin builds its phrase dictionary when first imported, from one json.loads of its
# 2 MB file: about 40 MB of objects that stay resident after the parse. Told not to (for
# this import only: child processes get the environment as it was), it starts empty and
# ``phrase_readings`` gives it the same entries, read one at a time.
_TOLD = {k: "1" for k in ("PYPINYIN_NO_PHRASES", "PYPINYIN_NO_DICT_COPY") if k not in os.environ}
os.environ.update(_TOLD)  # NO_DICT_COPY: its dictionaries, not copies of them
try:
    import pypinyin
    from pypinyin import Style, load_phrases_dict, pinyin
    from pypinyin.constants import PHRASES_DICT
finally:
    for _k in _TOLD:
        del os.environ[_k]

import streamlit as st  # noqa: E402

from model import DecodeTrace  # noqa: E402

from .i18n import lang, t  # noqa: E402

PINYIN_KEY = "pinyin"
PHRASES_FILE = os.path.join(os.path.dirname(pypinyin.__file__), "phrases_dict.json")
_ENTRY = re.compile(r'("(?:[^"\\]|\\.)*")\s*:\s*(\[(?:\s*\[[^\]]*\]\s*,?)*\s*\])')


def phrase_readings(path: str = PHRASES_FILE) -> dict[str, list[list[str]]]:
    """pypinyin's phrase dictionary (``{"为什么": [["wèi"], ["shén"], ["me"]], ...}``, its
    ``phrases_dict.json``), parsed one entry at a time so that no whole-file object tree
    is built and left behind; equal lists of readings are one shared list (pypinyin
    deep-copies what it looks up). Raises ``OSError`` if the file cannot be read and
    ``json.JSONDecodeError`` on a malformed entry."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    shared: dict[tuple[str, ...], list[str]] = {}
    return {json.loads(m[1]): [shared.setdefault(tuple(r), r) for r in json.loads(m[2])]
            for m in _ENTRY.finditer(text)}


if not PHRASES_DICT:  # pypinyin was imported here first, without its phrases
    load_phrases_dict(phrase_readings())


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
