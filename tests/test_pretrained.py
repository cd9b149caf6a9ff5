"""The shipped checkpoint: its card, its quality bar, and the public decoding API."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from model import InputError, load_pretrained
from model.checkpoint import WEIGHTS, sha256_file
from model.evaluate import evaluate_pairs
from model.tasks import en_zh
from model.translator import PRETRAINED_DIR


@pytest.fixture(scope="module")
def splits(en_zh):
    return en_zh_splits(en_zh.card)


def en_zh_splits(card):
    return en_zh.build_splits(seed=card["seed"], n_train=card["data"]["n_train"])


def test_card_records_what_made_the_model(en_zh):
    card = en_zh.card
    assert card["sha256"] == sha256_file(PRETRAINED_DIR / "en-zh" / WEIGHTS)
    assert card["parameters"] == en_zh.model.num_parameters()
    assert card["command"].startswith("python -m model.train --task en-zh")
    assert card["training"]["wall_time_minutes"] < 40
    assert card["config"] == en_zh.config.to_dict()
    assert card["data"]["n_test"] == 2000 and card["data"]["n_novel_test"] >= 300


def test_quality_bar_on_the_test_split(en_zh, splits):
    # 300 ordinary held-out pairs plus 200 that combine words never seen together.
    novel = list(splits.novel_test_indices[:200])
    ordinary = [i for i in range(len(splits.test)) if i not in set(novel)][:300]
    pairs = [splits.test[i] for i in ordinary + novel]
    result = evaluate_pairs(en_zh.model, pairs, en_zh.src_vocab, en_zh.tgt_vocab,
                            novel_indices=range(300, 500))
    assert result["exact_match"] >= 97.0, result["failures"]
    assert result["bleu"] >= 95.0
    assert result["novel_exact_match"] >= 95.0, result["failures"]


def test_test_split_never_occurs_in_training(splits):
    train = {p.src for p in splits.train}
    assert not any(p.src in train for p in splits.test)


def test_why_do_we_work_is_translated_step_by_step(en_zh):
    trace = en_zh.decode("why do we work ?")
    assert trace.output_text == "我们为什么工作？"
    assert trace.tgt_tokens == ("<s>", "我", "们", "为", "什", "么", "工", "作", "？", "</s>")
    assert trace.src_tokens == ("why", "do", "we", "work", "?", "</s>")
    assert trace.finished and not trace.unknown_words
    L, H = en_zh.config.num_decoder_layers, en_zh.config.nhead
    S, T = 6, 9
    assert trace.encoder_attentions.shape == (en_zh.config.num_encoder_layers, H, S, S)
    assert trace.decoder_attentions.shape == (L, H, T, T)
    assert trace.cross_attentions.shape == (L, H, T, S)
    for arr in (trace.encoder_attentions, trace.decoder_attentions, trace.cross_attentions):
        assert arr.dtype == np.float32
        np.testing.assert_allclose(arr.sum(-1), 1.0, atol=1e-5)
    for t, step in enumerate(trace.steps):
        assert step.input_tokens == trace.tgt_tokens[: t + 1]
        assert step.token == trace.tgt_tokens[t + 1] == step.top_tokens[0]
        assert len(step.top_tokens) == 10 and np.all(np.diff(step.top_probs) <= 0)
        assert step.prob == pytest.approx(float(trace.step_probs[t, step.token_id]))


def test_recorded_attentions_equal_one_teacher_forced_pass(en_zh):
    trace = en_zh.decode("i go to school tomorrow .")
    src = en_zh.encode_source(list(trace.src_tokens[:-1]))
    tgt = torch.tensor([en_zh.tgt_vocab.encode(trace.decoder_input_tokens)])
    with torch.inference_mode():
        enc = en_zh.model.encode(src)
        out = en_zh.model.decode(tgt, enc.memory, enc.key_padding_mask)
    np.testing.assert_allclose(trace.encoder_attentions,
                               torch.stack([a[0] for a in enc.attentions]).numpy(), atol=1e-5)
    np.testing.assert_allclose(trace.decoder_attentions,
                               torch.stack([a[0] for a in out.self_attentions]).numpy(),
                               atol=1e-5)
    np.testing.assert_allclose(trace.cross_attentions,
                               torch.stack([a[0] for a in out.cross_attentions]).numpy(),
                               atol=1e-5)
    np.testing.assert_allclose(trace.step_probs, out.logits[0].softmax(-1).numpy(), atol=1e-5)


def test_load_by_folder_path_gives_the_same_model(en_zh):
    other = load_pretrained(PRETRAINED_DIR / "en-zh")
    assert other.decode("we eat rice .").output_text == en_zh.decode("we eat rice .").output_text


@pytest.mark.parametrize(
    "text", ["", "   ", "\u200b\u200b", "x" * 10_000, "a " * 70, "🙂", "?!"]
)
def test_input_errors_are_documented_errors(en_zh, text):
    with pytest.raises(InputError):
        en_zh.decode(text)


@pytest.mark.parametrize("text", [
    "we 🙂", "<script>alert(1)</script>", "ｗｈｙ ｄｏ ｗｅ ｗｏｒｋ？",
    "why\x00 do we work ?", "مرحبا", "$x^2$ **we**",
])
def test_odd_text_decodes_without_error_or_nan(en_zh, text):
    trace = en_zh.decode(text)
    assert np.isfinite(trace.cross_attentions).all()
    np.testing.assert_allclose(trace.cross_attentions.sum(-1), 1.0, atol=1e-5)


def test_full_width_text_is_normalised(en_zh):
    assert en_zh.decode("ＷＨＹ ｄｏ ｗｅ ｗｏｒｋ？").output_text == "我们为什么工作？"


def test_model_is_not_changed_by_decoding(en_zh):
    before = {k: v.clone() for k, v in en_zh.model.state_dict().items()}
    en_zh.decode("why do we work ?")
    assert not en_zh.model.training
    assert all(torch.equal(before[k], v) for k, v in en_zh.model.state_dict().items())
