"""Measure a pretrained model on its task's held-out test split.

    python -m model.training.evaluate pretrained/en-zh
    python -m model.training.evaluate pretrained/en-zh --limit 200
    python -m model.training.evaluate pretrained/en-zh-everyday   # writes the card's metrics
    python -m model.training.evaluate runs/mine --pairs test.tsv  # any model, any test file

The everyday model (``evaluate_everyday``) is decoded with beam search (4 beams,
``backends.translate.translate_batch``) on the test files that
``python -m model.training.data everyday`` writes: Tatoeba TEST, HSK TEST per level and the
grammar's test split, scored by sacrebleu BLEU (``tokenize="zh"``) and chrF against
the references as they are, and by exact match; and the hard-input sets of numbers, terms
and long sentences, each by its own rule (``challenge_scores``).

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

from ..analysis.confidence import loops_against
from ..backends.load import load_pretrained
from ..backends.translate import translate_batch
from ..core.checkpoint import CARD, _write_json, load_checkpoint
from ..core.config import end_ids
from ..core.transformer import Transformer
from ..core.vocab import EOS, Vocab
from ..decoding import GenerationSettings, greedy_batch, pad_rows
from ..tasks import get_task
from .data import DEFAULT_DIR, HSK_LEVELS, read_pairs
from .recipes import RECIPES, recipe_card
from .synthetic import number_written, numbers_in


def evaluate_pairs(
    model: Transformer,
    pairs: Sequence,
    src_vocab: Vocab,
    tgt_vocab: Vocab,
    *,
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
        src = pad_rows([src_vocab.encode([*p.src, EOS]) for p in chunk], model.config.pad_id)
        out = greedy_batch(model, src, GenerationSettings()).outputs(end_ids(model.config))
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
    model, src_vocab, tgt_vocab, card = load_checkpoint(folder)[:4]
    task = get_task(card["task"])
    splits = task.build_splits(seed=card["seed"], n_train=card["data"]["n_train"])
    test = list(splits.test[:limit] if limit else splits.test)
    return evaluate_pairs(model, test, src_vocab, tgt_vocab,
                          novel_indices=splits.novel_test_indices)


def _progress_bar(desc: str):
    """A ``progress(done, total)`` callback drawing a tqdm bar on stderr."""
    from tqdm import tqdm

    bar = None

    def progress(done: int, total: int) -> None:
        nonlocal bar
        if bar is None:
            bar = tqdm(total=total, desc=desc, mininterval=10, file=sys.stderr)
        bar.update(done - bar.n)
        if done >= total:
            bar.close()

    return progress


def score(hyps: Sequence[str], refs: Sequence[str]) -> dict:
    """n, sacrebleu BLEU (``tokenize="zh"``), chrF and exact match (percent)."""
    return {
        "n": len(refs),
        "bleu": round(sacrebleu.corpus_bleu(list(hyps), [list(refs)], tokenize="zh").score, 2),
        "chrf": round(sacrebleu.corpus_chrf(list(hyps), [list(refs)]).score, 2),
        "exact_match": round(100.0 * sum(h == r for h, r in zip(hyps, refs, strict=True))
                             / max(len(refs), 1), 2),
    }


def evaluate_everyday(folder: Path, data_dir: Path | None = None, num_beams: int = 4,
                      limit: int | None = None, *, write_card: bool = False) -> dict:
    """Score a model on the everyday TEST files (``model.training.data``): ``tatoeba_test``,
    ``hsk_test`` (all levels), ``hsk1_test`` .. ``hsk6_test`` and ``grammar_test``.

    Args:
        data_dir: the prepared corpus (default ``data/everyday``).
        limit: keep the first ``limit`` pairs of each file (a quick look; never for a card).
        write_card: store the result as the card's ``metrics`` (and the headline numbers
            as ``test_metrics``).

    Returns:
        {set name: ``score`` dict}.

    Raises:
        FileNotFoundError: a test file is missing (run ``python -m model.training.data everyday``).
        CheckpointError: the folder does not load.
    """
    data_dir = Path(data_dir or DEFAULT_DIR)
    translator = load_pretrained(Path(folder))
    names = ["tatoeba", *(f"hsk{lv}" for lv in HSK_LEVELS), "grammar"]
    results, pooled = {}, {"hyps": [], "refs": []}
    for name in names:
        pairs = read_pairs(data_dir / f"test_{name}.tsv")[:limit]
        hyps = translate_batch(translator, [s for s, _ in pairs], num_beams=num_beams,
                               progress=_progress_bar(name))
        refs = [z for _, z in pairs]
        results[f"{name}_test"] = score(hyps, refs)
        if name.startswith("hsk"):
            pooled["hyps"] += hyps
            pooled["refs"] += refs
        print(name, results[f"{name}_test"], file=sys.stderr)
    results["hsk_test"] = score(pooled["hyps"], pooled["refs"])
    results.update(challenge_scores(
        lambda texts: translate_batch(translator, texts, num_beams=num_beams,
                                      progress=_progress_bar("challenge")), data_dir, limit))
    print({k: results[k] for k in ("numbers_test", "terms_test", "long_test")}, file=sys.stderr)
    results["settings"] = {"num_beams": num_beams, "bleu": "sacrebleu corpus_bleu, "
                           f"tokenize='zh', sacrebleu {sacrebleu.__version__}",
                           "references": "as they are (Tatoeba: OpenCC t2s)"}
    if write_card and limit is None:
        card = dict(translator.card)
        card.update(recipe_card(card.get("task", "")))
        if "source_tokens" not in card.get("data", {}):  # a card written before it was kept
            card["data"]["source_tokens"] = trained_source_lengths(Path(folder), card)
        card["metrics"] = results
        card["test_metrics"] = {"tatoeba_bleu": results["tatoeba_test"]["bleu"],
                                "hsk_bleu": results["hsk_test"]["bleu"],
                                "grammar_exact_match": results["grammar_test"]["exact_match"],
                                "numbers_correct": results["numbers_test"]["correct"],
                                "terms_correct": results["terms_test"]["correct"],
                                "long_chrf_kept": results["long_test"]["kept"],
                                "long_loops": results["long_test"]["loops"]}
        _write_json(Path(folder) / CARD, card)
    return results


def trained_source_lengths(folder: Path, card: dict) -> dict[str, int]:
    """``pairs.source_lengths`` of the training file the card names, encoded as training
    encoded it (the folder's own tokenizer and vocabulary)."""
    from ..core.subword import SRC_TOKENIZER, load_tokenizer
    from .pairs import ROOT, encode_corpus, source_lengths

    model_vocab = Vocab(json.loads((folder / "tgt_vocab.json").read_text(encoding="utf-8")))
    pairs = read_pairs(ROOT / card["data"]["train_file"])
    encoded, _ = encode_corpus(pairs, load_tokenizer(folder / SRC_TOKENIZER), model_vocab)
    return source_lengths(encoded)


def challenge_scores(translate, data_dir: Path, limit: int | None = None) -> dict:
    """The fixed test sets of hard input (``model.training.synthetic``, written by
    ``python -m model.training.data everyday``), scored by their rules:

    - ``numbers_test``: a sentence is right when every 2-4 digit number of its English
      comes out as those digits or the standard Chinese numeral (``number_written``);
    - ``terms_test``: right when the required Chinese term is in the output;
    - ``long_test``: chrF of the joined threes against the joined references, the same
      pairs translated one by one and joined, their ratio (``kept``), and ``loops``: joined
      outputs that repeat a string far more than the reference (``loops_against``).

    Args:
        translate: texts -> translations (``translate_batch`` with the settings in use).
        limit: keep the first ``limit`` rows of each set (a quick look; never for a card).

    Returns:
        {"numbers_test": {"n", "correct"}, "terms_test": {"n", "correct"},
        "long_test": {"n", "chrf_joined", "chrf_one_by_one", "kept", "loops"}};
        percentages rounded to 2 places.
    """
    def percent(hits: Sequence[bool]) -> float:
        return round(100.0 * sum(hits) / max(len(hits), 1), 2)

    out = {}
    numbers = read_pairs(data_dir / "test_numbers.tsv")[:limit]
    hyps = translate([e for e, _ in numbers])
    out["numbers_test"] = {"n": len(numbers), "correct": percent(
        [all(number_written(n, h) for n in numbers_in(e)) for (e, _), h in zip(
            numbers, hyps, strict=True)])}
    terms = read_pairs(data_dir / "test_terms.tsv", columns=3)[:limit]
    hyps = translate([e for e, _, _ in terms])
    out["terms_test"] = {"n": len(terms), "correct": percent(
        [term in h for (_, _, term), h in zip(terms, hyps, strict=True)])}
    joined = read_pairs(data_dir / "test_long.tsv")[:limit]
    singles = read_pairs(data_dir / "test_tatoeba.tsv")[: 3 * len(joined)]
    long_hyps = translate([e for e, _ in joined])
    one = translate([e for e, _ in singles])
    one_joined = ["".join(one[i : i + 3]) for i in range(0, len(one), 3)]
    refs = [z for _, z in joined]
    chrf_joined = sacrebleu.corpus_chrf(long_hyps, [refs]).score
    chrf_one = sacrebleu.corpus_chrf(one_joined, [refs]).score
    out["long_test"] = {
        "n": len(joined), "chrf_joined": round(chrf_joined, 2),
        "chrf_one_by_one": round(chrf_one, 2), "kept": round(100 * chrf_joined / chrf_one, 2),
        "loops": sum(loops_against(h, r) for h, r in zip(long_hyps, refs, strict=True))}
    return out


def evaluate_file(folder: Path, pairs_file: Path, num_beams: int = 4) -> dict:
    """Score any pretrained folder on a source<TAB>target test file."""
    pairs = read_pairs(pairs_file)
    hyps = translate_batch(load_pretrained(Path(folder)), [s for s, _ in pairs],
                           num_beams=num_beams, progress=_progress_bar(pairs_file.name))
    return score(hyps, [z for _, z in pairs])


def main(argv: list[str] | None = None) -> None:
    """Command-line entry point; prints the metrics as JSON."""
    ap = argparse.ArgumentParser(description="Score a pretrained folder on its test split.")
    ap.add_argument("folder", type=Path)
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--pairs", type=Path, help="a source<TAB>target test file")
    ap.add_argument("--data", type=Path, default=None, help="the everyday corpus folder")
    ap.add_argument("--num-beams", type=int, default=4)
    args = ap.parse_args(argv)
    torch.set_num_threads(2)
    card = json.loads((args.folder / "card.json").read_text(encoding="utf-8"))
    if args.pairs:
        result = evaluate_file(args.folder, args.pairs, args.num_beams)
    elif card.get("task") in RECIPES:  # the everyday recipes (both stages)
        result = evaluate_everyday(args.folder, args.data, args.num_beams, args.limit,
                                   write_card=args.limit is None)
    else:
        result = evaluate_folder(args.folder, args.limit)
    json.dump(result, sys.stdout, ensure_ascii=False, indent=2)
    print()


if __name__ == "__main__":
    main()
