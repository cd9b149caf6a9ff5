"""Markdown-safe text helpers. (The interface text itself, in both languages, is in
``ui.i18n``.)

Streamlit renders Markdown (and ``:emoji:`` / ``$LaTeX$`` directives) in labels and messages,
so nothing a user typed is ever put into them raw: tokens go in code spans, other strings
are backslash-escaped.
"""

from __future__ import annotations

import re

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:&=])")
_LINE_BREAK = re.compile(r"[\r\n\x0b\x0c\x85\u2028\u2029]+")


def md_literal(text: str) -> str:
    """Escape every Markdown-active ASCII character so ``text`` shows literally."""
    return _MD_SPECIAL.sub(r"\\\1", text)


def code_span(token: str) -> str:
    """A Markdown code span showing ``token`` literally, whatever it contains.

    Line breaks become spaces (a code span is one line). The fence is one backtick longer
    than the longest run of backticks inside, so no run can close the span early; a token
    with a backtick is padded with spaces, which CommonMark strips again.
    """
    token = _LINE_BREAK.sub(" ", token)
    longest = max((len(run) for run in re.findall(r"`+", token)), default=0)
    if longest == 0 and token.strip():
        return f"`{token}`"
    fence = "`" * (longest + 1)
    return f"{fence} {token} {fence}"


def clip(text: str, limit: int = 30) -> str:
    """``text`` cut to ``limit`` characters with an ellipsis, so messages stay short."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def token_row(tokens) -> str:
    """Tokens as a row of code spans: ``<s>`` ``我`` ``们``."""
    return " ".join(code_span(t) for t in tokens)
