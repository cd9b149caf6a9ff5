"""The Heads view: what each head does (statistics, for this sentence or over held-out
sentences), which heads matter (switching heads off, importance and pruning), attention
across layers (rollout and flow), and heads against the grammar's gold alignments.

The numbers come from ``model`` (``headstats``, ``ablation``, ``pruning``, ``aggregate``,
``alignment``); the slow ones are cached per model in ``ui.cache``.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

import viz
from model import DecodeTrace, Translator
from model.analysis.headstats import rank_heads, statistics_for
from model.core.config import ATTENTION_KINDS, layer_counts
from model.core.heldout import HELDOUT_SIZE, heldout_known, sample_known
from model.decoding import one_map
from viz.convention import head_number, layer_number

from .. import cache, state
from ..charts import chart, columns
from ..export import columns_table, show
from ..i18n import KIND_VIEWS, explain, head_label, labels, layer_label, t, view_label, viz_labels
from ..text import md_literal

SCOPES = ("sentence", "heldout")
TABLE_KEY = "heads_table"  # the table of every head (a widget: its selection opens one)
FLOW_AUTO_TOKENS = 24  # flow of a longer sentence takes over a second: it waits for a click


ONE_STACK_KIND_VIEWS = {"decoder": "sequence"}  # a decoder-only model's one kind, its view


def _kind_label(kind: str, architecture: str = "encoder-decoder") -> str:
    views = ONE_STACK_KIND_VIEWS if architecture == "decoder-only" else KIND_VIEWS
    return view_label(views[kind])


def _kind_picker(key: str, label: str = "heads_kind",
                 architecture: str = "encoder-decoder") -> str:
    kinds = tuple(ONE_STACK_KIND_VIEWS) if architecture == "decoder-only" else ATTENTION_KINDS
    if st.session_state.get(key) not in kinds:  # another model's kind
        st.session_state.pop(key, None)
    return st.selectbox(t(label), kinds, key=key, format_func=labels(
        kinds, lambda k: _kind_label(k, architecture)))


def _best_per_layer(values: np.ndarray) -> list[tuple[int, int]]:
    """(layer, head) of the highest value in each layer of (L, H) values."""
    return [(layer, int(np.argmax(row))) for layer, row in enumerate(values)]


def heads_view(translator: Translator, trace: DecodeTrace, k: int, key: tuple) -> None:
    """The whole view; ``k`` is the step (decoder-side rows up to it), ``key`` the model's
    cache key; the trace's ``settings`` are what the heads-off decoding repeats."""
    st.caption(explain("heads"))
    statistics_section(translator, trace, key)
    heads_off_section(translator, trace, key)
    importance_section(translator, key)
    lines_section(translator, trace, k)
    if translator.info.architecture == "decoder-only":  # one sequence: one rollout and flow
        one_stack_layers_section(trace, k, key)
        return
    layers_section(trace, k, key)
    alignment_section(translator, trace, key)


def _open_head(kind: str, ranking: list[tuple[int, int, float]],
               architecture: str = "encoder-decoder"):
    """The table's selection callback: open the selected head in its own view."""
    views = ONE_STACK_KIND_VIEWS if architecture == "decoder-only" else KIND_VIEWS

    def open_it() -> None:
        rows = st.session_state[TABLE_KEY]["selection"]["rows"]
        if rows:
            layer, head, _ = ranking[rows[0]]
            state.open_view(views[kind], layer=layer, head=head)
    return open_it


def statistics_section(translator: Translator, trace: DecodeTrace, key: tuple) -> None:
    """A layer x head grid of one statistic, a sortable table of every head, definitions."""
    st.subheader(t("heads_stats_header"))
    known = sample_known(translator)
    scopes = SCOPES if known else SCOPES[:1]

    def scope_label(scope: str) -> str:
        return (t("heads_scope_sentence") if scope == "sentence"
                else t("heads_scope_heldout", n=HELDOUT_SIZE))

    scope = st.radio(t("heads_scope"), scopes, horizontal=True, key="heads_scope",
                     format_func=labels(scopes, scope_label))
    if not known:
        st.caption(t("heads_no_heldout"))
    left, right = st.columns(2)
    architecture = translator.info.architecture
    with left:
        kind = _kind_picker("heads_kind", architecture=architecture)
    names = statistics_for(kind, architecture)
    if st.session_state.get("heads_stat") not in names:
        st.session_state["heads_stat"] = names[0]
    statistic = right.selectbox(t("heads_statistic"), names, key="heads_stat",
                                format_func=labels(names, lambda s: t(f"stat_{s}")))
    s = (cache.heldout_statistics(key, HELDOUT_SIZE)[kind] if scope == "heldout"
         else cache.head_stats(cache.trace_key(key, trace), kind, translator.info.eos_token,
                               trace))
    values, name = s.values[statistic], t(f"stat_{statistic}")
    chart(viz.head_grid(values, t("heads_grid_title", view=_kind_label(kind, architecture),
                                  statistic=name,
                                  scope=scope_label(scope)),
                        row_label=t("col_layer"), col_label=t("col_head"), value_label=name,
                        marked=_best_per_layer(values), zmin=0.0,
                        zmax=None if statistic == "entropy" else 1.0, text=viz_labels()),
          key="heads_grid")
    ranking = rank_heads(s, statistic)
    table = columns_table(
        [(layer_number(layer), head_number(head),  # as people count: from 1
          *(round(float(s.values[n][layer, head]), 3) for n in names))
         for layer, head, _ in ranking],
        [t("col_layer"), t("col_head"), *(t(f"stat_{n}") for n in names)])
    st.caption(t("heads_table_caption", statistic=name, rows=s.rows))
    show(table, hide_index=True, on_select=_open_head(kind, ranking, architecture),
         selection_mode="single-row", key=TABLE_KEY)
    with st.expander(t("heads_definitions")):
        st.markdown(t("heads_definitions_text"))


def _head_ids(translator: Translator) -> list[str]:
    """Every head as a stable id "kind:layer:head" (a widget value that reads the same in
    every language)."""
    counts, H = layer_counts(translator.config), translator.config.nhead
    return [f"{kind}:{layer}:{head}" for kind in ATTENTION_KINDS for layer in range(counts[kind])
            for head in range(H)]


def _head_label(head_id: str, architecture: str = "encoder-decoder") -> str:
    kind, layer, head = head_id.split(":")
    return t("head_key_label", view=_kind_label(kind, architecture),
             layer=layer_number(int(layer)), head=head_number(int(head)))


def heads_off_section(translator: Translator, trace: DecodeTrace, key: tuple) -> None:
    """Pick heads to switch off; the sentence decoded again beside the original, where they
    first differ, and each original token's probability before and after."""
    st.subheader(t("heads_off_header"))
    ids = _head_ids(translator)
    chosen = st.multiselect(t("heads_off_pick"), ids, key="heads_off", help=t("heads_off_help"),
                            placeholder=t("heads_off_placeholder"),
                            format_func=labels(ids, lambda i: _head_label(
                                i, translator.info.architecture)))
    if not chosen:
        return
    off = tuple(sorted((kind, int(layer), int(head))
                       for kind, layer, head in (c.split(":") for c in chosen)))
    ablated = cache.decode(key, trace.src_text, trace.settings, heads_off=off)
    left, right = st.columns(2)
    left.caption(t("heads_off_original"))
    left.markdown(f"### {md_literal(trace.output_text)}")
    right.caption(t("heads_off_ablated", n=len(off)))
    right.markdown(f"### {md_literal(ablated.output_text)}")
    a, b = trace.tgt_tokens, ablated.tgt_tokens
    step = next((i for i in range(1, min(len(a), len(b))) if a[i] != b[i]),
                None if len(a) == len(b) else min(len(a), len(b)))
    shown = (trace.tgt_labels, ablated.tgt_labels)  # what a person reads of a and b
    if step is None:
        st.success(t("heads_off_same"))
    else:
        before, after = (md_literal(toks[step]) if step < len(toks) else "—" for toks in shown)
        st.warning(t("heads_off_differs", step=step, before=before, after=after))
    tokens = list(a[1:])
    forced = cache.teacher_force(key, trace.src_text, tuple(tokens), trace.settings, heads_off=off)
    before = np.array([s.prob for s in trace.steps])
    after = np.array([s.prob for s in forced.steps])[: len(before)]
    chart(viz.probability_change(list(trace.tgt_labels[1:]), before, after,
                                 t("heads_off_change_title"),
                                 names=(t("heads_off_before"), t("heads_off_after")),
                                 step_label=t("heads_off_step_axis"), text=viz_labels()),
          key="heads_off_change")


def importance_section(translator: Translator, key: tuple) -> None:
    """Michel et al.'s importance of every head and BLEU as heads are pruned, over the
    held-out pairs: at once when the model's folder keeps them, else computed when asked
    (it takes a while)."""
    st.subheader(t("importance_header"))
    if not sample_known(translator):
        st.info(t("importance_none"))
        return
    if not st.session_state.get("importance_on") and cache.kept_heads(key, HELDOUT_SIZE) is None:
        st.button(t("importance_button", n=HELDOUT_SIZE), key="importance_go",
                  on_click=lambda: st.session_state.update(importance_on=True))
        return
    importance, curve = cache.importance_and_pruning(key, HELDOUT_SIZE)
    architecture = translator.info.architecture
    kind = _kind_picker("importance_kind", "importance_kind", architecture)
    chart(viz.head_grid(importance[kind], t("importance_title", n=curve.n_pairs,
                                            view=_kind_label(kind, architecture)),
                        row_label=t("col_layer"), col_label=t("col_head"),
                        value_label=t("stat_importance"),
                        marked=_best_per_layer(importance[kind]), zmin=0.0, text=viz_labels()),
          key="importance_grid")
    chart(viz.pruning_plot(curve.pruned, curve.bleu, len(curve.order),
                           t("pruning_title", n=curve.n_pairs), x_label=t("pruning_x"),
                           y_label=t("pruning_y"), text=viz_labels()), key="pruning_plot")


def _clicked_token(chart_key: str) -> tuple[str, int] | None:
    """The token clicked in the lines chart ``chart_key``: ("query", i) or ("key", j) from
    its last point selection (trace 0 is the query column, 1 the key column), or None."""
    event = st.session_state.get(chart_key) or {}
    points = (event.get("selection") or {}).get("points") or []
    for point in points:
        column, index = point.get("curve_number"), point.get("point_index")
        if column in (0, 1) and isinstance(index, int):
            return ("query", "key")[column], index
    return None


def lines_section(translator: Translator, trace: DecodeTrace, k: int) -> None:
    """One layer's attention as lines between the query and key tokens, one colour per
    head (BertViz's head view); clicking a token keeps only its lines."""
    st.subheader(t("lines_header"))
    st.caption(t("lines_explain"))
    c1, c2, c3 = st.columns([1, 1, 2])
    architecture = translator.info.architecture
    with c1:
        kind = _kind_picker("lines_kind", "lines_kind", architecture)
    layers = layer_counts(translator.config)[kind]
    layer = c2.selectbox(t("layer"), range(layers), key="lines_layer",
                         format_func=labels(range(layers), layer_label))
    heads = list(range(translator.config.nhead))
    shown = c3.multiselect(t("lines_heads"), heads, default=heads, key="lines_heads",
                           format_func=labels(heads, head_label))
    if not shown:
        return
    src, dec = list(trace.src_labels), list(trace.decoder_input_labels[:k])
    if architecture == "decoder-only":  # the one sequence up to step k: prompt, then written
        n = len(src) + len(dec)
        maps, queries, keys = one_map(trace)[layer, :, :n, :n], src + dec, src + dec
    else:
        maps, queries, keys = {
            "encoder": (trace.encoder_attentions[layer], src, src),
            "decoder": (trace.decoder_attentions[layer, :, :k, :k], dec, dec),
            "cross": (trace.cross_attentions[layer, :, :k], dec, src),
        }[kind]
    focus = _clicked_token("lines_chart")
    if focus is not None and focus[1] >= (len(queries) if focus[0] == "query" else len(keys)):
        focus = None  # a click on another sentence's or view's token
    chart(viz.attention_lines(maps, queries, keys,
                              t("lines_title", view=_kind_label(kind, architecture),
                                layer=layer_number(layer)),
                              heads=shown, focus=focus,
                              head_names=[head_label(h) for h in heads], text=viz_labels()),
          key="lines_chart", select=True)


def layers_section(trace: DecodeTrace, k: int, key: tuple) -> None:
    """Encoder rollout and flow, and the decoder's rollout to the source tokens (rows up to
    step k); ``key`` is the model's cache key (the results are cached per model and trace)."""
    st.subheader(t("layers_header"))
    st.caption(t("layers_explain"))
    src, last = list(trace.src_labels), trace.encoder_attentions.shape[0] - 1
    trace_id = cache.trace_key(key, trace)
    rollout, dec = cache.rollouts(trace_id, trace)  # (S, S), (T, S)
    left, right = columns(2, wrap=True)

    def encoder_map(matrix: np.ndarray, title: str, chart_key: str) -> None:
        chart(viz.attention_heatmap(matrix, src, src, title=title,
                                    query_label=t("output_position"),
                                    key_label=t("input_token"), text=viz_labels()),
              key=chart_key)

    with left:
        encoder_map(rollout, t("rollout_title", layer=layer_number(last)), "rollout_chart")
    with right:  # flow solves S * S max-flow problems: a long sentence waits for a click
        if len(src) <= FLOW_AUTO_TOKENS or st.session_state.get("flow_on"):
            encoder_map(cache.encoder_flow(trace_id, trace),
                        t("flow_title", layer=layer_number(last)), "flow_chart")
        else:
            st.button(t("flow_button", n=len(src)), key="flow_go",
                      on_click=lambda: st.session_state.update(flow_on=True))
    chart(viz.attention_heatmap(dec[:k],
                                list(trace.decoder_input_labels[:k]), src,
                                title=t("decoder_rollout_title"),
                                query_label=t("query_decoder_input"),
                                key_label=t("key_source_token"), text=viz_labels()),
          key="decoder_rollout_chart")


def one_stack_layers_section(trace: DecodeTrace, k: int, key: tuple) -> None:
    """A decoder-only model's rollout and flow over its one sequence up to step k (the
    prompt, then the decoder inputs), the look-ahead mask's cells drawn: each position's
    rows say how much of each earlier token reaches it through the layers."""
    st.subheader(t("layers_header"))
    st.caption(t("layers_explain_one"))
    seq = [*trace.src_labels, *trace.decoder_input_labels[:k]]
    n, last = len(seq), one_map(trace).shape[0] - 1
    trace_id = cache.trace_key(key, trace)
    blocked = np.triu(np.ones((n, n), bool), 1)  # (n, n) the look-ahead mask

    def one_chart(matrix: np.ndarray, title: str, chart_key: str) -> None:
        chart(viz.attention_heatmap(matrix[:n, :n], seq, seq, title=title, blocked=blocked,
                                    query_label=t("output_position"),
                                    key_label=t("input_token"), text=viz_labels()),
              key=chart_key)

    left, right = columns(2, wrap=True)
    with left:
        one_chart(cache.one_stack_rollout(trace_id, trace),
                  t("one_rollout_title", layer=layer_number(last)), "rollout_chart")
    with right:  # flow solves N * N max-flow problems: a long sequence waits for a click
        if n <= FLOW_AUTO_TOKENS or st.session_state.get("flow_on"):
            one_chart(cache.one_stack_flow(trace_id, trace),
                      t("one_flow_title", layer=layer_number(last)), "flow_chart")
        else:
            st.button(t("flow_button", n=n), key="flow_go",
                      on_click=lambda: st.session_state.update(flow_on=True))


def _aer_grid(result, title: str, chart_key: str) -> None:
    """A HeadAER as a layer x head grid with each layer's best head outlined, and those
    heads named below it."""
    best = list(enumerate(result.best_heads))
    chart(viz.head_grid(result.aer, title, row_label=t("col_layer"), col_label=t("col_head"),
                        value_label=t("aer_value"), marked=best, zmin=0.0, zmax=1.0,
                        text=viz_labels()), key=chart_key)
    st.markdown(t("aer_best", heads=t("word_separator").join(
        t("aer_best_item", layer=layer_number(layer), head=head_number(head),
          aer=result.aer[layer, head])
        for layer, head in best)))


def alignment_section(translator: Translator, trace: DecodeTrace, key: tuple) -> None:
    """Every cross-attention head's AER against the grammar's gold links on this sentence
    (its best last-layer head drawn with the gold links outlined), and over held-out
    sentences when asked."""
    st.subheader(t("alignment_header"))
    if not heldout_known(translator.card):
        st.info(t("alignment_none"))
        return
    st.caption(t("alignment_explain"))
    gold = cache.grammar_translation(key, trace.src_text)
    mine = cache.alignment_scores(key, (trace.src_text,)) if gold is not None else None
    if mine is None:
        st.caption(t("alignment_outside"))
    else:
        left, right = columns(2, wrap=True)
        with left:
            _aer_grid(mine, t("aer_sentence_grid_title"), "aer_sentence_grid")
        forced = cache.teacher_force(key, trace.src_text, gold, trace.settings)
        layer, head = len(mine.best_heads) - 1, mine.best_heads[-1]
        with right:
            # Row t is the step that produces token t + 1: labelled by what it produces,
            # since that token is what a gold link aligns.
            chart(viz.attention_heatmap(
                forced.cross_attentions[layer, head], list(forced.tgt_labels[1:]),
                list(forced.src_labels),
                title=t("aer_sentence_title", layer=layer_number(layer), head=head_number(head)),
                query_label=t("query_produced_token"), key_label=t("key_source_token"),
                marked=cache.gold_cells(trace.src_text, tuple(forced.src_labels)),
                text=viz_labels()),
                key="aer_sentence_chart")
    if not st.session_state.get("alignment_on"):
        st.button(t("alignment_button", n=HELDOUT_SIZE), key="alignment_go",
                  on_click=lambda: st.session_state.update(alignment_on=True))
        return
    result = cache.heldout_alignment(key, HELDOUT_SIZE)
    if result is None:
        st.info(t("alignment_none"))
        return
    _aer_grid(result, t("aer_title", n=result.n_sentences), "aer_grid")
