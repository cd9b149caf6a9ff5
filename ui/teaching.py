"""Teaching views: the computation inside one attention head, what the positional
encodings contribute (with an experiment that switches them off), and a real padded batch.
All numbers come from ``model.analysis.internals``; the figures from ``viz``."""

from __future__ import annotations

import numpy as np
import streamlit as st

import viz
from model import (
    DecodeTrace,
    InputError,
    Translator,
    batch_matches_single,
    decode_batch,
    embedding_parts,
    pe_similarity,
)

from . import cache, export
from .charts import chart, columns
from .i18n import (
    KIND_VIEWS,
    STRINGS,
    explain,
    head_label,
    labels,
    layer_label,
    t,
    view_label,
    viz_labels,
)
from .text import md_literal, token_row

# The kinds of attention -> the view that shows them (its name names the kind).
KINDS = KIND_VIEWS  # attention kind -> its view (the inside-one-head picker's labels)
# The positional-encoding parts by id (the English label, the radio's value) -> label key.
PARTS = {STRINGS[k]["en"]: k for k in ("pe_part_embedding", "pe_part_positional",
                                         "pe_part_sum")}
PE_MODES = ("normal", "none", "shuffled")
DEFAULT_BATCH = "why do we work ?\ni have three cats .\nhe reads books in the library ."


def _formula(latex: str, text: str) -> None:
    st.latex(latex)
    st.caption(text)


def inside_head_view(translator: Translator, trace: DecodeTrace, k: int, key: tuple) -> None:
    """Q, K, V -> QK^T -> / sqrt(d_k) -> mask -> softmax -> weighted sum of V, for one head
    (computed once per model, trace and head: ``cache.head_internals``); ``key`` is the
    model's cache key."""
    st.caption(explain("inside"))
    c1, c2, c3, c4 = st.columns(4)
    kind = c1.selectbox(t("ih_kind"), list(KINDS), key="ih_kind",
                        format_func=labels(KINDS, lambda k: view_label(KINDS[k])))
    L, H = trace.cross_attentions.shape[:2]
    layer = c2.selectbox(t("layer"), range(L), format_func=labels(range(L), layer_label),
                         key="ih_layer")
    head = c3.selectbox(t("head"), range(H), format_func=labels(range(H), head_label),
                        key="ih_head")
    hi = cache.head_internals(cache.trace_key(key, trace), kind, int(layer), int(head), trace)
    nq = hi.q.shape[0] if kind == "encoder" else min(k, hi.q.shape[0])  # rows up to step k
    nk = nq if kind == "decoder" else hi.k.shape[0]
    q_tok, k_tok = list(hi.query_tokens[:nq]), list(hi.key_tokens[:nk])
    query = c4.selectbox(t("ih_query"), range(nq), index=nq - 1,
                         format_func=lambda i: f"{i}: {q_tok[i]}", key="ih_query")
    query = min(int(query), nq - 1)
    dk = hi.d_k
    sl = (slice(0, nq), slice(0, nk))
    raw, scaled, mask = hi.raw_scores[sl], hi.scaled_scores[sl], hi.mask[sl]
    weights, out = hi.weights[sl], hi.output[:nq]
    t5 = hi.scaling == 1.0  # T5 does not divide by sqrt(d_k); its self-attention adds B
    biased = hi.position_bias is not None
    scaled_name = "q·k + b" if biased else "q·k" if t5 else "q·k / √d_k"
    # The scores the softmax sees, as a formula: T5's are not divided by sqrt(d_k).
    scores_tex = (r"S_{ij} + B_{h}(j - i)" if biased else "S_{ij}" if t5
                  else r"S_{ij}/\sqrt{d_k}")
    head_tex = (r"QK^{\top} + B" if biased else r"QK^{\top}" if t5
                else r"\frac{QK^{\top}}{\sqrt{d_k}}")
    details = {"q·k": raw, scaled_name: scaled, t("detail_weight"): weights}
    row_label, dk_label = t("token_axis"), t("dk_dimension")

    st.markdown(t("ih_step1"))
    _formula(r"Q = X W_Q^{h},\quad K = X' W_K^{h},\quad V = X' W_V^{h}",
             t("ih_step1_text", n=len(q_tok), d_model=translator.config.d_model, d_k=dk))
    cols = columns(3)
    for col, name, mat, toks in ((cols[0], "Q", hi.q[:nq], q_tok), (cols[1], "K", hi.k[:nk], k_tok),
                                 (cols[2], "V", hi.v[:nk], k_tok)):
        with col:
            chart(viz.matrix_heatmap(mat, toks, title=f"{name} ({len(toks)} × {dk})",
                                     row_label=row_label, col_label=dk_label, text=viz_labels()),
                  key=f"ih_{name}")
    left, right = columns(2)
    with left:
        st.markdown(t("ih_step2"))
        _formula(r"S = Q K^{\top}", t("ih_step2_text"))
        chart(viz.score_heatmap(raw, q_tok, k_tok, None, "Q Kᵀ", details,
                                text=viz_labels()), key="ih_raw")
    with right:
        if t5:
            st.markdown(t("ih_step3_t5" if biased else "ih_step3_t5_cross"))
            _formula(r"S + B_{h}(j - i)" if biased else "S", t("ih_step3_t5_text"))
        else:
            st.markdown(t("ih_step3"))
            _formula(rf"\frac{{Q K^{{\top}}}}{{\sqrt{{d_k}}}} = \frac{{S}}{{\sqrt{{{dk}}}}}",
                     t("ih_step3_text", d_k=dk, root=np.sqrt(dk)))
        chart(viz.score_heatmap(scaled, q_tok, k_tok, None,
                                "Q Kᵀ + B" if biased else "Q Kᵀ" if t5 else "Q Kᵀ / √d_k",
                                details,
                                text=viz_labels()), key="ih_scaled")
    left, right = columns(2)
    with left:
        st.markdown(t("ih_step4"))
        allowed, blocked = t("latex_allowed"), t("latex_blocked")
        _formula(rf"\tilde S_{{ij}} = \begin{{cases}} {scores_tex} & \text{{{allowed}}} "
                 rf"\\ -\infty & \text{{{blocked}}} \end{{cases}}",
                 t("ih_step4_blocked") if mask.any() else t("ih_step4_none"))
        chart(viz.score_heatmap(scaled, q_tok, k_tok, mask, t("ih_masked_title"), details,
                                text=viz_labels()),
              key="ih_masked")
    with right:
        st.markdown(t("ih_step5"))
        _formula(r"A_{ij} = \frac{e^{\tilde S_{ij}}}{\sum_{j'} e^{\tilde S_{ij'}}}",
                 t("ih_step5_text"))
        chart(viz.score_heatmap(weights, q_tok, k_tok, mask, t("ih_weights_title"), details,
                                probabilities=True, text=viz_labels()), key="ih_weights")
    left, right = columns([3, 2])
    with left:
        st.markdown(t("ih_step6"))
        _formula(rf"Z = A V,\qquad \mathrm{{head}}_h = \mathrm{{softmax}}\!\left({head_tex} + M"
                 r"\right) V",
                 t("ih_step6_text", n=nk))
        chart(viz.matrix_heatmap(out, q_tok, title=f"Z = A V ({nq} × {dk})",
                                 row_label=row_label, col_label=dk_label,
                                 text=viz_labels()), key="ih_out")
    with right:
        st.markdown(t("ih_query_numbers", i=query, token=md_literal(q_tok[query])))
        headers = {t("col_key"): k_tok, "q·k": raw[query].round(3)}
        if biased or not t5:  # T5's cross-attention scores are q·k as they are
            headers["+ b" if biased else "÷ √d_k"] = scaled[query].round(3)
        export.show(export.table({**headers, t("col_blocked"): mask[query],
                                  t("col_weight"): weights[query].round(4)}), hide_index=True)


@st.cache_data(max_entries=64, show_spinner=False)
def _batch(_translator: Translator, key: tuple, texts: tuple[str, ...]):
    batch = decode_batch(_translator, list(texts))
    return batch, batch_matches_single(_translator, batch)


def _padded(labels) -> np.ndarray:
    """(B, T) the padded batch's token labels, one row per sentence."""
    return np.array([list(tok) for tok in labels], dtype=object)


def padded_batch(translator: Translator, key: tuple) -> None:
    """2-4 sentences padded into one batch: ids, masks, attention on <pad>, and the check
    that each sentence comes out as when it is decoded alone."""
    st.subheader(t("batch_header"))
    text = st.text_area(t("batch_text"), DEFAULT_BATCH, key="batch_text",
                        height=110, max_chars=900)
    texts = tuple(line for line in text.splitlines() if line.strip())
    try:
        batch, check = _batch(translator, key, texts)
    except InputError as exc:
        st.info(t("batch_error", error=md_literal(str(exc))))
        return
    B = len(texts)
    st.caption(t("batch_caption"))
    rows = [t("batch_row", n=b + 1) for b in range(B)]
    left, right = columns(2)

    def grid(values) -> None:  # (B, T): a row per sentence, a column per position
        export.show(export.grid_table(values, rows, None, "", numbered_rows=False),
                    hide_index=True)

    with left:
        st.markdown(t("batch_source_ids"))
        grid(batch.src_ids)
        grid(_padded(batch.src_labels))
    with right:
        st.markdown(t("batch_decoder_inputs"))
        grid(batch.tgt_ids)
        grid(_padded(batch.tgt_labels))
    b = st.selectbox(t("batch_sentence"), range(B), format_func=lambda i: f"{i + 1}: {texts[i]}",
                     key="batch_sentence")
    b = min(int(b), B - 1)
    src, tgt = list(batch.src_labels[b]), list(batch.tgt_labels[b])
    c1, c2, c3 = columns(3, wrap=True)
    with c1:
        chart(viz.mask_heatmap(np.broadcast_to(batch.source_padding_mask[b], (len(src),
                                                                              len(src))),
                               src, src, title=t("batch_source_mask_title"),
                               query_label=t("query_source"), key_label=t("key_source"),
                               text=viz_labels()),
              key="batch_src_mask")
    with c2:
        chart(viz.mask_heatmap(batch.decoder_mask[b], tgt, tgt,
                               title=t("batch_decoder_mask_title"),
                               query_label=t("query_decoder_input"),
                               key_label=t("key_decoder_input"),
                               text=viz_labels()), key="batch_dec_mask")
    with c3:
        chart(viz.mask_heatmap(batch.cross_mask[b], tgt, src, title=t("batch_cross_mask_title"),
                               query_label=t("query_decoder_input"), key_label=t("key_source"),
                               text=viz_labels()),
              key="batch_cross_mask")
    L, H = batch.cross_attentions.shape[1:3]
    c1, c2 = st.columns(2)
    layer = c1.selectbox(t("layer"), range(L), format_func=labels(range(L), layer_label),
                         key="batch_layer")
    head = c2.selectbox(t("head"), range(H), format_func=labels(range(H), head_label),
                        key="batch_head")
    left, right = columns(2)
    with left:
        chart(viz.attention_heatmap(batch.encoder_attentions[b, layer, head], src, src,
                                    title=t("batch_encoder_title"),
                                    query_label=t("query_source"), key_label=t("key_source"),
                                    text=viz_labels()),
              key="batch_enc")
    with right:
        chart(viz.attention_heatmap(batch.cross_attentions[b, layer, head], tgt, src,
                                    title=t("batch_cross_title"),
                                    query_label=t("query_decoder_input"),
                                    key_label=t("key_source"),
                                    text=viz_labels()), key="batch_cross")
    worst = max(check["max_abs_diff"].values())
    fields = {"sentence": "text", "in_batch": "batch_output", "alone": "single_output",
              "same_output": "same_output", "diff_encoder": "encoder",
              "diff_decoder": "decoder", "diff_cross": "cross", "pad_weight": "pad_weight"}
    export.show(export.table({t(f"col_{name}"): [s[field] for s in check["sentences"]]
                              for name, field in fields.items()}), hide_index=True)
    if check["all_same_output"] and worst <= 1e-5:
        st.success(t("batch_same", worst=worst))
    else:
        st.warning(t("batch_differs", worst=worst))


def positional_extras(translator: Translator, trace: DecodeTrace, tokens: list[str],
                      shown: list[str], source: bool, decode_with) -> None:
    """Similarity of positions, embedding + PE for the sentence (``source``: the source
    sentence, else the decoder input), and the experiment. ``tokens`` are the model's
    tokens, ``shown`` their readable labels (``trace.src_labels`` for the source)."""
    n = len(tokens)
    pe = translator.positional_encoding(n, "source" if source else "target")
    left, right = columns(2)
    with left:
        chart(viz.matrix_heatmap(pe_similarity(pe), shown, shown, symmetric=False,
                                 title=t("pe_similarity_title"),
                                 row_label=t("position_axis"), col_label=t("position_axis"),
                                 text=viz_labels()),
              key="pe_sim")
    parts = embedding_parts(translator, tokens, "source" if source else "target")
    with right:
        what = st.radio(t("pe_show"), list(PARTS), horizontal=True, key="pe_part",
                        format_func=labels(PARTS, lambda p: t(PARTS[p])))
        embedding, positional, _ = PARTS
        mat = {embedding: parts.embedding, positional: parts.positional}.get(what, parts.total)
        chart(viz.matrix_heatmap(mat, shown, title=t("pe_parts_title", what=t(PARTS[what])),
                                 row_label=t("token_axis"), col_label=t("dimension_axis"),
                                 text=viz_labels()),
              key="pe_parts")
    st.markdown(t("pe_experiment"))
    if translator.info.positional_scheme != "sinusoidal":
        st.caption(t("pe_fixed_positions"))
        return
    mode = st.radio(t("pe_mode"), list(PE_MODES), horizontal=True, key="pe_mode",
                    format_func=labels(PE_MODES, lambda m: t(f"pe_mode_{m}")))
    if mode == "normal":
        st.caption(t("pe_mode_hint"))
        return
    other = decode_with(mode)
    st.markdown(t("pe_compare", trained=token_row(trace.output_labels),
                  label=t(f"pe_compare_{mode}"), other=token_row(other.output_labels)))
    L = trace.cross_attentions.shape[0]
    layer = st.selectbox(t("layer"), range(L), format_func=labels(range(L), layer_label),
                         key="pe_layer")
    left, right = columns(2)
    for col, tr, run in ((left, trace, "normal"), (right, other, mode)):
        with col:
            chart(viz.attention_grid(tr.encoder_attentions[layer], list(tr.src_labels),
                                     list(tr.src_labels), ncols=4,
                                     title=t("pe_exp_title", layer=layer,
                                             label=t(f"pe_exp_label_{run}")),
                                     text=viz_labels()),
                  key=f"pe_exp_{STRINGS[f'pe_exp_label_{run}']['en']}")


def relative_bias(translator: Translator, shown: list[str], source: bool) -> None:
    """T5's relative-position bias for this sentence: what one head adds to the score of
    query i and key j (it depends only on the bucket of j - i)."""
    n = len(shown)
    bias = translator.relative_position_bias(n, n, "encoder" if source else "decoder")
    H = bias.shape[0]
    head = st.selectbox(t("head"), range(H), format_func=labels(range(H), head_label),
                        key="pe_bias_head")
    chart(viz.matrix_heatmap(bias[int(head)], shown, shown,
                             title=t("pe_bias_title", head=int(head)),
                             row_label=t("query_axis"), col_label=t("key_axis"), text=viz_labels()),
          key="pe_bias")
    st.caption(t("pe_bias_caption"))
