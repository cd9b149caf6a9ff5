"""The page's panels: the step control and one function per view tab.

Each panel takes the trace (numpy arrays and token tuples) and draws figures built by the
pure ``viz`` builders; widget keys are namespaced per panel so tabs keep their own choices.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

import viz
from model import DecodeTrace, Translator

from . import teaching
from .charts import chart
from .text import EXPLAIN

ALL_HEADS = "all"


def _layer_head_pickers(view: str, layers: int, heads: int) -> tuple[int, int | str]:
    """Layer and head selectors for one tab; head is an index or ALL_HEADS."""
    c1, c2 = st.columns(2)
    layer = c1.selectbox("Layer", range(layers), format_func=lambda i: f"Layer {i}",
                         key=f"{view}_layer")
    head = c2.selectbox("Head", [ALL_HEADS, *range(heads)],
                        format_func=lambda h: "All heads" if h == ALL_HEADS else f"Head {h}",
                        key=f"{view}_head")
    return int(layer), head


def attention_view(view: str, maps: np.ndarray, queries, keys, query_label: str,
                   key_label: str) -> None:
    """Layer/head pickers, then one head's heatmap or all heads as a grid.

    Args:
        maps: (L, H, Tq, Tk) attention weights; queries: Tq tokens; keys: Tk tokens.
    """
    st.caption(EXPLAIN[view])
    layer, head = _layer_head_pickers(view, maps.shape[0], maps.shape[1])
    if head == ALL_HEADS:
        fig = viz.attention_grid(maps[layer], list(queries), list(keys),
                                 title=f"{view}, layer {layer}, all heads",
                                 query_label=query_label, key_label=key_label)
    else:
        fig = viz.attention_heatmap(maps[layer, head], list(queries), list(keys),
                                    title=f"{view}, layer {layer}, head {head}",
                                    query_label=query_label, key_label=key_label)
    chart(fig, key=f"{view}_chart")


def encoder_tab(trace: DecodeTrace) -> None:
    """Encoder self-attention over the source tokens (the same at every step)."""
    attention_view("Encoder self-attention", trace.encoder_attentions, trace.src_tokens,
                   trace.src_tokens, "Query: source token", "Key: source token")


def decoder_tab(trace: DecodeTrace, k: int) -> None:
    """Decoder self-attention, rows (and columns) up to the current step."""
    inputs = trace.decoder_input_tokens[:k]
    attention_view("Decoder self-attention", trace.decoder_attentions[:, :, :k, :k], inputs,
                   inputs, "Query: decoder input", "Key: decoder input")


def cross_tab(trace: DecodeTrace, k: int) -> None:
    """Cross-attention from the decoder inputs so far to the source tokens."""
    attention_view("Cross-attention", trace.cross_attentions[:, :, :k],
                   trace.decoder_input_tokens[:k], trace.src_tokens,
                   "Query: decoder input", "Key: source token")


def positional_tab(translator: Translator, trace: DecodeTrace, k: int, decode_with) -> None:
    """The sinusoidal table for this sentence and curves of chosen dimensions."""
    st.caption(EXPLAIN["Positional encoding"])
    side = st.radio("Positions of", ["Source sentence", "Decoder input"], horizontal=True,
                    key="pe_side")
    tokens = list(trace.src_tokens if side == "Source sentence" else trace.tgt_tokens[:k])
    chart(viz.positional_heatmap(translator.positional_encoding(len(tokens)), tokens,
                                 title=f"Positional encoding added to the {side.lower()} "
                                       f"(d_model = {translator.config.d_model})"),
          key="pe_heatmap")
    D = translator.config.d_model
    dims = st.multiselect("Dimensions to plot (even = sin, odd = cos)", list(range(D)),
                          default=[0, 1, 10, 11, 40, 41], key="pe_dims")
    if dims:
        chart(viz.positional_curves(translator.positional_encoding(translator.config.max_len),
                                    sorted(dims)), key="pe_curves")
    else:
        st.info("Pick at least one dimension to plot its curve.")
    teaching.positional_extras(translator, trace, tokens, side, decode_with)


def masks_tab(translator: Translator, trace: DecodeTrace, k: int, key: tuple) -> None:
    """Padding, look-ahead, combined and cross-attention masks for this sentence, padded."""
    st.caption(EXPLAIN["Masks"])
    teaching.padded_batch(translator, key)
    st.subheader("This sentence, padded by hand")
    pad = st.slider("Pad both sides with this many `<pad>` tokens, as in a batch with "
                    "longer sentences", 0, 6, 2, key="mask_pad")
    src = [*trace.src_tokens, *["<pad>"] * pad]
    tgt = [*trace.decoder_input_tokens[:k], *["<pad>"] * pad]
    m = translator.mask_views(list(trace.src_tokens), list(trace.decoder_input_tokens[:k]), pad)
    left, right = st.columns(2)
    with left:
        chart(viz.mask_heatmap(m["source_padding"][None, :], ["any query"], src,
                               title="Source padding mask (key_padding_mask)",
                               key_label="Key: source token"), key="mask_pad_row")
        chart(viz.mask_heatmap(m["encoder"], src, src, title="Encoder self-attention mask",
                               query_label="Query: source token", key_label="Key: source token"),
              key="mask_enc")
        chart(viz.mask_heatmap(m["cross"], tgt, src, title="Cross-attention (memory) mask",
                               query_label="Query: decoder input", key_label="Key: source token"),
              key="mask_cross")
    with right:
        chart(viz.mask_heatmap(m["subsequent"], tgt, tgt, title="Look-ahead mask "
                               "(subsequent_mask)", query_label="Query: decoder input",
                               key_label="Key: decoder input"), key="mask_sub")
        chart(viz.mask_heatmap(m["decoder"], tgt, tgt, title="Decoder mask = padding OR "
                               "look-ahead", query_label="Query: decoder input",
                               key_label="Key: decoder input"), key="mask_dec")
