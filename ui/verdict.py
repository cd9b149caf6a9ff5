"""The header's verdict: can a class trust this translation? Each signal of
``model.analysis.verdict`` as one line that names what it points at and what to do: not
English (or, for a Chinese -> English model, not Chinese), likely typos (a button puts the
corrected sentence in the box), words (characters) the model barely saw, a number left out,
nouns none of whose dictionary translations is in the output, for a Chinese source a negation
dropped and a word said twice (``faithful_zh``), words hardly looked at (marked
on the source tokens), and the decoding's own warnings (``ui.confidence``). When several
sentences were typed, it says the model translates one at a time, with a button per sentence
that puts it alone in the sentence box. The checks follow
the model's source language (``source_language``). When the sentence is in the other
language (Chinese typed for an English -> Chinese model, English for a Chinese -> English
one), a button opens the same sentence with a model of the reverse direction
(``models.model_for``). When our model is not confident and the stronger model of its
direction is in the Hugging Face cache (``models.stronger_model``), a button opens the same
sentence with it.
"""

from __future__ import annotations

import streamlit as st

from model import DecodeTrace, Translator
from model.analysis.confidence import LOW_PROB
from model.analysis.faithful_zh import Negated, Repeated
from model.analysis.lexicon import Missing
from model.analysis.verdict import (
    COVERAGE_MIN,
    RARE_BELOW,
    Verdict,
    corrected,
    judge_trace,
)
from model.backends.hf import pair_of

from . import models, state
from .charts import presenting
from .confidence import guessing_lines
from .i18n import lang, t, text_in
from .text import clip, code_span, md_literal

# the script a "not in the source language" sentence is in -> the language it is typed in
TYPED_LANGUAGE = {"han": "zh", "latin": "en"}
MAX_SENTENCE_BUTTONS = 8  # of a pasted paragraph's sentences, the first ones offered alone


def source_language(translator: Translator, trace: DecodeTrace) -> str:
    """What the model reads, as the verdict judges it (``judge``'s ``source_language``): the
    model's own ``ModelInfo.source_language`` (ours: the card's; an OPUS-MT model: its
    name's); else the OPUS-MT pair the picker's id spells (``hf.pair_of``: a cached model's
    folder is a snapshot hash, so its name says nothing); else, as before, ``"en"`` when the
    source language setting starts with ``en`` or the name or the picker's id has ``-en-``;
    else ``""`` (not known)."""
    if translator.info.source_language:
        return translator.info.source_language
    picked = state.read().model or ""
    if language := pair_of(picked)[0]:
        return language
    src = trace.settings.src_lang or ""
    names = f"{translator.name} {picked}".lower()
    return "en" if src.lower().startswith("en") or "-en-" in names else ""


def trace_verdict(translator: Translator, trace: DecodeTrace) -> Verdict:
    """``judge_trace`` of one decoding with the model's training counts, for the language it
    reads (``source_language``)."""
    return judge_trace(trace, translator.info.train_counts, source_language(translator, trace))


def source_line(trace: DecodeTrace, v: Verdict) -> str:
    """The source tokens as Markdown code spans, those of words the decoder hardly looked at
    (``Verdict.left_out``) on an orange background."""
    low = {w for w, _, _ in v.left_out}
    return " ".join(f":orange-background[{code_span(label)}]" if word in low else code_span(label)
                    for label, word in zip(trace.src_labels, trace.src_words, strict=False))


def missing_item(m: Missing, language: str, *, zh: bool = False, quote=code_span) -> str:
    """One word of the verdict's untranslated line in ``language`` ("en" or "zh"): the word
    (as ``quote`` writes it: a code span in the app, ``str`` for plain text) and the
    dictionary's translations, or, for a name the dictionary lacks, the pinyin no character
    reads (an English source) or that the English output does not spell (``zh``: a Chinese
    source); the word alone when the dictionary has no translation fit to show
    (``lexicon.hints``)."""
    word = quote(m.word)  # the user's text: never emphasis
    if m.translations:
        return text_in("verdict_untranslated_item", language, word=word,
                       translations=text_in("word_separator", language).join(m.translations))
    if not m.pinyin:
        return word
    return text_in("verdict_untranslated_name" if zh else "verdict_untranslated_pinyin",
                   language, word=word, pinyin=" ".join(m.pinyin))


def negation_item(n: Negated, language: str, *, markdown: bool = True) -> str:
    """One negation the translation drops, in ``language``: the Chinese from the negator to
    the word it negates and the output's words that write that word without a *not*
    (``不舒服 → comfortable``); with ``markdown`` the Chinese a code span (the user's text) and
    the English in italics, else plain text."""
    english = ", ".join(f"*{md_literal(w)}*" if markdown else w for w in n.english)
    negated = code_span(n.negated) if markdown else n.negated
    return text_in("verdict_negation_item", language, negated=negated, english=english)


def repeated_item(r: Repeated, language: str, *, markdown: bool = True) -> str:
    """One word said twice, in ``language``: the word (in italics with ``markdown``), how
    often one clause of the output writes it and how many words of the sentence translate
    it (*girls* (2 times; the sentence: 1))."""
    word = f"*{md_literal(r.word)}*" if markdown else r.word
    return text_in("verdict_repeated_item", language, word=word, times=r.times, n=r.sources)


def signal_names(v: Verdict, language: str) -> str:
    """The names of the signals that fire (``Verdict.signals``) in ``language``, joined:
    ``not in the translation, maybe left out``."""
    zh = v.source_language == "zh"
    return text_in("word_separator", language).join(
        text_in("signal_rare_chars" if zh and signal == "rare" else f"signal_{signal}", language)
        for signal in v.signals)


FULL_STOPS = ("。", "！", "？")  # Chinese sentence ends: the next sentence follows with no space


def _say(key: str, **fmt) -> None:
    """One verdict line: string ``key``'s headline (what fires, naming the words) and its
    ``key_why`` (what it means, what to do) after it; in Present mode the headline only, the
    explanation in its tooltip, so the box stays short on a projector."""
    head, why = t(key, **fmt), t(f"{key}_why", **fmt)
    if presenting():
        st.markdown(head, help=why)
    else:
        st.markdown(head + ("" if head.endswith(FULL_STOPS) else " ") + why)


def _typo_lines(trace: DecodeTrace, v: Verdict) -> None:
    """The likely typos with their corrections, and a button that puts the corrected
    sentence in the box (nothing when there is no typo)."""
    if not v.typos:
        return
    fixes = t("word_separator").join(f"*{md_literal(a)}* → *{md_literal(b)}*"
                                     for a, b in v.typos)
    _say("verdict_typos", fixes=fixes)
    fixed = corrected(trace.src_text, v.typos)
    st.button(t("verdict_typo_button", sentence=md_literal(clip(fixed, 80))),
              key="use_corrected", on_click=state.set_sentence, args=(fixed,))


def _open_with(name: str, sentence: str) -> None:
    """The switch button's callback: model ``name`` on ``sentence``."""
    state.set_model(name)
    state.set_sentence(sentence)


def switch_button(trace: DecodeTrace, v: Verdict) -> None:
    """When the sentence is in the other language (``Verdict.script``: Chinese characters
    for an English source, Latin letters for a Chinese one), a button that opens the same
    sentence with a model reading that language into the model's source language
    (``models.model_for``: ours first, else a cached OPUS-MT model); nothing when there is
    no such model."""
    typed = TYPED_LANGUAGE.get(v.script or "")
    if typed is None or typed == v.source_language or not v.source_language:
        return
    name = models.model_for(typed, v.source_language)
    if name is None:
        return
    st.button(t(f"verdict_switch_{typed}", name=name), key="open_reverse",
              icon=":material/swap_horiz:", help=t("verdict_switch_help"),
              on_click=_open_with, args=(name, trace.src_text))


def _confident(v: Verdict) -> None:
    """The one caption of a verdict that flags nothing (``Verdict.flagged``): what was
    checked, for the model's source language; in Present mode one line, the whole sentence
    on hover."""
    pct = round(100 * LOW_PROB)
    avg = round(100 * (v.sentence_prob if v.sentence_prob is not None else 1.0))
    if v.typos:
        full = t("confidence_ok_typo", pct=pct, avg=avg)
    else:
        zh = "_zh" if v.source_language == "zh" else ""
        full = (t(f"confidence_ok{zh}", n=RARE_BELOW, pct=pct, avg=avg) if v.counts_known
                else t(f"confidence_ok{zh}_no_counts", pct=pct, avg=avg))
    if presenting():  # one line on a projector; the whole sentence on hover
        st.caption(t("confidence_ok_short", pct=pct, avg=avg), help=full)
    else:
        st.caption(full)


def _sentence_lines(v: Verdict) -> None:
    """When more than one sentence was typed (``Verdict.sentences``): the line that says the
    model translates one at a time, and a button per sentence (the first
    ``MAX_SENTENCE_BUTTONS``) that puts it alone in the sentence box."""
    if not v.sentences:
        return
    _say("verdict_sentences", n=len(v.sentences))
    for k, sentence in enumerate(v.sentences[:MAX_SENTENCE_BUTTONS], start=1):
        st.button(t("verdict_sentence_button", k=k, sentence=md_literal(clip(sentence, 80))),
                  key=f"one_sentence_{k}", icon=":material/arrow_forward:",
                  on_click=state.set_sentence, args=(sentence,))


def _source_lines(trace: DecodeTrace, v: Verdict) -> None:
    """The verdict box's lines on the sentence itself: several sentences typed (a button for
    each), not in the model's language (with the switch button), likely typos, words or
    characters barely seen, numbers missing."""
    zh = v.source_language == "zh"
    _sentence_lines(v)
    if v.script is not None:
        if zh:
            _say("verdict_not_chinese", script=t(f"script_{v.script}"))
        else:
            _say("verdict_not_english", script=t(f"script_{v.script}"))
        switch_button(trace, v)
    _typo_lines(trace, v)
    if v.rare:
        words = t("word_separator").join(
            t("verdict_rare_item", word=f"*{md_literal(w)}*", n=n) for w, n in v.rare)
        _say("verdict_rare_chars" if zh else "verdict_rare", words=words)
    if v.numbers:
        _say("verdict_number_en" if zh else "verdict_number",
             numbers=t("word_separator").join(code_span(n) for n in v.numbers))


def verdict_banner(translator: Translator, trace: DecodeTrace, v: Verdict) -> None:
    """The verdict ``v`` (``trace_verdict``) under the translation: one caption when nothing
    fires (with a likely typo's note, when a typo alone does not flag: ``Verdict.typo_flags``),
    else a box with a line per signal (``Verdict.signals`` order) and the buttons that act on
    them."""
    if not v.flagged:
        _confident(v)
        _typo_lines(trace, v)
        return
    # Present mode: one line naming what fires, the lines behind a click (the projector's
    # first screen is for the attention)
    zh = v.source_language == "zh"
    summary = t("verdict_summary", signals=signal_names(v, lang()))
    box = (st.expander(summary, icon=":material/warning:", key="confidence") if presenting()
           else st.container(border=True, key="confidence"))
    with box:
        _source_lines(trace, v)
        if v.untranslated:
            _say("verdict_untranslated", words=t("word_separator").join(
                missing_item(m, lang(), zh=zh) for m in v.untranslated))
        if v.negation:
            _say("verdict_negation", items=t("word_separator").join(
                negation_item(n, lang()) for n in v.negation))
        if v.repeated:
            _say("verdict_repeated", items=t("word_separator").join(
                repeated_item(r, lang()) for r in v.repeated))
        named = {m.word for m in v.untranslated}  # named once, by the stronger evidence
        if low := [w for _, w, _ in v.left_out if w not in named]:
            _say("verdict_left_out", min=COVERAGE_MIN, words=t("word_separator").join(
                map(code_span, low)))
        guessing_lines(trace, v.confidence)
        if v.unsure:
            _say("verdict_unsure", pct=round(100 * v.sentence_prob),
                 min=round(100 * v.sentence_min))
        if (name := models.stronger_model(translator)) is not None:
            zh_en = models.direction(translator) == ("zh", "en")
            st.button(t("verdict_stronger", name=name), key="open_stronger",
                      icon=":material/upgrade:",
                      help=t("verdict_stronger_help_zh_en" if zh_en else "verdict_stronger_help"),
                      on_click=state.set_model, args=(name,))
