"""Lesson mode: the Transformer taught chapter by chapter on the live model and the
sidebar's sentence, the seeds' path (``ui/lesson/lesson.toml``, read by ``ui.lesson.texts``;
the chapters' live content: ``ui.lesson.chapters``, what they point at: ``ui.lesson.picks``),
for a model of either direction (English -> Chinese, Chinese -> English).

A chapter page: its text, a question the learner answers first (predict, then reveal),
then where to look and the figure with that thing highlighted, then a try-it action.
Navigation: previous / next, a chapter list and a progress bar. State (ids only): the
view state's mode ("explore" or "lesson") and chapter (1-based, as in a link's
``?lesson=N``; ``ui.state``), and ``lesson_turn_<id>`` (how many times "another head" or
"another word" was pressed).
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from model import DecodeTrace, Translator

from .. import state as view_state
from ..charts import chart
from ..i18n import labels, lang, t
from ..text import md_literal, token_row
from .chapter import Chapter, fill
from .chapters import (
    BUILDERS,
    SAMPLE_SEEDS,
    SAMPLE_TEMPERATURES,
    SAMPLES,
    Live,
    number_text,
    sample_values,
)
from .one_stack import DECODER_ONLY
from .picks import POSITION_MODES, longer_example, position_outputs
from .texts import blocked_words, is_blocked, lesson_file

PICK_KEY = "lesson_pick"  # the chapter list (a widget whose state is dropped in Explore)
MODES = view_state.MODES  # explore, lesson
TEXT_FIELDS = ("title", "text", "question", "reveal", "look", "try")
#: Which try-it actions have a button and the string key of its label (``try_label``).
TRY_LABELS = {"longer_sentence": "lesson_try_longer", "next_head": "lesson_try_next_head",
              "next_word": "lesson_try_next_word",
              "changing_sentence": "lesson_try_changing_sentence",
              "open_compare": "lesson_try_open_compare", "open_heads": "lesson_try_open_heads",
              "open_masks": "lesson_try_open_masks",
              "open_positional": "lesson_try_open_positional",
              "open_attribution": "lesson_try_open_attribution",
              "positions_off": "lesson_try_positions", "sample": "lesson_try_sample",
              "open_one_stack": "lesson_try_open_one_stack"}


def chapters() -> tuple[dict, ...]:
    """The chapters of ``lesson.toml``, in order."""
    return tuple(lesson_file()["chapters"])


def clean_samples(draw: Callable[[int], str], blocked: tuple[str, ...], n: int = SAMPLES,
                  seeds: int = SAMPLE_SEEDS) -> list[str]:
    """Up to ``n`` samples ``draw(seed)`` for seeds 0, 1, … (at most ``seeds`` of them),
    skipping any that contains a ``blocked`` string (``texts.is_blocked``: an English word
    where a word starts, Chinese anywhere); fewer when too many are blocked."""
    out = []
    for seed in range(seeds):
        text = draw(seed)
        if not is_blocked(text, blocked):
            out.append(text)
            if len(out) == n:
                break
    return out


def chapter_count() -> int:
    """How many chapters the lesson has (a link's ``?lesson=N`` takes 1..this)."""
    return len(chapters())


def field_text(chapter: dict, name: str, variant: str = "") -> str:
    """A chapter's text field in the session's language: ``NAME_VARIANT`` when the
    chapter has one for ``variant``, else ``NAME`` (English where Chinese is missing)."""
    entry = chapter.get(f"{name}_{variant}", chapter[name]) if variant else chapter[name]
    return entry.get(lang(), entry["en"])


def chapter_text(chapter: dict, name: str, made: Chapter) -> str:
    """A chapter's text field as shown: ``field_text`` of ``made``'s variant filled with its
    values by ``ui.lesson.chapter.fill`` (a quoted sentence's end punctuation never doubled)."""
    return fill(field_text(chapter, name, made.variant), made.values)


def try_label(made: Chapter) -> str | None:
    """The label of ``made``'s try-it button in the session's language, or None when it has
    none; chapter 8's names the samples and temperatures ``samples`` uses."""
    key = TRY_LABELS.get(made.action or "")
    return None if key is None else t(key, **sample_values()) if made.action == "sample" else t(key)


def samples(live: Live) -> list[tuple[float, list[str]]]:
    """Chapter 8's samples: for each of ``SAMPLE_TEMPERATURES``, the temperature its
    decodings were run at (their settings') and up to ``SAMPLES`` clean outputs
    (``clean_samples``; "—" for an empty one)."""
    shown = []
    for temperature in SAMPLE_TEMPERATURES:
        used: set[float] = set()

        def draw(seed: int, temp: float = temperature, used: set = used) -> str:
            trace = live.decode(num_beams=1, do_sample=True, temperature=temp, seed=seed)
            used.add(trace.settings.temperature)
            return trace.output_text or "—"

        outs = clean_samples(draw, blocked_words())
        shown.append((used.pop() if len(used) == 1 else temperature, outs))
    return shown


def mode_switch() -> str:
    """The Explore / Lesson switch at the top of the page; returns the mode's id."""
    return st.radio(t("mode_label"), MODES, key=view_state.MODE_KEY, horizontal=True,
                    format_func=labels(MODES, lambda m: t(f"mode_{m}")),
                    label_visibility="collapsed")


def _go(number: int) -> Callable[[], None]:
    return lambda: view_state.set_chapter(number)


def _open_view(view: str, **fields) -> Callable[[], None]:
    return lambda: view_state.open_view(view, **fields)


def _open_one_stack() -> None:
    """Side by side with the decoder-only model as B, on the sidebar's sentence."""
    view_state.set_compare_model(DECODER_ONLY)
    view_state.open_view("compare", compare="")


def _navigation(k: int, n: int) -> None:
    """Progress, previous / next and the chapter list; the chosen chapter is the view
    state's (``ui.state.set_chapter``), kept while the lesson is not shown (a widget's own
    state is not)."""
    st.progress(k / n, text=t("lesson_progress", k=k, n=n))
    left, middle, right = st.columns([1, 4, 1], vertical_alignment="bottom")
    left.button(t("lesson_prev"), key="lesson_prev", on_click=_go(k - 1), disabled=k == 1,
                width="stretch")
    numbers = list(range(1, n + 1))
    st.session_state[PICK_KEY] = k  # the widget's own key: its state is dropped in Explore
    middle.selectbox(t("lesson_chapters"), numbers, key=PICK_KEY,
                     on_change=lambda: _go(st.session_state[PICK_KEY])(),
                     format_func=labels(numbers, lambda i: field_text(chapters()[i - 1],
                                                                     "title")))
    right.button(t("lesson_next"), key="lesson_next", on_click=_go(k + 1), disabled=k == n,
                 width="stretch", type="primary")


def _try_action(chapter_id: str, made: Chapter, live: Live) -> None:
    """The chapter's try-it button (``try_label``), and what it shows when pressed."""
    action, state, label = made.action, st.session_state, try_label(made)
    if label is None:
        return
    if action == "longer_sentence":
        example = longer_example(live)
        if example is not None:
            st.button(label, key="lesson_try", on_click=view_state.set_sentence, args=(example,))
    elif action in ("next_head", "next_word"):
        turn = f"lesson_turn_{chapter_id}"
        st.button(label, key="lesson_try",
                  on_click=lambda: state.update({turn: state.get(turn, 0) + 1}))
    elif action == "changing_sentence" and made.sentence:
        st.button(label, key="lesson_try", on_click=view_state.set_sentence,
                  args=(made.sentence,))
    elif action == "open_compare" and made.sentence and made.compare:
        st.button(label, key="lesson_try", on_click=_open_view(
            "compare", sentence=made.sentence, compare=made.compare))
    elif action == "open_one_stack":  # the same sentence on the decoder-only model, beside
        st.button(label, key="lesson_try", on_click=_open_one_stack)
    elif action in ("open_heads", "open_masks", "open_positional", "open_attribution"):
        st.button(label, key="lesson_try", on_click=_open_view(action.removeprefix("open_")))
    elif action == "positions_off" and st.button(label, key="lesson_try"):
        sentence = made.sentence or live.trace.src_text
        shown = position_outputs(live, sentence)
        st.markdown(t("lesson_positions_results", sentence=md_literal(sentence),
                      **{m: md_literal(shown[m]) or "—" for m in POSITION_MODES}))
    elif action == "sample" and st.button(label, key="lesson_try"):
        for temperature, outs in samples(live):
            st.markdown(t("lesson_samples", temperature=number_text(temperature),
                          outputs=token_row(outs) or "—"))


def _question(chapter: dict, made: Chapter, qkey: str) -> bool:
    """The prediction question; True once it is answered or the learner asked to see."""
    state = st.session_state
    ids = [o for o, _ in made.options]
    names = dict(made.options)
    choice = st.radio(chapter_text(chapter, "question", made), ids,
                      index=None, key=qkey, format_func=labels(ids, names.get))
    if choice is None and not state.get(f"{qkey}_shown"):
        st.button(t("lesson_show"), key=f"{qkey}_show",
                  on_click=lambda: state.update({f"{qkey}_shown": True}))
        return False
    if choice == made.answer:
        st.success(t("lesson_right"))
    else:
        st.info(t("lesson_answer", answer=names[made.answer]))
    return True


def lesson_view(translator: Translator, trace: DecodeTrace, key: tuple) -> None:
    """The lesson's current chapter on ``trace`` (the sidebar's sentence and settings)."""
    items = chapters()
    n = len(items)
    state = st.session_state
    k = view_state.read().chapter
    k = k if 1 <= k <= n else 1
    view_state.set_chapter(k)
    _navigation(k, n)
    chapter = items[k - 1]
    cid = chapter["id"]
    st.subheader(field_text(chapter, "title"))
    turn = int(state.get(f"lesson_turn_{cid}", 0))
    live = Live(translator, trace, key)
    made = BUILDERS[cid](live, turn)
    if made.why is not None:
        st.info(t(made.why))
        return
    if made.note:
        st.info(made.note)
    st.markdown(chapter_text(chapter, "text", made))
    qkey = f"lesson_q_{cid}_{abs(hash((key[0], trace.src_text, trace.settings, turn)))}"
    if _question(chapter, made, qkey):
        st.markdown(chapter_text(chapter, "reveal", made))
        st.caption(chapter_text(chapter, "look", made))
        if made.figure is not None:
            chart(made.figure, key=f"lesson_chart_{cid}")
    st.markdown(f"**{t('lesson_try_label')}** " + chapter_text(chapter, "try", made))
    _try_action(cid, made, live)
