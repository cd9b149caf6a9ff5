"""Is the header's verdict right about itself? The classroom set (model.training.classroom_set)
translated greedily, as the app shows a sentence first, and each verdict signal's share of the
wrong and of the right translations it flags: the figures issue 32 asks for.

    .venv/bin/python -m benchmarks.verdict                        # the default model
    .venv/bin/python -m benchmarks.verdict /work/runs/model --search

With ``--search`` the thresholds (``rare_below``, ``coverage_min``, ``low_prob``) are tried on
the CALIBRATION half only: of the settings that flag at most 20 % of its right translations,
the one that flags the most wrong ones (then the fewest right ones) is printed, and its figures
on the TEST half beside it. The chosen values are the constants of model/analysis/verdict.py;
TEST never chooses anything.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run as a script from anywhere

import torch  # noqa: E402

from model import load_pretrained  # noqa: E402
from model.analysis.verdict import judge_trace  # noqa: E402
from model.training.classroom_set import SPLITS, Scored, is_right, read_set, summary  # noqa: E402

GRID = {"rare_below": (1, 2, 3, 5, 10, 20), "coverage_min": (0.0, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8),
        "low_prob": (0.1, 0.2, 0.3, 0.4, 0.5)}
MAX_RIGHT_FLAGGED = 20.0  # percent: the bar for right translations flagged


def main(argv: list[str] | None = None) -> None:
    """Command-line entry point (module docstring)."""
    ap = argparse.ArgumentParser(prog="python -m benchmarks.verdict")
    ap.add_argument("model", nargs="?", default="en-zh-everyday")
    ap.add_argument("--search", action="store_true", help="choose thresholds on CALIBRATION")
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    m = load_pretrained(args.model)
    counts = m.info.train_counts
    traces = [(item, m.generate(item.en)) for item in read_set()]

    def scored(split: str, **thresholds) -> list[Scored]:
        return [Scored(i, t.output_text or "", is_right(i, t.output_text or ""),
                       judge_trace(t, counts, **thresholds)) for i, t in traces if i.split == split]

    for split in SPLITS:
        print(split, json.dumps(summary(scored(split)), ensure_ascii=False))
    wrong = [(i.id, i.en, t.output_text) for i, t in traces if not is_right(i, t.output_text or "")]
    print(f"{len(wrong)} wrong:", *wrong[:60], sep="\n  ")
    if not args.search:
        return
    best = None
    for values in itertools.product(*GRID.values()):
        thresholds = dict(zip(GRID, values, strict=True))
        s = summary(scored("calibration", **thresholds))
        if (s["flagged_right"] or 0) > MAX_RIGHT_FLAGGED:
            continue
        key = (s["flagged_wrong"] or 0, -(s["flagged_right"] or 0))
        if best is None or key > best[0]:
            best = (key, thresholds, s)
    if best is None:
        print(f"no setting flags at most {MAX_RIGHT_FLAGGED} % of the right translations")
        return
    _, thresholds, s = best
    print("chosen on calibration:", thresholds, json.dumps(s, ensure_ascii=False))
    print("the same on test:", json.dumps(summary(scored("test", **thresholds)),
                                          ensure_ascii=False))


if __name__ == "__main__":
    main()
