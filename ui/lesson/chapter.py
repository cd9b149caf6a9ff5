"""A lesson chapter's record and its text: ``Chapter`` (what a builder returns), ``fill``
(a template filled without doubling a sentence's end punctuation) and ``say``, and the
helpers every builder shares (``ui.lesson.chapters``, ``ui.lesson.one_stack``)."""

from __future__ import annotations

import string
from collections.abc import Mapping
from dataclasses import dataclass, field

import plotly.graph_objects as go

from model.analysis.picks import content_position
from viz.convention import position_number

from ..i18n import STRINGS, lang, t
from ..text import code_span

#: What ends a sentence, in English and Chinese: after a value ending with one of these, a
#: template's own end punctuation is left out.
END_MARKS = ".!?…。！？"
#: The end marks of a Latin script, which a space follows before the next sentence (a
#: Chinese full stop takes none): an English translation in a Chinese template.
SPACED_ENDS = ".!?"
#: What may close a value after its end punctuation (a code span, emphasis, quotes).
CLOSERS = "`*\"'”’」』)）"


def ends_sentence(value: object) -> bool:
    """Whether Markdown ``value`` ends, as a reader sees it, with end punctuation
    (``END_MARKS``), perhaps inside a code span, emphasis or quotes."""
    return str(value).rstrip(CLOSERS).endswith(tuple(END_MARKS))


def _after_end(literal: str, spaced: bool, more: bool) -> str:
    """The template text that follows a value ending a sentence: its end punctuation right
    after the value (after any closing quote) left out; when the value ends with a Latin
    mark (``spaced``) and text (or, ``more``, another value) follows the dropped
    punctuation at once, a space before it ("…brother.B：" reads "…brother. B："), as
    English sets a sentence's end."""
    closing = len(literal) - len(literal.lstrip(CLOSERS))
    rest = literal[closing:].lstrip(END_MARKS)
    dropped = len(rest) < len(literal) - closing
    if spaced and dropped and (not rest[:1].isspace() if rest else more):
        rest = " " + rest
    return literal[:closing] + rest


def fill(template: str, values: Mapping[str, object]) -> str:
    """``template.format(**values)``, except that where a value already ends a sentence
    (``ends_sentence``) the template's end punctuation right after it (after any closing
    quote) is left out (``_after_end``): "{output}。" with 我们为什么工作？ gives
    我们为什么工作？, "{example}." with `I go home.` gives `I go home.`, and "{a}。B：" with
    an English `I go home.` gives `I go home.` B： (either language in either template).

    Raises KeyError for a field ``values`` lacks, as ``str.format`` does."""
    fmt, out, ended = string.Formatter(), [], None
    for literal, name, spec, conversion in fmt.parse(template):
        if ended is not None:
            literal = _after_end(literal, ended, more=name is not None)
        out.append(literal)
        if name is None:
            break
        value = fmt.format_field(fmt.convert_field(values[name], conversion), spec or "")
        out.append(value)
        shown = value.rstrip(CLOSERS)
        ended = shown.endswith(tuple(SPACED_ENDS)) if ends_sentence(value) else None
    return "".join(out)


def say(key: str, **values) -> str:
    """Interface string ``key`` (``ui/strings.toml``) in the session's language, filled by
    ``fill``: for strings that quote a sentence."""
    entry = STRINGS[key]
    return fill(entry.get(lang(), entry["en"]), values)


@dataclass
class Chapter:
    """One chapter's live content.

    Attributes:
        values: placeholder -> Markdown-safe value for the chapter's text, look, question
            and reveal.
        figure: the figure, the thing to look at highlighted (None: the chapter has none).
        options: (id, label) answers to the question; labels are Markdown-safe.
        answer: the id of the right option.
        action: the try-it action's id (``ui.lesson.ACTIONS``), or None.
        variant: which version of the chapter's text applies ("": the main one; e.g.
            "learned" for a model with learned positions): ``lesson.toml`` fields named
            ``FIELD_VARIANT`` replace ``FIELD``.
        why: a string key saying why the chapter does not apply to this model or sentence;
            when set, nothing else is shown.
        sentence: a sentence the try-it action offers to open (``changing_sentence``), or
            None.
        compare: the second sentence the try-it action puts beside ``sentence`` in the
            Side by side view (``open_compare``), or None.
        note: Markdown said before the chapter's text when the chapter shows another
            sentence than the sidebar's, or cannot show its point ("": nothing to say).
    """

    values: dict[str, object] = field(default_factory=dict)
    figure: go.Figure | None = None
    options: list[tuple[str, str]] = field(default_factory=list)
    answer: str = ""
    action: str | None = None
    variant: str = ""
    why: str | None = None
    sentence: str | None = None
    compare: str | None = None
    note: str = ""


def followed(labels) -> int:
    """The token a chapter follows (``content_position``: the longest content word), chosen
    on the labels as the model made them: a pinyin line the page adds under a Chinese
    source token (``ui.pinyin.annotate``) never lengthens it."""
    return content_position([label.partition("\n")[0] for label in labels])


def token_options(labels, keys: list[int]) -> list[tuple[str, str]]:
    """Question options naming tokens by their labels (code spans) and positions as a person
    reads them (from 1, ``viz.convention``); an option's id is the token's 0-based index."""
    return [(str(j), f"{code_span(labels[j])} ({position_number(j)})") for j in keys]


def yes_no(changed: bool) -> tuple[list[tuple[str, str]], str]:
    """The options "stays the same" / "changes" and the right one."""
    return ([("same", t("lesson_same")), ("changed", t("lesson_changed"))],
            "changed" if changed else "same")
