"""Ship a finished training run as a pretrained folder, only when it keeps every bar.

    python -m model.training.ship RUN [--into pretrained/en-zh-everyday] [--force]
    python -m model.training.ship --classroom-only [--into pretrained/en-zh-everyday]

RUN is a folder the trainer wrote and evaluated (``python -m model.training.train --recipe
...``: its card has ``test_metrics``; a Chinese -> English run is evaluated by
``python -m model.training.evaluate_zh_en``). Its direction (the card's ``languages``) picks
the folder it replaces by default (``DEFAULT_INTO``) and its bars. The run is compared with
that folder:

- every bar of ``BARS`` of its direction: English -> Chinese, the test figures issue 32 keeps
  (Tatoeba and HSK BLEU, numbers, terms, long sentences kept, loops); Chinese -> English, the
  recipe's wall time (issue 46: at most 180 minutes, in one go);
- Tatoeba and HSK TEST BLEU of a Chinese -> English run may not fall below the shipped
  model's (``NOT_BELOW``: natural sentences; that direction has no fixed BLEU bar);
- the classroom set (``classroom_set.classroom_scores``): right on TEST and on CALIBRATION may
  not fall below the shipped model's (natural sentences decide, not template-made sets).

The table of both is printed; a run that fails a bar is refused (exit status 2) unless
``--force``. Shipping copies the model's files into the folder (its own ``heldout.tsv`` is
kept), writes the card (the run's, named after the folder, with the classroom figures and
the run's wall time) and removes ``heads.npz``, now stale. What is left is printed: the
held-out head figures, the verdict's thresholds, the speed, docs/models.md and RESULTS.md.
``--classroom-only`` scores the folder's own model on the classroom set again and writes
the figures into its card (after the verdict's thresholds change).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

from ..core.checkpoint import CARD, CONFIG, SRC_VOCAB, TGT_VOCAB, WEIGHTS
from ..core.counts import COUNTS_FILE
from ..core.subword import SRC_TOKENIZER, TGT_TOKENIZER

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_INTO = {"en-zh": ROOT / "pretrained" / "en-zh-everyday",
                "zh-en": ROOT / "pretrained" / "zh-en-everyday"}
#: direction -> test_metrics key (or "wall_time_minutes", the card's training minutes) -> (the
#: bar, True when higher is better)
BARS = {"en-zh": {"tatoeba_bleu": (30.0, True), "hsk_bleu": (25.0, True),
                  "numbers_correct": (90.0, True), "terms_correct": (85.0, True),
                  "long_chrf_kept": (85.0, True),
                  "long_loops": (3, False)},  # at most 1 loop in 40 of the 120 joined threes
        "zh-en": {"wall_time_minutes": (180.0, False)}}
NOT_BELOW = {"en-zh": (), "zh-en": ("tatoeba_bleu", "hsk_bleu")}  # ... the shipped model's
MODEL_FILES = (WEIGHTS, CONFIG, SRC_TOKENIZER, SRC_VOCAB, TGT_VOCAB, TGT_TOKENIZER, COUNTS_FILE)
STALE = ("heads.npz",)  # figures of the old weights, tied to their sha256


def _card(folder: Path) -> dict:
    return json.loads((Path(folder) / CARD).read_text(encoding="utf-8"))


def direction(card: dict) -> str:
    """The card's ``languages`` as ``"zh-en"`` or ``"en-zh"`` (the default, as
    ``backends.ours`` reads a card: the English -> Chinese cards predate the field)."""
    return "-".join(card.get("languages") or ("en", "zh"))


def shipped_classroom(card: dict) -> dict | None:
    """The classroom figures of a shipped folder's card, {split: {"right": percent, ...}}:
    ship's (``metrics.classroom``) or ``evaluate_zh_en``'s (``metrics.classroom_test`` ...);
    None when it has none."""
    metrics = card.get("metrics", {})
    if "classroom" in metrics:
        return metrics["classroom"]
    found = {split: metrics[f"classroom_{split}"] for split in ("test", "calibration")
             if f"classroom_{split}" in metrics}
    return found or None


def checks(run_card: dict, run_classroom: dict, old_card: dict | None) -> list[tuple]:
    """(what, the run's figure, the bar or the shipped figure, holds) for every bar of the
    run's direction (``BARS``), for the figures that may not fall below the shipped model's
    (``NOT_BELOW``) and for the classroom set's right share on each split: the shipped
    model's are read from its card ``old_card`` (``shipped_classroom``), when there is one and
    it has them.

    Raises:
        ValueError: the run's card has no test metrics (it has not ended or been evaluated).
    """
    metrics = run_card.get("test_metrics")
    if not metrics:
        raise ValueError("the run's card has no test_metrics: let it end (it evaluates "
                         "itself) or run python -m model.training.evaluate on it")
    way, training = direction(run_card), run_card.get("training", {})
    figures = {**metrics, "wall_time_minutes": training.get(
        "total_wall_time_minutes", training.get("wall_time_minutes"))}
    rows = []
    for key, (bar, higher) in BARS[way].items():
        value = figures.get(key)
        ok = value is not None and (value >= bar if higher else value <= bar)
        rows.append((key, value, bar, ok))
    for key in NOT_BELOW[way]:
        value, old = metrics.get(key), (old_card or {}).get("test_metrics", {}).get(key)
        rows.append((f"{key} (not below shipped)", value, old,
                     value is not None and (old is None or value >= old)))
    old_classroom = shipped_classroom(old_card) if old_card else None
    for split in ("test", "calibration"):
        value = run_classroom[split]["right"]
        old = (old_classroom or {}).get(split, {}).get("right")
        rows.append((f"classroom {split} right", value, old, old is None or value >= old))
    return rows


def ship(run: Path, into: Path, run_classroom: dict) -> dict:
    """Copy ``run``'s model into ``into`` with its card (named after ``into``; the classroom
    figures ``run_classroom``; the run's wall time as the total) and remove the stale files.
    Returns the card written."""
    run, into = Path(run), Path(into)
    into.mkdir(parents=True, exist_ok=True)
    for name in MODEL_FILES:
        if (run / name).is_file():
            shutil.copy2(run / name, into / name)
    for name in STALE:
        (into / name).unlink(missing_ok=True)
    card = _card(run)
    card["name"] = into.name
    card["command"] = card.get("command", "").replace(f"--out {run}", f"--out runs/{into.name}")
    card.setdefault("metrics", {})["classroom"] = run_classroom
    card["test_metrics"]["classroom_test_right"] = run_classroom["test"]["right"]
    training = card.setdefault("training", {})
    training.setdefault("total_wall_time_minutes", training.get("wall_time_minutes"))
    (into / CARD).write_text(json.dumps(card, ensure_ascii=False, indent=2) + "\n",
                             encoding="utf-8")
    return card


def main(argv: list[str] | None = None) -> int:
    """Command line (module docstring)."""
    from ..backends.load import load_pretrained
    from .classroom_set import classroom_scores

    ap = argparse.ArgumentParser(prog="python -m model.training.ship")
    ap.add_argument("run", type=Path, nargs="?")
    ap.add_argument("--into", type=Path, default=None,
                    help="default: the shipped folder of the run's direction (DEFAULT_INTO)")
    ap.add_argument("--force", action="store_true")  # ship even when a bar fails
    ap.add_argument("--classroom-only", action="store_true")
    args = ap.parse_args(argv)
    if args.classroom_only:
        args.into = args.into or DEFAULT_INTO["en-zh"]
        card = _card(args.into)
        card.setdefault("metrics", {})["classroom"] = scores = classroom_scores(
            load_pretrained(args.into))
        card.setdefault("test_metrics", {})["classroom_test_right"] = scores["test"]["right"]
        (args.into / CARD).write_text(json.dumps(card, ensure_ascii=False, indent=2) + "\n",
                                      encoding="utf-8")
        print(json.dumps({k: {m: v[m] for m in ("right", "flagged_wrong", "flagged_right")}
                          for k, v in scores.items()}))
        return 0
    if args.run is None:
        ap.error("RUN is needed (or --classroom-only)")
    run_card = _card(args.run)
    args.into = args.into or DEFAULT_INTO[direction(run_card)]
    run_classroom = classroom_scores(load_pretrained(args.run))
    old_card = _card(args.into) if (args.into / CARD).is_file() else None
    try:
        rows = checks(run_card, run_classroom, old_card)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for what, value, bar, ok in rows:
        print(f"{'ok  ' if ok else 'FAIL'} {what:28s} {value!s:>8} (bar or shipped: {bar})")
    if not all(ok for *_, ok in rows) and not args.force:
        print("not shipped: a bar fails (--force ships anyway)", file=sys.stderr)
        return 2
    ship(args.run, args.into, run_classroom)
    verdict = ("--search" if direction(run_card) == "en-zh"
               else f"{args.into.name} --search (the Chinese source's thresholds)")
    print(f"shipped {args.run} into {args.into}. Next: python -m model.analysis.heldout_heads "
          f"{args.into}; python -m benchmarks.verdict {verdict} (then the constants of "
          "model/analysis/verdict.py, and ship's classroom figures again if they change); "
          "python -m benchmarks.beam_speed (the card's speed); docs/models.md and RESULTS.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
