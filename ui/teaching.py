"""Teaching views: the computation inside one attention head, what the positional
encodings contribute (with an experiment that switches them off), and a real padded batch.
All numbers come from ``model.internals``; the figures from ``viz``."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

import viz
from model import (
    DecodeTrace,
    InputError,
    Translator,
    batch_matches_single,
    decode_batch,
    embedding_parts,
    head_internals,
    pe_similarity,
)

from .charts import chart
from .text import EXPLAIN, md_literal, token_row

KINDS = {"encoder": "Encoder self-attention", "decoder": "Decoder self-attention",
         "cross": "Cross-attention"}
DEFAULT_BATCH = "why do we work ?\ni have three cats .\nhe reads books in the library ."


def _formula(latex: str, text: str) -> None:
    st.latex(latex)
    st.caption(text)


def inside_head_tab(translator: Translator, trace: DecodeTrace, k: int) -> None:
    """Q, K, V -> QK^T -> / sqrt(d_k) -> mask -> softmax -> weighted sum of V, for one head."""
    st.caption(EXPLAIN["Inside one head"])
    c1, c2, c3, c4 = st.columns(4)
    kind = c1.selectbox("Attention", list(KINDS), format_func=KINDS.get, key="ih_kind")
    L, H = trace.cross_attentions.shape[:2]
    layer = c2.selectbox("Layer", range(L), format_func=lambda i: f"Layer {i}", key="ih_layer")
    head = c3.selectbox("Head", range(H), format_func=lambda h: f"Head {h}", key="ih_head")
    hi = head_internals(translator, trace, kind, int(layer), int(head))
    nq = hi.q.shape[0] if kind == "encoder" else min(k, hi.q.shape[0])  # rows up to step k
    nk = nq if kind == "decoder" else hi.k.shape[0]
    q_tok, k_tok = list(hi.query_tokens[:nq]), list(hi.key_tokens[:nk])
    query = c4.selectbox("Query token", range(nq), index=nq - 1,
                         format_func=lambda i: f"{i}: {q_tok[i]}", key="ih_query")
    query = min(int(query), nq - 1)
    dk = hi.d_k
    sl = (slice(0, nq), slice(0, nk))
    raw, scaled, mask = hi.raw_scores[sl], hi.scaled_scores[sl], hi.mask[sl]
    weights, out = hi.weights[sl], hi.output[:nq]
    details = {"q·k": raw, "q·k / √d_k": scaled, "weight": weights}

    st.markdown("**1. Queries, keys and values of this head**")
    _formula(r"Q = X W_Q^{h},\quad K = X' W_K^{h},\quad V = X' W_V^{h}",
             f"X: the {len(q_tok)} query positions' inputs to this layer; X': the keys' "
             f"(the encoder output for cross-attention). Each head projects d_model = "
             f"{translator.config.d_model} numbers to d_k = {dk}.")
    cols = st.columns(3)
    for col, name, mat, toks in ((cols[0], "Q", hi.q[:nq], q_tok), (cols[1], "K", hi.k[:nk], k_tok),
                                 (cols[2], "V", hi.v[:nk], k_tok)):
        with col:
            chart(viz.matrix_heatmap(mat, toks, title=f"{name} ({len(toks)} × {dk})",
                                     col_label="d_k dimension"), key=f"ih_{name}")
    left, right = st.columns(2)
    with left:
        st.markdown("**2. Raw scores**")
        _formula(r"S = Q K^{\top}", "How well each query matches each key (dot products).")
        chart(viz.score_heatmap(raw, q_tok, k_tok, None, "Q Kᵀ", details), key="ih_raw")
    with right:
        st.markdown("**3. Scaled scores**")
        _formula(rf"\frac{{Q K^{{\top}}}}{{\sqrt{{d_k}}}} = \frac{{S}}{{\sqrt{{{dk}}}}}",
                 f"Divided by √{dk} = {np.sqrt(dk):.2f} so the softmax does not saturate.")
        chart(viz.score_heatmap(scaled, q_tok, k_tok, None, "Q Kᵀ / √d_k", details),
              key="ih_scaled")
    left, right = st.columns(2)
    with left:
        st.markdown("**4. The mask**")
        _formula(r"\tilde S_{ij} = \begin{cases} S_{ij}/\sqrt{d_k} & \text{allowed} \\ "
                 r"-\infty & \text{blocked} \end{cases}",
                 "Blocked cells (grey) get −∞: look-ahead in the decoder, <pad> keys in a "
                 "batch." if mask.any() else "Nothing is blocked here: one sentence has no "
                 "padding, and only the decoder's self-attention looks ahead.")
        chart(viz.score_heatmap(scaled, q_tok, k_tok, mask, "Masked scores", details),
              key="ih_masked")
    with right:
        st.markdown("**5. Softmax**")
        _formula(r"A_{ij} = \frac{e^{\tilde S_{ij}}}{\sum_{j'} e^{\tilde S_{ij'}}}",
                 "Each row becomes weights that sum to 1; a −∞ cell gets exactly 0. These are "
                 "the model's own attention weights for this head.")
        chart(viz.score_heatmap(weights, q_tok, k_tok, mask, "Attention weights A", details,
                                probabilities=True), key="ih_weights")
    left, right = st.columns([3, 2])
    with left:
        st.markdown("**6. Weighted sum of the values**")
        _formula(r"Z = A V,\qquad \mathrm{head}_h = \mathrm{softmax}\!\left(\frac{QK^{\top}}"
                 r"{\sqrt{d_k}} + M\right) V",
                 f"Each query's output is a mix of the value rows, {nk} keys weighted by A. "
                 "The heads' outputs are concatenated and multiplied by W_O.")
        chart(viz.matrix_heatmap(out, q_tok, title=f"Z = A V ({nq} × {dk})",
                                 col_label="d_k dimension"), key="ih_out")
    with right:
        st.markdown(f"**Query {query}: {md_literal(q_tok[query])}, number by number**")
        st.dataframe(pd.DataFrame({
            "key": k_tok,
            "q·k": raw[query].round(3),
            "÷ √d_k": scaled[query].round(3),
            "blocked": mask[query],
            "weight": weights[query].round(4),
        }), hide_index=True)


@st.cache_data(max_entries=64, show_spinner=False)
def _batch(_translator: Translator, key: tuple, texts: tuple[str, ...]):
    batch = decode_batch(_translator, list(texts))
    return batch, batch_matches_single(_translator, batch)


def padded_batch(translator: Translator, key: tuple) -> None:
    """2-4 sentences padded into one batch: ids, masks, attention on <pad>, and the check
    that each sentence comes out as when it is decoded alone."""
    st.subheader("A real padded batch")
    text = st.text_area("2 to 4 sentences, one per line", DEFAULT_BATCH, key="batch_text",
                        height=110, max_chars=900)
    texts = tuple(line for line in text.splitlines() if line.strip())
    try:
        batch, check = _batch(translator, key, texts)
    except InputError as exc:
        st.info(md_literal(str(exc)))
        return
    B = len(texts)
    st.caption("The shorter sentences are padded with `<pad>` (id 0) to the longest; the "
               "padding mask blocks those columns for every query.")
    left, right = st.columns(2)
    with left:
        st.markdown("**Source ids (B × S)**")
        st.dataframe(pd.DataFrame(batch.src_ids, index=[f"sentence {b + 1}" for b in range(B)]))
        st.dataframe(pd.DataFrame([list(t) for t in batch.src_tokens],
                                  index=[f"sentence {b + 1}" for b in range(B)]))
    with right:
        st.markdown("**Decoder inputs (B × T)**")
        st.dataframe(pd.DataFrame(batch.tgt_ids, index=[f"sentence {b + 1}" for b in range(B)]))
        st.dataframe(pd.DataFrame([list(t) for t in batch.tgt_tokens],
                                  index=[f"sentence {b + 1}" for b in range(B)]))
    b = st.selectbox("Sentence", range(B), format_func=lambda i: f"{i + 1}: {texts[i]}",
                     key="batch_sentence")
    b = min(int(b), B - 1)
    src, tgt = list(batch.src_tokens[b]), list(batch.tgt_tokens[b])
    c1, c2, c3 = st.columns(3)
    with c1:
        chart(viz.mask_heatmap(np.broadcast_to(batch.source_padding_mask[b], (len(src),
                                                                              len(src))),
                               src, src, title="Source padding mask (encoder)",
                               query_label="Query: source", key_label="Key: source"),
              key="batch_src_mask")
    with c2:
        chart(viz.mask_heatmap(batch.decoder_mask[b], tgt, tgt,
                               title="Decoder mask: padding OR look-ahead",
                               query_label="Query: decoder input",
                               key_label="Key: decoder input"), key="batch_dec_mask")
    with c3:
        chart(viz.mask_heatmap(batch.cross_mask[b], tgt, src, title="Cross-attention mask",
                               query_label="Query: decoder input", key_label="Key: source"),
              key="batch_cross_mask")
    L, H = batch.cross_attentions.shape[1:3]
    c1, c2 = st.columns(2)
    layer = c1.selectbox("Layer", range(L), format_func=lambda i: f"Layer {i}",
                         key="batch_layer")
    head = c2.selectbox("Head", range(H), format_func=lambda h: f"Head {h}", key="batch_head")
    left, right = st.columns(2)
    with left:
        chart(viz.attention_heatmap(batch.encoder_attentions[b, layer, head], src, src,
                                    title="Encoder self-attention in the batch",
                                    query_label="Query: source", key_label="Key: source"),
              key="batch_enc")
    with right:
        chart(viz.attention_heatmap(batch.cross_attentions[b, layer, head], tgt, src,
                                    title="Cross-attention in the batch",
                                    query_label="Query: decoder input",
                                    key_label="Key: source"), key="batch_cross")
    worst = max(check["max_abs_diff"].values())
    rows = [{"sentence": s["text"], "in the batch": s["batch_output"],
             "alone": s["single_output"], "same output": s["same_output"],
             "max |Δ| encoder": s["encoder"], "max |Δ| decoder": s["decoder"],
             "max |Δ| cross": s["cross"], "weight on <pad>": s["pad_weight"]}
            for s in check["sentences"]]
    st.dataframe(pd.DataFrame(rows), hide_index=True)
    if check["all_same_output"] and worst <= 1e-5:
        st.success(f"Every sentence decodes as it does alone, and its attention over its real "
                   f"tokens matches to {worst:.1e} (≤ 1e-5); <pad> keys get weight 0.")
    else:
        st.warning(f"The batch differs from the sentences alone (max |Δ| {worst:.1e}).")


def positional_extras(translator: Translator, trace: DecodeTrace, tokens: list[str],
                      side: str, decode_with) -> None:
    """Similarity of positions, embedding + PE for the sentence, and the experiment."""
    n = len(tokens)
    pe = translator.positional_encoding(n)
    left, right = st.columns(2)
    with left:
        chart(viz.matrix_heatmap(pe_similarity(pe), tokens, tokens, symmetric=False,
                                 title="PE(i) · PE(j): nearby positions are similar",
                                 row_label="Position", col_label="Position"), key="pe_sim")
    parts = embedding_parts(translator, tokens, "source" if side == "Source sentence"
                            else "target")
    with right:
        what = st.radio("Show", ["Token embedding × √d_model", "Positional encoding", "Sum"],
                        horizontal=True, key="pe_part")
        mat = {"Token embedding × √d_model": parts.embedding, "Positional encoding":
               parts.positional, "Sum": parts.total}[what]
        chart(viz.matrix_heatmap(mat, tokens, title=f"{what}: what the first layer reads",
                                 col_label="Dimension"), key="pe_parts")
    st.markdown("**Experiment: switch the positional encodings off or shuffle them**")
    mode = st.radio("Positional encodings", ["normal", "none", "shuffled"], horizontal=True,
                    key="pe_mode", format_func={"normal": "as trained", "none": "off",
                                                "shuffled": "shuffled positions"}.get)
    if mode == "normal":
        st.caption("Pick 'off' or 'shuffled' to decode the same sentence without word order.")
        return
    other = decode_with(mode)
    st.markdown(f"As trained: {token_row(trace.output_tokens)}  \n"
                f"{'Off' if mode == 'none' else 'Shuffled'}: {token_row(other.output_tokens)}")
    L = trace.cross_attentions.shape[0]
    layer = st.selectbox("Layer", range(L), format_func=lambda i: f"Layer {i}", key="pe_layer")
    left, right = st.columns(2)
    for col, tr, label in ((left, trace, "as trained"), (right, other, mode)):
        with col:
            chart(viz.attention_grid(tr.encoder_attentions[layer], list(tr.src_tokens),
                                     list(tr.src_tokens), ncols=4,
                                     title=f"Encoder self-attention, layer {layer} ({label})"),
                  key=f"pe_exp_{label}")
