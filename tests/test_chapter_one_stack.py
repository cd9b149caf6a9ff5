"""Lesson chapter 12, "One stack instead of two" (issue 55, item 5): every claim it makes is
the numbers of the two decodings it shows. A models folder holding a tiny random prefix LM
under the shipped decoder-only model's name and the small encoder-decoder: only equalities
are asserted (the claims test on the shipped models runs in tests/test_chapter_claims.py)."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from model import GenerationSettings
from model.analysis.headstats import head_stats
from model.backends.load import PRETRAINED_DIR
from model.decoding import one_map
from testkit.one_stack_tiny import tiny_prefix_lm
from ui import cache
from ui.lesson.one_stack import DECODER_ONLY, one_stack
from ui.lesson.picks import Live

SENTENCE = "We are learning."


@pytest.fixture()
def live(tmp_path, monkeypatch):
    tiny_prefix_lm(tmp_path / DECODER_ONLY)
    shutil.copytree(PRETRAINED_DIR / "en-zh-small", tmp_path / "en-zh-small")
    monkeypatch.setenv("ATTENTION_PRETRAINED_DIR", str(tmp_path))
    key = cache.model_key(tmp_path / "en-zh-small")
    return Live(cache.load_model(*key), cache.decode(key, SENTENCE, GenerationSettings()), key)


def test_the_chapter_says_what_the_one_maps_numbers_say(live, tmp_path):
    made = one_stack(live, 0)
    assert made.why is None
    d = cache.decode(cache.model_key(tmp_path / DECODER_ONLY), SENTENCE, GenerationSettings())
    L = d.cross_attentions.shape[0]
    prompt = d.cross_attentions[L - 1].mean(0)  # (T, S): the last layer, the mean of heads
    k = int(made.values["k"]) - 1
    share = float(prompt[k].sum())
    assert made.values["share"] == f"{share:.0%}"
    assert made.answer == ("prompt" if share >= 0.5 else "written")
    assert made.values["weight"] == f"{prompt[k].max():.0%}"
    sink = head_stats(d, "decoder").values["first"]
    assert made.values["sink"] == f"{sink.max():.0%}"
    z = np.asarray(made.figure.data[0].z, dtype=np.float64)
    np.testing.assert_allclose(z, one_map(d)[L - 1].mean(0), atol=1e-6)
    assert made.action == "open_one_stack"


def test_another_turn_goes_a_layer_down(live):
    assert one_stack(live, 1).values["layer"] != one_stack(live, 0).values["layer"]


def test_the_chapter_says_why_without_the_model_or_english(live, tmp_path):
    shutil.rmtree(tmp_path / DECODER_ONLY)
    assert one_stack(live, 0).why == "lesson_one_stack_missing"
