"""The Attribution view (``view=attribution``; issue 35): what each step used, beside where it
looked. For one decoder layer: its cross-attention (the mean of its heads) and value zeroing
(``model.analysis.value_zeroing``: how far the layer's output moves when one source token's
values are zeroed), both as (T, S) maps on the same axes, with the picked head's map; the
current step's share drawn from the sentence and from the translation so far; gradient x input
and, when asked, integrated gradients; and for every head, how well its
cross-attention agrees with value zeroing (``model.analysis.agreement``: Spearman's rho and
the same top token), as a layer x head grid and a sortable table. Every sentence of the text
is computed from the arrays drawn beside it.
"""

from __future__ import annotations

import numpy as np
import streamlit as st
import torch

import viz
from model import DecodeTrace, Translator
from model.analysis.agreement import head_agreement
from model.analysis.attribution import Attribution, attribute
from model.analysis.heldout_heads import AGREEMENT_METHODS
from model.analysis.value_zeroing import ValueZeroing, value_zeroing
from model.core.heldout import HELDOUT_SIZE

from .. import cache, state
from ..charts import chart, columns
from ..export import columns_table, show
from ..i18n import explain, head_label, labels, layer_label, t, viz_labels
from ..text import code_span

LAYER_KEY, HEAD_KEY = state.layer_key("attribution"), state.head_key("attribution")
IG_KEY = "attribution_ig"  # the integrated-gradients button


@st.cache_data(max_entries=32, show_spinner=False)
def zeroing(trace_id: tuple, _trace: DecodeTrace) -> ValueZeroing:
    """``value_zeroing`` of ``_trace`` (whose ``cache.trace_key`` is ``trace_id``) on its
    model: one pass per layer and intervention kind, once per trace."""
    model = cache.load_model(*trace_id[0]).model
    return value_zeroing(model, torch.as_tensor(_trace.src_ids),
                         torch.as_tensor(_trace.tgt_ids[:-1]))


@st.cache_data(max_entries=32, show_spinner=False)
def gradients(trace_id: tuple, method: str, _trace: DecodeTrace) -> Attribution:
    """``attribution.attribute`` of ``_trace`` by ``method`` on its model, once per trace."""
    model = cache.load_model(*trace_id[0]).model
    return attribute(model, torch.as_tensor(_trace.src_ids), torch.as_tensor(_trace.tgt_ids),
                     method)


def _map_chart(trace: DecodeTrace, k: int, z: np.ndarray, title: str, *, key: str) -> None:
    """A (T, S) map on the Cross-attention view's axes (a decoder-only model's: the prompt's
    tokens), step k's largest cell outlined."""
    one = trace.architecture == "decoder-only"
    chart(viz.attention_heatmap(z, list(trace.step_labels), list(trace.src_labels),
                                title=title, query_label=t("query_decoder_input"),
                                key_label=t("key_prompt_token" if one else "key_source_token"),
                                marked=[(k - 1, int(z[k - 1].argmax()))],
                                text=viz_labels()), key=key)


def _gradients(trace: DecodeTrace, k: int, trace_id: tuple) -> None:
    """Gradient x input at once; integrated gradients when asked (a minute or two), with
    their completeness error."""
    left, right = columns(2, wrap=True)
    with left:
        _map_chart(trace, k, gradients(trace_id, "input_x_gradient", trace).normalised()[0],
                   t("attr_gxi_title"), key="attribution_gxi")
    with right:
        if not (st.session_state.get(IG_KEY) or st.button(t("attr_ig_button"), key=IG_KEY,
                                                           help=t("attr_ig_help"))):
            return
        with st.spinner(t("attr_ig_spinner")):
            ig = gradients(trace_id, "integrated_gradients", trace)
        _map_chart(trace, k, ig.normalised()[0], t("attr_ig_title"), key="attribution_ig_chart")
        st.caption(t("attr_ig_claim", error=f"{100 * float(ig.completeness_error.max()):.1f}",
                     points=int(ig.n_steps.max()),
                     share=round(100 * float(ig.source_share()[k - 1])), k=k))


def _step_claim(trace: DecodeTrace, k: int, layer: int, attention: np.ndarray,
                *, vz_cross: np.ndarray, share: np.ndarray) -> str:
    """What step k drew on in ``layer``: the sentence's share and each map's top token."""
    row = k - 1
    return t("attr_step_claim", k=k, token=code_span(trace.tgt_labels[k]),
             layer=layer_label(layer), src=round(100 * float(share[row])),
             tgt=100 - round(100 * float(share[row])),
             att=code_span(trace.src_labels[int(attention[row].argmax())]),
             vz=code_span(trace.src_labels[int(vz_cross[row].argmax())]))


def _picked_head(trace: DecodeTrace, k: int, layer: int, rho: np.ndarray, *, top1: np.ndarray
                 ) -> None:
    """The picked head's cross-attention in ``layer`` on the same axes, and its agreement
    with value zeroing on this sentence (``rho``, ``top1``: (L, H) ``head_agreement``)."""
    H = trace.cross_attentions.shape[1]
    head = int(st.selectbox(t("head"), range(H), key=HEAD_KEY,
                            format_func=labels(range(H), head_label)))
    left, right = columns(2, wrap=True)
    with left:
        _map_chart(trace, k, trace.cross_attentions[layer, head],
                   t("attr_head_title", layer=layer_label(layer), head=head_label(head)),
                   key="attribution_head_chart")
    with right:
        st.caption(t("attr_head_claim", head=f"{layer_label(layer)}, {head_label(head)}",
                     rho=f"{rho[layer, head]:.2f}", top=round(100 * top1[layer, head])))


def _agreement(trace: DecodeTrace, rho: np.ndarray, top1: np.ndarray) -> None:
    """Each head's agreement with value zeroing of its layer (``rho``, ``top1``: (L, H)
    ``head_agreement``): grid, table and the best and least agreeing heads named."""
    st.markdown(t("attr_agree_title"))
    chart(viz.head_grid(rho, t("attr_agree_grid"), row_label=t("col_layer"),
                        col_label=t("col_head"), value_label=t("attr_col_rho"), zmin=-1.0,
                        zmax=1.0, text=viz_labels()), key="attribution_grid")
    rows = [(layer_label(i), head_label(h), rho[i, h], 100 * top1[i, h])
            for i in range(rho.shape[0]) for h in range(rho.shape[1])]
    frame = columns_table(rows, [t("col_layer"), t("col_head"), t("attr_col_rho"),
                                 t("attr_col_top1")])
    show(frame, hide_index=True, column_config={
        t("attr_col_rho"): st.column_config.NumberColumn(format="%.2f"),
        t("attr_col_top1"): st.column_config.NumberColumn(format="%.0f")})
    if np.isfinite(rho).any():
        best = np.unravel_index(int(np.nanargmax(rho)), rho.shape)
        worst = np.unravel_index(int(np.nanargmin(rho)), rho.shape)
        st.caption(t("attr_agree_claim", best=f"{layer_label(best[0])}, {head_label(best[1])}",
                     rho=f"{rho[best]:.2f}", top=round(100 * top1[best]),
                     worst=f"{layer_label(worst[0])}, {head_label(worst[1])}",
                     rho_worst=f"{rho[worst]:.2f}"))


def _heldout_agreement(key: tuple) -> None:
    """Each head's agreement with value zeroing and with gradient x input over the model's
    held-out pairs, as its folder keeps them (``heldout_heads``): grid and table; a note
    when the folder keeps none."""
    kept = cache.kept_heads(key, HELDOUT_SIZE)
    if kept is None or kept.agreement is None:
        st.caption(t("attr_heldout_none"))
        return
    (rho, top1), (rho_g, top1_g) = (kept.agreement[m] for m in AGREEMENT_METHODS)
    chart(viz.head_grid(rho, t("attr_heldout_grid", n=kept.n), row_label=t("col_layer"),
                        col_label=t("col_head"), value_label=t("attr_col_rho"), zmin=-1.0,
                        zmax=1.0, text=viz_labels()), key="attribution_heldout_grid")
    rows = [(layer_label(i), head_label(h), rho[i, h], 100 * top1[i, h], rho_g[i, h],
             100 * top1_g[i, h]) for i in range(rho.shape[0]) for h in range(rho.shape[1])]
    names = [t("col_layer"), t("col_head"), t("attr_col_rho"), t("attr_col_top1"),
             t("attr_col_rho_gxi"), t("attr_col_top1_gxi")]
    show(columns_table(rows, names), hide_index=True, column_config={
        name: st.column_config.NumberColumn(format="%.2f" if i % 2 == 0 else "%.0f")
        for i, name in enumerate(names[2:])})


def attribution_view(translator: Translator, trace: DecodeTrace, k: int, key: tuple) -> None:
    """The view at step ``k`` (1-based) of ``trace``, for our models and Hugging Face ones
    (their layers taken apart by hooks, ``model.backends.hf_attribution``)."""
    st.caption(explain("attribution"))
    if trace.architecture == "decoder-only":  # the prompt stands where the source is
        st.caption(t("attr_one_stack"))
    L = trace.cross_attentions.shape[0]
    layer = int(st.selectbox(t("layer"), range(L), index=L - 1, key=LAYER_KEY,
                             format_func=labels(range(L), layer_label)))
    attention = trace.cross_attentions[layer].mean(axis=0)  # (T, S)
    vz = zeroing(cache.trace_key(key, trace), trace)
    vz_cross, _ = vz.normalised()  # (L, T, S)
    share = vz.source_share()  # (L, T)
    st.markdown(_step_claim(trace, k, layer, attention, vz_cross=vz_cross[layer],
                            share=share[layer]))
    left, right = columns(2, wrap=True)
    with left:
        _map_chart(trace, k, attention, t("attr_att_title", layer=layer_label(layer)),
                   key="attribution_attention")
    with right:
        _map_chart(trace, k, vz_cross[layer], t("attr_vz_title", layer=layer_label(layer)),
                   key="attribution_value_zeroing")
    rho, top1 = head_agreement(trace.cross_attentions, vz_cross)  # (L, H) each
    _picked_head(trace, k, layer, rho, top1=top1)
    _gradients(trace, k, cache.trace_key(key, trace))
    _agreement(trace, rho, top1)
    _heldout_agreement(key)
