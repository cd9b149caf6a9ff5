"""Minimal pairs: two sentences that differ in one content word, which the model translates
differently and right. The lesson's chapter 10 (``ui.lesson.chapters.minimal_pair``) and the
Side by side view's example (``ui.views.side_by_side``) take the same pair, the first of
``minimal_pairs.tsv`` in the language the model reads that qualifies (``pair_that_parts``),
so what the view opens is what the chapter teaches. Nothing here assumes which languages the
model reads and writes: a Chinese source is compared in jieba's words (``DecodeTrace.src_words``).

Every decoding goes through ``ui.cache``, so a search costs its decodings once per model.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from model import DecodeTrace, GenerationSettings, InputError, Translator
from model.analysis.compare import first_difference
from model.analysis.picks import is_content
from model.analysis.words import group_labels
from model.backends.translator import card_task

from . import cache
from .verdict import trace_verdict

PAIRS_FILE = Path(__file__).with_name("minimal_pairs.tsv")
#: Whose pairs a model gets when its source language is not known ("": a multilingual model):
#: English's, the language the app's input box expects by default.
DEFAULT_PAIR_LANGUAGE = "en"


def minimal_pairs(language: str = DEFAULT_PAIR_LANGUAGE) -> list[tuple[str, str]]:
    """The candidate pairs in source language ``language`` (an ISO 639-1 code, the first
    column of ``minimal_pairs.tsv``), in order; [] when it lists none."""
    lines = PAIRS_FILE.read_text(encoding="utf-8").splitlines()
    rows = [line.split("\t") for line in lines if line and not line.startswith("#")]
    return [(a, b) for code, a, b in rows if code == language]


def model_pairs(translator: Translator) -> list[tuple[str, str]]:
    """The pairs in the language ``translator`` reads (``minimal_pairs``;
    ``DEFAULT_PAIR_LANGUAGE``'s when its source language is not known)."""
    return minimal_pairs(translator.info.source_language or DEFAULT_PAIR_LANGUAGE)


def source_words(trace: DecodeTrace) -> list[str]:
    """``trace``'s source as words: its labels joined by ``trace.src_words`` (a word's
    subword pieces, or the characters of a Chinese word jieba cuts: 哥 + 哥 -> 哥哥)."""
    return group_labels(trace.src_labels, trace.src_words)


def word_text(word: str) -> str:
    """A word of ``source_words`` without its second line (the pinyin the switch adds to a
    Chinese source: ``"哥哥\ngē ge"`` -> ``"哥哥"``)."""
    return word.partition("\n")[0]


def changed_word(a: DecodeTrace, b: DecodeTrace) -> int | None:
    """The index of the one source word in which ``b`` differs from ``a`` (``source_words``,
    compared by their text: ``word_text``, never by a reading, which may differ with the
    context), when the two have as many words and differ in exactly one, a content word on
    both sides; else None."""
    wa, wb = ([word_text(w) for w in source_words(tr)] for tr in (a, b))
    if len(wa) != len(wb):
        return None
    differ = [k for k, (x, y) in enumerate(zip(wa, wb, strict=True)) if x != y]
    if len(differ) != 1 or not (is_content(wa[differ[0]]) and is_content(wb[differ[0]])):
        return None
    return differ[0]


def checks_grammar(translator: Translator) -> bool:
    """Whether the app checks ``translator``'s translations against a synthetic grammar:
    one of our word-level models whose card names the grammar it was trained on (not a
    subword, Chinese-reading or Hugging Face model, whose card names none or which reads
    more than the grammar)."""
    info = translator.info
    return (info.backend != "huggingface" and not info.subword
            and card_task(translator.card) is not None)


def translated_right(translator: Translator, key: tuple, trace: DecodeTrace) -> bool:
    """Whether the app's own checks take ``trace``'s translation by ``translator`` (cache key
    ``key``) for right: the header's verdict (``ui.verdict.trace_verdict``, the one the page
    shows) flags nothing, and, for a model of the synthetic grammar (``checks_grammar``),
    the sentence is inside the grammar and the output is the grammar's own translation
    (the header's check)."""
    if trace_verdict(translator, trace).flagged:
        return False
    if not checks_grammar(translator):
        return True
    return cache.grammar_translation(key, trace.src_text) == trace.output_text


def pair_traces(key: tuple, pair: tuple[str, str], settings: GenerationSettings
                ) -> tuple[DecodeTrace, DecodeTrace] | None:
    """Both sentences of ``pair`` decoded greedily by the model of cache key ``key``, in the
    languages and task of ``settings`` (the sidebar's; its decoding strategy is not used),
    or None when the model cannot read one (``InputError``) or does not know a word of it."""
    greedy = GenerationSettings(src_lang=settings.src_lang, tgt_lang=settings.tgt_lang,
                                task=settings.task)
    try:
        ta, tb = (cache.decode(key, x, greedy) for x in pair)
    except InputError:
        return None
    return None if ta.unknown_words or tb.unknown_words else (ta, tb)


def pair_parts(ta: DecodeTrace, tb: DecodeTrace) -> bool:
    """Whether a pair's translations differ and its sources differ in one content word at
    the same place (``changed_word``), so their words can be set side by side."""
    return ta.output_text != tb.output_text and changed_word(ta, tb) is not None


@dataclass(frozen=True)
class MinimalPair:
    """The pair ``pair_that_parts`` takes.

    Attributes:
        a, b: the greedy decodings of sentence A and sentence B (``pair_traces``).
        word: the index of the changed word in ``source_words`` of each (``changed_word``).
        step: the 0-based index of the first generated token where the translations differ
            (``first_difference`` of the token ids, never of labels); the step a person
            reads is ``viz.convention.step_number(step)``.
        passed_over: why the list's first pair was not taken: "unknown" (the model cannot
            read it), "wrong" (a translation of it is not right), or "" (it was taken, or
            translated the same).
    """

    a: DecodeTrace
    b: DecodeTrace
    word: int
    step: int
    passed_over: str


def pair_that_parts(translator: Translator, key: tuple, settings: GenerationSettings
                    ) -> MinimalPair | None:
    """The first candidate pair in the language ``translator`` reads (``model_pairs``) that
    it (cache key ``key``, the languages of ``settings``) reads without unknown words,
    translates differently (``pair_parts``) and right on both sides (``translated_right``);
    None when no pair qualifies (or the list has none in that language). Each try costs two
    cached greedy decodings (``pair_traces``) and the verdict on each."""
    passed_over = ""
    for n, pair in enumerate(model_pairs(translator)):
        traces = pair_traces(key, pair, settings)
        right = traces is not None and all(translated_right(translator, key, tr)
                                           for tr in traces)
        if n == 0:
            passed_over = "unknown" if traces is None else "" if right else "wrong"
        if right and pair_parts(*traces):
            ta, tb = traces
            step = first_difference([s.token_id for s in ta.steps],  # ids, not labels
                                    [s.token_id for s in tb.steps])
            return MinimalPair(ta, tb, changed_word(ta, tb), step, passed_over)
    return None
