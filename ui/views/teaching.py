"""Teaching views: the computation inside one attention head, what the positional
encodings contribute (with an experiment that switches them off), and a real padded batch.
All numbers come from ``model.analysis.internals``; the figures from ``viz``."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import streamlit as st

import viz
from model import (
    ATTENTION_KINDS,
    BatchTrace,
    DecodeTrace,
    InputError,
    Translator,
    batch_matches_single,
    decode_batch,
    embedding_parts,
    pe_similarity,
)
from viz.convention import head_number, layer_number, position_label, position_number

from .. import cache, export
from ..charts import chart, columns
from ..i18n import (
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
from ..text import md_literal, token_row

# The kinds of attention -> the view that shows them (its name names the kind).
KINDS = KIND_VIEWS  # attention kind -> its view (the inside-one-head picker's labels)
ONE_STACK_KINDS = {"decoder": "sequence"}  # a decoder-only model's one kind, and its view
# The positional-encoding parts by id (the English label, the radio's value) -> label key.
PARTS = {STRINGS[k]["en"]: k for k in ("pe_part_embedding", "pe_part_positional",
                                         "pe_part_sum")}
PE_MODES = ("normal", "none", "shuffled")
DEFAULT_BATCH = "why do we work ?\ni have three cats .\nhe reads books in the library ."
# The batch a model starts with, by its source language (``ModelInfo.source_language``;
# any other, or none known, starts with the English one).
DEFAULT_BATCHES = {"en": DEFAULT_BATCH, "zh": "我们为什么工作？\n我有三只猫。\n他在图书馆看书。"}
BATCH_KEY = "batch_text"  # the batch's text box (an English source's; ``batch_key``)


def batch_key(source_language: str) -> str:
    """The key of the batch's text box for a model reading ``source_language``: one box per
    language, so that a model of the other direction starts with sentences it reads
    (a keyed text box keeps its text when its default changes)."""
    lang = source_language if source_language in DEFAULT_BATCHES else "en"
    return BATCH_KEY if lang == "en" else f"{BATCH_KEY}_{lang}"


def _formula(latex: str, text: str) -> None:
    st.latex(latex)
    st.caption(text)


def inside_head_view(translator: Translator, trace: DecodeTrace, k: int, key: tuple) -> None:
    """Q, K, V -> QK^T -> / sqrt(d_k) -> mask -> softmax -> weighted sum of V, for one head
    (computed once per model, trace and head: ``cache.head_internals``); ``key`` is the
    model's cache key."""
    st.caption(explain("inside"))
    try:
        h = _pick_head(trace, k, key)
    except InputError as exc:  # a model whose heads cannot be taken apart yet
        st.info(t("input_error", error=md_literal(str(exc))))
        return
    st.markdown(t("ih_step1"))
    _formula(r"Q = X W_Q^{h},\quad K = X' W_K^{h},\quad V = X' W_V^{h}",
             t("ih_step1_text", n=len(h.q_tok), d_model=translator.config.d_model, d_k=h.dk))
    if translator.info.num_key_value_heads:  # grouped-query attention: a shared K and V
        st.caption(t("ih_kv_shared", kv=head_number(h.kv_head),
                     n=translator.config.nhead // translator.info.num_key_value_heads))
    q, k = (h.q, h.k) if h.projected is None else h.projected
    _matrices((("Q", q, h.q_tok), ("K", k, h.k_tok), ("V", h.v, h.k_tok)), h.dk, "ih_")
    if h.rotated:
        st.markdown(t("ih_rope"))
        _formula(r"q_m \leftarrow R_{\Theta,m}\, q_m,\qquad k_n \leftarrow R_{\Theta,n}\, k_n"
                 r",\qquad q_m^{\top} k_n = q_m^{\top} R_{\Theta,n-m}\, k_n",
                 t("ih_rope_normed" if h.normed else "ih_rope_text"))
        _matrices((("Q", h.q, h.q_tok), ("K", h.k, h.k_tok)), h.dk, "ih_rope_")
    _score_steps(h)
    _mask_and_softmax_steps(h)
    _output_step(h)


def _matrices(shown, dk: int, key: str) -> None:
    """Each (name, (n, d_k) matrix, n token labels) of ``shown`` as a heatmap, side by
    side (chart keys ``key`` + name)."""
    for col, (name, mat, toks) in zip(columns(3), shown, strict=False):
        with col:
            chart(viz.matrix_heatmap(mat, toks, title=f"{name} ({len(toks)} × {dk})",
                                     row_label=t("token_axis"), col_label=t("dk_dimension"),
                                     text=viz_labels()),
                  key=f"{key}{name}")


@dataclass(frozen=True)
class _Head:
    """One head's numbers as the inside-one-head view shows them: the first ``nq`` queries
    (up to step k, or every source token) over the ``nk`` keys they may see."""

    q_tok: list[str]  # nq query labels
    k_tok: list[str]  # nk key labels
    query: int  # the query whose numbers the table gives
    dk: int  # d_k
    q: np.ndarray  # (nq, d_k)
    k: np.ndarray  # (nk, d_k)
    v: np.ndarray  # (nk, d_k)
    raw: np.ndarray  # (nq, nk) Q K^T
    scaled: np.ndarray  # (nq, nk) the scores the softmax sees, before the mask
    mask: np.ndarray  # (nq, nk) bool, True = blocked
    weights: np.ndarray  # (nq, nk)
    out: np.ndarray  # (nq, d_k) A V
    t5: bool  # T5 does not divide by sqrt(d_k)
    biased: bool  # T5's self-attention adds a relative-position bias B
    projected: tuple[np.ndarray, np.ndarray] | None = None  # q, k before norm and RoPE
    rotated: bool = False  # q and k turned by position (RoPE): ``q``, ``k`` are after it
    normed: bool = False  # Qwen3: q and k RMS-normalised before RoPE
    kv_head: int = 0  # the key/value head it reads (shared under grouped-query attention)

    @property
    def details(self) -> dict[str, np.ndarray]:
        """The (nq, nk) numbers behind each score cell, for the hover."""
        scaled_name = "q·k + b" if self.biased else "q·k" if self.t5 else "q·k / √d_k"
        return {"q·k": self.raw, scaled_name: self.scaled, t("detail_weight"): self.weights}


def _pick_head(trace: DecodeTrace, k: int, key: tuple) -> _Head:
    """The kind, layer, head and query pickers (one row), and the picked head's numbers
    (``cache.head_internals``) up to step k."""
    c1, c2, c3, c4 = st.columns(4)
    one = trace.architecture == "decoder-only"  # one stack: its heads over one sequence
    kinds = ONE_STACK_KINDS if one else KINDS
    if st.session_state.get("ih_kind") not in kinds:  # another model's kind
        st.session_state.pop("ih_kind", None)
    kind = c1.selectbox(t("ih_kind"), list(kinds), key="ih_kind",
                        format_func=labels(kinds, lambda k: view_label(kinds[k])))
    L, H = trace.cross_attentions.shape[:2]
    layer = c2.selectbox(t("layer"), range(L), format_func=labels(range(L), layer_label),
                         key="ih_layer")
    head = c3.selectbox(t("head"), range(H), format_func=labels(range(H), head_label),
                        key="ih_head")
    hi = cache.head_internals(cache.trace_key(key, trace), kind, int(layer), int(head),
                              _trace=trace)
    # rows up to step k (a decoder-only model's: the prompt's S, then k decoder inputs)
    upto = k + len(trace.src_tokens) if one else k
    nq = hi.q.shape[0] if kind == "encoder" else min(upto, hi.q.shape[0])
    nk = nq if kind == "decoder" else hi.k.shape[0]
    q_tok, k_tok = list(hi.query_tokens[:nq]), list(hi.key_tokens[:nk])
    query = c4.selectbox(t("ih_query"), range(nq), index=nq - 1,
                         format_func=lambda i: position_label(i, q_tok[i]), key="ih_query")
    sl = (slice(0, nq), slice(0, nk))
    return _Head(q_tok=q_tok, k_tok=k_tok, query=min(int(query), nq - 1), dk=hi.d_k,
                 q=hi.q[:nq], k=hi.k[:nk], v=hi.v[:nk], raw=hi.raw_scores[sl],
                 scaled=hi.scaled_scores[sl], mask=hi.mask[sl], weights=hi.weights[sl],
                 out=hi.output[:nq], t5=hi.scaling == 1.0,
                 biased=hi.position_bias is not None,
                 projected=None if hi.q_projected is None else (hi.q_projected[:nq],
                                                                hi.k_projected[:nk]),
                 rotated=hi.rotated, normed=hi.normed,
                 kv_head=hi.kv_head)


def _score_steps(h: _Head) -> None:
    """Steps 2 and 3 side by side: the dot products Q Kᵀ, then the scores the softmax sees
    (divided by √d_k; T5's plus its bias, or as they are)."""
    left, right = columns(2)
    with left:
        st.markdown(t("ih_step2"))
        _formula(r"S = Q K^{\top}", t("ih_step2_text"))
        chart(viz.score_heatmap(h.raw, h.q_tok, h.k_tok, None, title="Q Kᵀ", details=h.details,
                                text=viz_labels()), key="ih_raw")
    with right:
        if h.t5:
            st.markdown(t("ih_step3_t5" if h.biased else "ih_step3_t5_cross"))
            _formula(r"S + B_{h}(j - i)" if h.biased else "S", t("ih_step3_t5_text"))
        else:
            st.markdown(t("ih_step3"))
            _formula(rf"\frac{{Q K^{{\top}}}}{{\sqrt{{d_k}}}} = \frac{{S}}{{\sqrt{{{h.dk}}}}}",
                     t("ih_step3_text", d_k=h.dk, root=np.sqrt(h.dk)))
        chart(viz.score_heatmap(h.scaled, h.q_tok, h.k_tok, None,
                                title="Q Kᵀ + B" if h.biased else "Q Kᵀ" if h.t5
                                else "Q Kᵀ / √d_k",
                                details=h.details,
                                text=viz_labels()), key="ih_scaled")


def _mask_and_softmax_steps(h: _Head) -> None:
    """Steps 4 and 5 side by side: the mask (blocked scores become −∞), then the softmax."""
    # The scores the softmax sees, as a formula: T5's are not divided by sqrt(d_k).
    scores_tex = (r"S_{ij} + B_{h}(j - i)" if h.biased else "S_{ij}" if h.t5
                  else r"S_{ij}/\sqrt{d_k}")
    left, right = columns(2)
    with left:
        st.markdown(t("ih_step4"))
        allowed, blocked = t("latex_allowed"), t("latex_blocked")
        _formula(rf"\tilde S_{{ij}} = \begin{{cases}} {scores_tex} & \text{{{allowed}}} "
                 rf"\\ -\infty & \text{{{blocked}}} \end{{cases}}",
                 t("ih_step4_blocked") if h.mask.any() else t("ih_step4_none"))
        chart(viz.score_heatmap(h.scaled, h.q_tok, h.k_tok, h.mask, title=t("ih_masked_title"),
                                details=h.details, text=viz_labels()),
              key="ih_masked")
    with right:
        st.markdown(t("ih_step5"))
        _formula(r"A_{ij} = \frac{e^{\tilde S_{ij}}}{\sum_{j'} e^{\tilde S_{ij'}}}",
                 t("ih_step5_text"))
        chart(viz.score_heatmap(h.weights, h.q_tok, h.k_tok, h.mask,
                                title=t("ih_weights_title"), details=h.details,
                                probabilities=True, text=viz_labels()), key="ih_weights")


def _output_step(h: _Head) -> None:
    """Step 6: the head's output Z = A V, beside the picked query's numbers as a table."""
    head_tex = (r"QK^{\top} + B" if h.biased else r"QK^{\top}" if h.t5
                else r"\frac{QK^{\top}}{\sqrt{d_k}}")
    left, right = columns([3, 2])
    with left:
        st.markdown(t("ih_step6"))
        _formula(rf"Z = A V,\qquad \mathrm{{head}}_h = \mathrm{{softmax}}\!\left({head_tex} + M"
                 r"\right) V",
                 t("ih_step6_text", n=len(h.k_tok)))
        chart(viz.matrix_heatmap(h.out, h.q_tok, title=f"Z = A V ({len(h.q_tok)} × {h.dk})",
                                 row_label=t("token_axis"), col_label=t("dk_dimension"),
                                 text=viz_labels()), key="ih_out")
    with right:
        query = h.query
        st.markdown(t("ih_query_numbers", i=position_number(query),
                      token=md_literal(h.q_tok[query])))
        headers = {t("col_key"): h.k_tok, "q·k": h.raw[query].round(3)}
        if h.biased or not h.t5:  # T5's cross-attention scores are q·k as they are
            headers["+ b" if h.biased else "÷ √d_k"] = h.scaled[query].round(3)
        export.show(export.table({**headers, t("col_blocked"): h.mask[query],
                                  t("col_weight"): h.weights[query].round(4)}), hide_index=True)


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
    lang = translator.info.source_language
    text = st.text_area(t("batch_text"), DEFAULT_BATCHES.get(lang, DEFAULT_BATCH),
                        key=batch_key(lang), height=110, max_chars=900)
    texts = tuple(line for line in text.splitlines() if line.strip())
    try:
        batch, check = _batch(translator, key, texts)
    except InputError as exc:
        st.info(t("batch_error", error=md_literal(str(exc))))
        return
    B, one = len(texts), translator.info.architecture == "decoder-only"
    st.caption(t("batch_caption_one" if one else "batch_caption"))
    _batch_grids(batch, [t("batch_row", n=b + 1) for b in range(B)], one)
    b = st.selectbox(t("batch_sentence"), range(B), format_func=lambda i: f"{i + 1}: {texts[i]}",
                     key="batch_sentence")
    b = min(int(b), B - 1)
    src, tgt = list(batch.src_labels[b]), list(batch.tgt_labels[b])
    if one:
        _one_sequence(batch, b, [*src, *tgt])
    else:
        _batch_masks(batch, b, src, tgt)
        _batch_attention(batch, b, src, tgt)
    _batch_check(check, one)


def _batch_grids(batch: BatchTrace, rows: list[str], one: bool = False) -> None:
    """The batch's source ids and decoder inputs (ids, then tokens) as (B, T) tables, a row
    (named ``rows``) per sentence, side by side; ``one`` (a decoder-only model): its one
    sequence per row, (B, S + T), the padded prompt and then the decoder inputs."""
    def grid(values) -> None:  # (B, T): a row per sentence, a column per position
        export.show(export.grid_table(values, rows, None, "", numbered_rows=False),
                    hide_index=True)

    if one:
        st.markdown(t("batch_one_ids"))
        grid(np.concatenate([batch.src_ids, batch.tgt_ids], axis=1))
        grid(np.concatenate([_padded(batch.src_labels), _padded(batch.tgt_labels)], axis=1))
        return
    left, right = columns(2)
    with left:
        st.markdown(t("batch_source_ids"))
        grid(batch.src_ids)
        grid(_padded(batch.src_labels))
    with right:
        st.markdown(t("batch_decoder_inputs"))
        grid(batch.tgt_ids)
        grid(_padded(batch.tgt_labels))


def _batch_masks(batch: BatchTrace, b: int, src: list[str], tgt: list[str]) -> None:
    """Sentence ``b``'s three masks in the batch (source padding, decoder, cross), with its
    source tokens ``src`` and decoder inputs ``tgt``."""
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


def _batch_attention(batch: BatchTrace, b: int, src: list[str], tgt: list[str]) -> None:
    """A layer and head picker, then sentence ``b``'s encoder and cross-attention of that
    head in the batch (its <pad> keys included)."""
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


def _one_sequence(batch: BatchTrace, b: int, labels_b: list[str]) -> None:
    """A decoder-only model's sentence ``b`` in the batch: its one padded sequence's mask
    (padding OR look-ahead, ``BatchTrace.one_mask``) beside a picked head's attention over
    it, the blocked cells drawn (``labels_b``: its N token labels)."""
    maps, mask = batch.one_map(b), batch.one_mask(b)  # (L, H, N, N), (N, N)
    L, H = maps.shape[:2]
    c1, c2 = st.columns(2)
    layer = c1.selectbox(t("layer"), range(L), format_func=labels(range(L), layer_label),
                         key="batch_layer")
    head = c2.selectbox(t("head"), range(H), format_func=labels(range(H), head_label),
                        key="batch_head")
    left, right = columns(2, wrap=True)
    with left:
        chart(viz.mask_heatmap(mask, labels_b, labels_b, title=t("batch_one_mask_title"),
                               query_label=t("query_sequence"), key_label=t("key_sequence"),
                               text=viz_labels()), key="batch_one_mask")
    with right:
        chart(viz.attention_heatmap(maps[layer, head], labels_b, labels_b,
                                    title=t("batch_one_title"), blocked=mask,
                                    query_label=t("query_sequence"),
                                    key_label=t("key_sequence"), text=viz_labels()),
              key="batch_one")


def _batch_check(check: dict, one: bool = False) -> None:
    """Each sentence decoded in the batch against alone (``batch_matches_single``), as a
    table, and whether they all agree; ``one`` (a decoder-only model): one column for its
    one sequence's map, the largest of the three blocks' differences."""
    worst = max(check["max_abs_diff"].values())
    rows = check["sentences"]
    diffs = {"diff_encoder": "encoder", "diff_decoder": "decoder", "diff_cross": "cross"}
    if one:
        rows = [{**r, "sequence": max(r[k] for k in ATTENTION_KINDS)} for r in rows]
        diffs = {"diff_sequence": "sequence"}
    fields = {"sentence": "text", "in_batch": "batch_output", "alone": "single_output",
              "same_output": "same_output", **diffs, "pad_weight": "pad_weight"}
    export.show(export.table({t(f"col_{name}"): [r[field] for r in rows]
                              for name, field in fields.items()}), hide_index=True)
    if check["all_same_output"] and worst <= 1e-5:
        st.success(t("batch_same", worst=worst))
    else:
        st.warning(t("batch_differs", worst=worst))


def positional_extras(translator: Translator, trace: DecodeTrace, tokens: list[str],
                      shown: list[str], *, source: bool, decode_with) -> None:
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
                                     title=t("pe_exp_title", layer=layer_number(layer),
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
                             title=t("pe_bias_title", head=head_number(head)),
                             row_label=t("query_axis"), col_label=t("key_axis"), text=viz_labels()),
          key="pe_bias")
    st.caption(t("pe_bias_caption"))
