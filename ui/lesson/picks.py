"""What the lesson shows, chosen where its point shows: the searches behind chapter 1's longer
example (counted in the words the model reads), chapter 2's sentence (one whose translation
changes without positions) and its row (one where the waves show), chapter 9's head (one
whose switch-off changes the translation) and what the changed word of chapter 10's pair
attends to (the pair itself is ``ui.pairs``'s, shared with the Side by side view).
``ui.lesson.chapters`` builds the chapters from what these find and says so when the search
passes over the sidebar's sentence or the list's first pair. Nothing here assumes which
languages the model reads and writes: a Chinese source is counted and compared in jieba's
words.

Every decoding goes through ``ui.cache``, so a search costs its decodings once per model.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from model import DecodeTrace, InputError, Translator
from model.analysis.picks import is_content
from model.analysis.words import group_attention
from model.core.heldout import HELDOUT_SIZE

from .. import cache
from ..pairs import source_words


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

#: Chapter 1's try-it offers the shortest of the model's examples with at least this many
#: more words than the sidebar's sentence (``longer_example``).
LONGER_BY = 3


def word_count(translator: Translator, sentence: str) -> int | None:
    """How many words the model reads in ``sentence`` (its source's word groups: subword
    pieces joined, a Chinese sentence cut into words by jieba), or None when it cannot read
    it (``InputError``)."""
    try:
        return len(set(translator.source(sentence).words))
    except InputError:
        return None


def longer_example(live: Live) -> str | None:
    """The shortest of the model's examples with at least ``LONGER_BY`` more words
    (``word_count``, so a Chinese sentence counts its words, not its one run of text) than
    the sidebar's sentence, or None."""
    n = len(set(live.trace.src_words))
    counts = {e: word_count(live.translator, e) for e in live.translator.info.examples}
    longer = sorted((e for e, k in counts.items() if k is not None and k >= n + LONGER_BY),
                    key=counts.get)
    return longer[0] if longer else None


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


#: Chapter 2: a value of a position's row has not moved while it is within this of the
#: value position 0 has in its column (sin 0 = 0 and cos 0 = 1 in a sinusoidal table).
STILL_WITHIN = 0.1


@dataclass(frozen=True)
class Waves:
    """Chapter 2's outlined row of a position table and what its text says of it.

    Attributes:
        row: the position outlined (0-based, as the chart's rows).
        still_from: the first dimension (0-based, as the chart's columns) from which every
            value of the row is within ``STILL_WITHIN`` of position 0's; left of it, the
            waves that have moved.
        low, high: the smallest and the largest value of the row left of ``still_from``
            (of the whole row when nothing has moved).
    """

    row: int
    still_from: int
    low: float
    high: float


def wave_row(pe: np.ndarray, labels: Sequence[str]) -> Waves:
    """The row of a position table where its waves show, chosen from its numbers: among the
    content tokens after position 0 (``is_content``; else every position after 0; else 0),
    the one whose row has moved away from position 0's (by more than ``STILL_WITHIN``) over
    the widest span of dimensions, the first of equals. Position 0's own row is a flat
    stripe in a sinusoidal table (PE(0, 2i) = sin 0 = 0, PE(0, 2i+1) = cos 0 = 1, Vaswani et
    al. 2017, section 3.5), and a later position's waves reach further to the right, where
    they are slower.

    Args:
        pe: (S, D) the positional encodings of the sentence's S tokens.
        labels: the S token labels, as the model made them.

    Raises:
        ValueError: if ``labels`` does not have one label per row of ``pe``.
    """
    S, D = pe.shape
    if len(labels) != S:
        raise ValueError(f"{len(labels)} labels for {S} positions")
    moved = np.abs(pe - pe[0]) > STILL_WITHIN  # (S, D)
    still = [D - int(np.argmax(r[::-1])) if r.any() else 0 for r in moved]  # past the last
    rows = [i for i in range(1, S) if is_content(labels[i])] or list(range(1, S)) or [0]
    row = max(rows, key=lambda i: still[i])
    part = pe[row, : still[row]] if still[row] else pe[row]
    return Waves(row, still[row], float(part.min()), float(part.max()))


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


def looked_at(trace: DecodeTrace, query: int) -> tuple[np.ndarray, list[int]]:
    """How source word ``query`` (an index of ``ui.pairs.source_words``) attends to each word in the
    last encoder layer, averaged over the heads (W,): the mean of its pieces' rows, summed
    over each word's pieces (Clark et al. 2019, ``model.analysis.words``); and the words it
    may be asked about: the content words other than itself."""
    mean = trace.encoder_attentions[-1].mean(axis=0)  # (S, S)
    row = group_attention(mean, trace.src_words, trace.src_words)[query]  # (W,)
    keys = [k for k, word in enumerate(source_words(trace)) if k != query and is_content(word)]
    return row, keys
