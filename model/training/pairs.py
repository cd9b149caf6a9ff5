"""The parallel-text path of ``python -m model.training.train``: its data, vocabularies,
settings, validation and card; the loop is ``trainer.train_loop``.

    python -m model.training.train --pairs train.tsv --valid valid.tsv --out runs/mine
    python -m model.training.train --recipe en-zh-classroom --out runs/classroom

A TSV has one ``source<TAB>target`` pair per line. The English side gets a byte-level BPE
tokenizer (``model.core.subword``, never an unknown token); the Chinese side one token per
character (``vocab.tokenize_zh``), so each Chinese token is a character a reader can see.
``--direction en-zh`` (the default) puts English in the source, ``zh-en`` Chinese
(``CharSide``, ``PieceSide``).
A recipe (``recipes.toml``) names the data and the settings that made a shipped model.

Training: pre-LN Transformer, AdamW with linear warm-up and cosine decay
(``trainer.cosine_lr``), label smoothing 0.1, token-bucketed batches
(``trainer.token_batches``), periodic validation (loss, greedy BLEU and chrF with
sacrebleu), the best checkpoint by validation BLEU written as a pretrained folder, and the
training state saved in ``OUT/train_state/`` so that the same command resumes after an
interruption. ``--device cuda`` trains on a GPU where there is one.
"""

from __future__ import annotations

import argparse
import json
import os
import random
from collections import Counter
from pathlib import Path

import torch

from ..core.checkpoint import CARD, save_checkpoint
from ..core.config import TransformerConfig, end_ids
from ..core.counts import TrainCounts, write_counts
from ..core.subword import SRC_TOKENIZER, TGT_TOKENIZER, load_tokenizer, tokenizer_vocab, train_bpe
from ..core.transformer import Transformer
from ..core.vocab import BOS, EOS, Vocab, tokenize_zh
from ..decoding import GenerationSettings, greedy_batch, pad_rows
from .data import read_pairs
from .recipes import RECIPES, recipe_card
from .trainer import valid_loss

ROOT = Path(__file__).resolve().parents[2]  # the repository
MAX_LEN = 96  # positions in the model; training pairs longer than MAX_TRAIN_TOKENS are dropped
DEFAULTS = dict(d_model=256, nhead=8, layers=3, dim_feedforward=1024, dropout=0.1,
                src_vocab_size=8000, individual_digits=0, min_char_count=2, max_tokens=4096,
                lr=1e-3, warmup=800, steps=9000, eval_every=750, time_limit_min=150.0,
                valid_size=600, autocast="none", direction="en-zh", reverse_of="",
                # a decoder-only prefix LM (train_prefix_lm.py): its positions (prompt +
                # continuation) and the folder whose tokenizer and vocabulary it takes
                architecture="encoder-decoder", max_len=2 * MAX_LEN, vocab_from="")
DIRECTIONS = ("en-zh", "zh-en")  # (source language, target language) as a card names them
MAX_TRAIN_TOKENS = MAX_LEN


class CharSide:
    """One side of the pairs as Chinese characters (``vocab.tokenize_zh``): ``vocab`` the
    characters seen at least ``min_char_count`` times in TRAIN (the rest are ``<unk>``)."""

    bleu_tokenize = "zh"  # sacrebleu's tokenizer for this language

    def __init__(self, vocab: Vocab) -> None:
        self.vocab, self.tokenizer = vocab, None

    @classmethod
    def build(cls, texts, min_count: int) -> CharSide:
        """The characters of ``texts`` seen at least ``min_count`` times."""
        counts = Counter(ch for t in texts for ch in tokenize_zh(t))
        return cls(Vocab.build(ch for ch, n in counts.items() if n >= min_count))

    def encode_batch(self, texts: list[str]) -> list[list[int]]:
        """The ids of each text (no specials)."""
        return [self.vocab.encode(tokenize_zh(t)) for t in texts]

    def decode(self, ids) -> str:
        """Ids (no specials) -> text, the characters joined."""
        return "".join(self.vocab.decode(ids))

    def reference(self, text: str) -> str:
        """A reference as the decoded outputs write it (ASCII punctuation full-width)."""
        return "".join(tokenize_zh(text))

    def pieces(self, text: str) -> list[str]:
        """The tokens of ``text`` (for the training counts)."""
        return tokenize_zh(text)


class PieceSide:
    """One side of the pairs as byte-level BPE pieces (``core.subword``): ``tokenizer``
    and its ``vocab`` (its pieces in id order)."""

    bleu_tokenize = "13a"

    def __init__(self, tokenizer) -> None:
        self.tokenizer, self.vocab = tokenizer, tokenizer_vocab(tokenizer)

    def encode_batch(self, texts: list[str]) -> list[list[int]]:
        """The ids of each text (no specials)."""
        return [enc.ids for enc in self.tokenizer.encode_batch(texts)]

    def decode(self, ids) -> str:
        """Ids (no specials) -> text (the tokenizer's byte-level decoder)."""
        return self.tokenizer.decode([int(i) for i in ids]).strip()

    def reference(self, text: str) -> str:
        """A reference as it is."""
        return text

    def pieces(self, text: str) -> list[str]:
        """The pieces of ``text`` (``subword.pieces``: what the app encodes)."""
        from ..core.subword import pieces

        return pieces(self.tokenizer, text)


def encode_corpus(pairs: list[tuple[str, str]], src_side, tgt_side
                  ) -> tuple[list[tuple[list[int], list[int]]], list[tuple[str, str]]]:
    """(source ids + ``</s>``, ``<s>`` + target ids + ``</s>``) per (source, target) text
    pair, and the pairs kept: those longer than MAX_TRAIN_TOKENS ids on either side are
    dropped. ``src_side`` / ``tgt_side``: a ``CharSide`` or ``PieceSide``."""
    src_encs = src_side.encode_batch([s for s, _ in pairs])
    tgt_encs = tgt_side.encode_batch([t for _, t in pairs])
    src_eos = src_side.vocab.stoi[EOS]
    bos, eos = tgt_side.vocab.stoi[BOS], tgt_side.vocab.stoi[EOS]
    out, kept = [], []
    for src, tgt, pair in zip(src_encs, tgt_encs, pairs, strict=True):
        src_ids, tgt_ids = [*src, src_eos], [bos, *tgt, eos]
        if len(src_ids) <= MAX_TRAIN_TOKENS and len(tgt_ids) <= MAX_TRAIN_TOKENS:
            out.append((src_ids, tgt_ids))
            kept.append(pair)
    return out, kept


def build_vocabularies(train_pairs: list[tuple[str, str]], args, state_dir: Path):
    """The two sides of ``args.direction``: English as a byte-level BPE tokenizer
    (``args.src_vocab_size`` pieces, ``core.subword.train_bpe``), Chinese as the characters
    seen at least ``args.min_char_count`` times; saved in ``state_dir`` (en-zh:
    ``src_tokenizer.json`` and ``tgt_vocab.json``; zh-en: ``src_vocab.json`` and
    ``tgt_tokenizer.json``) and reloaded from there on resume.

    Returns:
        (source side, target side): ``PieceSide`` / ``CharSide``.
    """
    zh_en = getattr(args, "direction", "en-zh") == "zh-en"
    english = [t if zh_en else s for s, t in train_pairs]
    chinese = [s if zh_en else t for s, t in train_pairs]
    piece_file, char_file = (TGT_TOKENIZER, "src_vocab.json") if zh_en \
        else (SRC_TOKENIZER, "tgt_vocab.json")
    if (state_dir / piece_file).exists():
        en = PieceSide(load_tokenizer(state_dir / piece_file))
        zh = CharSide(Vocab(json.loads((state_dir / char_file).read_text())))
    else:
        en = PieceSide(train_bpe(english, args.src_vocab_size,
                                 individual_digits=bool(args.individual_digits)))
        zh = CharSide.build(chinese, args.min_char_count)
        state_dir.mkdir(parents=True, exist_ok=True)
        en.tokenizer.save(str(state_dir / piece_file))
        (state_dir / char_file).write_text(json.dumps(zh.vocab.itos, ensure_ascii=False))
    return (zh, en) if zh_en else (en, zh)


def parse_args(argv: list[str]) -> argparse.Namespace:
    """The parallel-text path's arguments: ``--pairs`` / ``--valid`` / ``--recipe`` /
    ``--out`` / ``--device`` / ``--threads`` / ``--seed`` / ``--fresh`` / ``--stop-after``
    and every ``DEFAULTS`` setting (``--d-model`` ...); a setting not given is the recipe's,
    else the default.

    Raises:
        SystemExit: bad arguments (argparse), neither ``--pairs`` nor ``--recipe``, or a
            recipe's data not prepared yet.
    """
    ap = argparse.ArgumentParser(
        prog="python -m model.training.train",
        description="Train a Transformer on any parallel text file, or reproduce a shipped "
                    "model by recipe.")
    ap.add_argument("--pairs", type=Path, help="training TSV (source<TAB>target)")
    ap.add_argument("--valid", type=Path, help="validation TSV (default: 2%% of --pairs)")
    ap.add_argument("--recipe", choices=sorted(RECIPES))
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--fresh", action="store_true", help="ignore a saved training state")
    ap.add_argument("--init", type=Path,
                    help="start from this pretrained folder's weights, tokenizer and target "
                         "vocabulary (a second stage; its sizes must match)")
    ap.add_argument("--stop-after", type=int, default=0,
                    help="stop (resumable) after this many steps of this run (0 = off)")
    for name, default in DEFAULTS.items():  # None here: a recipe's value, else the default
        ap.add_argument(f"--{name.replace('_', '-')}", type=type(default), default=None,
                        help=f"default {default}")
    args = ap.parse_args(argv)
    defaults = dict(DEFAULTS)
    if args.recipe:
        recipe = RECIPES[args.recipe]["train"]
        defaults.update({k: v for k, v in recipe.items() if k not in ("data", "train_file")})
        data = ROOT / recipe["data"]
        args.pairs = args.pairs or data / recipe.get("train_file", "train.tsv")
        args.valid = args.valid or data / "valid.tsv"
        if not args.pairs.exists():
            ap.error(f"{args.pairs} is missing: run `python -m model.training.data everyday` first")
    for k, v in defaults.items():
        if getattr(args, k) is None:
            setattr(args, k, v)
    if args.reverse_of:  # a folder of the other direction to start from (reverse_init)
        args.reverse_of = ROOT / args.reverse_of
        if not (args.reverse_of / "model.safetensors").is_file():
            ap.error(f"--reverse-of {args.reverse_of}: not a pretrained folder")
    if args.pairs is None:
        ap.error("give --pairs FILE.tsv or --recipe NAME")
    if args.init is not None and not (args.init / "model.safetensors").is_file():
        ap.error(f"--init {args.init}: not a pretrained folder (no model.safetensors)")
    return args


def start_from(init: Path, state_dir: Path) -> None:
    """Seed ``state_dir`` with ``init``'s source tokenizer and target vocabulary, so that
    ``build_vocabularies`` reloads them (a second stage keeps the first stage's ids).
    Nothing is copied when ``state_dir`` already has a tokenizer (a resumed run)."""
    if (state_dir / SRC_TOKENIZER).exists() or (state_dir / TGT_TOKENIZER).exists():
        return
    state_dir.mkdir(parents=True, exist_ok=True)
    for name in (SRC_TOKENIZER, "tgt_vocab.json", "src_vocab.json", TGT_TOKENIZER):
        if (init / name).is_file():
            (state_dir / name).write_bytes((init / name).read_bytes())


def prepare_state(args, state_dir: Path) -> None:
    """Empty ``state_dir`` for ``--fresh``; seed it with the tokenizer and vocabulary of
    ``--init`` or of a recipe's ``vocab_from`` folder (``start_from``), or from
    ``--reverse-of`` (``reverse_init.start_reversed``)."""
    if args.fresh and state_dir.exists():
        for f in state_dir.iterdir():
            f.unlink()
    for folder in (args.init, ROOT / args.vocab_from if args.vocab_from else None):
        if folder is not None:
            start_from(folder, state_dir)
    if args.reverse_of:
        from .reverse_init import start_reversed

        start_reversed(args.reverse_of, state_dir)


def init_weights(model: Transformer, init: Path) -> None:
    """Copy the weights of the pretrained folder ``init`` into ``model``.

    Raises:
        CheckpointError: ``init`` is not a valid pretrained folder.
        ValueError: its config differs from ``model``'s (sizes, layers, vocabularies).
    """
    from ..core.checkpoint import load_checkpoint

    loaded = load_checkpoint(init).model
    if loaded.config.to_dict() != model.config.to_dict():
        raise ValueError(f"--init {init}: its config {loaded.config.to_dict()} differs from "
                         f"this run's {model.config.to_dict()}")
    model.load_state_dict(loaded.state_dict())


def read_splits(args) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """The (training, validation) text pairs: ``args.pairs`` and ``args.valid``, or without
    ``--valid`` a seeded 2 % of ``--pairs`` held out; at most ``args.valid_size``
    validation pairs, sampled with ``args.seed``.

    Raises:
        ValueError: a bad line, naming its file and line (``data.read_pairs``).
    """
    train_pairs = read_pairs(args.pairs)
    if args.valid:
        valid_pairs = read_pairs(args.valid)
    else:
        random.Random(args.seed).shuffle(train_pairs)
        n = max(1, len(train_pairs) // 50)
        valid_pairs, train_pairs = train_pairs[:n], train_pairs[n:]
    valid_pairs = random.Random(args.seed).sample(valid_pairs,
                                                  min(args.valid_size, len(valid_pairs)))
    return train_pairs, valid_pairs


def model_config(args, src_side, tgt_side) -> TransformerConfig:
    """The pre-LN Transformer (``norm_first``, Xiong et al. 2020) of ``args``' sizes
    (d_model, nhead, layers, dim_feedforward, dropout) with MAX_LEN positions; the
    vocabulary sizes are those of the two sides (``build_vocabularies``)."""
    return TransformerConfig(
        src_vocab_size=len(src_side.vocab), tgt_vocab_size=len(tgt_side.vocab),
        d_model=args.d_model, nhead=args.nhead, num_encoder_layers=args.layers,
        num_decoder_layers=args.layers, dim_feedforward=args.dim_feedforward,
        dropout=args.dropout, max_len=MAX_LEN, norm_first=True,
    )


def validate(model: Transformer, valid, valid_pairs: list[tuple[str, str]], tgt_side, *,
             device: torch.device | str = "cpu") -> dict:
    """The validation hook of the parallel-text path: ``valid_loss`` of the encoded pairs
    ``valid`` (nats per token, no smoothing) and the greedy translations'
    (``decoding.greedy_batch``, 60 tokens at most, batches of 100) sacrebleu corpus BLEU
    (``tokenize="zh"`` for Chinese, ``"13a"`` for English) and chrF against
    ``valid_pairs``' targets; ``tgt_side`` a ``CharSide`` or ``PieceSide``.

    Returns:
        {"valid_loss", "valid_bleu", "valid_chrf"}, rounded.
    """
    import sacrebleu

    vloss = valid_loss(model, valid, 100, device)
    hyps = []
    with torch.inference_mode():
        for c in range(0, len(valid), 100):
            src = pad_rows([p[0] for p in valid[c : c + 100]], model.config.pad_id)  # (B, S)
            out = greedy_batch(model, src.to(device), GenerationSettings(max_new_tokens=60)
                               ).outputs(end_ids(model.config))
            hyps += [tgt_side.decode(ids) for ids in out]
    refs = [tgt_side.reference(t) for _, t in valid_pairs]
    bleu = sacrebleu.corpus_bleu(hyps, [refs], tokenize=tgt_side.bleu_tokenize)
    return {"valid_loss": round(vloss, 4), "valid_bleu": round(bleu.score, 2),
            "valid_chrf": round(sacrebleu.corpus_chrf(hyps, [refs]).score, 2)}


def hardware(device: str = "cpu", threads: int = 2) -> str:
    """What the model trains on, for the card: the GPU's name, or the CPU model and the
    number of threads torch uses."""
    if str(device).startswith("cuda") and torch.cuda.is_available():
        return torch.cuda.get_device_name(torch.device(device))
    cpu = "CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{threads} threads of {cpu}"


def _card_path(path: Path) -> str:
    """A data file as a card records it: relative to the repository when inside it (the
    training machine's own folders mean nothing elsewhere), else as given."""
    path = Path(os.path.abspath(path))  # not resolved: data/ may link to another disk
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def source_lengths(encoded: list[tuple[list[int], list[int]]]) -> dict[str, int]:
    """The training sources' lengths in tokens (``</s>`` included): ``max``, ``p99``
    (99th percentile) and ``median``, for the card (``data.source_tokens``)."""
    lengths = sorted(len(src) for src, _ in encoded)
    if not lengths:
        return {}
    return {"max": lengths[-1], "p99": lengths[int(0.99 * (len(lengths) - 1))],
            "median": lengths[(len(lengths) - 1) // 2]}


def reversed_from(folder: Path) -> dict:
    """What a run that started from the other direction's model (``reverse_init``) records
    of it: its folder (relative to the repository), weights' sha256 and training minutes."""
    card = json.loads((Path(folder) / CARD).read_text(encoding="utf-8"))
    return {"folder": _card_path(folder), "sha256": card.get("sha256", ""),
            "wall_time_minutes": card.get("training", {}).get("wall_time_minutes"),
            "how": "model.training.reverse_init: embeddings and layers put where the same "
                   "language is read or written"}


def earlier_stages(init: Path) -> list[dict]:
    """The training stages that made the pretrained folder ``init``, first first: those its
    card lists (``training.earlier_stages``) and its own (command, train file, steps, best
    step, wall time in minutes, validation history); ``[]`` for a folder with no card."""
    path = Path(init) / CARD
    if not path.is_file():
        return []
    card = json.loads(path.read_text(encoding="utf-8"))
    training = card.get("training", {})
    own = {"command": card.get("command", ""),
           "train_file": card.get("data", {}).get("train_file", ""),
           **{k: training.get(k) for k in ("steps", "best_step", "wall_time_minutes")},
           "history": training.get("history", [])}
    return [*training.get("earlier_stages", []), own]


def write_folder(args, model: Transformer, meta: dict, *, src_side, tgt_side, command: str,
                 n_train: int, n_valid: int, lengths: dict[str, int] | None = None,
                 counts: TrainCounts | None = None) -> None:
    """Save the current weights into ``args.out`` as a pretrained folder with its card
    (``meta``: ``trainer.train_loop``'s step, minutes and history; ``lengths``:
    ``source_lengths`` of the training data; ``counts``: its source words and pieces,
    written as ``train_counts.json``, ``core.counts``; no test metrics: those come from
    ``python -m model.training.evaluate``, which adds them). A run from ``--init`` lists
    the stages before it (``earlier_stages``) and the minutes of all of them."""
    card = {
        "name": args.out.name,
        "task": args.recipe or "pairs",
        "description": f"trained on {args.pairs.name}",
        "command": command,
        "seed": args.seed,
        "languages": getattr(args, "direction", "en-zh").split("-"),  # [source, target]
        "data": {"train_file": _card_path(args.pairs),
                 "valid_file": _card_path(args.valid) if args.valid else "",
                 "n_train": n_train, "n_valid_used": n_valid,
                 **({"source_tokens": lengths} if lengths else {})},
        "config": model.config.to_dict(),
        "training": {
            "steps": meta["step"], "best_step": meta["step"], "max_tokens": args.max_tokens,
            "optimizer": "AdamW(0.9, 0.98, eps=1e-9, weight_decay=0.01), linear warm-up "
                         "then cosine decay", "lr": args.lr, "warmup": args.warmup,
            "planned_steps": args.steps, "label_smoothing": 0.1,
            "autocast": getattr(args, "autocast", "none"),
            "wall_time_minutes": round(meta["minutes"], 1), "threads": args.threads,
            "device": str(args.device), "hardware": hardware(args.device, args.threads),
            "torch": torch.__version__,
            "history": meta["history"],
        },
    }
    if getattr(args, "reverse_of", ""):
        card["training"]["reversed_from"] = reversed_from(args.reverse_of)
    if getattr(args, "init", None) is not None:
        stages = earlier_stages(args.init)
        card["training"]["earlier_stages"] = stages
        card["training"]["total_wall_time_minutes"] = round(
            meta["minutes"] + sum(s["wall_time_minutes"] or 0 for s in stages), 1)
    if args.recipe:
        card.update(recipe_card(args.recipe))
        manifest = ROOT / RECIPES[args.recipe]["train"]["data"] / "manifest.json"
        if manifest.exists():
            card["data"]["manifest"] = json.loads(manifest.read_text(encoding="utf-8"))
    model.eval()
    save_checkpoint(args.out, model, src_side.vocab, tgt_side.vocab, card=card,
                    src_tokenizer=src_side.tokenizer, tgt_tokenizer=tgt_side.tokenizer)
    if counts is not None:
        write_counts(args.out, counts)
