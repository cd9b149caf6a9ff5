"""The shipped everyday model: its card, its quality on the grammar, the sentences people
type, and subword tokens in its traces.

Tatoeba and HSK TEST need the training packages (``python -m model.training.evaluate`` measures them
and writes the card); what needs no package is checked here again: the grammar's TEST split.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from shipped import grammar_splits

from model import InputError
from model.analysis.words import group_attention
from model.backends.load import PRETRAINED_DIR
from model.core.checkpoint import WEIGHTS, sha256_file
from model.decoding import GenerationSettings, greedy_batch
from model.tasks import en_zh
from model.training.recipes import RECIPES

CHINESE = re.compile(r"^[\u4e00-\u9fff，。？！：；、“”‘’（）《》0-9A-Za-z·…—]+$")


def test_card_states_sources_splits_hardware_time_and_metrics(everyday):
    card = everyday.card
    assert card["sha256"] == sha256_file(PRETRAINED_DIR / "en-zh-everyday" / WEIGHTS)
    assert card["parameters"] == everyday.model.num_parameters()
    assert card["task"] in RECIPES  # one command reproduces it
    assert card["command"].startswith(f"python -m model.training.train --recipe {card['task']} ")
    manifest = card["data"]["manifest"]
    assert {"tatoeba", "hsk", "grammar"} <= set(manifest["sources"])
    assert all(src["licence"] for src in manifest["sources"].values())
    assert "zh_id % 10 == 0" in manifest["split_rules"]["tatoeba"]
    assert manifest["files"]["test_tatoeba.tsv"]["pairs"] > 5000
    training = card["training"]
    assert not training.get("earlier_stages")  # one recipe, one stage (issue 32)
    assert training["wall_time_minutes"] <= training["total_wall_time_minutes"] <= 180
    assert training["device"] == "cpu" and training["threads"] == 2
    metrics = card["metrics"]
    for name in ("tatoeba_test", "hsk_test", "grammar_test",
                 *(f"hsk{lv}_test" for lv in range(1, 7))):
        assert {"bleu", "chrf", "exact_match", "n"} <= set(metrics[name]), name
    assert metrics["settings"]["num_beams"] == 4
    assert (PRETRAINED_DIR / "en-zh-everyday" / WEIGHTS).stat().st_size <= 60e6


def test_the_quality_bar_recorded_in_the_card(everyday):
    m = everyday.card["metrics"]
    assert m["tatoeba_test"]["bleu"] >= 28
    assert m["hsk_test"]["bleu"] >= 25
    assert m["grammar_test"]["exact_match"] >= 90


@pytest.mark.slow
def test_grammar_test_split_exact_match(everyday):
    """Measured here too (greedy, the first 300 TEST pairs): the teaching examples hold."""
    test = grammar_splits(seed=0, n_train=200_000).test[:300]
    src = [everyday.source(" ".join(p.src)).ids.tolist() for p in test]
    S = max(map(len, src))
    ids = torch.tensor([s + [0] * (S - len(s)) for s in src])
    out = greedy_batch(everyday.model, ids, GenerationSettings(max_new_tokens=40)
                       ).outputs({everyday.config.eos_id})
    hyps = ["".join(everyday.target.vocab.decode(o)) for o in out]
    exact = np.mean([h == "".join(p.tgt) for h, p in zip(hyps, test, strict=True)])
    assert exact >= 0.9, exact


@pytest.mark.parametrize("text, must_have", [
    ("Hello, nice to meet you.", ["你"]),
    ("I like machine learning.", ["喜欢", "学"]),
    ("My mother is a doctor.", ["医生"]),
    ("We can't go home today.", ["今天", "家"]),
])
def test_everyday_sentences_translate_sensibly(everyday, text, must_have):
    out = everyday.generate(text, num_beams=4).output_text
    assert CHINESE.match(out), out
    for word in must_have:
        assert word in out, (text, out)


def test_the_teaching_example_is_exact_as_typed_either_way(everyday):
    want = en_zh.translate("why do we work ?")
    assert everyday.generate("why do we work ?").output_text == want
    assert everyday.generate("Why do we work?").output_text == want
    assert want.endswith("？")  # Chinese punctuation


@settings(max_examples=200, deadline=None)
@given(st.text(min_size=1, max_size=80))
def test_typed_text_never_has_an_unknown_source_token(everyday, text):
    try:
        src = everyday.source(text)
    except InputError:  # empty, symbols only, too long: refused before any token is read
        return
    assert everyday.config.unk_id not in src.ids
    assert src.unknown_words == ()


@pytest.mark.parametrize("text", [
    "Tom bought 3 apples in Paris.", "WHY DO WE WORK?", "I don't know, do you?",
    "It's 5 o'clock!", "Where's María's café?", "«Quoted» — and dashed…",
])
def test_capitals_digits_names_and_contractions_decode(everyday, text):
    trace = everyday.generate(text)
    assert trace.finished and trace.output_text
    assert not any("Ġ" in label for label in trace.src_labels)
    rows = group_attention(trace.encoder_attentions, trace.src_words, trace.src_words)
    np.testing.assert_allclose(rows.sum(-1), 1.0, atol=1e-5)


def test_too_long_input_gets_a_clear_message(everyday):
    with pytest.raises(InputError, match="at most 95"):
        everyday.generate(" ".join(["a"] * 120))
