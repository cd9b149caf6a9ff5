"""The page's panels: the view picker and one function per view.

Each panel takes the trace (numpy arrays and token tuples) and draws figures built by the
pure ``viz`` builders; widget keys are namespaced per view so views keep their own choices.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

import viz
from model import DecodeTrace, Translator
from model.core import rope
from viz.convention import head_number, layer_number
from viz.fit import PAGE_PX

from .. import export, state
from ..charts import chart, columns, presenting
from ..i18n import (
    ONE_STACK_DEFAULT_VIEW,
    ONE_STACK_VIEWS,
    STRINGS,
    VIEWS,
    explain,
    head_label,
    labels,
    layer_label,
    t,
    view_id,
    view_label,
    viz_labels,
)
from ..state import ALL_HEADS, DEFAULT_VIEW
from ..stepper import GROUP_KEY, source_axis
from . import teaching

# The sides of the positional-encoding view by id (the English label) -> the key of the label.
SIDES = {STRINGS[k]["en"]: k for k in ("side_source", "side_decoder")}
SOURCE_SENTENCE, DECODER_INPUT = SIDES


def _layer_head_pickers(view: str, layers: int, heads: int) -> tuple[int, int | str]:
    """Layer and head selectors for one view; head is an index or ALL_HEADS (head 0 first
    in Present mode: one head at a time)."""
    if presenting():
        state.default_head(view, 0)
    c1, c2 = st.columns(2)
    layer = c1.selectbox(t("layer"), range(layers), key=state.layer_key(view),
                         format_func=labels(range(layers), layer_label),
                         help=t("home_numbering"))
    options = [ALL_HEADS, *range(heads)]
    head = c2.selectbox(t("head"), options, key=state.head_key(view), format_func=labels(
        options, lambda h: t("all_heads") if h == ALL_HEADS else head_label(h)))
    return int(layer), head


def attention_view(view: str, maps: np.ndarray, queries, keys, *, query_label: str,
                   key_label: str, tokens=(None, None), blocked: np.ndarray | None = None
                   ) -> None:
    """Layer/head pickers, then one head's heatmap or all heads as a grid.

    Args:
        view: the view's id (its English name), which also names its widget keys.
        maps: (L, H, Tq, Tk) attention weights; queries: Tq labels; keys: Tk labels.
        tokens: the model's own (query, key) tokens for the downloads (None: the labels).
        blocked: (Tq, Tk) bool, the cells a mask blocks, drawn over one head's heatmap
            (``viz.attention_heatmap``); None: none.
    """
    st.caption(explain(view))
    layer, head = _layer_head_pickers(view, maps.shape[0], maps.shape[1])
    if head == ALL_HEADS:
        fig = viz.attention_grid(maps[layer], list(queries), list(keys),
                                 ncols=4 if len(keys) <= 12 else 2,  # long: bigger cells
                                 title=t("view_all_heads_title", view=view_label(view),
                                         layer=layer_number(layer)),
                                 query_label=query_label, key_label=key_label, text=viz_labels())
    else:
        fig = viz.attention_heatmap(maps[layer, head], list(queries), list(keys),
                                    title=t("view_head_title", view=view_label(view),
                                            layer=layer_number(layer), head=head_number(head)),
                                    query_label=query_label, key_label=key_label,
                                    blocked=blocked, text=viz_labels())
    # no labels overlapping in a 1440-px window's column (PAGE_PX); at 1280 px a grid of 40
    # tokens too (tests/browser/test_labels.py), rows of 10 a label's box but not its ink apart
    chart(fig, key=f"{view}_chart", fit_px=PAGE_PX)
    export.download_row(view, maps, queries, keys, fig=fig, tokens=tokens,
                        shown=maps[layer] if head == ALL_HEADS else maps[layer, head])


VIEW_PANEL = "view_panel"  # the key of the container that holds the chosen view


def view_picker(architecture: str = "encoder-decoder") -> str:
    """The row of views (a segmented control) and the chosen view's id, one of ``VIEWS``
    (a decoder-only model's: ``ONE_STACK_VIEWS``; a view another model had open falls back
    to the architecture's first view).

    The widget's value is the view's id, shown in the session's language (``format_func``),
    so the choice survives a language switch and code may open a view by its id
    (``ui.state.open_view``: a link, a table row that opens a head). The views are buttons
    of one control rather than ``st.tabs``: only the chosen view is built, and a step click
    redraws one control instead of a tab bar and seven panels (benchmarks/clicks.py)."""
    one = architecture == "decoder-only"
    options, first = (ONE_STACK_VIEWS, ONE_STACK_DEFAULT_VIEW) if one else (VIEWS, DEFAULT_VIEW)
    view = view_id(state.read().view)  # first run, or a label
    state.settle_view(view if view in options else first)
    return st.segmented_control(t("view"), options, key=state.VIEW_KEY, required=True,
                                format_func=labels(options, view_label))


def group_switch(translator: Translator) -> bool:
    """The switch that merges a word's source tokens into one on the attention views'
    source axes (``DecodeTrace.src_words``), shown where a word can be several tokens: the
    pieces of a subword model, the characters of a Chinese source (its words as jieba cuts
    them); True when it is on."""
    info = translator.info
    if info.subword:
        return st.toggle(t("group_words"), key=GROUP_KEY, help=t("group_words_help"))
    if info.source_language == "zh":  # one token per character
        return st.toggle(t("group_characters"), key=GROUP_KEY, help=t("group_characters_help"))
    return False


def encoder_view(trace: DecodeTrace, grouped: bool = False) -> None:
    """Encoder self-attention over the source tokens (the same at every step)."""
    maps, src = source_axis(trace, trace.encoder_attentions, grouped, queries_too=True)
    raw = None if grouped else trace.src_tokens  # words have no token of their own
    attention_view("encoder", maps, src, src, query_label=t("query_source_token"),
                   key_label=t("key_source_token"), tokens=(raw, raw))


def decoder_view(trace: DecodeTrace, k: int) -> None:
    """Decoder self-attention, rows (and columns) up to the current step; a row reads
    ``input → output`` (``DecodeTrace.step_labels``), a column is a decoder input."""
    inputs, raw = trace.decoder_input_labels[:k], trace.decoder_input_tokens[:k]
    attention_view("decoder", trace.decoder_attentions[:, :, :k, :k], trace.step_labels[:k],
                   inputs, query_label=t("query_step"), key_label=t("key_decoder_input"),
                   tokens=(raw, raw))


def cross_view(trace: DecodeTrace, k: int, grouped: bool = False) -> None:
    """Cross-attention from the decoder inputs so far to the source tokens; a row reads
    ``input → output`` (``DecodeTrace.step_labels``)."""
    maps, src = source_axis(trace, trace.cross_attentions[:, :, :k], grouped, queries_too=False)
    attention_view("cross", maps, trace.step_labels[:k], src,
                   query_label=t("query_step"), key_label=t("key_source_token"),
                   tokens=(trace.decoder_input_tokens[:k], None if grouped else trace.src_tokens))


CURVE_LAYOUT = {"sinusoidal": "interleaved", "sinusoidal-halves": "halves",
                "learned": "learned"}  # positional_scheme -> viz.positional_curves layout


def _default_dims(D: int, layout: str) -> list[int]:
    """Dimensions plotted first: sin/cos pairs of a fast, a middle and a slow frequency."""
    if layout == "halves":
        dims = [0, D // 2, 5, D // 2 + 5, D // 4, D // 2 + D // 4]
    elif layout == "learned":
        dims = [0, 1, 2]
    else:
        dims = [0, 1, 10, 11, 40, 41]
    return sorted({d for d in dims if d < D})


def positional_view(translator: Translator, trace: DecodeTrace, k: int, decode_with) -> None:
    """The positions as the model encodes them: the sinusoidal or learned table for this
    sentence (a decoder-only model's: its one sequence, prompt then decoder inputs) and
    curves of chosen dimensions, or T5's relative-position bias."""
    scheme = translator.info.positional_scheme
    one = trace.architecture == "decoder-only"  # one sequence: positions run on from S
    if scheme == "sinusoidal":  # the paper's formula; other families explain their own
        st.caption(explain("positional"))
    elif one and scheme == "learned":  # GPT-2's table: one row per position, no offset
        st.info(t("pe_scheme_learned_one_stack"))
    else:
        st.info(t("pe_scheme_" + scheme.replace("-", "_")))
    if scheme == "rotary":  # no vectors added: the rotation's frequencies and what they do
        rope_charts(translator)
        return
    if one:
        source, tokens = True, [*trace.src_tokens, *trace.decoder_input_tokens[:k]]
        shown = [*trace.src_labels, *trace.decoder_input_labels[:k]]
    else:
        side = st.radio(t("positions_of"), list(SIDES), horizontal=True, key="pe_side",
                        format_func=labels(SIDES, lambda s: t(SIDES[s])),
                        help=t("home_numbering"))  # the legend's rule: positions from 1
        source = side != DECODER_INPUT
        tokens = list(trace.src_tokens if source else trace.tgt_tokens[:k])
        shown = list(trace.src_labels if source else trace.tgt_labels[:k])
    if scheme == "relative":
        teaching.relative_bias(translator, shown, source)
        return
    where = "source" if source else "target"
    title = ("pe_heatmap_title_sequence" if one else
             "pe_heatmap_title_source" if source else "pe_heatmap_title_decoder")
    pe = translator.positional_encoding(len(tokens), where)  # (T, D)
    chart(viz.positional_heatmap(pe, shown, title=t(title, d_model=translator.config.d_model),
                                 formula=scheme != "learned", text=viz_labels()),
          key="pe_heatmap")
    export.tables_expander("pe", lambda: [(t(title, d_model=translator.config.d_model),
                                           export.grid_table(pe.round(3), shown, None,
                                                             t("table_position"),
                                                             column_name=t("table_dimension")))])
    D, layout = translator.config.d_model, CURVE_LAYOUT[scheme]
    dims = st.multiselect(t(f"pe_dims_{layout}"), list(range(D)),  # a choice per table shape
                          default=_default_dims(D, layout), key=f"pe_dims_{layout}_{D}")
    if dims:
        table = translator.positional_encoding(translator.config.max_len, where)
        chart(viz.positional_curves(table, sorted(dims), title=t("pe_curves_title"),
                                    layout=layout, text=viz_labels()), key="pe_curves")
    else:
        st.info(t("pe_no_dims"))
    if not one:  # the experiments rerun an encoder-decoder with other positions
        teaching.positional_extras(translator, trace, tokens, shown, source=source,
                                   decode_with=decode_with)


def rope_charts(translator: Translator) -> None:
    """A rotary model's positions (``model.core.rope``): how the score of two equal vectors
    falls with their distance, and each dimension pair's wavelength; a caption instead for
    a scaled RoPE (``ModelInfo.rope_base`` None)."""
    base, c = translator.info.rope_base, translator.config
    if base is None:
        st.caption(t("rope_scaled"))
        return
    distances = np.arange(min(c.max_len, 256))
    score = rope.score_by_distance(c.head_dim, base, distances)
    wavelengths = 2 * np.pi / rope.inverse_frequencies(c.head_dim, base)
    left, right = columns(2)
    figs = viz.rope_curves(distances, score, wavelengths,
                           titles=(t("rope_score_title"), t("rope_wave_title", base=f"{base:g}",
                                                            d_k=c.head_dim)),
                           labels=(t("rope_distance"), t("rope_score"), t("rope_pair"),
                                   t("rope_wavelength")), text=viz_labels())
    for place, fig, key in ((left, figs[0], "rope_score"), (right, figs[1], "rope_wave")):
        with place:
            chart(fig, key=key)


def masks_view(translator: Translator, trace: DecodeTrace, k: int, key: tuple) -> None:
    """Padding, look-ahead, combined and cross-attention masks for this sentence, padded."""
    st.caption(explain("masks"))
    teaching.padded_batch(translator, key)
    st.subheader(t("padded_by_hand"))
    pad = st.slider(t("pad_slider"), 0, 6, 2, key="mask_pad")
    src = [*trace.src_labels, *["<pad>"] * pad]
    tgt = [*trace.decoder_input_labels[:k], *["<pad>"] * pad]
    m = translator.mask_views(list(trace.src_tokens), list(trace.decoder_input_tokens[:k]), pad)
    any_query = [t("any_query")]
    # (column, chart key, mask, queries, keys, title, query axis, key axis)
    shown = [(0, "mask_pad_row", m["source_padding"][None, :], any_query, src,
              "mask_source_padding_title", "query_axis", "key_source_token"),
             (0, "mask_enc", m["encoder"], src, src, "mask_encoder_title",
              "query_source_token", "key_source_token"),
             (0, "mask_cross", m["cross"], tgt, src, "mask_cross_title",
              "query_decoder_input", "key_source_token"),
             (1, "mask_sub", m["subsequent"], tgt, tgt, "mask_lookahead_title",
              "query_decoder_input", "key_decoder_input"),
             (1, "mask_dec", m["decoder"], tgt, tgt, "mask_decoder_title",
              "query_decoder_input", "key_decoder_input")]
    sides = columns(2, wrap=True)
    for side, chart_key, mask, queries, keys, title, query_axis, key_axis in shown:
        with sides[side]:
            chart(viz.mask_heatmap(mask, queries, keys, title=t(title),
                                   query_label=t(query_axis), key_label=t(key_axis),
                                   text=viz_labels()), key=chart_key)
    export.tables_expander("masks", lambda: [(t(title), export.mask_table(mask, queries, keys))
                                             for _, _, mask, queries, keys, title, *_ in shown])
