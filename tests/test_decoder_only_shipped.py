"""The decoder-only model trained here, as shipped (``pretrained/decoder-only-en-zh``, issue
55 item 4): its card says what made it and gives its TEST figures beside the
encoder-decoder's, and its decodings are one stack's: each greedy step is a row of one
teacher-forced pass over the same sequence."""

from __future__ import annotations

import numpy as np
import torch
from shipped import model_of

from model.backends.load import pretrained_root
from model.core.checkpoint import WEIGHTS, sha256_file
from ui.lesson.one_stack import DECODER_ONLY

BESIDE = "en-zh-everyday"  # the encoder-decoder trained on the same pairs


def test_the_card_says_what_made_the_model_and_what_it_scores_beside_the_other():
    m = model_of(DECODER_ONLY)
    card = m.card
    assert card["sha256"] == sha256_file(pretrained_root() / DECODER_ONLY / WEIGHTS)
    assert card["parameters"] == m.model.num_parameters()
    assert card["command"] == f"python -m model.training.train --recipe {DECODER_ONLY} " \
                              f"--out runs/{DECODER_ONLY}"
    assert card["training"]["wall_time_minutes"] <= 180  # one recipe, these 2 cores
    assert card["config"]["architecture"] == "decoder-only"
    sources = card["data"]["manifest"]["sources"]
    assert all(s["licence"] and s["credit"] for s in sources.values())
    assert card["data"]["n_train"] > 0 and card["metrics"]["tatoeba_test"]["n"] > 0
    other = model_of(BESIDE).card["test_metrics"]
    assert card["beside"]["model"] == BESIDE
    assert card["beside"]["test_metrics"] == {k: other[k] for k in card["beside"]["test_metrics"]}
    assert {"tatoeba_bleu", "hsk_bleu"} <= set(card["beside"]["test_metrics"])
    assert set(card["beside"]["test_metrics"]) <= set(card["test_metrics"])


def test_each_greedy_step_is_a_row_of_one_pass_over_the_sequence():
    m = model_of(DECODER_ONLY)
    trace = m.generate("Why do we work?")
    ids = torch.from_numpy(np.concatenate([trace.src_ids, trace.tgt_ids[:-1]]))[None]
    with torch.inference_mode():
        out = m.model.model(ids)  # (1, N, V) and (1, H, N, N) per layer
    one = torch.stack([a[0] for a in out.decoder_attentions]).numpy()  # (L, H, N, N)
    np.testing.assert_allclose(trace.decoder_attentions, one, atol=1e-5)
    S = len(trace.src_ids)
    chosen = out.logits[0, S:].argmax(-1).numpy()  # (T,) from <sep> on: the continuation
    np.testing.assert_array_equal(chosen, trace.tgt_ids[1:])
