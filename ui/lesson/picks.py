"""What the lesson shows, chosen where its point shows: the searches behind chapter 2's
sentence (one whose translation changes without positions), chapter 9's head (one whose
switch-off changes the translation) and chapter 10's pair (one the model translates right on
both sides, differently). ``ui.lesson.chapters`` builds the chapters from what these find and says
so when the search passes over the sidebar's sentence or the list's first pair.

Every decoding goes through ``ui.cache``, so a search costs its decodings once per model.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from model import DecodeTrace, GenerationSettings, InputError, Translator
from model.analysis.compare import changed_tokens
from model.analysis.picks import is_content
from model.core.heldout import HELDOUT_SIZE

from .. import cache
from ..verdict import trace_verdict


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

#: The positional experiment's modes, as ``GenerationSettings.positional`` spells them.
POSITION_MODES = ("normal", "none", "shuffled")
#: Chapter 2 tries at most this many sentences (the sidebar's, then the model's examples)
#: for one whose translation changes with positions off or shuffled (3 decodings each).
POSITION_CANDIDATES = 12


def position_outputs(live: Live, sentence: str) -> dict[str, str]:
    """``sentence``'s translation with the sidebar's settings, for each of
    ``POSITION_MODES``: mode -> output text (cached decodings)."""
    settings = live.trace.settings
    return {mode: cache.decode(live.key, sentence, settings.replace(positional=mode)).output_text
            for mode in POSITION_MODES}


def sentence_where_order_shows(live: Live) -> tuple[str, dict[str, str], int]:
    """The first of the sidebar's sentence and the model's examples (at most
    ``POSITION_CANDIDATES``) whose translation changes with the positions switched off or
    shuffled, its ``position_outputs``, and how many sentences were tried; when none does,
    the sidebar's sentence, its outputs and the number tried."""
    mine = live.trace.src_text
    tried = list(dict.fromkeys((mine, *live.translator.info.examples)))[:POSITION_CANDIDATES]
    for sentence in tried:
        outs = position_outputs(live, sentence)
        if outs["none"] != outs["normal"] or outs["shuffled"] != outs["normal"]:
            return sentence, outs, tried.index(sentence) + 1
    return mine, position_outputs(live, mine), len(tried)


#: Chapter 9 tries this many heads, the most important first, for one whose switch-off
#: changes the sentence's translation (each try is one greedy decoding, cached).
HEADS_TRIED = 6


def ranked_heads(live: Live) -> tuple[list[tuple[str, int, int]], bool]:
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


def head_that_matters(live: Live, ranked: list[tuple[str, int, int]]
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


PAIRS_FILE = Path(__file__).with_name("minimal_pairs.tsv")


def minimal_pairs() -> list[tuple[str, str]]:
    """The candidate pairs of chapter 10 (``minimal_pairs.tsv``), in order."""
    lines = PAIRS_FILE.read_text(encoding="utf-8").splitlines()
    return [tuple(line.split("\t")) for line in lines if line and not line.startswith("#")]


def changed_word(a: DecodeTrace, b: DecodeTrace) -> int | None:
    """The first content token of ``b``'s source that ``a``'s does not share, or None."""
    return next((j for j in changed_tokens(a.src_labels, b.src_labels)
                 if is_content(b.src_labels[j])), None)


def translated_right(live: Live, trace: DecodeTrace) -> bool:
    """Whether the app's own checks take ``trace``'s translation for right: the header's
    verdict (``ui.verdict.trace_verdict``, the one the page shows) flags nothing, and, for a
    model of the synthetic grammar, the sentence is inside the grammar and the output is the
    grammar's own translation (the header's check)."""
    if trace_verdict(live.translator, trace).flagged:
        return False
    info = live.translator.info
    if info.backend == "huggingface" or info.subword:
        return True
    return cache.grammar_translation(live.key, trace.src_text) == trace.output_text


def pair_traces(live: Live, pair: tuple[str, str]) -> tuple[DecodeTrace, DecodeTrace] | None:
    """Both sentences of ``pair`` decoded greedily (the sidebar's languages and task), or
    None when the model cannot read one (``InputError``) or does not know a word of it."""
    s = live.trace.settings
    greedy = GenerationSettings(src_lang=s.src_lang, tgt_lang=s.tgt_lang, task=s.task)
    try:
        ta, tb = (cache.decode(live.key, x, greedy) for x in pair)
    except InputError:
        return None
    return None if ta.unknown_words or tb.unknown_words else (ta, tb)


def pair_parts(ta: DecodeTrace, tb: DecodeTrace) -> bool:
    """Whether a pair's translations differ and its one changed content token sits at the
    same position of two sources of one length (so its rows can be set side by side)."""
    j, i = changed_word(ta, tb), changed_word(tb, ta)
    return (ta.output_text != tb.output_text and None not in (i, j) and i == j
            and len(ta.src_labels) == len(tb.src_labels))


def pair_that_parts(live: Live) -> tuple[DecodeTrace, DecodeTrace, str] | None:
    """The traces of the first candidate pair the model reads without unknown words,
    translates differently (``pair_parts``) and right on both sides (``translated_right``), and
    why the list's first pair was passed over: "unknown" (the model cannot read it),
    "wrong" (a translation is not right), or "" (it was taken, or translated the same);
    None when no pair qualifies."""
    passed_over = ""
    for n, pair in enumerate(minimal_pairs()):
        traces = pair_traces(live, pair)
        right = traces is not None and all(translated_right(live, tr) for tr in traces)
        if n == 0:
            passed_over = "unknown" if traces is None else "" if right else "wrong"
        if right and pair_parts(*traces):
            return (*traces, passed_over)
    return None


def looked_at(trace: DecodeTrace, query: int) -> tuple[np.ndarray, list[int]]:
    """The last encoder layer's attention of source token ``query``, averaged over the heads
    (S,), and the tokens it may be asked about: the content tokens other than itself."""
    row = trace.encoder_attentions[-1].mean(axis=0)[query]  # (S,)
    keys = [j for j, label in enumerate(trace.src_labels) if j != query and is_content(label)]
    return row, keys
