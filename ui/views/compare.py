"""Side-by-side views: a branch (another token at one step, then decoding goes on), a
reference translation scored by teacher forcing, and the beams of beam search."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

import viz
from model import DecodeTrace, InputError
from viz.convention import head_number, layer_number, position_number, rank_number

from .. import state
from ..charts import chart, columns
from ..export import show, table
from ..i18n import head_label, labels, layer_label, t, view_label, viz_labels
from ..text import code_span, md_literal, token_row

Decoder = Callable[..., DecodeTrace]


def _pickers(keys: tuple[str, str], trace: DecodeTrace) -> tuple[int, int]:
    """Layer and head pickers with widget keys ``keys`` (not view state: the branch's and the
    reference's own)."""
    L, H = trace.cross_attentions.shape[:2]
    c1, c2 = st.columns(2)
    layer = c1.selectbox(t("layer"), range(L), format_func=labels(range(L), layer_label),
                         key=keys[0])
    head = c2.selectbox(t("head"), range(H), format_func=labels(range(H), head_label),
                        key=keys[1])
    return int(layer), int(head)


def _column(trace: DecodeTrace, title: str, layer: int, head: int, *, charts: str,
            mark: int | None = None) -> None:
    """One side of a comparison: the tokens, their probabilities, the cross-attention (charts
    keyed ``{charts}_probs`` and ``{charts}_cross``)."""
    st.markdown(f"**{title}**  \n" + token_row(trace.output_labels or (t("empty_tokens"),)))
    tokens = list(trace.tgt_labels[1:])
    probs = [s.prob for s in trace.steps]
    chart(viz.sequence_probabilities(tokens, probs, mark=mark,
                                     forced=[s.forced for s in trace.steps],
                                     title=t("seq_probs_title"), text=viz_labels()),
          key=f"{charts}_probs")
    chart(viz.attention_heatmap(trace.cross_attentions[layer, head],
                                list(trace.decoder_input_labels), list(trace.src_labels),
                                title=t("view_head_title", view=view_label("cross"),
                                        layer=layer_number(layer), head=head_number(head)),
                                query_label=t("query_decoder_input"),
                                key_label=t("key_source_token"),
                                text=viz_labels()), key=f"{charts}_cross")


BRANCH_OPEN = "branch_open"  # the branch expander's state: True while it is open


def _by_target(key: str, target_language: str) -> str:
    """String ``key`` for a model writing ``target_language``: its ``_en`` form for an
    English target, else ``key`` (written for a Chinese one)."""
    return f"{key}_en" if target_language == "en" else key


def branch_controls(trace: DecodeTrace, k: int, *, target_language: str = "zh") -> None:
    """At step k, offer the other top candidates (or any target token) to continue with;
    the example and help of the typed token follow ``target_language``
    (``ModelInfo.target_language``: an English token is a piece, ``Ġthe``). The controls
    are built only while the expander is open (``BRANCH_OPEN``): a step click then
    redraws none of them."""
    step = trace.steps[k - 1]
    shown = dict(zip(step.top_tokens, step.top_labels, strict=True))  # token -> its label
    others = [tok for tok in step.top_tokens if tok != step.token]
    box = st.expander(t("branch_expander", k=k, token=step.label), key=BRANCH_OPEN,
                      on_change="rerun")
    if not box.open:
        return
    with box:
        c1, c2, c3 = st.columns([2, 2, 1], vertical_alignment="bottom")
        pick = c1.selectbox(t("branch_pick"), others, key="branch_pick",
                            format_func=lambda tok: shown.get(tok, tok))  # the id stays a token
        typed = c2.text_input(t("branch_typed"), key="branch_typed", max_chars=8,
                              placeholder=t(_by_target("branch_typed_placeholder",
                                                       target_language)),
                              help=t("branch_typed_help_en") if target_language == "en"
                              else None)
        token = typed.strip() or pick
        c3.button(t("branch_go"), on_click=state.set_branch, args=(k, token), key="branch_go",
                  disabled=not token, width="stretch")


def branch_view(trace: DecodeTrace, decode: Decoder) -> None:
    """The original and the branched continuation side by side."""
    if state.read().branch is None:
        return
    k, token = state.read().branch
    if k > len(trace.steps):
        state.close_branch()
        return
    prefix = [*trace.tgt_tokens[1:k], token]
    try:
        branched = decode(prefix=tuple(prefix))
    except InputError as exc:
        st.warning(t("branch_error", error=md_literal(str(exc))))
        return
    st.subheader(t("branch_header", k=k))
    shown = dict(zip(trace.steps[k - 1].top_tokens, trace.steps[k - 1].top_labels,
                     strict=True))
    st.caption(t("branch_caption", kept=k - 1, token=code_span(shown.get(token, token)), k=k))
    layer, head = _pickers(("branch_layer", "branch_head"), trace)
    left, right = columns(2, wrap=True)
    with left:
        _column(trace, t("branch_original"), layer, head, charts="orig")
    with right:
        _column(branched, t("branch_column", token=code_span(token), k=k), layer, head,
                charts="branch")
    st.button(t("branch_close"), on_click=state.close_branch, key="branch_close")


def reference_view(trace: DecodeTrace, teacher_force: Callable[[str], DecodeTrace], *,
                   target_language: str = "zh") -> None:
    """A reference translation scored token by token under teacher forcing, beside the
    model's own output, with the first difference marked; the box's label and example are
    in ``target_language`` (``ModelInfo.target_language``)."""
    st.subheader(t("reference_header"))
    reference = st.text_input(t(_by_target("reference", target_language)), key="reference",
                              max_chars=120, help=t("reference_help"),
                              placeholder=t(_by_target("reference_placeholder",
                                                       target_language)))
    if not reference.strip():
        return
    try:
        forced = teacher_force(reference)
    except InputError as exc:
        st.warning(t("reference_error", error=md_literal(str(exc))))
        return
    diff = next((s.index for s in forced.steps if s.top_ids[0] != s.token_id), None)
    if diff is None:
        st.success(t("reference_agrees"))
    else:
        s = forced.steps[diff]
        st.info(t("reference_first_difference", pos=position_number(diff), ref=code_span(s.label),
                  ref_prob=s.prob, top=code_span(s.top_labels[0]),
                  top_prob=float(s.top_probs[0])))
    layer, head = _pickers(("ref_layer", "ref_head"), trace)
    left, right = columns(2, wrap=True)
    with left:
        _column(trace, t("reference_model_output"), layer, head, charts="model")
    with right:
        _column(forced, t("reference_forced"), layer, head, charts="ref", mark=diff)


def beam_view(trace: DecodeTrace) -> int:
    """The beam tree and the n-best list; returns the index of the hypothesis to show."""
    beam = trace.beam
    st.subheader(t("beam_header", n=beam.num_beams))
    hyps = beam.hypotheses
    labels = [t("beam_option", i=rank_number(i), text=h.text or t("empty_tokens"), score=h.score)
              for i, h in enumerate(hyps)]
    chosen = st.selectbox(t("beam_pick"), range(len(hyps)),
                          format_func=lambda i: labels[i], key=state.HYPOTHESIS_KEY)
    chosen = min(int(chosen or 0), len(hyps) - 1)
    left, right = columns([3, 2])
    with left:
        steps = [[(c.parent, c.label, c.logprob, c.status) for c in step]
                 for step in beam.steps]
        chart(viz.beam_tree(steps, highlight=hyps[chosen].end, title=t("beam_tree_title"),
                            text=viz_labels()),
              key="beam_tree")
    with right:
        show(table({
            t("col_hypothesis"): [h.text for h in hyps],
            "log p": [round(h.logprob, 3) for h in hyps],
            t("col_score"): [round(h.score, 3) for h in hyps],
            t("col_tokens"): [len(h.tokens) for h in hyps],
            t("col_finished"): [h.finished for h in hyps],
        }), hide_index=True)
        st.caption(t("beam_caption"))
    return chosen
