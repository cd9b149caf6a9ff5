"""Measure the Chinese -> English model on its fixed TEST files and its classroom set.

    python -m model.training.evaluate_zh_en pretrained/zh-en-everyday          # writes the card
    python -m model.training.evaluate_zh_en runs/zh-en --limit 100 --no-card   # a quick look

The files are those ``python -m model.training.data_zh_en`` writes (``data/zh-en/``, the
everyday corpus's TEST pairs reversed): Tatoeba TEST and HSK TEST per level scored by
sacrebleu BLEU (``tokenize="13a"``, English) and chrF against the references as they are;
``numbers_test`` (right when every number of the Chinese, digits or Chinese numerals, is
in the English as digits or words: ``analysis.numbers.missing_numbers_english``);
``long_test`` (joined threes: chrF joined / chrF one by one, and loops). The classroom set
(``resources/classroom_set_zh_en.tsv``) is scored by its rule (``classroom_set.is_right``) per
split: CALIBRATION (odd ids; what anything may be tuned on) and TEST (even ids; reported,
never used to choose anything). Decoding: greedy (``num_beams=1``), as the app's default.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

import sacrebleu

from ..analysis.confidence import loops_against
from ..analysis.numbers import missing_numbers_english
from ..backends.load import load_pretrained
from ..backends.translate import translate_batch
from ..core.checkpoint import CARD, _write_json
from .classroom_set import SPLITS, is_right, read_set
from .data import HSK_LEVELS, read_pairs
from .data_zh_en import ZH_EN_DIR
from .recipes import recipe_card


def score(hyps: Sequence[str], refs: Sequence[str]) -> dict:
    """n, sacrebleu BLEU (``tokenize="13a"``), chrF and exact match (percent)."""
    hyps, refs = list(hyps), list(refs)
    return {"n": len(refs),
            "bleu": round(sacrebleu.corpus_bleu(hyps, [refs], tokenize="13a").score, 2),
            "chrf": round(sacrebleu.corpus_chrf(hyps, [refs]).score, 2),
            "exact_match": round(100.0 * sum(h == r for h, r in zip(hyps, refs, strict=True))
                                 / max(len(refs), 1), 2)}


def evaluate_zh_en(folder: Path, data_dir: Path = ZH_EN_DIR, limit: int | None = None,
                   write_card: bool = False) -> dict:
    """Score ``folder`` on every TEST file and the classroom set (module docstring).

    Returns:
        {set name: scores}; with ``write_card`` (and no ``limit``) also written into the
        folder's card as ``metrics`` and the headline ``test_metrics``.

    Raises:
        FileNotFoundError: a test file is missing (``python -m model.training.data_zh_en``).
    """
    translator = load_pretrained(Path(folder))

    def translate(texts: list[str]) -> list[str]:
        return translate_batch(translator, texts, num_beams=1)

    results, pooled = {}, ([], [])
    for name in ["tatoeba", *(f"hsk{lv}" for lv in HSK_LEVELS)]:
        pairs = read_pairs(Path(data_dir) / f"test_{name}.tsv")[:limit]
        hyps = translate([z for z, _ in pairs])
        results[f"{name}_test"] = score(hyps, [e for _, e in pairs])
        if name.startswith("hsk"):
            pooled[0].extend(hyps)
            pooled[1].extend(e for _, e in pairs)
        print(name, results[f"{name}_test"], file=sys.stderr)
    results["hsk_test"] = score(*pooled)
    numbers = read_pairs(Path(data_dir) / "test_numbers.tsv")[:limit]
    hyps = translate([z for z, _ in numbers])
    right = [not missing_numbers_english(z, h) for (z, _), h in zip(numbers, hyps, strict=True)]
    results["numbers_test"] = {"n": len(numbers),
                               "correct": round(100.0 * sum(right) / max(len(right), 1), 2)}
    results["long_test"] = long_scores(translate, data_dir, limit)
    results.update(classroom_scores(translate))
    results["settings"] = {"num_beams": 1, "bleu": "sacrebleu corpus_bleu, tokenize='13a', "
                           f"sacrebleu {sacrebleu.__version__}", "references": "as they are"}
    if write_card and limit is None:
        write_metrics(Path(folder), translator.card, results)
    return results


def long_scores(translate, data_dir: Path, limit: int | None) -> dict:
    """chrF of the joined threes against the joined references, of the same sentences
    translated one by one and joined with spaces, their ratio (``kept``) and loops."""
    joined = read_pairs(Path(data_dir) / "test_long.tsv")[:limit]
    singles = read_pairs(Path(data_dir) / "test_tatoeba.tsv")[: 3 * len(joined)]
    long_hyps, one = translate([z for z, _ in joined]), translate([z for z, _ in singles])
    one_joined = [" ".join(one[i : i + 3]) for i in range(0, len(one), 3)]
    refs = [e for _, e in joined]
    chrf_joined = sacrebleu.corpus_chrf(long_hyps, [refs]).score
    chrf_one = sacrebleu.corpus_chrf(one_joined, [refs]).score
    return {"n": len(joined), "chrf_joined": round(chrf_joined, 2),
            "chrf_one_by_one": round(chrf_one, 2), "kept": round(100 * chrf_joined / chrf_one, 2),
            "loops": sum(loops_against(h, r) for h, r in zip(long_hyps, refs, strict=True))}


def classroom_scores(translate) -> dict:
    """The classroom set's share of right translations (``classroom_set.is_right``) per
    split, with each row's output, for the card."""
    items = read_set(direction="zh-en")
    outputs = translate([i.zh for i in items])
    out = {}
    for split in SPLITS:
        mine = [(i, o) for i, o in zip(items, outputs, strict=True) if i.split == split]
        right = [is_right(i, o) for i, o in mine]
        out[f"classroom_{split}"] = {
            "n": len(mine), "right": round(100.0 * sum(right) / max(len(mine), 1), 2),
            "outputs": [[i.id, i.zh, o, r] for (i, o), r in zip(mine, right, strict=True)]}
    return out


def write_metrics(folder: Path, card: dict, results: dict) -> None:
    """Store ``results`` in ``folder``'s card (``metrics``) with the headline numbers
    (``test_metrics``) and the recipe's card fields."""
    card = dict(card)
    card.update(recipe_card(card.get("task", "")))
    card["metrics"] = results
    card["test_metrics"] = {
        "tatoeba_bleu": results["tatoeba_test"]["bleu"],
        "tatoeba_chrf": results["tatoeba_test"]["chrf"],
        "hsk_bleu": results["hsk_test"]["bleu"], "hsk_chrf": results["hsk_test"]["chrf"],
        "numbers_correct": results["numbers_test"]["correct"],
        "long_chrf_kept": results["long_test"]["kept"],
        "long_loops": results["long_test"]["loops"],
        "classroom_test_right": results["classroom_test"]["right"],
        "classroom_calibration_right": results["classroom_calibration"]["right"]}
    _write_json(folder / CARD, card)


def main(argv: list[str] | None = None) -> None:
    """Command-line entry point (module docstring); prints the metrics as JSON."""
    import torch

    ap = argparse.ArgumentParser(prog="python -m model.training.evaluate_zh_en",
                                 description="Score a Chinese -> English folder.")
    ap.add_argument("folder", type=Path)
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--data", type=Path, default=ZH_EN_DIR)
    ap.add_argument("--no-card", action="store_true", help="do not write the card")
    args = ap.parse_args(argv)
    torch.set_num_threads(2)
    result = evaluate_zh_en(args.folder, args.data, args.limit, write_card=not args.no_card)
    json.dump({k: {m: v for m, v in r.items() if m != "outputs"} if isinstance(r, dict) else r
               for k, r in result.items()}, sys.stdout, ensure_ascii=False, indent=2)
    print()


if __name__ == "__main__":
    main()
