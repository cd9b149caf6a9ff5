"""Training on any parallel text file: batches, schedule, resuming, and a real tiny run."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
from safetensors.numpy import load_file

from model import InputError, load_pretrained
from model.analysis.words import group_labels
from model.core.checkpoint import CheckpointError, load_checkpoint
from model.tasks import en_zh
from model.training.train import main as train_main
from model.training.train_pairs import lr_at, token_batches

pytestmark = pytest.mark.training

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
    lrs = [lr_at(s, 1e-3, 100, 1000) for s in range(0, 1001)]
    assert lrs[0] == 0 and lrs[100] == pytest.approx(1e-3)
    assert all(a <= b for a, b in zip(lrs[:100], lrs[1:101], strict=True))
    assert all(a >= b for a, b in zip(lrs[100:-1], lrs[101:], strict=True))
    assert lrs[1000] == pytest.approx(0, abs=1e-12)
    # Out of time before the planned steps: the schedule ends with the time budget.
    assert lr_at(300, 1e-3, 100, 1000, time_used=1.0) == pytest.approx(0, abs=1e-12)


def _state(folder):
    return load_file(str(folder / "train_state" / "state.safetensors"))


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


def test_a_bad_pairs_file_names_its_line(tmp_path):
    bad = tmp_path / "bad.tsv"
    bad.write_text("Hello.\t你好。\nno tab here\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad.tsv, line 2"):
        train_main(["--pairs", str(bad), "--out", str(tmp_path / "x"), *TINY])


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
