"""Training (``model.training.trainer``, the one loop, and ``python -m model.training.train``'s
two paths): the loss against torch's, the schedules, the batch plans, resuming, and real tiny
runs of the grammar task and of a parallel text file."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
import torch
from safetensors.numpy import load_file
from torch.nn import functional as F

from model import InputError, load_pretrained
from model.analysis.words import group_labels
from model.core.checkpoint import CheckpointError, load_checkpoint
from model.tasks import en_zh
from model.training.train import main as train_main
from model.training.trainer import (
    LoopSettings,
    cosine_lr,
    label_smoothed_cross_entropy,
    length_batches,
    noam_lr,
    token_batches,
)

TINY = ["--d-model", "32", "--nhead", "4", "--layers", "1", "--dim-feedforward", "64",
        "--src-vocab-size", "300", "--max-tokens", "600", "--warmup", "4", "--lr", "3e-3",
        "--valid-size", "40", "--time-limit-min", "1000000", "--threads", "1"]


@pytest.fixture(scope="module")
def pairs_file(tmp_path_factory):
    """A few hundred real grammar pairs as a TSV, half of them typed as people type."""
    from model.training.data import typed_form, write_pairs

    splits = en_zh.build_splits(seed=0, n_train=2000)
    rng = random.Random(0)
    pairs = [(typed_form(" ".join(p.src)) if rng.random() < 0.5 else " ".join(p.src),
              "".join(p.tgt)) for p in splits.train[:400]]
    path = tmp_path_factory.mktemp("pairs") / "train.tsv"
    write_pairs(path, pairs)
    return path


@pytest.mark.parametrize("smoothing", [0.0, 0.1, 0.35, 1.0])
@pytest.mark.parametrize("pad_id", [0, 3])
def test_the_loss_equals_torch_cross_entropy_with_label_smoothing(smoothing, pad_id):
    gen = torch.Generator().manual_seed(int(smoothing * 100) + pad_id)
    B, T, V = 4, 7, 11
    logits = torch.randn(B, T, V, generator=gen, dtype=torch.float64) * 3
    targets = torch.randint(0, V, (B, T), generator=gen)
    targets[0, 3:] = pad_id  # a padded row, and padding ids elsewhere
    targets[2, -1] = pad_id
    want = F.cross_entropy(logits.reshape(-1, V), targets.reshape(-1), ignore_index=pad_id,
                           label_smoothing=smoothing)
    got = label_smoothed_cross_entropy(logits, targets, pad_id, smoothing)
    torch.testing.assert_close(got, want, rtol=1e-12, atol=1e-12)
    # and its gradient
    a = logits.clone().requires_grad_()
    b = logits.clone().requires_grad_()
    label_smoothed_cross_entropy(a, targets, pad_id, smoothing).backward()
    F.cross_entropy(b.reshape(-1, V), targets.reshape(-1), ignore_index=pad_id,
                    label_smoothing=smoothing).backward()
    torch.testing.assert_close(a.grad, b.grad, rtol=1e-10, atol=1e-12)


def test_the_loss_refuses_what_does_not_fit():
    logits = torch.zeros(2, 3, 5)
    with pytest.raises(ValueError, match="do not fit"):
        label_smoothed_cross_entropy(logits, torch.zeros(2, 4, dtype=torch.long), 0, 0.1)
    with pytest.raises(ValueError, match="smoothing"):
        label_smoothed_cross_entropy(logits, torch.zeros(2, 3, dtype=torch.long), 0, 1.5)


def test_noam_schedule_is_the_papers_equation_3():
    d_model, warmup = 128, 400
    lrs = [noam_lr(s, d_model, warmup) for s in range(1, 4001)]
    peak = max(lrs)
    assert lrs.index(peak) + 1 == warmup  # the peak at the end of the warm-up
    assert peak == pytest.approx((d_model * warmup) ** -0.5)
    assert all(a < b for a, b in zip(lrs[: warmup - 1], lrs[1:warmup], strict=True))  # linear
    assert lrs[99] == pytest.approx(100 * d_model**-0.5 * warmup**-1.5)
    assert lrs[3999] == pytest.approx(4000**-0.5 * d_model**-0.5)  # inverse square root
    assert noam_lr(0, d_model, warmup) == noam_lr(1, d_model, warmup)
    assert noam_lr(900, d_model, warmup, factor=2.0) == pytest.approx(2 * lrs[899])


def test_length_batches_cover_each_pair_once_in_batches_of_the_size():
    rng = random.Random(2)
    data = [([0] * rng.randint(2, 30), [0] * rng.randint(2, 40)) for _ in range(1000)]
    batches = length_batches(data, batch_size=8, seed=3)
    assert sorted(i for b in batches for i in b) == list(range(1000))
    assert max(map(len, batches)) == 8 and sum(len(b) < 8 for b in batches) <= 3  # chunk ends
    assert batches == length_batches(data, batch_size=8, seed=3)
    assert batches != length_batches(data, batch_size=8, seed=4)
    # bucketed: within a batch the targets' lengths are close (sorted within each chunk)
    spread = np.mean([np.ptp([len(data[i][1]) for i in b]) for b in batches])
    assert spread < 3


def test_token_batches_cover_each_pair_once_within_the_budget():
    rng = random.Random(1)
    data = [([0] * rng.randint(2, 30), [0] * rng.randint(2, 40)) for _ in range(500)]
    batches = token_batches(data, max_tokens=200, seed=5)
    assert sorted(i for b in batches for i in b) == list(range(500))
    for b in batches:
        longest = max(max(len(data[i][0]), len(data[i][1])) for i in b)
        assert longest * len(b) <= 200 or len(b) == 1
    assert batches == token_batches(data, max_tokens=200, seed=5)  # reproducible
    assert batches != token_batches(data, max_tokens=200, seed=6)


def test_learning_rate_warms_up_then_decays_to_zero():
    lrs = [cosine_lr(s, 1e-3, 100, 1000) for s in range(0, 1001)]
    assert lrs[0] == 0 and lrs[100] == pytest.approx(1e-3)
    assert all(a <= b for a, b in zip(lrs[:100], lrs[1:101], strict=True))
    assert all(a >= b for a, b in zip(lrs[100:-1], lrs[101:], strict=True))
    assert lrs[1000] == pytest.approx(0, abs=1e-12)
    # Out of time before the planned steps: the schedule ends with the time budget.
    assert cosine_lr(300, 1e-3, 100, 1000, time_used=1.0) == pytest.approx(0, abs=1e-12)
    assert cosine_lr(550, 1e-3, 100, 1000) == pytest.approx(0.5e-3)  # half-way: half the peak


def _state(folder):
    return load_file(str(folder / "train_state" / "state.safetensors"))


@pytest.mark.training
def test_a_tiny_grammar_model_trains_through_the_same_loop(tmp_path):
    out = tmp_path / "task"
    train_main(["--task", "en-zh", "--out", str(out), "--steps", "24", "--eval-every", "8",
                "--n-train", "2000", "--batch-size", "16", "--warmup", "8", "--d-model", "16",
                "--nhead", "2", "--layers", "1", "--dim-feedforward", "32", "--threads", "1"])
    card = json.loads((out / "card.json").read_text())
    history = card["training"]["history"]
    assert [h["step"] for h in history] == [8, 16, 24] and card["training"]["steps"] == 24
    best = max(h["valid_exact_match"] for h in history)
    assert card["training"]["best_step"] == max(
        h["step"] for h in history if h["valid_exact_match"] == best)
    assert card["command"].startswith("python -m model.training.train --task en-zh --out ")
    assert history[-1]["valid_loss"] < history[0]["valid_loss"]  # it learns
    assert not (out / "train_state").exists()  # the task path keeps no state
    m = load_pretrained(out)
    assert m.config.d_model == 16 and m.generate("we eat rice .", max_new_tokens=4).tgt_ids[0] \
        == m.config.bos_id


@pytest.mark.training
def test_a_tiny_model_trains_loads_and_translates(pairs_file, tmp_path):
    out = tmp_path / "tiny"
    train_main(["--pairs", str(pairs_file), "--out", str(out), "--steps", "30",
                "--eval-every", "15", *TINY])
    m = load_pretrained(out)  # a folder path: the standard loader
    assert m.info.subword and (out / "src_tokenizer.json").exists()
    card = json.loads((out / "card.json").read_text())
    assert [h["step"] for h in card["training"]["history"]] == [15, 30]
    assert card["config"]["norm_first"] is True
    trace = m.generate("Why do we work?", max_new_tokens=5)
    words = group_labels(trace.src_labels, trace.src_words)
    assert words[-1] == "</s>" and words[0].lstrip("␣") == "Why" and "?" in words
    assert not any("Ġ" in label for label in trace.src_labels)
    assert trace.cross_attentions.shape[-1] == len(trace.src_tokens)
    assert m.source("Zyxxy qwerty 42 ☃!").unknown_words == ()  # byte fallback: nothing unknown
    with pytest.raises(InputError, match="at most"):
        m.generate(" ".join(["a"] * 150))  # 299 characters, 150 pieces


@pytest.mark.training
def test_bf16_autocast_trains_and_the_folder_has_its_training_counts(pairs_file, tmp_path):
    """``--autocast bf16`` (the one-stage recipe's setting) trains the same loop; the card
    says so; the folder's train_counts.json counts every training source's words and pieces,
    and the loaded model carries them (``ModelInfo.train_counts``)."""
    from model.core.counts import words
    from model.training.data import read_pairs

    out = tmp_path / "bf16"
    train_main(["--pairs", str(pairs_file), "--out", str(out), "--steps", "12",
                "--eval-every", "6", "--autocast", "bf16", *TINY])
    card = json.loads((out / "card.json").read_text())
    assert card["training"]["autocast"] == "bf16"
    assert all(np.isfinite(h["valid_loss"]) for h in card["training"]["history"])
    m = load_pretrained(out)
    counts = m.info.train_counts
    sources = [e for e, _ in read_pairs(pairs_file)]
    assert counts.pairs == card["data"]["n_train"] < len(sources)  # VALID: 2 % taken out
    every = {w: sum(words(e).count(w) for e in sources) for w in ("why", "we", "do")}
    assert all(0 < counts.word(w) <= n for w, n in every.items())
    assert sum(counts.pieces.values()) >= sum(counts.words.values()) > 0
    with pytest.raises(ValueError, match="autocast"):
        LoopSettings(1, 1, 1.0, "valid_bleu", autocast="fp8")


@pytest.mark.training
def test_a_second_stage_starts_from_the_first_stages_model(pairs_file, tmp_path):
    """``--init``: the second stage keeps the first stage's tokenizer, vocabulary and (at a
    learning rate of 0) its weights exactly, and its card lists the first stage; a third
    lists both; a model of other sizes is refused."""
    from tokenizers import Tokenizer

    common = ["--pairs", str(pairs_file), *TINY]
    first, second = tmp_path / "first", tmp_path / "second"
    train_main([*common, "--out", str(first), "--steps", "10", "--eval-every", "10"])
    train_main([*common, "--out", str(second), "--init", str(first), "--steps", "4",
                "--eval-every", "4", "--lr", "0", "--src-vocab-size", "999"])
    vocab = [Tokenizer.from_file(str(d / "src_tokenizer.json")).get_vocab()
             for d in (first, second)]
    assert vocab[0] == vocab[1]
    assert (first / "tgt_vocab.json").read_text() == (second / "tgt_vocab.json").read_text()
    a, b = load_file(str(first / "model.safetensors")), load_file(str(second / "model.safetensors"))
    assert a.keys() == b.keys()
    for k in a:
        np.testing.assert_array_equal(a[k], b[k], err_msg=k)
    cards = [json.loads((d / "card.json").read_text()) for d in (first, second)]
    assert "earlier_stages" not in cards[0]["training"]
    (stage,) = cards[1]["training"]["earlier_stages"]
    assert stage["command"] == cards[0]["command"] and stage["steps"] == 10
    assert stage["history"] == cards[0]["training"]["history"]
    third = tmp_path / "third"
    train_main([*common, "--out", str(third), "--init", str(second), "--steps", "2",
                "--eval-every", "2"])
    card = json.loads((third / "card.json").read_text())
    assert [s["command"] for s in card["training"]["earlier_stages"]] == [
        c["command"] for c in cards]
    assert card["training"]["total_wall_time_minutes"] == pytest.approx(
        sum(c["training"]["wall_time_minutes"] for c in [*cards, card]), abs=0.11)
    with pytest.raises(ValueError, match="differs"):
        train_main([*common, "--out", str(tmp_path / "wide"), "--init", str(first),
                    "--steps", "2", "--d-model", "64"])
    with pytest.raises(SystemExit):
        train_main([*common, "--out", str(tmp_path / "none"), "--init", str(tmp_path)])


@pytest.mark.training
def test_resuming_gives_the_same_weights_as_one_run(pairs_file, tmp_path):
    common = ["--pairs", str(pairs_file), "--steps", "12", "--eval-every", "6", *TINY]
    train_main([*common, "--out", str(tmp_path / "once")])
    train_main([*common, "--out", str(tmp_path / "twice"), "--stop-after", "5"])
    assert json.loads((tmp_path / "twice" / "train_state" / "state.json").read_text())[
        "step"] == 5
    train_main([*common, "--out", str(tmp_path / "twice")])  # the same command resumes
    once, twice = _state(tmp_path / "once"), _state(tmp_path / "twice")
    assert once.keys() == twice.keys()
    for k in once:
        if k.startswith("model."):
            np.testing.assert_array_equal(once[k], twice[k], err_msg=k)


@pytest.mark.training
def test_sigterm_pauses_after_the_step_and_the_same_command_resumes(pairs_file, tmp_path,
                                                                   monkeypatch):
    """SIGTERM (what ends a job) during step 5 finishes that step, saves the state and
    returns; the same command then ends with the weights of an uninterrupted run."""
    import os
    import signal

    import model.training.train as train_module

    common = ["--pairs", str(pairs_file), "--steps", "10", "--eval-every", "5", *TINY]
    train_main([*common, "--out", str(tmp_path / "once")])
    real = train_module.cosine_lr

    def lr_then_term(step, *args, **kwargs):
        if step == 5:
            os.kill(os.getpid(), signal.SIGTERM)
        return real(step, *args, **kwargs)

    monkeypatch.setattr(train_module, "cosine_lr", lr_then_term)
    before = signal.getsignal(signal.SIGTERM)
    train_main([*common, "--out", str(tmp_path / "twice")])
    assert signal.getsignal(signal.SIGTERM) == before  # the handler is given back
    state = json.loads((tmp_path / "twice" / "train_state" / "state.json").read_text())
    assert state["step"] == 5
    monkeypatch.setattr(train_module, "cosine_lr", real)
    train_main([*common, "--out", str(tmp_path / "twice")])
    once, twice = _state(tmp_path / "once"), _state(tmp_path / "twice")
    for k in once:
        if k.startswith("model."):
            np.testing.assert_array_equal(once[k], twice[k], err_msg=k)


@pytest.mark.training
def test_individual_digits_give_every_digit_its_own_piece(pairs_file, tmp_path):
    out = tmp_path / "digits"
    train_main(["--pairs", str(pairs_file), "--out", str(out), "--steps", "2",
                "--eval-every", "2", "--individual-digits", "1", *TINY])
    m = load_pretrained(out)
    src = m.source("Tom was born in 1998 and has 25 cats.")
    digits = [label for label in src.labels if any(ch.isdigit() for ch in label)]
    assert digits == list("199825")
    card = json.loads((out / "card.json").read_text())
    lengths = card["data"]["source_tokens"]
    assert 0 < lengths["median"] <= lengths["p99"] <= lengths["max"] <= 96
    assert m.info.trained_source_tokens == lengths["max"]


@pytest.mark.training
def test_a_bad_pairs_file_names_its_line(tmp_path):
    bad = tmp_path / "bad.tsv"
    bad.write_text("Hello.\t你好。\nno tab here\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad.tsv, line 2"):
        train_main(["--pairs", str(bad), "--out", str(tmp_path / "x"), *TINY])


@pytest.mark.training
def test_a_damaged_tokenizer_file_is_a_clear_checkpoint_error(pairs_file, tmp_path):
    out = tmp_path / "tiny"
    train_main(["--pairs", str(pairs_file), "--out", str(out), "--steps", "2",
                "--eval-every", "2", *TINY])
    (out / "src_tokenizer.json").write_text('{"model": 3}', encoding="utf-8")
    with pytest.raises(CheckpointError, match="src_tokenizer.json"):
        load_checkpoint(out)
    (out / "src_tokenizer.json").write_text("not json", encoding="utf-8")
    with pytest.raises(CheckpointError, match="src_tokenizer.json is not valid JSON"):
        load_checkpoint(out)


def test_a_card_records_repository_files_relative_to_it(tmp_path):
    """A data file inside the repository is recorded by its path there (no training
    machine's folders in a shipped card); one outside it as given."""
    from model.training.pairs import ROOT, _card_path

    assert _card_path(ROOT / "data" / "everyday" / "train.tsv") == "data/everyday/train.tsv"
    assert _card_path(tmp_path / "pairs.tsv") == str(tmp_path / "pairs.tsv")
    card = json.loads((ROOT / "pretrained" / "en-zh-everyday" / "card.json").read_text())
    assert not any(card["data"][k].startswith("/") for k in ("train_file", "valid_file"))


def test_every_recipe_has_card_fields_of_its_own_or_of_its_first_stage():
    from model.training.recipes import RECIPES, recipe_card

    for name, recipe in RECIPES.items():
        assert recipe_card(name).get("examples"), name
        assert recipe.get("card_of", name) in RECIPES
    assert recipe_card("no such recipe") == {}


@pytest.mark.training
def test_a_two_stage_recipe_trains_its_first_stage_then_starts_from_it(pairs_file, tmp_path,
                                                                       monkeypatch):
    """A recipe with ``first_stage`` and no ``--init``: the first stage goes into
    OUT/stage1 (a pause there stops both), then the second starts from its weights (at a
    learning rate of 0 they stay equal); each is evaluated once, first stage first."""
    from model.training import train as train_module
    from model.training.recipes import RECIPES

    names = [a.lstrip("-").replace("-", "_") for a in TINY[::2]]
    values = [float(v) if "." in v or "e-" in v else int(v) for v in TINY[1::2]]
    tiny = dict(zip(names, values, strict=True))
    data = tmp_path / "data"
    data.mkdir()
    lines = pairs_file.read_text(encoding="utf-8").splitlines(keepends=True)
    (data / "train.tsv").write_text("".join(lines[40:]), encoding="utf-8")
    (data / "valid.tsv").write_text("".join(lines[:40]), encoding="utf-8")
    tiny.update(data=str(data), steps=6, eval_every=6)
    monkeypatch.setitem(RECIPES, "tiny-one", {"train": tiny, "card": {"examples": ["Hi."]}})
    monkeypatch.setitem(RECIPES, "tiny-two", {"train": {**tiny, "lr": 0.0},
                                              "first_stage": "tiny-one", "card_of": "tiny-one"})
    evaluated = []
    monkeypatch.setattr(train_module, "evaluate_everyday",
                        lambda folder, write_card: evaluated.append(folder))
    out = tmp_path / "two"
    assert train_main(["--recipe", "tiny-two", "--out", str(out), "--stop-after", "3"]) is False
    assert json.loads((out / "stage1" / "train_state" / "state.json").read_text())["step"] == 3
    assert not (out / "train_state").exists() and evaluated == []
    assert train_main(["--recipe", "tiny-two", "--out", str(out)]) is True
    assert evaluated == [out / "stage1", out]
    a = load_file(str(out / "stage1" / "model.safetensors"))
    b = load_file(str(out / "model.safetensors"))
    for k in a:
        np.testing.assert_array_equal(a[k], b[k], err_msg=k)
    card = json.loads((out / "card.json").read_text())
    assert card["task"] == "tiny-two" and card["examples"] == ["Hi."]


def test_the_word_counts_leave_the_spelling_noise_out(tmp_path):
    """``counts.without_noise``: a sentence of ``X_noise.tsv`` is taken out of ``X.tsv``'s
    sources once per time it is listed there (a slip stays unseen); no noise file, no change."""
    from model.training.counts import noise_file, without_noise
    from model.training.data import write_pairs

    train = tmp_path / "train_mix.tsv"
    sources = ["I like cats.", "I lkie cats.", "I lkie cats.", "We wokr.", "We work."]
    assert without_noise(sources, train) == sources
    assert noise_file(train).name == "train_mix_noise.tsv"
    write_pairs(noise_file(train), [("I lkie cats.", "我喜欢猫。"), ("We wokr.", "我们工作。")])
    assert without_noise(sources, train) == ["I like cats.", "I lkie cats.", "We work."]
