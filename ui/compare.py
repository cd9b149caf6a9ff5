"""Side-by-side views: a branch (another token at one step, then decoding goes on), a
reference translation scored by teacher forcing, and the beams of beam search."""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd
import streamlit as st

import viz
from model import DecodeTrace, InputError

from .charts import chart
from .text import code_span, md_literal, token_row

Decoder = Callable[..., DecodeTrace]


def _pickers(prefix: str, trace: DecodeTrace) -> tuple[int, int]:
    L, H = trace.cross_attentions.shape[:2]
    c1, c2 = st.columns(2)
    layer = c1.selectbox("Layer", range(L), format_func=lambda i: f"Layer {i}",
                         key=f"{prefix}_layer")
    head = c2.selectbox("Head", range(H), format_func=lambda h: f"Head {h}", key=f"{prefix}_head")
    return int(layer), int(head)


def _column(trace: DecodeTrace, title: str, layer: int, head: int, key: str,
            mark: int | None = None) -> None:
    """One side of a comparison: the tokens, their probabilities, the cross-attention."""
    st.markdown(f"**{title}**  \n" + token_row(trace.output_tokens or ("(empty)",)))
    tokens = list(trace.tgt_tokens[1:])
    probs = [s.prob for s in trace.steps]
    chart(viz.sequence_probabilities(tokens, probs, mark=mark,
                                     forced=[s.forced for s in trace.steps],
                                     title="Probability of each token (hatched = forced)"),
          key=f"{key}_probs")
    chart(viz.attention_heatmap(trace.cross_attentions[layer, head],
                                list(trace.decoder_input_tokens), list(trace.src_tokens),
                                title=f"Cross-attention, layer {layer}, head {head}",
                                query_label="Query: decoder input",
                                key_label="Key: source token"), key=f"{key}_cross")


def _branch(step: int, token: str) -> None:
    st.session_state["branch"] = (step, token)


def branch_controls(trace: DecodeTrace, k: int) -> None:
    """At step k, offer the other top candidates (or any target token) to continue with."""
    step = trace.steps[k - 1]
    others = [t for t in step.top_tokens if t != step.token]
    with st.expander(f"Branch at step {k}: continue with another token instead of "
                     f"{step.token}"):
        c1, c2, c3 = st.columns([2, 2, 1], vertical_alignment="bottom")
        pick = c1.selectbox("Another top candidate", others, key="branch_pick")
        typed = c2.text_input("…or type any target token", key="branch_typed", max_chars=8,
                              placeholder="e.g. 他")
        token = typed.strip() or pick
        c3.button("Continue from here", on_click=_branch, args=(k, token), key="branch_go",
                  disabled=not token, width="stretch")


def branch_view(trace: DecodeTrace, decode: Decoder) -> None:
    """The original and the branched continuation side by side."""
    if "branch" not in st.session_state:
        return
    k, token = st.session_state["branch"]
    if k > len(trace.steps):
        st.session_state.pop("branch")
        return
    prefix = [*trace.tgt_tokens[1:k], token]
    try:
        branched = decode(prefix=tuple(prefix))
    except InputError as exc:
        st.warning(md_literal(str(exc)))
        return
    st.subheader(f"Branch at step {k}")
    st.caption(f"The first {k - 1} tokens are kept, {code_span(token)} is forced at step {k}, "
               "and decoding continues from there.")
    layer, head = _pickers("branch", trace)
    left, right = st.columns(2)
    with left:
        _column(trace, "Original", layer, head, "orig")
    with right:
        _column(branched, f"Branch: {code_span(token)} at step {k}", layer, head, "branch")
    st.button("Close the branch", on_click=st.session_state.pop, args=("branch",),
              key="branch_close")


def reference_view(trace: DecodeTrace, teacher_force: Callable[[str], DecodeTrace]) -> None:
    """A reference translation scored token by token under teacher forcing, beside the
    model's own output, with the first difference marked."""
    st.subheader("Compare with a reference translation")
    reference = st.text_input("Reference translation (Chinese)", key="reference",
                              max_chars=120, placeholder="e.g. 我们为什么学习？",
                              help="The decoder is fed these tokens (teacher forcing); the "
                                   "chart shows the probability it gave each of them.")
    if not reference.strip():
        return
    try:
        forced = teacher_force(reference)
    except InputError as exc:
        st.warning(md_literal(str(exc)))
        return
    diff = next((s.index for s in forced.steps if s.top_tokens[0] != s.token), None)
    if diff is None:
        st.success("The model's own greedy choice agrees with the reference at every step.")
    else:
        s = forced.steps[diff]
        st.info(f"First difference at position {diff + 1}: the reference has "
                f"{code_span(s.token)} ({s.prob:.1%}), the model would choose "
                f"{code_span(s.top_tokens[0])} ({float(s.top_probs[0]):.1%}).")
    layer, head = _pickers("ref", trace)
    left, right = st.columns(2)
    with left:
        _column(trace, "Model output", layer, head, "model")
    with right:
        _column(forced, "Reference (teacher-forced)", layer, head, "ref", mark=diff)


def beam_view(trace: DecodeTrace) -> int:
    """The beam tree and the n-best list; returns the index of the hypothesis to show."""
    beam = trace.beam
    st.subheader(f"Beam search: {beam.num_beams} beams")
    hyps = beam.hypotheses
    labels = [f"{i + 1}. {h.text or '(empty)'}  (score {h.score:.3f})" for i, h in
              enumerate(hyps)]
    chosen = st.selectbox("Show the maps of hypothesis", range(len(hyps)),
                          format_func=lambda i: labels[i], key="hypothesis")
    chosen = min(int(chosen or 0), len(hyps) - 1)
    left, right = st.columns([3, 2])
    with left:
        chart(viz.beam_tree(beam.steps, highlight=hyps[chosen].end,
                            title="Candidates at each step (best on top)"), key="beam_tree")
    with right:
        st.dataframe(pd.DataFrame({
            "hypothesis": [h.text for h in hyps],
            "log p": [round(h.logprob, 3) for h in hyps],
            "score": [round(h.score, 3) for h in hyps],
            "tokens": [len(h.tokens) for h in hyps],
            "finished": [h.finished for h in hyps],
        }), hide_index=True)
        st.caption("score = log p / tokens^length_penalty. Blue: kept beams, green stars: "
                   "finished hypotheses, grey crosses: pruned candidates.")
    return chosen
