"""Where the sidebar's sampling starts: the settings at which the default models write sense
(issue 54, item 9), chosen on the classroom set's CALIBRATION half.

    .venv/bin/python -m benchmarks.sampling              # both directions, prints a table
    .venv/bin/python -m benchmarks.sampling --seeds 3    # fewer seeds, quicker

Every setting of ``GRID`` (temperature x top-p x top-k) samples each CALIBRATION sentence of
a model's own classroom set (``model.training.classroom_set``: odd ids) with ``SEEDS``
seeds. For each setting it prints the share of samples that are right (``is_right``, the
set's rule) and the mean number of different translations a sentence gets over the seeds
(what sampling is for: variety). Greedy decoding's share is the baseline.

The rule that chooses (``choose``): of the settings whose right share, in both directions, is
at least ``KEEP`` of greedy's, the one with the most variety (mean over the directions); ties
go to the higher temperature. The chosen setting is ``STARTS["sampling"]`` in
``model/decoding/settings.py``; docs/models.md keeps the table. TEST (even ids) is never read.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run as a script from anywhere

import torch  # noqa: E402

from model import load_pretrained  # noqa: E402
from model.decoding.settings import GenerationSettings  # noqa: E402
from model.training.classroom_set import direction_of, is_right, read_set  # noqa: E402

MODELS = ("en-zh-everyday", "zh-en-everyday")
GRID = [dict(temperature=t, top_p=p, top_k=k)
        for t, p, k in itertools.product((0.3, 0.5, 0.7, 1.0), (0.9, 1.0), (0, 40))]
SEEDS = 5
KEEP = 0.9  # a setting writes sense when its right share is at least this part of greedy's


@dataclass(frozen=True)
class Figures:
    """One setting on one model's CALIBRATION half: ``right`` (percent of samples right),
    ``variety`` (mean distinct translations per sentence over the seeds, 1 to SEEDS)."""

    right: float
    variety: float


def measure(translator, settings: list[GenerationSettings], seeds: int) -> list[Figures]:
    """``Figures`` of each of ``settings`` (their ``seed`` replaced by 0 .. seeds-1)."""
    items = read_set(split="calibration", direction=direction_of(translator))
    out = []
    for base in settings:
        right, kinds = 0, []
        for item in items:
            texts = [translator.generate(item.source, base, seed=s).output_text or ""
                     for s in range(seeds if base.do_sample else 1)]
            right += sum(is_right(item, t) for t in texts)
            kinds.append(len(set(texts)))
        out.append(Figures(round(100 * right / (len(items) * len(texts)), 1),
                           round(statistics.mean(kinds), 2)))
    return out


def choose(greedy: list[Figures], grid: list[list[Figures]]) -> int:
    """The index in ``GRID`` of the chosen setting (module docstring); ``grid[i][m]`` is
    setting i on model m, ``greedy[m]`` greedy decoding on model m.

    Raises:
        ValueError: no setting keeps ``KEEP`` of greedy's right share in every direction.
    """
    ok = [i for i, figs in enumerate(grid)
          if all(f.right >= KEEP * g.right for f, g in zip(figs, greedy, strict=True))]
    if not ok:
        raise ValueError("no setting of GRID writes sense in every direction")
    return max(ok, key=lambda i: (statistics.mean(f.variety for f in grid[i]),
                                  GRID[i]["temperature"]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=SEEDS)
    args = parser.parse_args()
    torch.set_num_threads(1)
    settings = [GenerationSettings(do_sample=True, **g) for g in GRID]
    greedy, grid = [], [[] for _ in GRID]
    for name in MODELS:
        started = time.perf_counter()
        translator = load_pretrained(name)
        greedy += measure(translator, [GenerationSettings()], 1)
        for i, figs in enumerate(measure(translator, settings, args.seeds)):
            grid[i].append(figs)
        print(f"{name}: {time.perf_counter() - started:.0f} s", file=sys.stderr)
    print("| temperature | top-p | top-k | " + " | ".join(
        f"{m} right % | {m} variety" for m in MODELS) + " |")
    print("|---" * (3 + 2 * len(MODELS)) + "|")
    print("| greedy | | | " + " | ".join(f"{g.right} | 1" for g in greedy) + " |")
    for g, figs in zip(GRID, grid, strict=True):
        print(f"| {g['temperature']} | {g['top_p']} | {g['top_k'] or 'off'} | "
              + " | ".join(f"{f.right} | {f.variety}" for f in figs) + " |")
    print(f"chosen: {GRID[choose(greedy, grid)]} (seeds {args.seeds}, keep {KEEP})")


if __name__ == "__main__":
    main()
