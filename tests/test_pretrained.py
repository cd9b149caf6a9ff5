"""The shipped checkpoint: its card, its quality bar, and the public decoding API."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from shipped import grammar_splits

from model import InputError, load_pretrained
from model.backends.load import PRETRAINED_DIR
from model.core.checkpoint import WEIGHTS, sha256_file
from model.training.evaluate import evaluate_pairs


@pytest.fixture(scope="module")
def splits(en_zh):
    return en_zh_splits(en_zh.card)


def en_zh_splits(card):
    return grammar_splits(seed=card["seed"], n_train=card["data"]["n_train"])


def test_card_records_what_made_the_model(en_zh):
    card = en_zh.card
    assert card["sha256"] == sha256_file(PRETRAINED_DIR / "en-zh" / WEIGHTS)
    assert card["parameters"] == en_zh.model.num_parameters()
    assert card["command"].startswith("python -m model.training.train --task en-zh")
    assert card["training"]["wall_time_minutes"] < 40
    assert card["config"] == en_zh.config.to_dict()
    assert card["data"]["n_test"] == 2000 and card["data"]["n_novel_test"] >= 300


@pytest.mark.slow  # the whole TEST split, after building the splits
def test_quality_bar_on_the_test_split(en_zh, splits):
    # 300 ordinary held-out pairs plus 200 that combine words never seen together.
    novel = list(splits.novel_test_indices[:200])
    ordinary = [i for i in range(len(splits.test)) if i not in set(novel)][:300]
    pairs = [splits.test[i] for i in ordinary + novel]
    result = evaluate_pairs(en_zh.model, pairs, en_zh._source_side.vocab, en_zh.target.vocab,
                            novel_indices=range(300, 500))
    assert result["exact_match"] >= 97.0, result["failures"]
    assert result["bleu"] >= 95.0
    assert result["novel_exact_match"] >= 95.0, result["failures"]


@pytest.mark.slow  # builds the grammar's splits (~15 s)
def test_test_split_never_occurs_in_training(splits):
    train = {p.src for p in splits.train}
    assert not any(p.src in train for p in splits.test)


def test_why_do_we_work_is_translated_step_by_step(en_zh):
    trace = en_zh.generate("why do we work ?")
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
    trace = en_zh.generate("i go to school tomorrow .")
    src = torch.from_numpy(en_zh.source(trace.src_text).ids)[None]  # (1, S)
    np.testing.assert_array_equal(src[0].numpy(), trace.src_ids)  # the trace keeps its ids
    tgt = torch.tensor([en_zh.target.vocab.encode(trace.decoder_input_tokens)])
    with torch.inference_mode():
        enc = en_zh.model.encode(src)
        out = en_zh.model.decode(tgt, enc.memory, enc.key_padding_mask)
    np.testing.assert_allclose(trace.encoder_attentions,
                               torch.stack([a[0] for a in enc.attentions]).numpy(), atol=1e-5)
    np.testing.assert_allclose(trace.decoder_attentions,
                               torch.stack([a[0] for a in out.decoder_attentions]).numpy(),
                               atol=1e-5)
    np.testing.assert_allclose(trace.cross_attentions,
                               torch.stack([a[0] for a in out.cross_attentions]).numpy(),
                               atol=1e-5)
    np.testing.assert_allclose(trace.step_probs, out.logits[0].softmax(-1).numpy(), atol=1e-5)


def test_load_by_folder_path_gives_the_same_model(en_zh):
    other = load_pretrained(PRETRAINED_DIR / "en-zh")
    want = en_zh.generate("we eat rice .").output_text
    assert other.generate("we eat rice .").output_text == want


@pytest.mark.parametrize(
    "text", ["", "   ", "\u200b\u200b", "x" * 10_000, "a " * 70, "🙂", "?!"]
)
def test_input_errors_are_documented_errors(en_zh, text):
    with pytest.raises(InputError):
        en_zh.generate(text)


@pytest.mark.parametrize("text", [
    "we 🙂", "<script>alert(1)</script>", "ｗｈｙ ｄｏ ｗｅ ｗｏｒｋ？",
    "why\x00 do we work ?", "مرحبا", "$x^2$ **we**",
])
def test_odd_text_decodes_without_error_or_nan(en_zh, text):
    trace = en_zh.generate(text)
    assert np.isfinite(trace.cross_attentions).all()
    np.testing.assert_allclose(trace.cross_attentions.sum(-1), 1.0, atol=1e-5)


def test_full_width_text_is_normalised(en_zh):
    assert en_zh.generate("ＷＨＹ ｄｏ ｗｅ ｗｏｒｋ？").output_text == "我们为什么工作？"


def test_model_is_not_changed_by_decoding(en_zh):
    before = {k: v.clone() for k, v in en_zh.model.state_dict().items()}
    en_zh.generate("why do we work ?")
    assert not en_zh.model.training
    assert all(torch.equal(before[k], v) for k, v in en_zh.model.state_dict().items())


# --- decoding strategies through the public API ------------------------------------------

def test_one_beam_and_cold_sampling_equal_greedy(en_zh):
    for text in ("why do we work ?", "he reads books in the library .", "i have three cats ."):
        greedy = en_zh.generate(text)
        assert en_zh.generate(text, num_beams=1).tgt_tokens == greedy.tgt_tokens
        cold = en_zh.generate(text, do_sample=True, temperature=1e-6, seed=7)
        assert cold.tgt_tokens == greedy.tgt_tokens


def test_beam_search_trace_is_its_best_hypothesis(en_zh):
    trace = en_zh.generate("where does she live ?", num_beams=4, length_penalty=1.0)
    best = trace.beam.hypotheses[0]
    assert trace.tgt_tokens[1:] == best.tokens
    assert trace.output_text == best.text == "她住在哪里？"
    assert len(trace.beam.hypotheses) == 4
    assert [h.score for h in trace.beam.hypotheses] == sorted(
        (h.score for h in trace.beam.hypotheses), reverse=True)
    logprob = sum(np.log(s.prob) for s in trace.steps)
    assert best.logprob == pytest.approx(logprob, abs=1e-4)
    assert trace.settings.num_beams == 4


def test_sampling_is_reproducible_for_a_seed(en_zh):
    runs = [en_zh.generate("why do we work ?", do_sample=True, temperature=2.0, seed=s)
            for s in (1, 1, 2, 3, 4)]
    assert runs[0].tgt_tokens == runs[1].tgt_tokens
    assert len({r.tgt_tokens for r in runs}) > 1  # hot sampling varies with the seed
    top1 = en_zh.generate("why do we work ?", do_sample=True, top_k=1, seed=9)
    assert top1.output_text == "我们为什么工作？"  # top-k = 1 is greedy


def test_prefix_forces_the_first_tokens_then_continues(en_zh):
    trace = en_zh.generate("why do we work ?", prefix="他们")
    assert trace.tgt_tokens[1:3] == ("他", "们") and trace.n_forced == 2
    assert [s.forced for s in trace.steps[:3]] == [True, True, False]
    assert trace.output_text == "他们为什么工作？"


def test_teacher_forcing_scores_a_reference_and_shows_where_the_model_differs(en_zh):
    trace = en_zh.teacher_force("why do we work ?", "我们为什么学习?")  # ASCII ? is folded
    assert trace.output_tokens == tuple("我们为什么学习？") and trace.finished
    assert all(s.forced for s in trace.steps)
    first_diff = next(s.index for s in trace.steps if s.top_tokens[0] != s.token)
    assert first_diff == 5 and trace.steps[5].top_tokens[0] == "工"
    assert trace.steps[5].prob < 0.05 < trace.steps[0].prob
    # Its maps equal decoding with the same tokens forced as a prefix.
    same = en_zh.generate("why do we work ?", prefix=list(trace.output_tokens) + ["</s>"],
                        max_new_tokens=len(trace.steps))
    np.testing.assert_allclose(same.cross_attentions, trace.cross_attentions, atol=1e-6)


@pytest.mark.parametrize("kwargs", [
    dict(num_beams=0), dict(num_beams=9), dict(num_beams=2, do_sample=True),
    dict(do_sample=True, temperature=-1.0), dict(do_sample=True, top_p=0.0),
    dict(do_sample=True, top_k=-3), dict(max_new_tokens=0), dict(max_new_tokens=1000),
    dict(prefix="我们abc"), dict(prefix=["<pad>"]), dict(seed="x"),
    dict(length_penalty=float("nan")),
])
def test_bad_decoding_arguments_are_input_errors(en_zh, kwargs):
    with pytest.raises(InputError):
        en_zh.generate("why do we work ?", **kwargs)


def test_bad_references_are_input_errors(en_zh):
    for ref in ("", "   ", "hello", "我们" * 40):
        with pytest.raises(InputError):
            en_zh.teacher_force("why do we work ?", ref)


def test_tokenizer_doctests_hold():
    import doctest

    import model.core.vocab

    assert doctest.testmod(model.core.vocab).failed == 0
