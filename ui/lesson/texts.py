"""The lesson's text as data (``lesson.toml``), read once: the chapters, what a sample shown
to a class may not contain, and the words a chapter takes from the model's languages (the
name of the language it reads and of the one it writes, how their word orders differ), so
that no text assumes English in and Chinese out.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path

from model.backends.records import ModelInfo

from ..i18n import lang

LESSON_FILE = Path(__file__).with_name("lesson.toml")
#: The ``[languages]`` entries for a language the table does not name (or ``""``, a
#: multilingual model's): the generic words, by side.
ANY_LANGUAGE = {"source": "any_source", "target": "any_target"}


@lru_cache(maxsize=1)
def lesson_file() -> dict:
    """``lesson.toml`` as a dict (read once)."""
    return tomllib.loads(LESSON_FILE.read_text(encoding="utf-8"))


def in_session_language(entry: dict[str, str]) -> str:
    """An ``{en = ..., zh = ...}`` entry in the session's language (English where it has
    none)."""
    return entry.get(lang(), entry["en"])


def language_name(code: str, side: str) -> str:
    """How the chapters' texts name language ``code`` (ISO 639-1, as ``ModelInfo`` gives
    it) in the session's language: ``[languages]`` of ``lesson.toml`` ("English", "英文");
    for a language the table lacks, the generic name of ``side`` ("source" or "target":
    "source", "源语言"). Raises KeyError for another ``side``."""
    table = lesson_file()["languages"]
    return in_session_language(table.get(code) or table[ANY_LANGUAGE[side]])


def language_values(info: ModelInfo) -> dict[str, str]:
    """The values ``{source}`` and ``{target}`` of a chapter's text: the names of the
    languages ``info``'s model reads and writes (``language_name``)."""
    return {"source": language_name(info.source_language, "source"),
            "target": language_name(info.target_language, "target")}


def direction_text(table: str, info: ModelInfo) -> str:
    """Entry ``SOURCE-TARGET`` of ``lesson.toml``'s ``[table]`` for ``info``'s languages
    ("en-zh", "zh-en"), else its ``other`` entry, in the session's language."""
    entries = lesson_file()[table]
    key = f"{info.source_language}-{info.target_language}"
    return in_session_language(entries.get(key) or entries["other"])


def blocked_words() -> tuple[str, ...]:
    """What a sample shown to a class may not contain (``blocked_samples`` of
    ``lesson.toml``: offensive characters and words of Chinese, offensive words of
    English; ``is_blocked`` says how each is matched)."""
    return tuple(lesson_file()["blocked_samples"])


def is_blocked(text: str, blocked: Iterable[str]) -> bool:
    """Whether ``text`` contains one of ``blocked``: a blocked entry of Latin letters where
    a word of ``text`` starts with it, in any case ("Shit", "fucking"; never the "ass" of
    "class"), any other entry anywhere (Chinese has no spaces between words)."""
    for word in blocked:
        if word.isascii() and word.isalpha():
            if re.search(rf"\b{re.escape(word)}", text, flags=re.IGNORECASE):
                return True
        elif word in text:
            return True
    return False
