"""The views of a decoder-only model (one stack: the prompt and the tokens it writes in one
sequence). The trace comes split at the prompt (``model.decoding.split_at_prompt``, done
by ``ui.cache``): its ``encoder_attentions`` are the prompt's rows over the prompt,
``cross_attentions`` the decoder inputs' rows over the prompt and ``decoder_attentions``
their rows over the decoder inputs; ``model.decoding.one_map`` joins them into the one
(L, H, N, N) map, N = S + T.

Shape letters: S prompt tokens (before ``<sep>``, which starts the decoder inputs), T
decoder inputs, k the step (decoder inputs shown), L layers, H heads.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

import viz
from model import DecodeTrace, Translator
from model.core.config import kv_head_of
from model.decoding import one_map
from viz.convention import head_number

from .. import export
from ..charts import chart, columns
from ..i18n import explain, t, viz_labels
from ..stepper import source_axis
from . import teaching
from .panels import attention_view


def sequence_tokens(trace: DecodeTrace, k: int) -> tuple[list[str], list[str]]:
    """The first S + k positions of the one sequence: (labels a person reads, the tokens)."""
    return ([*trace.src_labels, *trace.decoder_input_labels[:k]],
            [*trace.src_tokens, *trace.decoder_input_tokens[:k]])


def gqa_line(nhead: int, num_key_value_heads: int | None) -> str | None:
    """Which query heads share which key/value head under grouped-query attention
    (``core.config.kv_head_of``; heads numbered from 1, as the views number them), or None
    for a model with a key/value head per query head (``num_key_value_heads`` None)."""
    if num_key_value_heads is None:
        return None
    owner = kv_head_of(nhead, num_key_value_heads)
    groups = [[h for h in range(nhead) if owner[h] == g] for g in range(num_key_value_heads)]
    shared = t("word_separator").join(
        t("gqa_group", first=head_number(g[0]), last=head_number(g[-1]), kv=head_number(i))
        for i, g in enumerate(groups))
    return t("gqa_caption", h=nhead, kv=num_key_value_heads, n=nhead // num_key_value_heads,
             groups=shared)


def sequence_view(translator: Translator, trace: DecodeTrace, k: int) -> None:
    """The one sequence's self-attention up to step k ((L, H, S + k, S + k)): every position
    a row and a column, the look-ahead mask drawn over the cells it blocks; under
    grouped-query attention, which query heads share a key/value head."""
    n = len(trace.src_tokens) + k
    line = gqa_line(translator.config.nhead, translator.info.num_key_value_heads)
    if line is not None:
        st.caption(line)
    shown, raw = sequence_tokens(trace, k)
    attention_view("sequence", one_map(trace)[:, :, :n, :n], shown, shown,
                   query_label=t("query_sequence"), key_label=t("key_sequence"),
                   tokens=(raw, raw), blocked=np.triu(np.ones((n, n), bool), 1))


def to_prompt_view(trace: DecodeTrace, k: int, grouped: bool = False) -> None:
    """The decoder inputs' attention on the prompt's S tokens, up to step k (L, H, k, S):
    where cross-attention went; a row reads ``input → output``."""
    maps, src = source_axis(trace, trace.cross_attentions[:, :, :k], grouped, queries_too=False)
    attention_view("to_prompt", maps, trace.step_labels[:k], src,
                   query_label=t("query_step"), key_label=t("key_prompt_token"),
                   tokens=(trace.decoder_input_tokens[:k], None if grouped else trace.src_tokens))


def prompt_view(trace: DecodeTrace, grouped: bool = False) -> None:
    """The prompt's tokens over each other (L, H, S, S), causal as every row of one stack."""
    maps, src = source_axis(trace, trace.encoder_attentions, grouped, queries_too=True)
    raw = None if grouped else trace.src_tokens
    attention_view("prompt", maps, src, src, query_label=t("query_prompt_token"),
                   key_label=t("key_prompt_token"), tokens=(raw, raw))


def continuation_view(trace: DecodeTrace, k: int) -> None:
    """The decoder inputs' attention on each other up to step k (L, H, k, k)."""
    inputs, raw = trace.decoder_input_labels[:k], trace.decoder_input_tokens[:k]
    attention_view("continuation", trace.decoder_attentions[:, :, :k, :k],
                   trace.step_labels[:k], inputs, query_label=t("query_step"),
                   key_label=t("key_decoder_input"), tokens=(raw, raw))


def masks_view(translator: Translator, trace: DecodeTrace, k: int, key: tuple) -> None:
    """A real padded batch of prompts (``teaching.padded_batch``), then the one sequence's
    masks padded by hand: the key padding mask, the look-ahead mask and their OR, which
    every layer of the stack uses."""
    st.caption(explain("masks"))
    teaching.padded_batch(translator, key)
    st.subheader(t("padded_by_hand"))
    pad = st.slider(t("pad_slider"), 0, 6, 2, key="mask_pad")
    labels = [*sequence_tokens(trace, k)[0], *["<pad>"] * pad]
    m = translator.mask_views(list(trace.src_tokens), list(trace.decoder_input_tokens[:k]),
                              pad)
    shown = [("mask_pad_row", m["padding"][None, :], [t("any_query")], labels,
              "mask_sequence_padding_title"),
             ("mask_sub", m["subsequent"], labels, labels, "mask_lookahead_title"),
             ("mask_dec", m["self"], labels, labels, "mask_sequence_title")]
    sides = columns(2, wrap=True)
    for i, (chart_key, mask, queries, keys, title) in enumerate(shown):
        with sides[min(i, 1)]:
            chart(viz.mask_heatmap(mask, queries, keys, title=t(title),
                                   query_label=t("query_sequence"),
                                   key_label=t("key_sequence"), text=viz_labels()),
                  key=chart_key)
    export.tables_expander("masks", lambda: [(t(title), export.mask_table(mask, queries, keys))
                                             for _, mask, queries, keys, title in shown])
