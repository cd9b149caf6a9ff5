"""The lesson's chapters, built from the live model and the sidebar's sentence.

Each builder takes a ``Live`` (the model, the sentence's trace, the model's cache key) and
returns a ``Chapter``: the values its text fills in (``ui/lesson.toml``), one figure with
the thing to look at highlighted, the question's options and the right one, and its try-it
action. What a chapter points at is chosen from the model's own numbers
(``model.analysis.picks``), so every chapter works for every model and sentence; where one
cannot apply (T5 has no position table) it returns ``why``, a string key that says so.

Values are Markdown-safe: tokens in code spans, text escaped (``ui.text``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import plotly.graph_objects as go

import viz
from model import DecodeTrace, GenerationSettings, InputError, Translator
from model.analysis.compare import changed_tokens, first_difference
from model.analysis.internals import pe_similarity
from model.analysis.picks import (
    clearest_row,
    content_position,
    count_options,
    distinct_heads,
    is_content,
    top_keys,
)
from model.core.heldout import HELDOUT_SIZE

from . import cache
from .attribution import zeroing  # the Attribution view's cache: computed once a trace
from .i18n import t, viz_labels
from .text import code_span, md_literal, token_row


@dataclass(frozen=True)
class Live:
    """What every chapter is built from: the model, the trace of the sidebar's sentence
    with the sidebar's settings, and the model's cache key (``ui.cache.model_key``)."""

    translator: Translator
    trace: DecodeTrace
    key: tuple

    def decode(self, heads_off: tuple = (), **changes) -> DecodeTrace:
        """The same sentence decoded again with some settings changed (cached)."""
        return cache.decode(self.key, self.trace.src_text, self.trace.settings.replace(**changes),
                            heads_off=heads_off)


@dataclass
class Chapter:
    """One chapter's live content.

    Attributes:
        values: placeholder -> Markdown-safe value for the chapter's text, look, question
            and reveal.
        figure: the figure, the thing to look at highlighted (None: the chapter has none).
        options: (id, label) answers to the question; labels are Markdown-safe.
        answer: the id of the right option.
        action: the try-it action's id (``ui.lesson.ACTIONS``), or None.
        variant: which version of the chapter's text applies ("": the main one; e.g.
            "learned" for a model with learned positions): ``ui/lesson.toml`` fields named
            ``FIELD_VARIANT`` replace ``FIELD``.
        why: a string key saying why the chapter does not apply to this model or sentence;
            when set, nothing else is shown.
        sentence: a sentence the try-it action offers to open (``changing_sentence``), or
            None.
        compare: the second sentence the try-it action puts beside ``sentence`` in the
            Side by side view (``open_compare``), or None.
    """

    values: dict[str, object] = field(default_factory=dict)
    figure: go.Figure | None = None
    options: list[tuple[str, str]] = field(default_factory=list)
    answer: str = ""
    action: str | None = None
    variant: str = ""
    why: str | None = None
    sentence: str | None = None
    compare: str | None = None


def _token_options(labels, keys: list[int]) -> list[tuple[str, str]]:
    """Question options naming tokens by their labels (code spans) and positions."""
    return [(str(j), f"{code_span(labels[j])} ({j})") for j in keys]


def _yes_no(changed: bool) -> tuple[list[tuple[str, str]], str]:
    """The options "stays the same" / "changes" and the right one."""
    return ([("same", t("lesson_same")), ("changed", t("lesson_changed"))],
            "changed" if changed else "same")


def whole(live: Live, turn: int) -> Chapter:
    """Seed 000's walk: every step's input and the token it produced, the first one
    highlighted; how many steps the decoder takes."""
    tr = live.trace
    T = len(tr.steps)
    fig = viz.sequence_probabilities(list(tr.step_labels), np.array([s.prob for s in tr.steps]),
                                     mark=0, title=t("lesson_whole_title"), text=viz_labels())
    return Chapter({"sentence": md_literal(tr.src_text), "first": code_span(tr.tgt_labels[1]),
                    "n_steps": T, "output": token_row(tr.tgt_labels[1:])},  # one per step
                   fig, [(str(n), str(n)) for n in count_options(T)], str(T),
                   action="longer_sentence")


def positions(live: Live, turn: int) -> Chapter:
    """The position table of the sentence, the row of its longest word outlined; with the
    sinusoidal table of our models, whether switching it off changes the translation;
    with a table that cannot be switched off (a Hugging Face model's: learned, or
    Marian's sines and cosines), which position's vector is most like that word's."""
    tr, model = live.trace, live.translator
    scheme = model.info.positional_scheme
    if scheme == "relative":
        return Chapter(why="lesson_positions_relative")
    pos = content_position(tr.src_labels)
    S = len(tr.src_tokens)
    pe = model.positional_encoding(S, "source")  # (S, D)
    fig = viz.positional_heatmap(pe, list(tr.src_labels), mark_row=pos,
                                 title=t("pe_heatmap_title_source", d_model=model.config.d_model),
                                 text=viz_labels())
    values = {"pos": pos, "word": code_span(tr.src_labels[pos]), "d_model": model.config.d_model}
    if scheme == "sinusoidal":
        off = live.decode(positional="none")
        options, answer = _yes_no(off.output_text != tr.output_text)
        return Chapter(values | {"output": md_literal(tr.output_text),
                                 "off": md_literal(off.output_text) or "—"},
                       fig, options, answer, action="positions_off")
    sim = pe_similarity(pe)[pos].astype(np.float64)  # (S,) dot products with position pos
    sim[pos] = -np.inf
    best = int(np.argmax(sim))
    others = [j for j in dict.fromkeys((pos - 1, pos + 1, 0, S - 1)) if 0 <= j < S
              and j not in (pos, best)]
    keys = sorted([best, *others[:3]])
    how = t("lesson_pe_learned" if scheme == "learned" else "lesson_pe_fixed")
    return Chapter(values | {"best": best, "how": how}, fig, [(str(j), str(j)) for j in keys],
                   str(best), action="open_positional", variant="similar")


def one_head(live: Live, turn: int) -> Chapter:
    """One encoder head of the last layer (the next one at each "another head"): the
    query row of the sentence's longest word, and where it puts the most weight."""
    tr = live.trace
    L, H = tr.encoder_attentions.shape[:2]
    head = turn % H
    row = content_position(tr.src_labels)
    A = tr.encoder_attentions[L - 1, head]  # (S, S)
    best = int(A[row].argmax())
    fig = viz.attention_heatmap(A, list(tr.src_labels), list(tr.src_labels),
                                title=t("view_head_title", view=t("tab_encoder"), layer=L - 1,
                                        head=head),
                                marked=[(row, best)], text=viz_labels())
    return Chapter({"word": code_span(tr.src_labels[row]), "best": code_span(tr.src_labels[best]),
                    "weight": f"{A[row, best]:.0%}", "layer": L - 1, "head": head},
                   fig, _token_options(tr.src_labels, top_keys(A[row])), str(best),
                   action="next_head")


HEAD_JOBS = {"positional": "previous", "eos": "eos", "spread": "entropy"}  # job -> statistic


def heads(live: Live, turn: int) -> Chapter:
    """Three encoder heads with different jobs on this sentence: the one that looks at the
    previous token most, the one that parks most weight on ``</s>``, the most spread out
    (``headstats``), each a different head; which one is the positional head."""
    tr, model = live.trace, live.translator
    s = cache.head_stats(cache.trace_key(live.key, tr), "encoder", model.info.eos_token, tr)
    L, H = s.shape
    if L * H < len(HEAD_JOBS):
        return Chapter(why="lesson_heads_few")
    picks = distinct_heads({job: s.values[stat] for job, stat in HEAD_JOBS.items()})
    name = {job: t("lesson_head_name", layer=la, head=h) for job, (la, h) in picks.items()}
    stat = t("stat_previous")
    fig = viz.head_grid(s.values["previous"], t("lesson_heads_title", statistic=stat),
                        row_label=t("col_layer"), col_label=t("col_head"), value_label=stat,
                        marked=list(picks.values()), zmin=0.0, zmax=1.0, text=viz_labels())
    options = sorted(((job, name[job]) for job in picks), key=lambda o: picks[o[0]])
    share = {job: f"{s.values[stat][picks[job]]:.0%}" for job, stat in HEAD_JOBS.items()
             if stat != "entropy"}
    claims = {f"{job}_claim": _head_claim(job, s.values[HEAD_JOBS[job]], picks[job])
              for job in share}
    return Chapter({**name, "nhead": model.config.nhead, **claims,
                    **{f"{job}_share": v for job, v in share.items()}},
                   fig, options, "positional", action="open_heads")


def _head_claim(job: str, values: np.ndarray, pick: tuple[int, int]) -> str:
    """What the text may say of the head picked for ``job`` from its share ``values[pick]``
    ((L, H) per-head shares): "mostly" at half its weight or more, else "more than any other
    head" when no head has more, else just the share."""
    share = float(values[pick])
    kind = ("mostly" if share >= 0.5 else
            "most" if share >= float(np.nanmax(values)) else "share")
    return t(f"lesson_heads_{job}_{kind}", share=f"{share:.0%}")


def masks(live: Live, turn: int) -> Chapter:
    """The look-ahead mask of this translation (``Translator.mask_views``), the keys the
    middle step may see outlined; how many tokens that step sees."""
    tr = live.trace
    dec = list(tr.decoder_input_tokens)
    T = len(dec)
    k = (T + 1) // 2  # a 1-based step in the middle
    m = live.translator.mask_views(list(tr.src_tokens), dec, 0)["subsequent"]  # (T, T) bool
    fig = viz.mask_heatmap(m, list(tr.step_labels), list(tr.decoder_input_labels),
                           title=t("mask_lookahead_title"), query_label=t("query_step"),
                           key_label=t("key_decoder_input"), marked=[(k - 1, j) for j in range(k)],
                           text=viz_labels())
    seen = int((~m[k - 1]).sum())
    return Chapter({"k": k, "k1": k + 1, "seen": seen,
                    "token": code_span(tr.tgt_labels[k]), "visible": token_row(dec[:seen])},
                   fig, [(str(n), str(n)) for n in count_options(seen)], str(seen),
                   action="open_masks")


SUBLAYERS = ("attention", "feed_forward")


def sublayers(live: Live, turn: int) -> Chapter:
    """What self-attention and the feed-forward network add to the sentence's longest word
    (the next word at each "another word") in each encoder layer, next to the residual
    stream they are added to (``Translator.encoder_sublayers``), the last layer
    highlighted; which adds more there."""
    tr = live.trace
    norms = live.translator.encoder_sublayers(tr)
    if norms is None:
        return Chapter(why="lesson_sublayers_none")
    words = [i for i, label in enumerate(tr.src_labels) if is_content(label)] or [0]
    first = content_position(tr.src_labels)
    pos = words[(words.index(first) + turn) % len(words)] if first in words else first
    L = norms.stream.shape[0]
    series = {t("lesson_sub_stream"): norms.stream[:, pos],
              t("lesson_sub_attention"): norms.attention[:, pos],
              t("lesson_sub_feed_forward"): norms.feed_forward[:, pos]}
    fig = viz.grouped_bars([t("layer_option", layer=la) for la in range(L)], series,
                           t("lesson_sub_title", word=tr.src_labels[pos]),
                           group_label=t("col_layer"), value_label=t("lesson_sub_norm"),
                           mark=L - 1, text=viz_labels())
    last = {"attention": norms.attention[L - 1, pos],
            "feed_forward": norms.feed_forward[L - 1, pos]}
    return Chapter({"word": code_span(tr.src_labels[pos]), "layer": L - 1,
                    "stream": f"{norms.stream[L - 1, pos]:.1f}",
                    "attention": f"{last['attention']:.1f}",
                    "feed_forward": f"{last['feed_forward']:.1f}"},
                   fig, [(name, t(f"lesson_sub_{name}")) for name in SUBLAYERS],
                   max(SUBLAYERS, key=last.get), action="next_word")


def cross(live: Live, turn: int) -> Chapter:
    """The most confident cross-attention head on this sentence (the next one at each
    "another head"), the step with the plainest choice among those writing a content
    token, and the English token it looks at most."""
    tr, model = live.trace, live.translator
    s = cache.head_stats(cache.trace_key(live.key, tr), "cross", model.info.eos_token, tr)
    conf = s.values["confidence"]  # (L, H)
    order = np.argsort(-np.nan_to_num(conf, nan=-1.0), axis=None, kind="stable")
    layer, head = (int(i) for i in np.unravel_index(order[turn % order.size], conf.shape))
    A = tr.cross_attentions[layer, head]  # (T, S)
    row = clearest_row(A, [is_content(label) for label in tr.tgt_labels[1:]])
    best = int(A[row].argmax())
    fig = viz.attention_heatmap(A, list(tr.step_labels), list(tr.src_labels),
                                title=t("view_head_title", view=t("tab_cross"), layer=layer,
                                        head=head),
                                query_label=t("query_step"), key_label=t("key_source_token"),
                                marked=[(row, best)], text=viz_labels())
    return Chapter({"token": code_span(tr.tgt_labels[row + 1]), "k": row + 1,
                    "best": code_span(tr.src_labels[best]), "weight": f"{A[row, best]:.0%}",
                    "layer": layer, "head": head},
                   fig, _token_options(tr.src_labels, top_keys(A[row])), str(best),
                   action="next_head")


BEAMS = 4


def decoding(live: Live, turn: int) -> Chapter:
    """Greedy decoding and beam search with ``BEAMS`` beams on this sentence: the beam
    tree with the best hypothesis's path; whether the two translations agree."""
    greedy = live.decode(num_beams=1, do_sample=False)
    beam = live.decode(num_beams=BEAMS, do_sample=False)
    steps = [[(c.parent, c.label, c.logprob, c.status) for c in step] for step in beam.beam.steps]
    fig = viz.beam_tree(steps, highlight=beam.beam.hypotheses[0].end, title=t("beam_tree_title"),
                        text=viz_labels())
    options, answer = _yes_no(greedy.output_text != beam.output_text)
    return Chapter({"beams": BEAMS, "greedy": md_literal(greedy.output_text) or "—",
                    "beam": md_literal(beam.output_text) or "—"},
                   fig, options, answer, action="sample")


#: Chapter 9 tries this many heads, the most important first, for one whose switch-off
#: changes the sentence's translation (each try is one greedy decoding, cached).
HEADS_TRIED = 6


def _ranked_heads(live: Live) -> tuple[list[tuple[str, int, int]], bool]:
    """(kind, layer, head) triples, the most important first, and True: by the held-out
    importance kept in the model's folder; else (False) this sentence's cross-attention
    heads, the most confident first."""
    kept = cache.kept_heads(live.key, HELDOUT_SIZE)
    if kept is not None:
        scored = [((kind, int(layer), int(head)), float(v[layer, head]))
                  for kind, v in kept.importance.items()
                  for layer, head in np.ndindex(v.shape) if np.isfinite(v[layer, head])]
        return [h for h, _ in sorted(scored, key=lambda hv: -hv[1])], True
    tr = live.trace
    conf = cache.head_stats(cache.trace_key(live.key, tr), "cross",
                            live.translator.info.eos_token, tr).values["confidence"]
    order = np.argsort(-np.nan_to_num(conf, nan=-np.inf), axis=None)
    return [("cross", *(int(i) for i in np.unravel_index(o, conf.shape))) for o in order], False


def _head_that_matters(live: Live, ranked: list[tuple[str, int, int]]
                       ) -> tuple[tuple[str, int, int], DecodeTrace, int]:
    """The first of the ``HEADS_TRIED`` first ``ranked`` heads whose switch-off changes the
    translation, its decoding and its rank (1 = the most important); when none does, the
    first head, its (unchanged) decoding and 0."""
    for rank, off in enumerate(ranked[:HEADS_TRIED], 1):
        ablated = live.decode(heads_off=(off,))
        if ablated.output_text != live.trace.output_text:
            return off, ablated, rank
    return ranked[0], live.decode(heads_off=(ranked[0],)), 0


def sentence_where_it_matters(live: Live, off: tuple[str, int, int]) -> str | None:
    """The first of the model's example sentences whose translation changes with head
    ``off`` switched off (the sidebar's settings otherwise), or None."""
    settings = live.trace.settings
    for example in live.translator.info.examples:
        if example == live.trace.src_text:
            continue
        before = cache.decode(live.key, example, settings).output_text
        if cache.decode(live.key, example, settings, heads_off=(off,)).output_text != before:
            return example
    return None


def heads_off(live: Live, turn: int) -> Chapter:
    """A head whose switch-off changes this sentence's translation (the most important one
    that does, of the ``HEADS_TRIED`` most important), or, when none does, the most
    important head and an example sentence where it matters: the translation again, and
    how each of the original tokens' probabilities changed (teacher-forced with the head
    off)."""
    tr = live.trace
    ranked, kept = _ranked_heads(live)
    off, ablated, rank = _head_that_matters(live, ranked)
    tokens = tuple(tr.tgt_tokens[1:])
    forced = cache.teacher_force(live.key, tr.src_text, tokens, tr.settings, (off,))
    before = np.array([s.prob for s in tr.steps])
    after = np.array([s.prob for s in forced.steps])[: len(before)]
    fig = viz.probability_change(list(tr.step_labels), before, after, t("heads_off_change_title"),
                                 names=(t("heads_off_before"), t("heads_off_after")),
                                 step_label=t("heads_off_step_axis"), text=viz_labels())
    kind, layer, head = off
    options, answer = _yes_no(ablated.output_text != tr.output_text)
    where = sentence_where_it_matters(live, off) if rank == 0 else None
    named = {"head": t("lesson_head_name", layer=layer, head=head), "kind": t(f"tab_{kind}"),
             "chosen_by": t("lesson_chosen_heldout" if kept else "lesson_chosen_sentence")}
    choice = (t("lesson_heads_off_found", rank=rank, **named) if rank else
              t("lesson_heads_off_none", tried=min(HEADS_TRIED, len(ranked)), **named))
    return Chapter({**named, "choice": choice, "output": md_literal(tr.output_text),
                    "ablated": md_literal(ablated.output_text) or "—",
                    "rank": rank,
                    "example": code_span(where) if where else t("lesson_no_example")},
                   fig, options, answer,
                   action="changing_sentence" if where else "open_heads",
                   variant="" if rank else "none", sentence=where)


PAIRS_FILE = Path(__file__).with_name("minimal_pairs.tsv")


def minimal_pairs() -> list[tuple[str, str]]:
    """The candidate pairs of chapter 10 (``minimal_pairs.tsv``), in order."""
    lines = PAIRS_FILE.read_text(encoding="utf-8").splitlines()
    return [tuple(line.split("\t")) for line in lines if line and not line.startswith("#")]


def _changed_word(a: DecodeTrace, b: DecodeTrace) -> int | None:
    """The first content token of ``b``'s source that ``a``'s does not share, or None."""
    return next((j for j in changed_tokens(a.src_labels, b.src_labels)
                 if is_content(b.src_labels[j])), None)


def pair_that_parts(live: Live) -> tuple[DecodeTrace, DecodeTrace] | None:
    """The traces of the first candidate pair the model reads without unknown words and
    translates differently, with a changed content word on each side (the sidebar's
    languages and task, greedy), or None."""
    s = live.trace.settings
    greedy = GenerationSettings(src_lang=s.src_lang, tgt_lang=s.tgt_lang, task=s.task)
    for a, b in minimal_pairs():
        try:
            ta, tb = (cache.decode(live.key, x, greedy) for x in (a, b))
        except InputError:
            continue
        if (not (ta.unknown_words or tb.unknown_words) and ta.output_text != tb.output_text
                and None not in (_changed_word(ta, tb), _changed_word(tb, ta))):
            return ta, tb
    return None


def looked_at(trace: DecodeTrace, query: int) -> tuple[np.ndarray, list[int]]:
    """The last encoder layer's attention of source token ``query``, averaged over the heads
    (S,), and the tokens it may be asked about: the content tokens other than itself."""
    row = trace.encoder_attentions[-1].mean(axis=0)[query]  # (S,)
    keys = [j for j, label in enumerate(trace.src_labels) if j != query and is_content(label)]
    return row, keys


def minimal_pair(live: Live, turn: int) -> Chapter:
    """One word changed: the first candidate pair the model translates differently, where
    the translations part, and which other word the changed word attends to most in the
    last encoder layer (the mean of its heads), in B and in A."""
    found = pair_that_parts(live)
    if found is None:
        return Chapter(why="lesson_no_pair")
    ta, tb = found
    j, i = _changed_word(ta, tb), _changed_word(tb, ta)
    row, keys = looked_at(tb, j)
    best = max(keys, key=lambda k: row[k])
    row_a, keys_a = looked_at(ta, i)
    best_a = max(keys_a, key=lambda k: row_a[k])
    part = first_difference(list(ta.tgt_labels[1:]), list(tb.tgt_labels[1:]))
    layers = tb.encoder_attentions.shape[0]
    att = tb.encoder_attentions[-1].mean(axis=0)  # (S, S)
    fig = viz.attention_heatmap(att, list(tb.src_labels), list(tb.src_labels),
                                title=t("lesson_pair_title", layer=layers - 1),
                                query_label=t("query_source_token"),
                                key_label=t("key_source_token"), marked=[(j, best)],
                                text=viz_labels())
    options = [(str(k), f"{code_span(tb.src_labels[k])} ({k})")
               for k in sorted(sorted(keys, key=lambda k: -row[k])[:4])]
    return Chapter({"a": md_literal(ta.src_text), "b": md_literal(tb.src_text),
                    "out_a": md_literal(ta.output_text), "out_b": md_literal(tb.output_text),
                    "changed": code_span(tb.src_labels[j]),
                    "changed_a": code_span(ta.src_labels[i]), "step": part + 1,
                    "best": code_span(tb.src_labels[best]), "weight": f"{row[best]:.0%}",
                    "best_a": code_span(ta.src_labels[best_a]),
                    "weight_a": f"{row_a[best_a]:.0%}", "layer": layers - 1},
                   fig, options, str(best), action="open_compare", sentence=ta.src_text,
                   compare=tb.src_text)


def attention_story(live: Live, turn: int) -> Chapter:
    """Attention is not the whole story: at the step whose last-layer cross-attention (the
    mean of the heads) is clearest on a content token, the source token attention weighs
    most against the one value zeroing finds the step used most (Mohebbi et al. 2023; each
    source token's cosine distance as a share of the source's), and how much of the step
    came from the sentence rather than from what it had written."""
    tr = live.trace
    vz = zeroing(cache.trace_key(live.key, tr), tr)
    layer = tr.cross_attentions.shape[0] - 1
    att = tr.cross_attentions[layer].mean(axis=0)  # (T, S)
    row = clearest_row(att, [is_content(label) for label in tr.tgt_labels[1:]])
    dist = vz.cross[layer, row]  # (S,) cosine distances
    used = dist / dist.sum() if dist.sum() > 0 else dist
    a_best, u_best = int(att[row].argmax()), int(used.argmax())
    src = round(100 * float(vz.source_share()[layer, row]))
    fig = viz.grouped_bars(list(tr.src_labels),
                           {t("lesson_story_attention"): att[row], t("lesson_story_used"): used},
                           t("lesson_story_title", k=row + 1, layer=layer),
                           group_label=t("key_source_token"), value_label=t("lesson_story_axis"),
                           mark=a_best, text=viz_labels())
    options = [("same", t("lesson_story_same")), ("other", t("lesson_story_other"))]
    return Chapter({"k": row + 1, "token": code_span(tr.tgt_labels[row + 1]), "layer": layer,
                    "att_best": code_span(tr.src_labels[a_best]),
                    "att_weight": f"{att[row, a_best]:.0%}",
                    "used_best": code_span(tr.src_labels[u_best]),
                    "used_weight": f"{used[u_best]:.0%}", "src": src, "tgt": 100 - src},
                   fig, options, "same" if a_best == u_best else "other",
                   action="open_attribution", variant="" if a_best == u_best else "other")


BUILDERS: dict[str, Callable[[Live, int], Chapter]] = {
    "whole": whole, "positions": positions, "one_head": one_head, "heads": heads,
    "masks": masks, "sublayers": sublayers, "cross": cross, "decoding": decoding,
    "heads_off": heads_off, "minimal_pair": minimal_pair, "attention_story": attention_story,
}
