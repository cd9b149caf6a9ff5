"""Under the translation: is the model guessing? The uncertain steps highlighted in the
output with a button to open each, and a likely loop or runaway length
(``model.analysis.confidence``), drawn inside the verdict (``ui.verdict``); the step panel
explains a low probability (``low_confidence_note``)."""

from __future__ import annotations

import streamlit as st

from model import DecodeTrace
from model.analysis.confidence import LOW_PROB, Confidence, assess

from . import state
from .i18n import t
from .text import clip, code_span, md_literal

MAX_BUTTONS = 6  # the least probable uncertain steps get a button each


def trace_confidence(trace: DecodeTrace) -> Confidence:
    """``assess`` of a decoding's steps, output and source."""
    return assess([s.prob for s in trace.steps], [s.forced for s in trace.steps],
                  trace.output_text, len(trace.src_tokens), finished=trace.finished)


def marked_output(trace: DecodeTrace, uncertain: tuple[int, ...]) -> str:
    """The output's tokens as Markdown, the uncertain steps' (1-based) in bold on an orange
    background (bold: the mark survives greyscale and colour blindness), ``</s>`` as code;
    every token shown literally."""
    parts = []
    for k, step in enumerate(trace.steps, 1):
        label = code_span(step.label) if step.token == "</s>" else md_literal(step.label)
        parts.append(f":orange-background[**{label}**]" if k in uncertain else label)
    return " ".join(parts)


def guessing_lines(trace: DecodeTrace, c: Confidence) -> None:
    """The verdict's lines on the decoding itself: the uncertain tokens marked with a button
    per step (the least probable MAX_BUTTONS), a likely loop and a runaway length, each with
    what to do about it (``ui.verdict.verdict_banner`` draws them in its box)."""
    pct = round(100 * LOW_PROB)
    if c.uncertain:
        st.markdown(t("confidence_uncertain", n=len(c.uncertain), pct=pct))
        st.markdown(marked_output(trace, c.uncertain))
        cols = st.columns(MAX_BUTTONS)
        for col, k in zip(cols, c.least_probable(MAX_BUTTONS), strict=False):
            step = trace.steps[k - 1]
            col.button(t("confidence_open_step", k=k, token=clip(step.label, 8),
                         pct=round(100 * step.prob)), key=f"open_step_{k}",
                       on_click=state.open_step, args=(k,), width="stretch")
    if c.loop is not None:
        st.markdown(t("confidence_loop", text=code_span(c.loop[0]), n=c.loop[1]))
    if c.runaway:
        st.markdown(t("confidence_runaway", n=len(trace.steps), s=len(trace.src_tokens))
                    if trace.finished else t("length_limit"))


def low_confidence_note(trace: DecodeTrace, k: int) -> str | None:
    """The step panel's explanation when step k's chosen token was uncertain, else None."""
    step = trace.steps[k - 1]
    if step.forced or step.prob >= LOW_PROB:
        return None
    others = [code_span(lab) for lab, tok in zip(step.top_labels, step.top_tokens, strict=True)
              if tok != step.token][:3]
    return t("low_confidence_note", token=code_span(step.label), pct=round(100 * step.prob),
             others=t("word_separator").join(others))
