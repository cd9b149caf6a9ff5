"""Transformer attention, step by step: a Streamlit app around a small pretrained
encoder-decoder Transformer.

    streamlit run app.py

Type an English sentence, watch the model translate it into Chinese one token at a time
(or a Chinese sentence into English, with a zh -> en model), and inspect the positional
encodings, the masks and every head's attention.
The model picker lists the folders of ``pretrained/``, or of ``$ATTENTION_PRETRAINED_DIR``
when that environment variable is set.
This file is the table of contents: the panels live in ``ui/``, the figures in ``viz/``,
the model in ``model/``.
"""

from __future__ import annotations

import logging

import streamlit as st

from ui.warm import warm_up

# First, before any other import: wait for the warm-up (serve.py started it with the server;
# otherwise this first run does it), so that this script never imports the same modules as
# the warm-up's thread at the same time (ui/warm.py says why).
warm_up()

from model import CheckpointError, DecodeTrace, GenerationSettings, InputError, Translator
from model.backends.records import SourceSentence
from model.backends.translator import card_task
from ui import (
    charts,
    controls,
    document,
    gloss,
    i18n,
    lesson,
    link,
    models,
    pinyin,
    state,
    stepper,
    verdict,
)
from ui.cache import (
    decode,
    grammar_translation,
    load_model,
    model_key,
    read_source,
    teacher_force,
    trace_key,
)
from ui.i18n import t
from ui.player import in_browser, take_home
from ui.text import clip, code_span, md_literal
from ui.views import attribution, compare, heads, one_stack, panels, side_by_side, teaching

charts.load_plotly()  # before any figure of this process is built (ui/charts.py says why)
PAGE_CONFIG = {"page_icon": "🔎", "layout": "wide"}  # st.set_page_config's, with the title
# The sentence box's label and help by the model's source language ("" and others: generic).
SENTENCE_STRINGS = {"en": ("sentence", "sentence_help"), "zh": ("sentence_zh", "sentence_help_zh")}
log = logging.getLogger("attention_app")


EXAMPLE_KEY = "example"  # the examples picker (a widget, not view state)


def _use_example() -> None:
    state.set_sentence(st.session_state[EXAMPLE_KEY])


def sidebar() -> tuple[Translator | None, str, tuple, st.delta_generator.DeltaGenerator]:
    """Model picker, examples and the sentence box. Returns (model or None, sentence, the
    model's cache key, the place under the sentence box for its pieces)."""
    st.sidebar.title(t("app_title"))
    choice = models.model_choice()
    if choice is None:
        return None, "", (), st.sidebar.empty()
    name, folder, load_pickle_weights = choice
    key = model_key(folder, load_pickle_weights)
    try:
        translator = load_model(*key)
    except CheckpointError as exc:
        st.sidebar.error(t("model_failed", name=code_span(clip(name)),
                           error=md_literal(clip(str(exc), 240))))
        return None, "", (), st.sidebar.empty()
    sentence = sentence_box(translator)
    pieces = st.sidebar.empty()  # filled once the sentence is read (decode_or_explain)
    side_by_side.sidebar_inputs()
    models.card_caption(translator)
    models.stronger_hint(translator)
    return translator, sentence, key, pieces


def sentence_box(translator: Translator) -> str:
    """The model's own examples (its card's) and the sentence box, labelled with the language
    the model reads ("English sentence", "Chinese sentence": ``SENTENCE_STRINGS``); a first
    visit starts on that language's default sentence. Returns the sentence."""
    language = translator.info.source_language
    state.default_sentence(state.DEFAULT_SENTENCES.get(language, state.DEFAULT_SENTENCE))
    if translator.info.examples:
        st.sidebar.selectbox(t("examples"), translator.info.examples, index=None, key=EXAMPLE_KEY,
                             placeholder=t("examples_placeholder"), on_change=_use_example)
    label, help_key = SENTENCE_STRINGS.get(language, ("sentence_other", "sentence_help"))
    return st.sidebar.text_input(t(label), key=state.SENTENCE_KEY, help=t(help_key),
                                 bind=link.BIND)


def pieces_caption(place, src: SourceSentence) -> None:
    """How a subword model splits the sentence, in ``place``: words apart, a word's pieces
    joined by ·."""
    pieces = [(label, word) for tok, label, word in zip(src.tokens, src.labels, src.words,
                                                        strict=True) if tok in src.pieces]
    split = [" · ".join(clip(x, 20) for x, w in pieces if w == i)
             for i in dict.fromkeys(w for _, w in pieces)]
    place.caption(t("source_pieces", n=len(src.pieces))
                  + " ".join(code_span(piece) for piece in split[:40]))


def decode_or_explain(translator: Translator, sentence: str, settings: GenerationSettings,
                      key: tuple, *, pieces) -> DecodeTrace | None:
    """Read the sentence once (``cache.read_source``), show a subword model's pieces in
    ``pieces``, flag unknown words, and decode; None (with a message) if the sentence
    cannot be translated."""
    try:
        src = read_source(key, sentence, settings.src_lang, settings.task,
                          chat=settings.chat)
    except InputError as exc:
        st.info(t("input_error", error=md_literal(str(exc))))
        return None
    if translator.info.subword:
        pieces_caption(pieces, src)
    longest = translator.info.trained_source_tokens
    if longest is not None and len(src.tokens) > longest:
        st.warning(t("longer_than_trained", n=len(src.tokens), longest=longest))
    unknown = src.unknown_words
    if unknown:
        lines = []
        for word, close in list(zip(unknown, src.suggestions, strict=True))[:5]:  # the first five
            hint = (t("unknown_try", words=t("word_separator").join(map(code_span, close))) if close
                    else t("unknown_none_close"))
            lines.append(t("unknown_line", word=code_span(clip(word, 20)), hint=hint))
        more = t("unknown_more", n=len(unknown) - 5) if len(unknown) > 5 else ""
        if not src.known_words:  # punctuation alone ("zxq blorf .") is nothing to translate
            st.warning(t("unknown_all") + "\n".join(lines) + more)
            return None
        st.warning(t("unknown_some") + "\n".join(lines) + more)
    trace = decode(key, sentence, settings)
    state.decoding_shown(key[0], sentence)  # a new sentence starts at step 1
    return trace


def translation_line(translator: Translator, trace: DecodeTrace) -> None:
    """The translation once, as the header's heading. With pinyin on, the Chinese side
    (``pinyin.chinese_sides``) is shown as words with their pinyin over them and English
    on hover (``ui.gloss``): a Chinese source as a line of its own over the translation
    (which stays plain Markdown), a Chinese translation as the heading itself."""
    source, target = pinyin.chinese_sides(translator.info)
    on = pinyin.is_on()
    if source and on:
        gloss.source_line(trace.src_text, with_pinyin=True)
    if not (target and on and gloss.output_line(trace.output_text, with_pinyin=True)):
        st.markdown(f"### {md_literal(trace.output_text) or t('empty_output')}")


def header(translator: Translator, trace: DecodeTrace, key: tuple) -> None:
    """The translation, the strategy, the source tokens (in Present mode only when a word
    is marked left out), whether the sentence is inside the grammar the model was trained
    on, and whether a class can trust the translation (``ui.verdict``)."""
    translation_line(translator, trace)
    expected = grammar_translation(key, trace.src_text)
    if translator.info.backend == "huggingface":
        grammar = t("grammar_hf")
    elif expected is None and (translator.info.subword or card_task(translator.card) is None):
        grammar = t("grammar_not_checked")  # everyday text, or no grammar: nothing to flag
    elif expected is None:
        grammar = t("grammar_outside")
    elif expected == trace.output_text:
        grammar = t("grammar_match")
    else:
        grammar = t("grammar_differs", expected=md_literal(expected))
    decoded = t("decoded_with", how=controls.describe(trace.settings), grammar=grammar)
    place = st  # Present mode: the take-home page's button beside the line, not under it
    if charts.presenting():
        line, place = st.columns([5, 1], vertical_alignment="center")
        line.caption(decoded)
    else:
        st.caption(decoded)
    judged = verdict.trace_verdict(translator, trace)
    language = i18n.lang()  # the take-home page: built only when clicked, no rerun
    place.download_button(t("home_download"),
                          lambda: take_home.page_html(trace, translator.name, language,
                                                      info=translator.info, verdict=judged),
                          file_name=take_home.file_name(trace), mime="text/html",
                          key="take_home", on_click="ignore", help=t("home_download_help"),
                          icon=":material/download:")
    if judged.left_out or not charts.presenting():  # Present mode: the axes show the tokens
        st.caption(t("source_tokens") + verdict.source_line(trace, judged))
    verdict.verdict_banner(translator, trace, judged)


def views(translator: Translator, trace: DecodeTrace, k: int, key: tuple) -> None:
    """The view picker (a decoder-only model's own views: ``ui.views.one_stack``), then the
    chosen view; only its figures are built."""
    grouped = panels.group_switch(translator)
    one = translator.info.architecture == "decoder-only"
    view = panels.view_picker(translator.info.architecture)

    def decode_with(mode: str) -> DecodeTrace:  # the positional-encoding experiment
        return decode(key, trace.src_text, trace.settings.replace(positional=mode))

    draw = {
        "positional": lambda: panels.positional_view(translator, trace, k, decode_with),
        "masks": lambda: (one_stack.masks_view(translator, trace, k, key) if one
                          else panels.masks_view(translator, trace, k, key)),
        "encoder": lambda: panels.encoder_view(trace, grouped),
        "decoder": lambda: panels.decoder_view(trace, k),
        "cross": lambda: panels.cross_view(trace, k, grouped),
        "inside": lambda: teaching.inside_head_view(translator, trace, k, key),
        "heads": lambda: heads.heads_view(translator, trace, k, key),
        "attribution": lambda: attribution.attribution_view(translator, trace, k, key),
        "compare": lambda: side_by_side.compare_view(translator, trace, key),
        "sequence": lambda: one_stack.sequence_view(translator, trace, k),
        "to_prompt": lambda: one_stack.to_prompt_view(trace, k, grouped),
        "prompt": lambda: one_stack.prompt_view(trace, grouped),
        "continuation": lambda: one_stack.continuation_view(trace, k),
    }
    with st.container(key=panels.VIEW_PANEL):
        draw[view]()


def main() -> None:
    """Lay out the page: sidebar, header, beams, the step-through panel, the reference."""
    notice = st.container()  # the top of the page: what a link could not use
    translator, sentence, key, pieces = sidebar()
    if translator is None:
        st.info(t("choose_model"))
        return
    # the view, step, layer, head, lesson... of the link opened
    link.apply_link(translator, chapters=lesson.chapter_count())
    one_stack_model = translator.info.architecture == "decoder-only"
    if one_stack_model:  # what opens encoder-decoders only, for now, said once
        st.info(t("one_stack_note"))
    mode = "explore" if one_stack_model else lesson.mode_switch()
    settings = controls.strategy_sidebar({**models.task_picker(translator),
                                          **models.language_pickers(translator),
                                          **models.chat_switch(translator)})
    link.remember_settings(settings)
    document.set_up(mode)  # the page's language; a clicker's keys, with nothing focused
    trace = decode_or_explain(translator, sentence, settings, key, pieces=pieces)
    if trace is None:
        return
    header(translator, trace, key)
    if mode == "lesson":  # the chapters on this sentence instead of the free views
        lesson.lesson_view(translator, pinyin.annotate(trace, translator.info), key)
        link.write_link()
        link.report_dropped(notice)
        return
    shown = trace
    if trace.beam is not None:
        pick = compare.beam_view(trace)
        if pick:  # another hypothesis: its maps, by forcing its tokens
            hyp = trace.beam.hypotheses[pick].tokens
            only = GenerationSettings(src_lang=settings.src_lang, tgt_lang=settings.tgt_lang,
                                      task=settings.task, max_new_tokens=len(hyp))
            shown = decode(key, sentence, only, prefix=hyp)

    def branch_decode(prefix: tuple[str, ...]) -> DecodeTrace:
        return decode(key, sentence, settings, prefix=prefix)

    def body(tr: DecodeTrace, k: int) -> None:
        compare.branch_controls(tr, k, target_language=translator.info.target_language)
        compare.branch_view(tr, branch_decode)
        views(translator, tr, k, key)

    charts.image_format_picker()
    if in_browser.switch():  # the player steps in the page; the server hears its step later
        k = stepper.current_step(len(shown.steps))
        in_browser.player(shown, trace_key(key, shown), translator.name, i18n.lang(), k=k,
                          info=translator.info)
        link.write_link()
    else:
        stepper.step_through(pinyin.annotate(shown, translator.info), body)
    compare.reference_view(shown, lambda ref: teacher_force(key, sentence, ref, settings),
                           target_language=translator.info.target_language)
    st.caption(t("link_hint"))  # the step-through fragment keeps the link current
    link.report_dropped(notice)


title = t("page_title")  # the language of the last run (English on a first load)
st.set_page_config(page_title=title, **PAGE_CONFIG)
try:
    link.remember_link()  # the query parameters this session was opened with
    i18n.language_selector()  # first in the sidebar; everything below follows it
    pinyin.switch()
    charts.present_switch()
    if t("page_title") != title:
        st.set_page_config(page_title=t("page_title"))
    main()
except Exception:  # a user never sees a traceback; the log keeps it for us
    log.exception("unexpected error")
    st.error(t("page_error"))
