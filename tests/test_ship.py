"""Shipping a run (model.training.ship): a run that fails a bar of its direction, or does worse
on the classroom set than the shipped model, is refused; a shipped folder holds the run's model
(either direction), keeps its own held-out pairs, drops its stale head figures and loads."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from model import load_pretrained
from model.core.checkpoint import CARD, WEIGHTS
from model.core.subword import TGT_TOKENIZER
from model.training import ship as S

PRETRAINED = Path(__file__).resolve().parents[1] / "pretrained"
SMALL = PRETRAINED / "en-zh-small"
ZH_EN = PRETRAINED / "zh-en-everyday"
GOOD = {"tatoeba_bleu": 31.0, "hsk_bleu": 26.0, "numbers_correct": 91.0,
        "terms_correct": 86.0, "long_chrf_kept": 86.0, "long_loops": 1}
SCORES = {"test": {"right": 65.0}, "calibration": {"right": 55.0}}
SHIPPED = {"metrics": {"classroom": SCORES}}  # a shipped card with those classroom figures


def test_every_bar_and_the_classroom_set_decide():
    assert all(ok for *_, ok in S.checks({"test_metrics": GOOD}, SCORES, SHIPPED))
    for key, bad in (("tatoeba_bleu", 29.9), ("long_loops", 4), ("terms_correct", None)):
        rows = S.checks({"test_metrics": {**GOOD, key: bad}}, SCORES, SHIPPED)
        assert [w for w, *_, ok in rows if not ok] == [key]
    worse = {"test": {"right": 70.0}, "calibration": {"right": 50.0}}  # shipped: better TEST
    rows = S.checks({"test_metrics": GOOD}, SCORES, {"metrics": {"classroom": worse}})
    assert [w for w, *_, ok in rows if not ok] == ["classroom test right"]
    assert all(ok for *_, ok in S.checks({"test_metrics": GOOD}, SCORES, None))
    with pytest.raises(ValueError, match="test_metrics"):
        S.checks({}, SCORES, SHIPPED)


def test_a_shipped_folder_holds_the_run_and_keeps_its_heldout_pairs(tmp_path):
    run = shutil.copytree(SMALL, tmp_path / "run")
    card = json.loads((run / CARD).read_text(encoding="utf-8"))
    (run / CARD).write_text(json.dumps({**card, "test_metrics": GOOD}), encoding="utf-8")
    into = tmp_path / "en-zh-new"
    into.mkdir()
    (into / "heldout.tsv").write_text("hi\t你好\n", encoding="utf-8")
    (into / "heads.npz").write_bytes(b"stale")
    written = S.ship(run, into, SCORES)
    assert (into / WEIGHTS).read_bytes() == (run / WEIGHTS).read_bytes()
    assert (into / "heldout.tsv").read_text(encoding="utf-8") == "hi\t你好\n"
    assert not (into / "heads.npz").exists()
    assert written["name"] == "en-zh-new" and written["metrics"]["classroom"] == SCORES
    assert written["test_metrics"]["classroom_test_right"] == 65.0
    back = load_pretrained(into)
    assert back.card["name"] == "en-zh-new"
    assert back.generate("why do we work ?").output_text == load_pretrained(
        run).generate("why do we work ?").output_text


def _zh_en_card(**test_metrics) -> dict:
    return {"languages": ["zh", "en"], "training": {"wall_time_minutes": 103.0},
            "test_metrics": {"tatoeba_bleu": 22.0, "hsk_bleu": 17.0, **test_metrics}}


def test_a_chinese_english_run_keeps_its_own_bars():
    shipped = {**_zh_en_card(), **SHIPPED}
    assert S.direction(shipped) == "zh-en" and S.direction({"test_metrics": GOOD}) == "en-zh"
    rows = S.checks(_zh_en_card(), SCORES, shipped)  # no terms bar, no BLEU 30
    assert all(ok for *_, ok in rows) and "terms_correct" not in [w for w, *_ in rows]
    worse = S.checks(_zh_en_card(tatoeba_bleu=21.9), SCORES, shipped)
    assert [w for w, *_, ok in worse if not ok] == ["tatoeba_bleu (not below shipped)"]
    slow = {**_zh_en_card(), "training": {"wall_time_minutes": 181.0}}
    assert [w for w, *_, ok in S.checks(slow, SCORES, shipped) if not ok] == [
        "wall_time_minutes"]


def test_the_shipped_classroom_figures_are_read_from_either_card_layout():
    for folder in ("en-zh-everyday", "zh-en-everyday"):
        card = json.loads((PRETRAINED / folder / CARD).read_text(encoding="utf-8"))
        found = S.shipped_classroom(card)
        assert found["test"]["right"] == card["test_metrics"]["classroom_test_right"]
        assert set(found) >= {"test", "calibration"}
    assert S.shipped_classroom({"metrics": {}}) is None


def test_a_chinese_english_run_is_shipped_with_its_english_tokenizer(tmp_path):
    run = shutil.copytree(ZH_EN, tmp_path / "run")
    into = tmp_path / "zh-en-new"
    S.ship(run, into, SCORES)
    assert (into / TGT_TOKENIZER).read_bytes() == (run / TGT_TOKENIZER).read_bytes()
    assert load_pretrained(into).generate("我们为什么工作？").output_text == load_pretrained(
        run).generate("我们为什么工作？").output_text
