"""Measure a pretrained model on its task's held-out test split.

    python -m model.evaluate pretrained/en-zh
    python -m model.evaluate pretrained/en-zh --limit 200

The test split is rebuilt from the seed recorded in ``card.json``, decoded greedily in
batches, and scored by exact match (the whole output equals the reference), by BLEU
(sacrebleu, ``tokenize="zh"``: one token per Chinese character), and by exact match on the
subset that combines words never seen together in training.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

import sacrebleu
import torch

from .decoding import greedy_decode_batch
from .transformer import Transformer
from .vocab import EOS, Vocab


def evaluate_pairs(
    model: Transformer,
    pairs: Sequence,
    src_vocab: Vocab,
    tgt_vocab: Vocab,
    novel_indices: Sequence[int] = (),
    batch_size: int = 250,
) -> dict:
    """Greedy-decode ``pairs`` and score them.

    Args:
        pairs: objects with ``src`` and ``tgt`` token tuples (``model.tasks`` Pairs).
        novel_indices: indices into ``pairs`` of the novel-combination subset.

    Returns:
        dict with ``n``, ``exact_match`` (percent), ``bleu`` (sacrebleu corpus BLEU, zh),
        ``novel_n`` and ``novel_exact_match`` (percent, if ``novel_indices``) and
        ``failures``: up to 20 (source, reference, hypothesis) triples.
    """
    model.eval()
    hyps: list[str] = []
    for i in range(0, len(pairs), batch_size):
        chunk = pairs[i : i + batch_size]
        seqs = [src_vocab.encode([*p.src, EOS]) for p in chunk]
        S = max(len(s) for s in seqs)
        src = torch.tensor([s + [0] * (S - len(s)) for s in seqs], dtype=torch.long)
        out = greedy_decode_batch(model, src, model.config.max_len - 1)
        hyps.extend("".join(tgt_vocab.decode(ids)) for ids in out)
    refs = ["".join(p.tgt) for p in pairs]
    correct = [h == r for h, r in zip(hyps, refs, strict=True)]
    result = {
        "n": len(pairs),
        "exact_match": round(100.0 * sum(correct) / max(len(pairs), 1), 2),
        "bleu": round(sacrebleu.corpus_bleu(hyps, [refs], tokenize="zh").score, 2),
    }
    novel = [i for i in novel_indices if i < len(pairs)]
    if novel:
        result["novel_n"] = len(novel)
        result["novel_exact_match"] = round(100.0 * sum(correct[i] for i in novel) / len(novel), 2)
    result["failures"] = [
        (" ".join(p.src), r, h)
        for p, r, h, ok in zip(pairs, refs, hyps, correct, strict=True)
        if not ok
    ][:20]
    return result


def evaluate_folder(folder: Path, limit: int | None = None) -> dict:
    """Rebuild the test split named by ``folder``'s card and score the model on it.

    ``limit`` keeps the first ``limit`` test pairs (and the novel ones among them).

    Raises:
        CheckpointError: the folder does not load.
    """
    from .checkpoint import load_checkpoint
    from .tasks import get_task

    model, src_vocab, tgt_vocab, card = load_checkpoint(folder)
    task = get_task(card["task"])
    splits = task.build_splits(seed=card["seed"], n_train=card["data"]["n_train"])
    test = list(splits.test[:limit] if limit else splits.test)
    return evaluate_pairs(model, test, src_vocab, tgt_vocab, splits.novel_test_indices)


def main(argv: list[str] | None = None) -> None:
    """Command-line entry point; prints the metrics as JSON."""
    ap = argparse.ArgumentParser(description="Score a pretrained folder on its test split.")
    ap.add_argument("folder", type=Path)
    ap.add_argument("--limit", type=int, default=None)
    args = ap.parse_args(argv)
    torch.set_num_threads(2)
    result = evaluate_folder(args.folder, args.limit)
    json.dump(result, sys.stdout, ensure_ascii=False, indent=2)
    print()


if __name__ == "__main__":
    main()
