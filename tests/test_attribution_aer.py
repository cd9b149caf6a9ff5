"""model.analysis.attribution_aer on the shipped grammar model: every method is scored on the
same links as alignment.head_aer would score it (the best head's AER equals head_aer's
minimum), each AER lies in [0, 1], a map that marks the gold links links every linked
character to one of its gold words, and the printed table numbers layers and heads from 1,
as the app does."""

from __future__ import annotations

import re

import numpy as np
import pytest
from shipped import model_of

from model.analysis.alignment import gold_pair, grammar_word_ids, head_aer
from model.analysis.attribution_aer import _links_of, attribution_aer, table
from model.core.heldout import heldout_pairs
from viz.convention import FIRST_NUMBER, head_number, layer_number

pytestmark = pytest.mark.slow  # every method scored on held-out sentences: ~15 s

MODEL = "en-zh-small"


@pytest.fixture(scope="module")
def grammar():
    translator = model_of(MODEL)
    return translator, [src for src, _ in heldout_pairs(translator.card, 6)]


@pytest.fixture(scope="module")
def scored(grammar):
    """(attribution_aer's (AER by method, n), head_aer) without integrated gradients."""
    translator, sentences = grammar
    return attribution_aer(translator, sentences, integrated=False), head_aer(translator,
                                                                              sentences)


def test_every_method_is_scored_as_heads_are(scored):
    (aer, n), heads = scored
    assert n == heads.n_sentences > 0
    best = [v for k, v in aer.items() if k.startswith("best head")]
    assert best == [pytest.approx(float(heads.aer.min()))]
    L = heads.aer.shape[0]
    assert {f"value zeroing, layer {layer_number(layer)}" for layer in range(L)} <= set(aer)
    assert "gradient x input" in aer and "integrated gradients" not in aer
    assert all(0.0 <= v <= 1.0 for v in aer.values())


def test_a_map_that_is_the_gold_alignment_has_no_error(grammar):
    translator, sentences = grammar
    sentence = next(s for s in sentences if gold_pair(s) is not None)
    pair = gold_pair(sentence)
    trace = translator.teacher_force(sentence, translator.grammar_translation(sentence))
    words = grammar_word_ids(trace.src_labels, pair.src)
    T, S = trace.cross_attentions.shape[2:]
    scores = np.zeros((T, S))
    for w, c in pair.alignment:  # step c outputs character c: its row scores word w's piece
        scores[c, words.index(w)] = 1.0
    predicted = dict((c, w) for w, c in _links_of(scores, words))
    for _, c in pair.alignment:  # every linked character goes to one of its gold words
        assert (predicted[c], c) in pair.alignment


def test_the_printed_table_numbers_layers_and_heads_as_the_app_does(grammar, scored):
    translator, sentences = grammar
    (aer, n), heads = scored
    printed = table(translator.name, aer, n)
    L, H = heads.aer.shape
    layer, head = np.unravel_index(int(heads.aer.argmin()), heads.aer.shape)
    # the best head as the Heads view would name it: counted from 1, never the array index
    assert f"| best head (layer {layer_number(layer)}, head {head_number(head)}) |" in printed
    for name in ("mean of the heads", "value zeroing"):
        shown = sorted(int(k) for k in re.findall(rf"\| {name}, layer (\d+) \|", printed))
        assert shown == [layer_number(i) for i in range(L)] == list(range(1, L + 1)), printed
    numbers = [int(k) for k in re.findall(r"(?:layer|head) (\d+)", printed)]
    assert numbers and min(numbers) == FIRST_NUMBER == 1 and max(numbers) <= max(L, H), printed
