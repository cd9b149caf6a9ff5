"""Pinyin under Chinese tokens, for readers who don't read Chinese (pypinyin, MIT licence).

Each token label of the Chinese side of the model (``chinese_sides``: the source of a zh -> en
model, the target of an en -> zh one) gets its pinyin as a second line (``"们\\nmen"``): the
``viz`` token axes draw it under the token on an x axis and beside it on a y axis
(``viz.axes.token_axis``); the header shows that side's sentence as words with their pinyin
over them and their English gloss on hover (``ui.gloss``). The whole output is cut into words as
a Chinese reader splits them, by the app's one segmentation (``segment``:
``model.core.zh_segment``, jieba with a classroom user dictionary), and each word is read as
CC-CEDICT reads it, its neutral tones unmarked (妈妈 -> mā ma, 告诉 -> gào su), the particles
的 / 地 / 得 as ``de`` where they are particles (``zh_readings.cedict_reading``); a word CC-CEDICT
does not list is read as pypinyin reads that word alone, with its phrases, so that a character
with several readings is read in its own word (我们 都 会 -> dōu, not the dū of 都会 "city", a
phrase across two words).
The sidebar switch (``PINYIN_KEY``, ``?pinyin=false`` in a link) is on by default in either
interface language: a reader of the English page may not read Chinese, and a class using the
Chinese page may be learning it.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

# pypinyin builds its phrase dictionary when first imported, from one json.loads of its
# 2 MB file, and a set of every prefix of every phrase for its segmenter: about 40 MB of
# objects (20 MB read entry by entry). Told not to (for this import only: child processes
# get the environment as it was), it starts empty and reads single characters; its phrases
# are kept here as one packed text (``phrase_map``, 2 MB) and found by the same segmentation.
_TOLD = {k: "1" for k in ("PYPINYIN_NO_PHRASES", "PYPINYIN_NO_DICT_COPY") if k not in os.environ}
os.environ.update(_TOLD)  # NO_DICT_COPY: its dictionaries, not copies of them
try:
    import pypinyin
    from pypinyin import Style, pinyin
    from pypinyin.constants import RE_HANS
    from pypinyin.contrib.tone_convert import to_tone
finally:
    for _k in _TOLD:
        del os.environ[_k]

import streamlit as st  # noqa: E402

from model import DecodeTrace  # noqa: E402
from model.analysis import zh_readings  # noqa: E402
from model.backends.records import ModelInfo  # noqa: E402
from model.core import zh_segment  # noqa: E402
from model.core.packed import PackedMap, lines, once, read_gz, to_gz  # noqa: E402

from .i18n import t  # noqa: E402

PINYIN_KEY = "pinyin"
PHRASES_FILE = os.path.join(os.path.dirname(pypinyin.__file__), "phrases_dict.json")
PHRASES_INDEX = Path(__file__).with_name("pinyin_phrases.tsv.gz")  # python -m ui.pinyin
_ENTRY = re.compile(r'("(?:[^"\\]|\\.)*")\s*:\s*(\[(?:\s*\[[^\]]*\]\s*,?)*\s*\])')


def phrase_lines(path: str = PHRASES_FILE) -> str:
    """pypinyin's phrase dictionary (its ``phrases_dict.json``: ``{"为什么": [["wèi"],
    ["shén"], ["me"]], ...}``) as ``packed.lines`` text: each phrase, a tab, the first reading
    of each of its characters separated by spaces (``"wèi shén me"``: what pypinyin reads
    without heteronyms). Parsed one entry at a time, so that no whole-file object tree is
    built. Raises ``OSError`` if the file cannot be read, ``json.JSONDecodeError`` on a
    malformed entry and ``ValueError`` on a repeated phrase."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    return lines((json.loads(m[1]), " ".join(r[0] for r in json.loads(m[2])))
                 for m in _ENTRY.finditer(text))


@once
def phrase_map(path: Path = PHRASES_INDEX) -> PackedMap[str]:
    """The phrases as a ``PackedMap`` from each phrase to its reading, read once per process
    from the shipped index ``PHRASES_INDEX`` (``phrase_lines`` of the pinned pypinyin's file,
    gzip'd; ``python -m ui.pinyin`` writes it, tests/test_pinyin.py checks that it equals a
    fresh build): 0.03 s where parsing pypinyin's JSON took 0.6 s at every server start.
    Raises ``OSError`` if the file cannot be read, ``ValueError`` if it is no packed text."""
    return PackedMap(read_gz(path))


def _words(run: str, phrases: PackedMap[str]) -> Iterator[str]:
    """``run`` (Chinese characters) cut into pypinyin's phrases by its own rule (forward
    maximum matching, ``pypinyin.seg.mmseg.Seg.cut`` with ``no_non_phrases``): from each
    position the longest phrase whose every prefix begins some phrase, else one character;
    a rest of the run that only begins phrases comes out one character at a time."""
    while run:
        longest = 0
        for end in range(1, len(run) + 1):
            if not phrases.has_prefix(run[:end]):
                break
            if run[:end] in phrases:
                longest = end
        else:
            if not longest:
                yield from run
                return
        longest = longest or 1
        yield run[:longest]
        run = run[longest:]


def segmenter() -> Callable[[str], list[str]]:
    """The app's word segmentation (``zh_segment.cut``: jieba, as ``rjieba`` gives it, with the
    classroom user dictionary and CC-CEDICT's corrections), loaded once per process: a
    function from a run of Chinese characters to its words as a Chinese reader splits them
    (``我们都会游泳`` -> ``我们 都 会 游泳``, not pypinyin's longest phrases: ``都会``, "city").
    About 33 MB resident, a quarter of a second (``ui.warm.warm_up`` loads it before the first
    visit)."""
    zh_segment.jieba()
    return zh_segment.cut


def segment(text: str) -> list[str]:
    """``text`` as words (``zh_segment.segment``): each run of Chinese characters cut by
    ``segmenter``, every run of other characters one piece. Lossless: the pieces joined give
    ``text``; ``[]`` for ``""``."""
    return zh_segment.segment(text)


def word_syllables(word: str) -> list[str]:
    """One reading per character of ``word`` (a word of ``segment``), as pypinyin reads the
    word alone with its phrases (``pinyin(word, style=Style.TONE)``): its longest phrases
    (``_words``) read from ``phrase_map``, any other character by pypinyin; "" for a
    character that is not Chinese."""
    if not RE_HANS.match(word):
        return [""] * len(word)
    phrases, out = phrase_map(), []
    for part in _words(word, phrases):
        if part in phrases:
            out.extend(phrases[part].split(" "))
        else:
            out.extend(r[0] if r else "" for r in pinyin(
                part, style=Style.TONE, errors=lambda run: [[""] for _ in run]))
    return out


def _syllables(text: str) -> list[str]:
    """One reading per character of ``text`` ("" for a character that is not Chinese):
    ``text`` cut into words as a Chinese reader splits them (``zh_segment.segment_tagged``),
    each word read as CC-CEDICT reads it (or its listed parts), its neutral tone unmarked, and
    的 / 地 / 得 as the words around them show (``zh_readings.cedict_reading``: 妈妈 -> mā ma,
    跑得快 -> de), any other character as pypinyin reads its word alone (``word_syllables``:
    我们都会 -> dōu, not the 都会 "city" of pypinyin's segmentation)."""
    words = zh_segment.segment_tagged(text)
    out: list[str] = []
    for i, (word, _) in enumerate(words):
        numbered = zh_readings.cedict_reading(words, i)
        alone = word_syllables(word) if None in numbered else numbered
        out.extend(to_tone(s) if s else alone[k] for k, s in enumerate(numbered))
    return out


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
    """The sidebar's pinyin switch, True when on. On by default in either interface
    language (README's quick starts); in links as ``pinyin=false`` where it is turned off
    (``bind="query-params"``; ``pinyin=true`` is the default and opens it on; the key is
    the switch's identity, so turning the language over keeps the reader's choice)."""
    return st.sidebar.toggle(t("pinyin_switch"), value=True, key=PINYIN_KEY,
                             help=t("pinyin_help"), bind="query-params")


def chinese_sides(info: ModelInfo | None) -> tuple[bool, bool]:
    """(source, target): whether pinyin goes under each side's tokens, from the model's
    languages (``ModelInfo.source_language`` / ``target_language``): the source when the
    model reads Chinese (``"zh"``), the target when it writes Chinese or its target language
    is not known (``""``: a multilingual model; only its labels with Chinese characters get
    a reading). A decoder-only model of unknown languages (GPT-2, Llama, Qwen: a prompt in
    any language) gets readings on its prompt's Chinese labels too. A side known to be
    another language gets none (Japanese kanji are not read as Mandarin). ``info`` None:
    our models' default, en -> zh. Raises nothing."""
    if info is None:
        return False, True
    any_prompt = info.architecture == "decoder-only" and info.source_language == ""
    return info.source_language == "zh" or any_prompt, info.target_language in ("zh", "")


def side_readings(trace: DecodeTrace, sides: tuple[bool, bool]
                  ) -> tuple[list[str] | None, list[str] | None]:
    """The pinyin of the source labels (S,) and of the target labels (T + 1,) for the sides
    ``chinese_sides`` marks (``readings``: "" for a label without Chinese), None for the
    other side: what the trace document carries (``src_pinyin``, ``tgt_pinyin``)."""
    src = readings(trace.src_labels) if sides[0] else None
    tgt = readings(trace.tgt_labels) if sides[1] else None
    return src, tgt


def annotate(trace: DecodeTrace, info: ModelInfo | None) -> DecodeTrace:
    """``trace`` with the labels of its Chinese side (``chinese_sides(info)``: ``src_labels``
    of a zh -> en model, ``tgt_labels`` of an en -> zh one) carrying their pinyin when the
    switch is on (the views then show it on every axis of that side); ``trace`` itself
    when off. ``info``: the model's ``ModelInfo`` (None: en -> zh). Raises nothing."""
    if not is_on():
        return trace
    source, target = chinese_sides(info)
    changes = {}
    if source:
        changes["src_labels"] = with_pinyin(trace.src_labels)
    if target:
        changes["tgt_labels"] = with_pinyin(trace.tgt_labels)
    return dataclasses.replace(trace, **changes) if changes else trace


def is_on() -> bool:
    """Whether the pinyin switch is on in this session."""
    return bool(st.session_state.get(PINYIN_KEY))


if __name__ == "__main__":
    PHRASES_INDEX.write_bytes(to_gz(phrase_lines()))
    print("wrote", PHRASES_INDEX)
