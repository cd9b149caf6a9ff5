"""The lesson's chapters, built from the live model and the sidebar's sentence.

Each builder takes a ``Live`` (the model, the sentence's trace, the model's cache key) and
returns a ``Chapter``: the values its text fills in (``lesson.toml``), one figure with
the thing to look at highlighted, the question's options and the right one, and its try-it
action. What a chapter points at is chosen from the model's own numbers
(``model.analysis.picks``), so every chapter works for every model and sentence; where one
cannot apply (T5 has no position table) it returns ``why``, a string key that says so.

Values are Markdown-safe: tokens in code spans, text escaped (``ui.text``). A template is
filled by ``fill``, which never doubles a sentence's end punctuation (``…工作？。``).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

import viz
from model.analysis.internals import pe_similarity
from model.analysis.picks import (
    clearest_row,
    count_options,
    distinct_heads,
    is_content,
    top_keys,
)
from viz.convention import (
    formula_pos,
    head_number,
    layer_number,
    position_number,
    step_number,
)

from .. import cache, pairs
from ..i18n import t, viz_labels
from ..text import code_span, md_literal, token_row
from ..views.attribution import zeroing  # the Attribution view's cache: computed once a trace
from . import picks
from .chapter import Chapter, followed, say, token_options, yes_no
from .one_stack import one_stack
from .picks import Live
from .texts import direction_text, language_values


def whole(live: Live, turn: int) -> Chapter:
    """Seed 000's walk: every step's input and the token it produced, the first one
    highlighted; how many steps the decoder takes (the text names the language the encoder
    reads, ``texts.language_values``)."""
    tr = live.trace
    T = len(tr.steps)
    fig = viz.sequence_probabilities(list(tr.step_labels), np.array([s.prob for s in tr.steps]),
                                     mark=0, title=t("lesson_whole_title"), text=viz_labels())
    return Chapter({"sentence": md_literal(tr.src_text), "first": code_span(tr.tgt_labels[1]),
                    "n_steps": T, "output": token_row(tr.tgt_labels[1:]),  # one per step
                    **language_values(live.translator.info)},
                   fig, [(str(n), str(n)) for n in count_options(T)], str(T),
                   action="longer_sentence")


def _order_note(live: Live, sentence: str, outs: dict[str, str], tried: int) -> str:
    """What chapter 2 says of the sentence it shows: nothing when it is the sidebar's and
    its translation changes; that it took another when the sidebar's does not change; that
    none of those tried changes, when none does."""
    mine = live.trace.src_text
    changes = outs["none"] != outs["normal"] or outs["shuffled"] != outs["normal"]
    if sentence == mine and changes:
        return ""
    if changes:
        return say("lesson_positions_other", mine=md_literal(mine), sentence=md_literal(sentence),
                   output=md_literal(picks.position_outputs(live, mine)["normal"]))
    return say("lesson_positions_none_change", tried=tried, sentence=md_literal(mine),
               output=md_literal(outs["normal"]))


def positions(live: Live, turn: int) -> Chapter:
    """The position table of the sentence, a row where its waves show outlined
    (``picks.wave_row``: not the first position's flat stripe, pos = 0 in the formula), named
    by its position from 1 and its formula's pos, with what its look says of it (where
    the waves end, the values they swing between); with the sinusoidal table of our models,
    a sentence whose translation changes with the table switched off or shuffled
    (``sentence_where_order_shows``; the chapter says when it is not the sidebar's, or when
    none is found) and whether switching it off changes it; with a table that cannot be
    switched off (a Hugging Face model's: learned, or Marian's sines and cosines), which
    position's vector is most like that row's."""
    model = live.translator
    scheme = model.info.positional_scheme
    if scheme == "relative":
        return Chapter(why="lesson_positions_relative")
    sentence, outs, tried = (picks.sentence_where_order_shows(live) if scheme == "sinusoidal"
                             else (live.trace.src_text, {}, 0))
    tr = cache.decode(live.key, sentence, live.trace.settings)
    S = len(tr.src_tokens)
    pe = model.positional_encoding(S, "source")  # (S, D)
    waves = picks.wave_row(pe, tr.src_labels)
    pos = waves.row  # a 0-based index: the text says position_number, and the formula's pos
    fig = viz.positional_heatmap(pe, list(tr.src_labels), mark_row=pos,
                                 title=t("pe_heatmap_title_source", d_model=model.config.d_model),
                                 formula=scheme != "learned", text=viz_labels())
    values = {"pos": position_number(pos), "pe_pos": formula_pos(pos),
              "first": position_number(0), "first_pe_pos": formula_pos(0),
              "word": code_span(tr.src_labels[pos]), "d_model": model.config.d_model,
              "still_from": waves.still_from, "low": wave_number(waves.low),
              "high": wave_number(waves.high), "within": number_text(picks.STILL_WITHIN)}
    if scheme == "sinusoidal":
        options, answer = yes_no(outs["none"] != outs["normal"])
        shown = {mode: md_literal(text) or "—" for mode, text in outs.items()}
        return Chapter(values | {"sentence": md_literal(sentence), "output": shown["normal"],
                                 "off": shown["none"], "shuffled": shown["shuffled"]},
                       fig, options, answer, action="positions_off", sentence=sentence,
                       note=_order_note(live, sentence, outs, tried))
    sim = pe_similarity(pe)[pos].astype(np.float64)  # (S,) dot products with position pos
    sim[pos] = -np.inf
    best = int(np.argmax(sim))
    others = [j for j in dict.fromkeys((pos - 1, pos + 1, 0, S - 1)) if 0 <= j < S
              and j not in (pos, best)]
    keys = sorted([best, *others[:3]])
    how = t("lesson_pe_learned" if scheme == "learned" else "lesson_pe_fixed")
    return Chapter(values | {"best": position_number(best), "how": how}, fig,
                   [(str(j), str(position_number(j))) for j in keys], str(best),
                   action="open_positional", variant="similar")


def one_head(live: Live, turn: int) -> Chapter:
    """One encoder head of the last layer (the next one at each "another head"): the
    query row of the sentence's longest word, and where it puts the most weight."""
    tr = live.trace
    L, H = tr.encoder_attentions.shape[:2]
    head = turn % H
    row = followed(tr.src_labels)
    A = tr.encoder_attentions[L - 1, head]  # (S, S)
    best = int(A[row].argmax())
    fig = viz.attention_heatmap(A, list(tr.src_labels), list(tr.src_labels),
                                title=t("view_head_title", view=t("tab_encoder"),
                                        layer=layer_number(L - 1), head=head_number(head)),
                                marked=[(row, best)], text=viz_labels())
    return Chapter({"word": code_span(tr.src_labels[row]), "best": code_span(tr.src_labels[best]),
                    "weight": f"{A[row, best]:.0%}", "layer": layer_number(L - 1),
                    "head": head_number(head)},
                   fig, token_options(tr.src_labels, top_keys(A[row])), str(best),
                   action="next_head")


#: Chapter 4's three jobs -> the statistic (``headstats``, a share in [0, 1]) each is
#: found by and drawn with: the previous token's share, ``</s>``'s share, and the largest
#: weight of a row on average (``confidence``), whose lowest is the most spread-out head.
HEAD_JOBS = {"positional": "previous", "eos": "eos", "spread": "confidence"}
HEAD_JOB_SIGN = {"positional": 1.0, "eos": 1.0, "spread": -1.0}  # highest, highest, lowest


def heads(live: Live, turn: int) -> Chapter:
    """Three encoder heads with different jobs on this sentence: the one that gives the
    previous token most weight, the one that parks most weight on ``</s>``, the most spread
    out (the lowest mean largest weight; ``headstats``), each a different head; the chart
    draws the three statistics the text names for each of the three heads; which one is the
    positional head."""
    tr, model = live.trace, live.translator
    s = cache.head_stats(cache.trace_key(live.key, tr), "encoder", model.info.eos_token, tr)
    L, H = s.shape
    if L * H < len(HEAD_JOBS):
        return Chapter(why="lesson_heads_few")
    picks = distinct_heads({job: HEAD_JOB_SIGN[job] * s.values[stat]
                            for job, stat in HEAD_JOBS.items()})
    name = {job: t("lesson_head_name", layer=layer_number(la), head=head_number(h))
            for job, (la, h) in picks.items()}
    share = {job: float(s.values[stat][picks[job]]) for job, stat in HEAD_JOBS.items()}
    series = {t(f"lesson_heads_bar_{job}"): np.array([s.values[stat][picks[j]] for j in picks])
              for job, stat in HEAD_JOBS.items()}
    fig = viz.grouped_bars(list(name.values()), series, t("lesson_heads_title"),
                           group_label=t("lesson_heads_axis_heads"),
                           value_label=t("lesson_heads_axis"), mark=0, text=viz_labels())
    options = sorted(((job, name[job]) for job in picks), key=lambda o: picks[o[0]])
    claims = {f"{job}_claim": _head_claim(job, v) for job, v in share.items()}
    return Chapter({**name, "nhead": model.config.nhead, **claims,
                    **{f"{job}_share": f"{v:.0%}" for job, v in share.items()}},
                   fig, options, "positional", action="open_heads")


def _head_claim(job: str, share: float) -> str:
    """What the text says of the head picked for ``job``, from its ``share`` (the bar the
    chart draws for it): "mostly" at half its weight or more, else just the share (the
    spread head's largest weight is always just named)."""
    kind = "mostly" if share >= 0.5 and job != "spread" else "share"
    return t(f"lesson_heads_{job}_{kind}", share=f"{share:.0%}")


def masks(live: Live, turn: int) -> Chapter:
    """The look-ahead mask of this translation (``Translator.mask_views``), the keys the
    middle step may see outlined; how many tokens that step sees, named by their labels
    (an English piece without its ``Ġ``)."""
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
                    "token": code_span(tr.tgt_labels[k]),
                    "visible": token_row(tr.decoder_input_labels[:seen])},
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
    first = followed(tr.src_labels)
    pos = words[(words.index(first) + turn) % len(words)] if first in words else first
    L = norms.stream.shape[0]
    series = {t("lesson_sub_stream"): norms.stream[:, pos],
              t("lesson_sub_attention"): norms.attention[:, pos],
              t("lesson_sub_feed_forward"): norms.feed_forward[:, pos]}
    fig = viz.grouped_bars([t("layer_option", layer=layer_number(la)) for la in range(L)], series,
                           t("lesson_sub_title", word=tr.src_labels[pos]),
                           group_label=t("col_layer"), value_label=t("lesson_sub_norm"),
                           mark=L - 1, text=viz_labels())
    last = {"attention": norms.attention[L - 1, pos],
            "feed_forward": norms.feed_forward[L - 1, pos]}
    return Chapter({"word": code_span(tr.src_labels[pos]), "layer": layer_number(L - 1),
                    "stream": f"{norms.stream[L - 1, pos]:.1f}",
                    "attention": f"{last['attention']:.1f}",
                    "feed_forward": f"{last['feed_forward']:.1f}"},
                   fig, [(name, t(f"lesson_sub_{name}")) for name in SUBLAYERS],
                   max(SUBLAYERS, key=last.get), action="next_word")


def cross(live: Live, turn: int) -> Chapter:
    """The most confident cross-attention head on this sentence (the next one at each
    "another head"), the step with the plainest choice among those writing a content
    token, and the source token it looks at most; the text names the source language and
    how the target language orders words against it (``texts``)."""
    tr, model = live.trace, live.translator
    s = cache.head_stats(cache.trace_key(live.key, tr), "cross", model.info.eos_token, tr)
    conf = s.values["confidence"]  # (L, H)
    order = np.argsort(-np.nan_to_num(conf, nan=-1.0), axis=None, kind="stable")
    layer, head = (int(i) for i in np.unravel_index(order[turn % order.size], conf.shape))
    A = tr.cross_attentions[layer, head]  # (T, S)
    row = clearest_row(A, [is_content(label) for label in tr.tgt_labels[1:]])
    best = int(A[row].argmax())
    fig = viz.attention_heatmap(A, list(tr.step_labels), list(tr.src_labels),
                                title=t("view_head_title", view=t("tab_cross"),
                                        layer=layer_number(layer), head=head_number(head)),
                                query_label=t("query_step"), key_label=t("key_source_token"),
                                marked=[(row, best)], text=viz_labels())
    return Chapter({"token": code_span(tr.tgt_labels[row + 1]), "k": step_number(row),
                    "best": code_span(tr.src_labels[best]), "weight": f"{A[row, best]:.0%}",
                    "layer": layer_number(layer), "head": head_number(head),
                    "order": direction_text("word_order", model.info),
                    **language_values(model.info)},
                   fig, token_options(tr.src_labels, top_keys(A[row])), str(best),
                   action="next_head")


BEAMS = 4
#: Chapter 8's try-it samples SAMPLES translations at each of these temperatures (a flatter,
#: then a sharper distribution), from seeds 0, 1, … (at most SAMPLE_SEEDS of them, skipping
#: blocked samples). The chapter's text and its button name these numbers (``sample_values``).
SAMPLE_TEMPERATURES = (1.2, 0.7)
SAMPLES, SAMPLE_SEEDS = 3, 12


def number_text(x: float) -> str:
    """A number as the lesson writes it: 1.2, 0.7, 3 (``format(x, "g")``)."""
    return format(x, "g")


def wave_number(x: float) -> str:
    """A value of the position table as chapter 2 writes it: one decimal, never "-0.0"."""
    return f"{x:.1f}".replace("-0.0", "0.0")


def sample_values() -> dict[str, str]:
    """The numbers of chapter 8's sampling, as its text and button write them: ``samples``
    per temperature, the ``hot`` and the ``cold`` temperature."""
    hot, cold = SAMPLE_TEMPERATURES
    return {"samples": number_text(SAMPLES), "hot": number_text(hot), "cold": number_text(cold)}


def decoding(live: Live, turn: int) -> Chapter:
    """Greedy decoding and beam search with ``BEAMS`` beams on this sentence: the beam
    tree with the best hypothesis's path; whether the two translations agree."""
    greedy = live.decode(num_beams=1, do_sample=False)
    beam = live.decode(num_beams=BEAMS, do_sample=False)
    steps = [[(c.parent, c.label, c.logprob, c.status) for c in step] for step in beam.beam.steps]
    fig = viz.beam_tree(steps, highlight=beam.beam.hypotheses[0].end, title=t("beam_tree_title"),
                        text=viz_labels())
    options, answer = yes_no(greedy.output_text != beam.output_text)
    return Chapter({"beams": BEAMS, "greedy": md_literal(greedy.output_text) or "—",
                    "beam": md_literal(beam.output_text) or "—", **sample_values()},
                   fig, options, answer, action="sample")


def heads_off(live: Live, turn: int) -> Chapter:
    """A head whose switch-off changes this sentence's translation (the most important one
    that does, of the ``picks.HEADS_TRIED`` most important), or, when none does, the most
    important head and an example sentence where it matters: the translation again, and
    how each of the original tokens' probabilities changed (teacher-forced with the head
    off)."""
    tr = live.trace
    ranked, kept = picks.ranked_heads(live)
    off, ablated, rank = picks.head_that_matters(live, ranked)
    tokens = tuple(tr.tgt_tokens[1:])
    forced = cache.teacher_force(live.key, tr.src_text, tokens, tr.settings, heads_off=(off,))
    before = np.array([s.prob for s in tr.steps])
    after = np.array([s.prob for s in forced.steps])[: len(before)]
    kind, layer, head = off
    named = {"head": t("lesson_head_name", layer=layer_number(layer), head=head_number(head)),
             "kind": t(f"tab_{kind}"),
             "chosen_by": t("lesson_chosen_heldout" if kept else "lesson_chosen_sentence")}
    fig = viz.probability_change(list(tr.step_labels), before, after,
                                 t("lesson_heads_off_title", kind=named["kind"],
                                   head=named["head"]),
                                 names=(t("heads_off_before"), t("lesson_heads_off_after")),
                                 step_label=t("heads_off_step_axis"), text=viz_labels())
    options, answer = yes_no(ablated.output_text != tr.output_text)
    where = picks.sentence_where_it_matters(live, off) if rank == 0 else None
    choice = (t("lesson_heads_off_found", rank=rank, **named) if rank else
              t("lesson_heads_off_none", tried=min(picks.HEADS_TRIED, len(ranked)), **named))
    return Chapter({**named, "choice": choice, "output": md_literal(tr.output_text),
                    "ablated": md_literal(ablated.output_text) or "—",
                    "rank": rank,
                    "example": code_span(where) if where else t("lesson_no_example")},
                   fig, options, answer,
                   action="changing_sentence" if where else "open_heads",
                   variant="" if rank else "none", sentence=where)


def _pair_note(live: Live, passed_over: str) -> str:
    """What chapter 10 says of the pair it shows when it passed over the first pair of the
    model's language (``ui.pairs.pair_that_parts``): that the model cannot read it, or that
    it translates it wrong (both sentences and their translations)."""
    a, b = pairs.model_pairs(live.translator)[0]
    if passed_over == "unknown":
        return say("lesson_pair_first_unknown", a=md_literal(a), b=md_literal(b))
    if passed_over != "wrong":
        return ""
    ta, tb = pairs.pair_traces(live.key, (a, b), live.trace.settings)
    return say("lesson_pair_first_wrong", a=md_literal(a), b=md_literal(b),
               out_a=md_literal(ta.output_text) or "—", out_b=md_literal(tb.output_text) or "—")


def minimal_pair(live: Live, turn: int) -> Chapter:
    """One word changed: the first candidate pair in the model's source language that it
    translates differently and right (``ui.pairs.pair_that_parts``, the pair the Side by
    side view offers too; the chapter says so when it
    passes over the first pair, and why when none qualifies or the list has none in that
    language), where the translations part, the verdict on both, and which other word the
    changed word attends to most in the last encoder layer (the mean of its heads; words as
    ``ui.pairs.source_words`` groups tokens: 哥哥, not 哥), in B and in A, drawn as one pair of
    bars per other word."""
    if not pairs.model_pairs(live.translator):
        return Chapter(why="lesson_no_pair_language")
    found = pairs.pair_that_parts(live.translator, live.key, live.trace.settings)
    if found is None:
        return Chapter(why="lesson_no_pair")
    ta, tb, j = found.a, found.b, found.word
    words, words_a = pairs.source_words(tb), pairs.source_words(ta)
    row, keys = picks.looked_at(tb, j)  # A's changed word is at j too, the rest alike
    row_a = picks.looked_at(ta, j)[0]
    best, best_a = max(keys, key=lambda k: row[k]), max(keys, key=lambda k: row_a[k])
    layer = layer_number(tb.encoder_attentions.shape[0] - 1)
    series = {t("lesson_pair_series", sentence="A", word=words_a[j]): row_a[keys],
              t("lesson_pair_series", sentence="B", word=words[j]): row[keys]}
    fig = viz.grouped_bars([words[k] for k in keys], series,
                           t("lesson_pair_title", layer=layer), group_label=t("lesson_pair_axis"),
                           value_label=t("lesson_pair_value"), mark=keys.index(best),
                           text=viz_labels())
    options = token_options(words, sorted(sorted(keys, key=lambda k: -row[k])[:4]))
    grammar = pairs.checks_grammar(live.translator)
    return Chapter({"a": md_literal(ta.src_text), "b": md_literal(tb.src_text),
                    "out_a": md_literal(ta.output_text), "out_b": md_literal(tb.output_text),
                    "changed": code_span(words[j]), "changed_a": code_span(words_a[j]),
                    "step": step_number(found.step),
                    "best": code_span(words[best]), "weight": f"{row[best]:.0%}",
                    "best_a": code_span(words_a[best_a]),
                    "weight_a": f"{row_a[best_a]:.0%}", "layer": layer,
                    "verdict": t("lesson_pair_verdict_grammar" if grammar
                                 else "lesson_pair_verdict")},
                   fig, options, str(best), action="open_compare", sentence=ta.src_text,
                   compare=tb.src_text, note=_pair_note(live, found.passed_over))


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
                           t("lesson_story_title", k=step_number(row),
                             layer=layer_number(layer)),
                           group_label=t("key_source_token"), value_label=t("lesson_story_axis"),
                           mark=a_best, text=viz_labels())
    options = [("same", t("lesson_story_same")), ("other", t("lesson_story_other"))]
    return Chapter({"k": step_number(row), "token": code_span(tr.tgt_labels[row + 1]),
                    "layer": layer_number(layer),
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
    "one_stack": one_stack,
}
