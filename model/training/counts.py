"""Write a model folder's ``train_counts.json`` (``core.counts``) from its training files.

    python -m model.training.counts pretrained/en-zh-everyday          # the card's files
    python -m model.training.counts FOLDER --pairs a.tsv b.tsv          # these files

By default the files are the card's ``data.train_file`` and those of the stages before it
(``training.earlier_stages``), relative to the repository; every source sentence of every
stage counts (a sentence in two stages' files counts twice: the model saw it twice), except
the spelling-noise sentences a file keeps beside it (``train_mix.tsv`` ->
``train_mix_noise.tsv``, ``without_noise``): a deliberate slip is not a word of the language,
so it stays unseen and the verdict can still name it as a likely typo. A grammar model's
sources are its task's TRAIN split, rebuilt from the card (``grammar_sources``).
The trainer writes the same file for every new model trained on pairs (``pairs.write_folder``).
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from ..core.counts import TrainCounts, count_sources, write_counts
from ..core.subword import load_tokenizer, pieces
from .data import read_pairs

ROOT = Path(__file__).resolve().parents[2]


def card_train_files(folder: Path) -> list[Path]:
    """The training files a folder's card names, first stage first (a note after the
    path, ``"train.tsv (117,294 pairs; ...)"``, is dropped).

    Raises:
        FileNotFoundError: the folder has no card.json.
    """
    card = json.loads((Path(folder) / "card.json").read_text(encoding="utf-8"))
    stages = card.get("training", {}).get("earlier_stages", [])
    names = [s.get("train_file", "") for s in stages] + [card.get("data", {}).get("train_file", "")]
    return [ROOT / n.split(" (")[0] for n in names if n]


def noise_file(train_file: Path) -> Path:
    """Where the spelling-noise pairs of ``train_file`` are kept (``train_mix.tsv`` ->
    ``train_mix_noise.tsv``, written by ``python -m model.training.data everyday``)."""
    train_file = Path(train_file)
    return train_file.with_name(f"{train_file.stem}_noise{train_file.suffix}")


def without_noise(sources: Iterable[str], train_file: Path) -> list[str]:
    """``sources`` (the English of ``train_file``) less one occurrence of each sentence of its
    noise file (``noise_file``); all of them when there is no such file."""
    sources, path = list(sources), noise_file(train_file)
    if not path.is_file():
        return sources
    left = Counter(row[0] for row in read_pairs(path))
    kept = []
    for s in sources:
        if left[s] > 0:
            left[s] -= 1
        else:
            kept.append(s)
    return kept


def source_counts(sources: Iterable[str], tok=None) -> TrainCounts:
    """``count_sources`` of ``sources``, with the pieces of the source tokenizer ``tok``
    (``tokenizers.Tokenizer``) when the model has one, or of a training side
    (``pairs.CharSide`` / ``PieceSide``: anything with ``pieces(text)``)."""
    sources = list(sources)
    if tok is None:
        return count_sources(sources)
    split = tok.pieces if hasattr(tok, "pieces") else (lambda s: pieces(tok, s))
    return count_sources(sources, (split(s) for s in sources))


def folder_tokenizer(folder: Path):
    """What splits ``folder``'s sources into the pieces it counts: its source tokenizer
    (``src_tokenizer.json``), the characters of a Chinese source (``pairs.CharSide``: its
    card's ``languages`` start with ``"zh"``), or None (a word-level English model)."""
    path = Path(folder) / "src_tokenizer.json"
    if path.is_file():
        return load_tokenizer(path)
    card = json.loads((Path(folder) / "card.json").read_text(encoding="utf-8"))
    if (card.get("languages") or ["en"])[0] == "zh":
        from ..core.vocab import SPECIALS, Vocab
        from .pairs import CharSide

        return CharSide(Vocab(list(SPECIALS)))
    return None


def grammar_sources(folder: Path) -> list[str] | None:
    """The English of the TRAIN split a grammar model was trained on (its card's task, seed
    and ``n_train``, as ``train --task`` built it), or None for a model of another kind."""
    from ..tasks import TASKS, get_task

    card = json.loads((Path(folder) / "card.json").read_text(encoding="utf-8"))
    n_train = card.get("data", {}).get("n_train")
    if card.get("task") not in TASKS or not isinstance(n_train, int):
        return None
    splits = get_task(card["task"]).build_splits(seed=card.get("seed", 0), n_train=n_train)
    return [" ".join(p.src) for p in splits.train]


def main(argv: list[str] | None = None) -> None:
    """Command-line entry point (module docstring)."""
    ap = argparse.ArgumentParser(prog="python -m model.training.counts",
                                 description="Count a model's training source words and pieces.")
    ap.add_argument("folder", type=Path)
    ap.add_argument("--pairs", type=Path, nargs="*", help="default: the card's training files")
    args = ap.parse_args(argv)
    grammar = None if args.pairs else grammar_sources(args.folder)
    files = [] if grammar is not None else args.pairs or card_train_files(args.folder)
    sources = grammar if grammar is not None else [
        s for f in files for s in without_noise((row[0] for row in read_pairs(f)), f)]
    path = write_counts(args.folder, source_counts(sources, folder_tokenizer(args.folder)))
    where = "the grammar's TRAIN split" if grammar is not None else f"{len(files)} file(s)"
    print(f"{len(sources):,} sources from {where} -> {path}")


if __name__ == "__main__":
    main()
