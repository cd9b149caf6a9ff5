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
from model.backends.load import PRETRAINED_DIR, pretrained_root
from model.decoding import one_map
from testkit.one_stack_tiny import tiny_prefix_lm
from ui import cache
from ui.lesson.one_stack import DECODER_ONLY, one_stack
from ui.lesson.picks import Live
from ui.text import code_span

SENTENCE = "We are learning."


@pytest.fixture()
def live(tmp_path, monkeypatch):
    tiny_prefix_lm(tmp_path / DECODER_ONLY)
    shutil.copytree(PRETRAINED_DIR / "en-zh-small", tmp_path / "en-zh-small")
    monkeypatch.setenv("ATTENTION_PRETRAINED_DIR", str(tmp_path))
    key = cache.model_key(tmp_path / "en-zh-small")
    return Live(cache.load_model(*key), cache.decode(key, SENTENCE, GenerationSettings()), key)


def assert_says_the_numbers(made, live: Live) -> None:
    """Every value chapter 12 (``made``, built on ``live``) names is the decoder-only model's
    own decoding of the sentence: the share of the chosen row on the prompt and the rest, the
    heaviest prompt token and its weight, the sink head, the one map drawn, and the
    encoder-decoder's cross-attention on the same token."""
    d = cache.decode(cache.model_key(pretrained_root() / DECODER_ONLY), live.trace.src_text,
                     GenerationSettings())
    L = d.cross_attentions.shape[0]
    layer = int(made.values["layer"]) - 1
    assert layer == L - 1  # the first turn: the last layer
    prompt = d.cross_attentions[layer].mean(0)  # (T, S): the chosen layer, the mean of heads
    k = int(made.values["k"]) - 1
    share = float(prompt[k].sum())
    assert made.values["share"] == f"{share:.0%}" and made.values["rest"] == f"{1 - share:.0%}"
    assert made.answer == ("prompt" if share >= 0.5 else "written")
    best = int(prompt[k].argmax())
    assert made.values["weight"] == f"{prompt[k, best]:.0%}"
    assert made.values["best"] == code_span(d.src_labels[best])
    assert made.values["token"] == code_span(d.tgt_labels[k + 1])
    assert made.values["query"] == code_span(d.decoder_input_labels[k])  # the outlined row
    sink = head_stats(d, "decoder").values["first"]  # (L, H)
    sl, sh = int(made.values["sink_layer"]) - 1, int(made.values["sink_head"]) - 1
    assert made.values["sink"] == f"{sink.max():.0%}" and sink[sl, sh] == sink.max()
    z = np.asarray(made.figure.data[0].z, dtype=np.float64)
    np.testing.assert_allclose(z, one_map(d)[layer].mean(0), atol=1e-6)
    assert made.values["n"] == z.shape[0] == len(d.src_tokens) + len(d.steps)
    (outline,) = [t for t in made.figure.data[1:] if t.mode == "markers"]
    cells = list(zip(outline.y, outline.x, strict=True))
    assert cells == [(len(d.src_tokens) + k, best)]  # the row writing the token, its key
    token = d.tgt_tokens[k + 1]
    tr = live.trace
    if token in tr.tgt_tokens[1:]:  # what the encoder-decoder looks at writing it
        j = tr.tgt_tokens[1:].index(token)
        row = tr.cross_attentions[-1].mean(0)[j]  # (S_enc,)
        assert f"({row.max():.0%})" in made.values["cross"]
        assert code_span(tr.src_labels[int(row.argmax())]) in made.values["cross"]
    assert made.action == "open_one_stack"


def test_the_chapter_says_what_the_one_maps_numbers_say(live):
    made = one_stack(live, 0)
    assert made.why is None
    assert_says_the_numbers(made, live)


def test_another_turn_goes_a_layer_down(live):
    assert one_stack(live, 1).values["layer"] != one_stack(live, 0).values["layer"]


def test_the_chapter_says_why_without_the_model_or_english(live, tmp_path):
    shutil.rmtree(tmp_path / DECODER_ONLY)
    assert one_stack(live, 0).why == "lesson_one_stack_missing"
