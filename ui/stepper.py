"""The step-through panel: controls, what happens at the current step, and this step's
attention for every head. It runs as a fragment, so a step change or a Play tick reruns only
this panel, not the whole page (``st.fragment``; with ``run_every`` while playing)."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

import viz
from model import DecodeTrace

from .charts import chart
from .text import code_span, token_row

SPEEDS = {"0.5 s": 0.5, "1 s": 1.0, "2 s": 2.0}


def _set_step(value: int) -> None:
    st.session_state["step"] = value


def _toggle_play(T: int) -> None:
    playing = not st.session_state.get("playing", False)
    if playing and int(st.session_state.get("step", 1)) >= T:
        st.session_state["step"] = 1  # Play at the end starts again from the beginning
    st.session_state["playing"] = playing


def current_step(T: int) -> int:
    """The step in [1, T], clamped when the output got shorter (never reset otherwise)."""
    k = min(max(int(st.session_state.get("step", 1)), 1), T)
    st.session_state["step"] = k
    return k


def step_controls(trace: DecodeTrace) -> int:
    """First / previous / play-pause / next / last, the speed, and the step slider.

    Returns:
        k in [1, T]: the decoder has read ``tgt_tokens[:k]`` and chooses ``tgt_tokens[k]``.
    """
    T = len(trace.steps)
    k = current_step(T)
    playing = st.session_state.get("playing", False)
    cols = st.columns([1, 1.3, 1.2, 1.3, 1, 1.3], vertical_alignment="bottom")
    cols[0].button("First", icon=":material/first_page:", on_click=_set_step, args=(1,),
                   disabled=k <= 1, key="first_step", width="stretch")
    cols[1].button("◀ Previous", on_click=_set_step, args=(k - 1,), disabled=k <= 1,
                   key="prev_step", width="stretch")
    cols[2].button("Pause" if playing else "Play",
                   icon=":material/pause:" if playing else ":material/play_arrow:",
                   on_click=_toggle_play, args=(T,), key="play", width="stretch",
                   disabled=T <= 1)
    cols[3].button("Next ▶", on_click=_set_step, args=(k + 1,), disabled=k >= T,
                   key="next_step", width="stretch")
    cols[4].button("Last", icon=":material/last_page:", on_click=_set_step, args=(T,),
                   disabled=k >= T, key="last_step", width="stretch")
    cols[5].selectbox("Speed", list(SPEEDS), index=1, key="speed",
                      help="Time per step while playing.")
    if T > 1:
        st.slider("Decoding step", 1, T, key="step",
                  help="Step k: the decoder has read k tokens and picks the next one.")
    else:
        st.caption("Decoding step 1 of 1")
    return int(st.session_state["step"])


def step_panel(trace: DecodeTrace, k: int) -> None:
    """What happens at step k: decoder input, chosen token, top-10 probabilities, entropy."""
    step = trace.steps[k - 1]
    left, right = st.columns([2, 3])
    with left:
        st.markdown(f"**Step {k} of {len(trace.steps)}**")
        st.markdown("Decoder input so far:  \n" + token_row(step.input_tokens))
        how = "Forced token" if step.forced else "Chosen next token"
        st.markdown(
            f"{how}: {code_span(step.token)} with probability **{step.prob:.1%}** "
            f"(entropy {step.entropy:.2f} nats)"
        )
        st.markdown("Output so far:  \n" + token_row(trace.tgt_tokens[1 : k + 1]))
    with right:
        chosen = step.top_tokens.index(step.token) if step.token in step.top_tokens else None
        fig = viz.probability_bars(list(step.top_tokens), step.top_probs, chosen,
                                   title=f"Top-{len(step.top_tokens)} next-token probabilities")
        chart(fig.update_layout(height=330, margin=dict(t=40, b=40)), key="probs")


def step_attention(trace: DecodeTrace, k: int) -> None:
    """This step's attention rows for every head of one layer (small multiples as rows)."""
    L = trace.cross_attentions.shape[0]
    layer = st.selectbox("Layer for this step's attention", range(L),
                         format_func=lambda i: f"Layer {i}", key="step_layer")
    H = trace.cross_attentions.shape[1]
    heads = [f"head {h}" for h in range(H)]
    left, right = st.columns([3, 2])
    with left:
        chart(viz.attention_heatmap(
            trace.cross_attentions[layer, :, k - 1], heads, list(trace.src_tokens),
            title=f"Step {k}: cross-attention of query {trace.tgt_tokens[k - 1]} over the "
                  "source, every head",
            query_label="Head", key_label="Key: source token"), key="step_cross")
    with right:
        chart(viz.attention_heatmap(
            trace.decoder_attentions[layer, :, k - 1, :k], heads,
            list(trace.decoder_input_tokens[:k]),
            title=f"Step {k}: decoder self-attention, every head",
            query_label="Head", key_label="Key: decoder input"), key="step_self")


def step_through(trace: DecodeTrace, body: Callable[[DecodeTrace, int], None]) -> None:
    """Run the step controls, the step panel and ``body(trace, k)`` as one fragment that
    reruns on its own every tick while playing."""
    playing = st.session_state.get("playing", False)
    interval = SPEEDS.get(st.session_state.get("speed", "1 s"), 1.0) if playing else None

    def panel() -> None:
        T = len(trace.steps)
        if st.session_state.get("playing", False):
            k = current_step(T)
            if k < T and st.session_state.get("ticked") is not None:
                st.session_state["step"] = k + 1
            st.session_state["ticked"] = True
            if st.session_state["step"] >= T:  # the end: stop, and stop the timer too
                st.session_state["playing"] = False
                st.session_state.pop("ticked", None)
                st.rerun(scope="app")
        else:
            st.session_state.pop("ticked", None)
        k = step_controls(trace)
        step_panel(trace, k)
        step_attention(trace, k)
        body(trace, k)

    st.fragment(panel, run_every=interval)()
