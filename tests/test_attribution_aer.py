"""model.analysis.attribution_aer on the shipped grammar model: every method is scored on the
same links as alignment.head_aer would score it (the best head's AER equals head_aer's
minimum), each AER lies in [0, 1], and a map that marks the gold links links every linked
character to one of its gold words."""

from __future__ import annotations

import numpy as np
import pytest
from shipped import model_of

from model.analysis.alignment import gold_pair, grammar_word_ids, head_aer
from model.analysis.attribution_aer import _links_of, attribution_aer
from model.core.heldout import heldout_pairs

MODEL = "en-zh-small"


@pytest.fixture(scope="module")
def grammar():
    translator = model_of(MODEL)
    return translator, [src for src, _ in heldout_pairs(translator.card, 6)]


def test_every_method_is_scored_as_heads_are(grammar):
    translator, sentences = grammar
    aer, n = attribution_aer(translator, sentences, integrated=False)
    heads = head_aer(translator, sentences)
    assert n == heads.n_sentences > 0
    best = [v for k, v in aer.items() if k.startswith("best head")]
    assert best == [pytest.approx(float(heads.aer.min()))]
    L = heads.aer.shape[0]
    assert {f"value zeroing, layer {layer}" for layer in range(L)} <= set(aer)
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
