"""The minimal pair's checks, computed again from the model for the tests of the lesson's
chapter 10 (``tests/test_chapters.py``) and of the Side by side view's pair
(``tests/test_directions.py``): whether the app's own checks take a translation for right,
a source's words, and whether a pair qualifies (translated right, and parted: different
translations of two sources that differ in one content word at the same place), which pair
is the one to take, and what the Side by side view must say of it. Nothing here calls
``ui.pairs`` but for its list of pairs (``minimal_pairs``, the data file read): the rest is
what that module is checked against."""

from __future__ import annotations

from collections.abc import Callable

from model import DecodeTrace, Translator
from model.analysis.picks import is_content
from model.analysis.verdict import judge_trace
from model.tasks import TASKS
from ui.i18n import STRINGS
from ui.pairs import minimal_pairs
from ui.text import code_span


def right_by_the_apps_checks(model: Translator, trace: DecodeTrace) -> bool:
    """The header's checks, computed again: the verdict (for the language the model reads)
    flags nothing, and a model of the synthetic grammar (a word-level model whose card names
    the grammar) writes its grammar's translation."""
    if judge_trace(trace, model.info.train_counts, model.info.source_language).flagged:
        return False
    grammar = (not model.info.subword
               and model.card.get("grammar", model.card.get("task")) in TASKS)
    return not grammar or model.grammar_translation(trace.src_text) == trace.output_text


def words_of(trace) -> list[str]:
    """The source's words, computed again: labels joined while their word id repeats."""
    out: list[str] = []
    for k, (label, word) in enumerate(zip(trace.src_labels, trace.src_words, strict=True)):
        if k and word == trace.src_words[k - 1]:
            out[-1] += label
        else:
            out.append(label)
    return out


def judged(model: Translator, a: DecodeTrace, b: DecodeTrace) -> tuple[bool, bool]:
    """Whether ``model`` translates a pair right (its greedy decodings ``a`` and ``b``: no
    unknown word, both right by the app's checks), and whether it also parts it: different
    translations of two sources that differ in one content word at the same place."""
    right = not (a.unknown_words or b.unknown_words) and all(
        right_by_the_apps_checks(model, tr) for tr in (a, b))
    wa, wb = words_of(a), words_of(b)
    differ = [k for k in range(len(wb)) if len(wa) == len(wb) and wa[k] != wb[k]]
    one = len(wa) == len(wb) and len(differ) == 1 and all(
        is_content(w[differ[0]]) for w in (wa, wb))
    return right, right and one and a.output_text != b.output_text


def first_pair(model: Translator, decode: Callable[[str], DecodeTrace]
               ) -> tuple[str, str] | None:
    """The pair the lesson's chapter 10 and the Side by side view must take, found again:
    the first of ``minimal_pairs.tsv``'s pairs in the language ``model`` reads (English's
    when not known) that it translates right and parts (``judged``), each sentence decoded
    greedily by ``decode``; None when none does."""
    for pair in minimal_pairs(model.info.source_language or "en"):
        if judged(model, *(decode(x) for x in pair))[1]:
            return pair
    return None


def where_they_part(a: DecodeTrace, b: DecodeTrace, lang: str) -> str:
    """What the Side by side view must say of greedy decodings ``a`` and ``b`` (no pinyin) of
    a minimal pair, in interface language ``lang``, computed again: the one word B changes
    (``words_of``) and the step where the translations part (by token ids, counted from 1),
    with what each writes there."""
    wa, wb = words_of(a), words_of(b)
    (j,) = [k for k in range(len(wa)) if wa[k] != wb[k]]
    ids_a, ids_b = a.tgt_ids[1:].tolist(), b.tgt_ids[1:].tolist()
    i = next(k for k in range(min(len(ids_a), len(ids_b)) + 1)
             if k == min(len(ids_a), len(ids_b)) or ids_a[k] != ids_b[k])
    wrote = [code_span(tr.tgt_labels[1 + i]) if i < len(ids) else STRINGS["compare_ended"][lang]
             for tr, ids in ((a, ids_a), (b, ids_b))]
    word = STRINGS["compare_changed_word"][lang].format(a=code_span(wa[j]), b=code_span(wb[j]))
    part = STRINGS["compare_first_diff" if i else "compare_first_diff_start"][lang].format(
        k=i, step=i + 1, a=wrote[0], b=wrote[1])
    return STRINGS["compare_word_then_step"][lang].format(word=word, step=part)
