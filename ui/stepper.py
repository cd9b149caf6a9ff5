"""The step-through panel: controls, what happens at the current step, and this step's
attention for every head. It runs as a fragment, so a step change or a Play tick reruns only
this panel, not the whole page (``st.fragment``; with ``run_every`` while playing)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import streamlit as st

import viz
from model import DecodeStep, DecodeTrace
from model.analysis.words import group_attention, group_labels
from viz.convention import layer_number

from . import export, pinyin, state
from .charts import chart, columns, presenting
from .confidence import low_confidence_note
from .i18n import STRINGS, head_label, labels, layer_label, t, viz_labels
from .link import write_link
from .text import code_span, token_row

# The speeds by id (the English label, the select box's value) -> seconds per step.
SPEEDS = {STRINGS["speed_option"]["en"].format(seconds=s): float(s) for s in ("0.5", "1", "2")}
DEFAULT_SPEED = STRINGS["speed_option"]["en"].format(seconds="1")
SLOWEST_SPEED = max(SPEEDS, key=SPEEDS.get)  # Play's speed when the browser asks for less motion
#: The step figure's width (px): its column's width in a 1,500-px-wide window (3/4 of the
#: main area). A narrower column shrinks it to fit, which costs a second drawing of the
#: chart on every step click (ui.charts.chart); a wider one leaves room beside it.
STEP_CHART_PX = 760
#: The step figure's column in a 1280-px-wide window, the sidebar open ([1, 3] of the main
#: column's 820 px, less the gap; Chromium): the narrowest it is drawn at, its labels fitted
#: for it
STEP_COLUMN_PX = 600
#: Present mode's step text shows the decoder input's last this many tokens (one line on a
#: projector), and not the output so far (the input and the chosen token give it).
PRESENT_INPUT_TOKENS = 12


GROUP_KEY = "group_words"  # the "group subword pieces into words" switch (ui.views.panels)
_TICKED = "ticked"  # set once Play's timer has ticked in this fragment


def _toggle_play(T: int) -> None:
    playing = not state.read().playing
    if playing and state.read().step >= T:
        state.set_step(1)  # Play at the end starts again from the beginning
    state.set_playing(playing)


def current_step(T: int) -> int:
    """The step in [1, T], clamped when the output got shorter (never reset otherwise)."""
    k = min(max(state.read().step, 1), T)
    state.set_step(k)
    return k


def source_axis(trace: DecodeTrace, maps: np.ndarray, grouped: bool, queries_too: bool
                ) -> tuple[np.ndarray, list[str]]:
    """The source side of attention ``maps`` (..., Tq, S) and its labels, pieces merged into
    words when ``grouped`` (``model.analysis.words.group_attention``: sum over a word's key pieces,
    mean over its query pieces when ``queries_too``; the labels by ``words.group_labels``,
    a word's pinyin kept as its second line)."""
    if not grouped:
        return maps, list(trace.src_labels)
    words = trace.src_words
    rows = words if queries_too else range(maps.shape[-2])
    return group_attention(maps, rows, words), group_labels(trace.src_labels, words)


def step_controls(trace: DecodeTrace) -> int:
    """First / previous / play-pause / next / last, and the step slider.

    Returns:
        k in [1, T]: the decoder has read ``tgt_tokens[:k]`` and chooses ``tgt_tokens[k]``.
    """
    T = len(trace.steps)
    k = current_step(T)
    playing = state.read().playing
    cols = st.columns([1, 1.3, 1.2, 1.3, 1], vertical_alignment="bottom")
    cols[0].button(t("first"), icon=":material/first_page:", on_click=state.set_step, args=(1,),
                   disabled=k <= 1, key="first_step", width="stretch")
    cols[1].button(t("previous"), on_click=state.set_step, args=(k - 1,), disabled=k <= 1,
                   key="prev_step", width="stretch")
    cols[2].button(t("pause") if playing else t("play"),
                   icon=":material/pause:" if playing else ":material/play_arrow:",
                   on_click=_toggle_play, args=(T,), key="play", width="stretch",
                   disabled=T <= 1)
    cols[3].button(t("next"), on_click=state.set_step, args=(k + 1,), disabled=k >= T,
                   key="next_step", width="stretch")
    cols[4].button(t("last"), icon=":material/last_page:", on_click=state.set_step, args=(T,),
                   disabled=k >= T, key="last_step", width="stretch")
    if T > 1:
        st.slider(t("decoding_step"), 1, T, key=state.STEP_KEY, help=t("decoding_step_help"),
                  label_visibility="collapsed" if presenting() else "visible")
    else:
        st.caption(t("only_step"))
    return state.read().step


def step_panel(trace: DecodeTrace, k: int) -> None:
    """What happens at step k: the decoder input, the chosen token with its probability and
    entropy, and one figure (``viz.step_overview``) with the top-10 probabilities and this
    step's attention rows for every head of the chosen layer."""
    L = trace.cross_attentions.shape[0]
    compact = presenting()  # the text in lines of one paragraph, the layer beside it
    if compact:
        text_place, layer_place = st.columns([5, 1], vertical_alignment="bottom")
        chart_place = st.container()
    else:
        text_place, chart_place = columns([1, 3])
        layer_place = text_place
    _step_text(text_place, trace, k, compact=compact)
    layer = layer_place.selectbox(t("step_layer"), range(L), key="step_layer",
                                  format_func=labels(range(L), layer_label),
                                  help=t("home_numbering"))
    parts = _step_parts(trace, k, layer)
    with chart_place:
        if compact:
            _present_charts(parts)
        else:
            chart(viz.step_overview(
                list(pinyin.alone(parts.step.top_labels)), parts.step.top_probs, parts.chosen,
                parts.cross, source_tokens=parts.src, self_rows=parts.own,
                decoder_tokens=parts.decoder_input, head_labels=parts.heads,
                titles=parts.titles,
                axis_titles=tuple(map(t, parts.axes)),
                title=parts.overview_title, width=STEP_CHART_PX,
                height=380, text=viz_labels()), key="step_chart", fit_px=STEP_COLUMN_PX)
        _step_tables(parts)


def _step_text(place, trace: DecodeTrace, k: int, *, compact: bool) -> None:
    """Step k in words, in ``place``: the step, the decoder input so far (its last
    ``PRESENT_INPUT_TOKENS`` when ``compact``), the chosen (or forced) token with its
    probability and entropy, a low-confidence note, and (not ``compact``) the output so far;
    as one element, in lines of one paragraph when ``compact``."""
    step = trace.steps[k - 1]

    def heading(key: str) -> str:  # "Decoder input so far:" over its tokens, or before them
        return t(key).rstrip() + " " if compact else t(key)

    how = t("forced_token") if step.forced else t("chosen_token")
    note = low_confidence_note(trace, k)
    read = trace.tgt_labels[:k]
    if compact and k > PRESENT_INPUT_TOKENS:  # one line: the input's last tokens
        read = ("…", *read[-PRESENT_INPUT_TOKENS:])
    place.markdown(("  \n" if compact else "\n\n").join((  # one element to redraw
        t("step_of", k=k, n=len(trace.steps)),
        heading("decoder_input_so_far") + token_row(read),
        t("token_with_probability", how=how, token=code_span(step.label),
          prob=step.prob, entropy=step.entropy),
        *((note,) if note else ()),
        *(() if compact else  # the input and the chosen token say it already
          (heading("output_so_far") + token_row(trace.tgt_labels[1 : k + 1]),)))))


@dataclass(frozen=True)
class _StepParts:
    """What step k's charts and tables show for one layer."""

    step: DecodeStep
    heads: list[str]  # H row labels
    cross: np.ndarray  # (H, S) or (H, words): this step's cross-attention rows
    src: list[str]  # their keys: source tokens, or words when grouped
    own: np.ndarray  # (H, k): this step's decoder self-attention rows
    decoder_input: list[str]  # their keys
    chosen: int | None  # the chosen token's index among the top tokens (None: not there)
    overview_title: str
    titles: tuple[str, str, str]  # over the bars, the cross block and the self block
    axes: tuple[str, str]  # the string keys of the two blocks' key axes


def _step_parts(trace: DecodeTrace, k: int, layer: int) -> _StepParts:
    """Step k's rows of ``layer`` and the labels and titles that go with them."""
    step = trace.steps[k - 1]
    H = trace.cross_attentions.shape[1]
    one = trace.architecture == "decoder-only"
    grouped = bool(st.session_state.get(GROUP_KEY))  # the switch above the view picker
    cross, src = source_axis(trace, trace.cross_attentions[layer, :, k - 1], grouped,
                             queries_too=False)  # (H, S) or (H, words)
    return _StepParts(
        step=step,
        heads=[head_label(h) for h in range(H)],
        cross=cross,
        src=src,
        own=trace.decoder_attentions[layer, :, k - 1, :k],  # (H, k)
        decoder_input=list(trace.decoder_input_labels[:k]),
        chosen=step.top_tokens.index(step.token) if step.token in step.top_tokens else None,
        overview_title=t("step_overview_title", k=k, layer=layer_number(layer)),
        titles=(t("top_probs_title", n=len(step.top_tokens)),
                t(_STEP_TITLES[one][0], query=trace.tgt_labels[k - 1]),
                t(_STEP_TITLES[one][1])),
        axes=_STEP_AXES[one],
    )


# The step figure's titles and key axes: an encoder-decoder's rows over the source and the
# decoder input; a decoder-only model's over the prompt and the tokens written (one row of
# its one sequence, cut where the prompt ends: ``model.decoding.split_at_prompt``).
_STEP_TITLES = {False: ("step_cross_title", "step_self_title"),
                True: ("step_prompt_title", "step_written_title")}
_STEP_AXES = {False: ("key_source_token", "key_decoder_input"),
              True: ("key_prompt_token", "key_decoder_input")}


def _present_charts(parts: _StepParts) -> None:
    """Present mode: each part its own chart at the column's width, so that every token of
    both attention rows has its label; the attention first, on the projector's first
    screen, the probabilities under it."""
    for rows, keys, title, axis, key in (
            (parts.cross, parts.src, f"{parts.overview_title} · {parts.titles[1]}",
             parts.axes[0], "step_cross_chart"),
            (parts.own, parts.decoder_input, parts.titles[2], parts.axes[1],
             "step_self_chart")):
        chart(viz.attention_heatmap(rows, parts.heads, keys, title=title,
                                    query_label=t("table_head"), key_label=t(axis),
                                    text=viz_labels()), key=key)
    chart(viz.probability_bars(list(pinyin.alone(parts.step.top_labels)), parts.step.top_probs,
                               parts.chosen, parts.titles[0], text=viz_labels()),
          key="step_chart")


def _step_tables(parts: _StepParts) -> None:
    """The step's numbers as tables (``export.tables_expander``): the top tokens and their
    probabilities, the cross-attention rows and the self-attention rows."""
    step, titles, heads = parts.step, parts.titles, parts.heads
    export.tables_expander("step", lambda: [
        (titles[0], export.table(
            {t("table_token"): list(step.top_labels),
             t("table_probability"): np.round(step.top_probs, 4)})),
        (titles[1], export.grid_table(np.round(parts.cross, 3), heads, parts.src,
                                      t("table_head"))),
        (titles[2], export.grid_table(parts.own.round(3), heads, parts.decoder_input,
                                      t("table_head")))])


def speed_picker() -> None:
    """Play's speed, in the sidebar: outside the step-through fragment, so a step click does
    not redraw it, and a change reruns the page, which starts the fragment's timer anew."""
    # The default is set by value, not with index=: the language switch re-sets the choice
    # (see ui.i18n), which Streamlit would log a warning for on a widget with a default.
    st.session_state.setdefault("speed", DEFAULT_SPEED)
    st.sidebar.selectbox(t("speed"), list(SPEEDS), key="speed", help=t("speed_help"),
                         format_func=labels(SPEEDS, lambda s: t("speed_option",
                                                                  seconds=s.split()[0])))


def step_through(trace: DecodeTrace, body: Callable[[DecodeTrace, int], None]) -> None:
    """The speed picker (sidebar), then the step controls, the step panel and
    ``body(trace, k)`` as one fragment that reruns on its own every tick while playing."""
    speed_picker()
    def timer() -> float | None:
        """Seconds between ticks for the current play state and speed (None = stopped)."""
        playing = state.read().playing
        return SPEEDS.get(st.session_state.get("speed", DEFAULT_SPEED), 1.0) if playing else None

    interval = timer()

    def panel() -> None:
        # Play and Pause are inside this fragment, so clicking them reruns only the
        # fragment, which keeps the timer it was created with: rerun the whole app once to
        # create it again with the right one.
        if timer() != interval:
            st.rerun(scope="app")
        T = len(trace.steps)
        if state.read().playing:
            k = current_step(T)
            if k < T and st.session_state.get(_TICKED) is not None:
                state.set_step(k + 1)
            st.session_state[_TICKED] = True
            if state.read().step >= T:  # the end: stop, and stop the timer too
                state.set_playing(False)
                st.session_state.pop(_TICKED, None)
                st.rerun(scope="app")
        else:
            st.session_state.pop(_TICKED, None)
        k = step_controls(trace)
        step_panel(trace, k)
        body(trace, k)
        write_link()  # a step click reruns only this fragment: keep the link's step current

    st.fragment(panel, run_every=interval)()
