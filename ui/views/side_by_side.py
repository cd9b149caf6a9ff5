"""Two decodings side by side (issue 35): a second sentence on the same model, or the same
sentence (or a second one) on a second model. The sidebar holds the second sentence and
model (``compare=`` and ``compare_model=`` in links); the Side by side view shows both
translations, both cross-attention maps and both encoder self-attentions for one layer and
head (or the mean of the heads), the word B changes (when it changes one) and the step where
the translations part, A's translation scored after each sentence (teacher forcing, same
model), and where the sentences share tokens, a difference map of the encoder self-attention
on them, with its largest change in words. With no second sentence, it offers the lesson's
minimal pair (``ui.pairs``) to open as A and B.

Every sentence of the text is computed from the arrays drawn beside it.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

import viz
from model import CheckpointError, DecodeTrace, GenerationSettings, InputError, Translator
from model.analysis.compare import difference, first_difference, shared_tokens
from model.backends.hf_load import cache_snapshot
from model.backends.load import pretrained_root
from viz.convention import step_number

from .. import pairs, pinyin, state
from ..cache import decode, load_model, model_key, teacher_force
from ..charts import chart, columns
from ..export import columns_table, show
from ..i18n import explain, head_label, labels, layer_label, t, view_label, viz_labels
from ..link import BIND
from ..models import listed_models
from ..text import clip, code_span, md_literal

# the second sentence and the second model (a widget's key)
SENTENCE_KEY, MODEL_KEY = state.COMPARE_KEY, state.COMPARE_MODEL_KEY
LAYER_KEY, HEAD_KEY = state.layer_key("compare"), state.head_key("compare")
SAME = ""  # the second model's option: the model of the page
MEAN = -1  # the head option: the mean of the layer's heads
MAX_CHARS = 500  # a longer second sentence is refused with a message, as the first is
PAIR_BUTTON = "compare_example"  # the minimal pair's button (a widget, not view state)


def sidebar_inputs() -> None:
    """The second sentence and the second model, under the sentence box (both in links)."""
    st.sidebar.text_input(t("compare_sentence"), key=SENTENCE_KEY, help=t("compare_help"),
                          placeholder=t("compare_placeholder"), bind=BIND)
    ours, hub = listed_models()
    options = [SAME, *ours, *hub]
    if st.session_state.get(MODEL_KEY, SAME) not in options:  # a link's unknown model
        st.session_state[MODEL_KEY] = SAME
    st.sidebar.selectbox(t("compare_model"), options, key=MODEL_KEY, bind=BIND,
                         format_func=labels(options, lambda o: t("compare_model_same")
                                            if o == SAME else o))


def offer_pair(translator: Translator, key: tuple, settings: GenerationSettings) -> None:
    """A button that opens a minimal pair as A and B, the page's sentence and the sidebar's
    second sentence (``state.set_sentence``): the pair of the lesson's chapter 10, the first
    of the model's language that it translates differently and right (``pairs.pair_that_parts``,
    greedy, in the languages of ``settings``; ``compare_view`` then runs the whole page
    again); a short caption instead when none qualifies."""
    found = pairs.pair_that_parts(translator, key, settings)
    if found is None:
        st.caption(t("compare_no_pair"))
        return
    a, b = found.a.src_text, found.b.src_text
    st.button(t("compare_example", a=md_literal(a), b=md_literal(b)), key=PAIR_BUTTON,
              help=t("compare_example_help"), on_click=state.set_sentence, args=(a,),
              kwargs={"compare": b})


def _second_model(key: tuple) -> tuple[str, tuple, Translator] | None:
    """(name, cache key, model) of the second model; None with a message when it fails."""
    name = st.session_state.get(MODEL_KEY, SAME) or SAME
    if name == SAME:
        return SAME, key, load_model(*key)
    try:
        folder = (pretrained_root() / name if name in listed_models()[0]
                  else cache_snapshot(name))
        other = model_key(folder)
        return name, other, load_model(*other)
    except CheckpointError as exc:
        st.error(t("model_failed", name=code_span(clip(name)),
                   error=md_literal(clip(str(exc), 240))))
        return None


def _map(att: np.ndarray, layer: int, head: int) -> np.ndarray:
    """One head's map of ``att`` (L, H, Tq, Tk), or the mean of the layer's heads."""
    return att[layer].mean(axis=0) if head == MEAN else att[layer, head]


def _pickers(a: DecodeTrace, b: DecodeTrace) -> tuple[int, int]:
    """Layer and head pickers within what both models have (the mean of the heads first)."""
    layers = min(a.cross_attentions.shape[0], b.cross_attentions.shape[0])
    heads = min(a.cross_attentions.shape[1], b.cross_attentions.shape[1])
    c1, c2 = st.columns(2)
    layer = c1.selectbox(t("layer"), range(layers), key=LAYER_KEY,
                         format_func=labels(range(layers), layer_label))
    options = [MEAN, *range(heads)]
    head = c2.selectbox(t("head"), options, key=HEAD_KEY, format_func=labels(
        options, lambda h: t("compare_mean_heads") if h == MEAN else head_label(h)))
    return int(layer), int(head)


def _head_name(head: int) -> str:
    return t("compare_mean_heads") if head == MEAN else head_label(head)


# What a column names its two maps, by the model's architecture: an encoder-decoder's
# cross- and encoder self-attention; a decoder-only model's (its one map cut at the prompt,
# ``model.decoding.split_at_prompt``) written tokens reading the prompt, and the prompt.
_SIDE_NAMES = {
    "encoder-decoder": {"cross": ("cross", "query_decoder_input", "key_source_token"),
                        "encoder": ("encoder", "query_source_token", "key_source_token")},
    "decoder-only": {"cross": ("to_prompt", "query_decoder_input", "key_prompt_token"),
                     "encoder": ("prompt", "query_prompt_token", "key_prompt_token")},
}


def _side(trace: DecodeTrace, side: str, model: str, layer: int, *, head: int) -> None:
    """One column: the sentence, its translation, its cross- and encoder self-attention (a
    decoder-only model's: its written tokens over the prompt, and the prompt)."""
    st.markdown(t("compare_side", side=side, model=md_literal(model),
                  sentence=md_literal(trace.src_text)))
    st.markdown(f"### {md_literal(trace.output_text) or t('empty_output')}")
    names = _SIDE_NAMES[trace.architecture]
    for kind, rows in (("cross", trace.step_labels), ("encoder", trace.src_labels)):
        view, query, key = names[kind]
        where = t("compare_map_title", view=view_label(view), layer=layer_label(layer),
                  head=_head_name(head))
        chart(viz.attention_heatmap(_map(getattr(trace, f"{kind}_attentions"), layer, head),
                                    list(rows), list(trace.src_labels), title=where,
                                    query_label=t(query), key_label=t(key),
                                    text=viz_labels()), key=f"compare_{side}_{kind}")


def _tokens_compared(trace: DecodeTrace, same_model: bool) -> list:
    """What two decodings are compared by, for ``trace``'s generated tokens (``tgt_ids[1:]``,
    T of them): their ids when both decodings come from one model (one vocabulary, where one
    id is one token), else the tokenizer's token strings (ids of two vocabularies name
    different things). Never the labels: a label carries its pinyin read in its own
    sentence (都 dū in 都会, dōu in 都 会), and two pieces may share one label."""
    if same_model:
        return [int(i) for i in np.asarray(trace.tgt_ids).reshape(-1)[1:]]
    return list(trace.tgt_tokens[1:])


def parting_step(a: DecodeTrace, b: DecodeTrace, same_model: bool) -> int | None:
    """The 0-based index of the first generated token where A and B differ, by
    ``_tokens_compared`` (ids on one model), never by labels; None when they are equal. The
    shorter output's length when it is the other's beginning."""
    return first_difference(_tokens_compared(a, same_model), _tokens_compared(b, same_model))


def _with_changed_word(a: DecodeTrace, b: DecodeTrace, step_text: str) -> str:
    """``step_text`` after the sentence that names the one word B changes
    (``pairs.changed_word``: A's word -> B's word, as the source axes group their tokens);
    ``step_text`` alone when the two sources do not differ in exactly one content word."""
    j = pairs.changed_word(a, b)
    if j is None:
        return step_text
    wa, wb = pairs.source_words(a)[j], pairs.source_words(b)[j]
    word = t("compare_changed_word", a=code_span(wa), b=code_span(wb))
    return t("compare_word_then_step", word=word, step=step_text)


def _where_they_part(a: DecodeTrace, b: DecodeTrace, same_model: bool) -> None:
    """Where the two part: the word B changes, when it changes one (``_with_changed_word``),
    and the step where the translations part (``parting_step``), named with the labels of
    the tokens each writes there."""
    out_a, out_b = list(a.tgt_labels[1:]), list(b.tgt_labels[1:])
    i = parting_step(a, b, same_model)
    if i is None:
        st.markdown(_with_changed_word(a, b, t("compare_same_output", n=len(out_a))))
        return
    end = t("compare_ended")
    st.markdown(_with_changed_word(a, b, t(
        "compare_first_diff" if i else "compare_first_diff_start", k=i, step=step_number(i),
        a=code_span(out_a[i]) if i < len(out_a) else end,
        b=code_span(out_b[i]) if i < len(out_b) else end)))


def _scored_after_both(key: tuple, a: DecodeTrace, b: DecodeTrace,
                       settings: GenerationSettings) -> None:
    """A's translation, token by token: its probability after sentence A (as decoded) and
    after sentence B (teacher forcing A's tokens on sentence B): where B would not have
    written it."""
    forced = teacher_force(key, b.src_text, tuple(a.tgt_tokens[1:]), settings)
    rows = [(label, s.prob, f.prob) for label, s, f in
            zip(a.tgt_labels[1:], a.steps, forced.steps, strict=False)]
    names = [t("compare_col_token"), t("compare_col_a"), t("compare_col_b")]
    frame = columns_table(rows, names)
    st.markdown(t("compare_probs_title"))
    show(frame, hide_index=True, column_config={
        c: st.column_config.NumberColumn(format="%.3f") for c in names[1:]})
    low = min(range(len(rows)), key=lambda r: rows[r][2] - rows[r][1], default=None)
    if low is not None and rows[low][2] < rows[low][1]:
        st.caption(t("compare_probs_claim", token=code_span(rows[low][0]),
                     a=f"{rows[low][1]:.2f}", b=f"{rows[low][2]:.2f}"))


def _source_compared(trace: DecodeTrace, same_model: bool) -> list:
    """What two sentences' source tokens are compared by (S of them): their ids on one model
    when the backend gives them, else the tokenizer's token strings; never the labels
    (byte-level ``Ġit`` and ``it`` share the label ``it``)."""
    if same_model and trace.src_ids is not None:
        return [int(i) for i in np.asarray(trace.src_ids).reshape(-1)]
    return list(trace.src_tokens)


def _difference_map(a: DecodeTrace, b: DecodeTrace, layer: int, head: int,
                    *, same_model: bool) -> None:
    """The encoder self-attention of B minus A on the tokens both sentences share (by
    ``_source_compared``), and its largest change in words."""
    pairs = shared_tokens(_source_compared(a, same_model), _source_compared(b, same_model))
    if len(pairs) < 2 or len(pairs) == len(a.src_labels) == len(b.src_labels):
        st.caption(t("compare_no_shared"))
        return
    ma, mb = _map(a.encoder_attentions, layer, head), _map(b.encoder_attentions, layer, head)
    diff = difference(ma, mb, pairs)
    shared = [a.src_labels[i] for i, _ in pairs]
    chart(viz.matrix_heatmap(diff, shared, shared,
                             title=t("compare_diff_title", layer=layer_label(layer),
                                     head=_head_name(head)),
                             row_label=t("query_axis"), col_label=t("key_axis"),
                             text=viz_labels()),
          key="compare_difference")
    p, q = np.unravel_index(int(np.abs(diff).argmax()), diff.shape)
    (ia, ja), (ib, jb) = (pairs[p][0], pairs[q][0]), (pairs[p][1], pairs[q][1])
    st.caption(t("compare_diff_claim", query=code_span(shared[p]), target=code_span(shared[q]),
                 a=f"{ma[ia, ja]:.2f}", b=f"{mb[ib, jb]:.2f}"))


def compare_view(translator: Translator, trace: DecodeTrace, key: tuple) -> None:
    """The Side by side view: ``trace`` (A, the page's decoding) beside the decoding of the
    sidebar's second sentence on the second model (B). Without either, a hint and the
    minimal pair to open (``offer_pair``); a second sentence or model that fails gets a
    message, never a traceback."""
    if st.session_state.get(PAIR_BUTTON):  # its callback has just opened the pair
        # This view runs inside the step-through fragment (``ui.stepper``), whose rerun
        # leaves the sidebar as it was: its boxes would go on showing the old sentences
        # and send them back with the next run, so A would stay the old sentence.
        st.rerun(scope="app")
    st.caption(explain("compare"))
    second = state.read().compare.strip()
    other = _second_model(key)
    if other is None:
        return
    name, other_key, model_b = other
    if not second and name == SAME:  # A alone, where B will stand beside it
        st.info(t("compare_hint"))
        offer_pair(translator, key, trace.settings)
        layer, head = _pickers(trace, trace)
        left, _ = columns(2, wrap=True)
        with left:
            _side(trace, "A", translator.name, layer, head=head)
        return
    if len(second) > MAX_CHARS:
        st.warning(t("compare_too_long", n=len(second), limit=MAX_CHARS))
        return
    sentence = second or trace.src_text
    settings = trace.settings if name == SAME else GenerationSettings()
    try:
        b = decode(other_key, sentence, settings)
    except InputError as exc:
        st.info(t("input_error", error=md_literal(str(exc))))
        return
    b = pinyin.annotate(b, model_b.info)
    layer, head = _pickers(trace, b)
    same_model = other_key == key
    _where_they_part(trace, b, same_model)
    left, right = columns(2, wrap=True)
    with left:
        _side(trace, "A", translator.name, layer, head=head)
    with right:
        _side(b, "B", model_b.name, layer, head=head)
    if name == SAME and trace.beam is None:
        _scored_after_both(key, trace, b, GenerationSettings(
            src_lang=settings.src_lang, tgt_lang=settings.tgt_lang, task=settings.task))
    _difference_map(trace, b, layer, head, same_model=same_model)
