"""Train a Transformer and write a pretrained folder: on the synthetic grammar task, on any
parallel text file, or by a shipped model's recipe. Both paths build their data here and
train with the one loop, ``trainer.train_loop``.

    python -m model.training.train --task en-zh --out pretrained/en-zh
    python -m model.training.train --pairs FILE.tsv --out DIR               # any parallel text file
    python -m model.training.train --recipe en-zh-classroom --out runs/classroom
    python -m model.training.train --recipe decoder-only-en-zh --out runs/decoder-only
    python -m model.training.train --task en-zh --out /tmp/quick --steps 300   # a quick smoke run

The grammar task (``--task``): fixed seeds, a post-LN Transformer as in the paper, Adam with
the paper's warm-up schedule (section 5.3, ``trainer.noam_lr``), label smoothing 0.1
(section 5.4), batches of ``--batch-size`` pairs of similar length, periodic validation
(loss and greedy exact match), a tqdm progress bar, and a wall-clock limit after which
training stops; the best checkpoint by validation exact match is kept. At the end the test
split is decoded (``model.training.evaluate``) and the metrics go into ``card.json``.

Parallel text (``--pairs``, ``--recipe``): see ``model.training.pairs`` (BPE source side,
AdamW with cosine decay, token-bucketed batches, BLEU validation, resumable state in
``OUT/train_state/``, ``--device cuda``).
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import time
from pathlib import Path

import torch

from ..core.checkpoint import save_checkpoint
from ..core.config import TransformerConfig
from ..core.transformer import Transformer
from ..core.vocab import BOS, EOS, Vocab
from ..tasks import get_task
from . import pairs as text_pairs
from . import reverse_init
from .counts import source_counts, without_noise
from .evaluate import evaluate_everyday, evaluate_pairs
from .recipes import RECIPES
from .trainer import (
    LoopSettings,
    cosine_lr,
    length_batches,
    noam_lr,
    token_batches,
    train_loop,
    valid_loss,
)


def encode_pairs(pairs, src_vocab: Vocab, tgt_vocab: Vocab) -> list[tuple[list[int], list[int]]]:
    """The grammar task's pairs (``model.tasks`` Pairs: ``src`` and ``tgt`` token tuples)
    as (source ids + ``</s>``, ``<s>`` + target ids + ``</s>``), the encoded pairs
    ``trainer.train_loop`` takes."""
    bos, eos = tgt_vocab.stoi[BOS], tgt_vocab.stoi[EOS]
    return [(src_vocab.encode([*p.src, EOS]), [bos, *tgt_vocab.encode(p.tgt), eos])
            for p in pairs]


def task_args(argv: list[str]) -> argparse.Namespace:
    """The grammar task path's arguments (defaults: the shipped ``pretrained/en-zh``'s).

    Raises:
        SystemExit: bad arguments (argparse).
    """
    ap = argparse.ArgumentParser(prog="python -m model.training.train",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("--task", default="en-zh")
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--n-train", type=int, default=200_000)
    ap.add_argument("--steps", type=int, default=12_000)
    ap.add_argument("--time-limit-min", type=float, default=36.0)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--warmup", type=int, default=1_500)
    ap.add_argument("--lr-factor", type=float, default=1.0)
    ap.add_argument("--label-smoothing", type=float, default=0.1)
    ap.add_argument("--eval-every", type=int, default=1_000)
    ap.add_argument("--d-model", type=int, default=128)
    ap.add_argument("--nhead", type=int, default=8)
    ap.add_argument("--layers", type=int, default=3)
    ap.add_argument("--dim-feedforward", type=int, default=512)
    ap.add_argument("--dropout", type=float, default=0.1)
    ap.add_argument("--threads", type=int, default=2)
    return ap.parse_args(argv)


def _task_config(args: argparse.Namespace, src_vocab: Vocab, tgt_vocab: Vocab,
                 pairs: list[tuple[list[int], list[int]]]) -> TransformerConfig:
    """The grammar task's model: post-LN, ``args``' sizes, the two vocabularies' sizes and
    positions for the longest of the encoded ``pairs`` + 8 (at least 64)."""
    longest = max(max(len(s), len(t)) for s, t in pairs)
    return TransformerConfig(
        src_vocab_size=len(src_vocab), tgt_vocab_size=len(tgt_vocab), d_model=args.d_model,
        nhead=args.nhead, num_encoder_layers=args.layers, num_decoder_layers=args.layers,
        dim_feedforward=args.dim_feedforward, dropout=args.dropout,
        max_len=max(64, longest + 8),
    )


def _task_card(args: argparse.Namespace, command: str, *, task, splits, model: Transformer,
               meta: dict, test: dict, minutes: float) -> dict:
    """The grammar model's card: its task, command, seed, data (the generator's settings
    and the splits' sizes and held-out pairs), config, training (``meta``: steps, best step,
    history; ``minutes`` of wall time) and ``test`` metrics (failures left out)."""
    return {
        "name": args.out.name,
        "task": args.task,
        "description": "English -> Chinese translation of a synthetic grammar, "
                       "one Chinese character per target token.",
        "command": command,
        "seed": args.seed,
        "data": {
            "generator": task.GENERATOR_SETTINGS,
            "n_train": len(splits.train), "n_valid": len(splits.valid),
            "n_test": len(splits.test), "n_novel_test": len(splits.novel_test_indices),
            "held_out_pairs": [list(p) for p in splits.held_out_pairs],
        },
        "config": model.config.to_dict(),
        "training": {
            "steps": meta["step"], "best_step": meta["best_step"],
            "batch_size": args.batch_size,
            "optimizer": "Adam(0.9, 0.98, eps=1e-9), Noam schedule",
            "warmup": args.warmup, "lr_factor": args.lr_factor,
            "label_smoothing": args.label_smoothing,
            "wall_time_minutes": round(minutes, 1), "threads": args.threads,
            "torch": torch.__version__, "history": meta["history"],
        },
        "test_metrics": {k: v for k, v in test.items() if k != "failures"},
    }


def train_task(args: argparse.Namespace, command: str) -> None:
    """The grammar task path: build the splits and vocabularies, train with
    ``train_loop`` (Adam(0.9, 0.98, eps=1e-9), ``noam_lr``, ``length_batches``; validation
    loss and greedy exact match on the first 500 validation pairs), keep the best weights,
    score them on the test split and write ``args.out`` with its card.

    Raises:
        KeyError: an unknown task (``tasks.get_task``).
    """
    t0 = time.time()
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    task = get_task(args.task)
    splits = task.build_splits(seed=args.seed, n_train=args.n_train)
    src_vocab = Vocab.build(task.source_words())
    tgt_vocab = Vocab.build(task.target_tokens())
    train = encode_pairs(splits.train, src_vocab, tgt_vocab)
    valid = encode_pairs(splits.valid, src_vocab, tgt_vocab)
    model = Transformer(_task_config(args, src_vocab, tgt_vocab, train + valid))
    print(f"{len(train):,} training pairs, vocab {len(src_vocab)} / {len(tgt_vocab)}, "
          f"{model.num_parameters():,} parameters, data ready in {time.time() - t0:.0f} s")
    opt = torch.optim.Adam(model.parameters(), lr=0.0, betas=(0.9, 0.98), eps=1e-9)

    def validate(m: Transformer) -> dict:
        metrics = evaluate_pairs(m, splits.valid[:500], src_vocab, tgt_vocab)
        return {"valid_loss": round(valid_loss(m, valid, 250), 4),
                "valid_exact_match": metrics["exact_match"]}

    best = {}

    def keep_best(m: Transformer, meta: dict) -> None:
        best["state"] = {k: v.clone() for k, v in m.state_dict().items()}

    meta = train_loop(
        model, opt, train, LoopSettings(args.steps, args.eval_every, args.time_limit_min,
                                        "valid_exact_match", args.label_smoothing),
        epoch_batches=lambda epoch: length_batches(train, args.batch_size, args.seed + epoch),
        lr=lambda step, _: noam_lr(step, args.d_model, args.warmup, args.lr_factor),
        validate=validate, on_best=keep_best)
    train_minutes = (time.time() - t0) / 60
    model.load_state_dict(best["state"])
    model.eval()
    test = evaluate_pairs(model, splits.test, src_vocab, tgt_vocab,
                          novel_indices=splits.novel_test_indices)
    print("test:", {k: v for k, v in test.items() if k != "failures"})
    card = _task_card(args, command, task=task, splits=splits, model=model, meta=meta,
                      test=test, minutes=train_minutes)
    card = save_checkpoint(args.out, model, src_vocab, tgt_vocab, card=card)
    print(f"wrote {args.out} ({card['parameters']:,} parameters, sha256 {card['sha256'][:12]}…)")


def _first_stage(args: argparse.Namespace) -> bool:
    """Train the recipe's ``first_stage`` into ``args.out/stage1`` (unless its card says
    it was already evaluated) and point ``args.init`` at it. Returns False when that
    training paused (then this run pauses too); True when there is no first stage or
    ``--init`` is given."""
    first = RECIPES.get(args.recipe or "", {}).get("first_stage")
    if not first or args.init is not None:
        return True
    stage1 = args.out / "stage1"
    argv = ["--recipe", first, "--out", str(stage1), "--device", args.device,
            "--threads", str(args.threads), "--seed", str(args.seed),
            "--stop-after", str(args.stop_after)]
    card = stage1 / "card.json"  # evaluated: the first stage ended (not run, not scored again)
    ended = card.exists() and "test_metrics" in json.loads(card.read_text(encoding="utf-8"))
    if not ended and not train_pairs(text_pairs.parse_args(argv),
                                     "python -m model.training.train " + shlex.join(argv)):
        return False
    args.init = stage1
    return True


def _pairs_model(args: argparse.Namespace, src_side, tgt_side, state_dir: Path) -> Transformer:
    """The parallel-text model on ``args.device``: fresh, or with the weights of ``--init``
    or ``--reverse-of`` when the run is not resumed from ``state_dir``."""
    model = Transformer(text_pairs.model_config(args, src_side, tgt_side))
    if args.init is not None and not (state_dir / "state.json").exists():
        text_pairs.init_weights(model, args.init)  # a resumed run loads its own state instead
    if args.reverse_of and not (state_dir / "state.json").exists():
        reverse_init.init_reversed(model, args.reverse_of)
    return model.to(torch.device(args.device))


def train_pairs(args: argparse.Namespace, command: str) -> bool:
    """The parallel-text path (``pairs.parse_args``' arguments): read the pairs, build (or
    reload) the vocabularies, train with ``train_loop`` (AdamW(0.9, 0.98, eps=1e-9,
    weight_decay=0.01), ``cosine_lr``, ``token_batches``, label smoothing 0.1, BLEU
    validation, the state in ``args.out/train_state``: the same command resumes), writing
    the best weights as a pretrained folder each time validation BLEU is at its best; a
    recipe's model is then scored on the everyday test files (``evaluate_everyday``).
    A recipe with a ``first_stage`` and no ``--init`` first trains that recipe into
    ``args.out/stage1`` (resumable the same way), then starts from it.

    Returns:
        True when training ended, False when it paused (SIGTERM or ``--stop-after``).

    Raises:
        ValueError: a bad line in a pairs file, naming its file and line.
    """
    if not _first_stage(args):
        return False
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    device = torch.device(args.device)
    t_start = time.time()
    train_texts, valid_texts = text_pairs.read_splits(args)
    state_dir = args.out / "train_state"
    text_pairs.prepare_state(args, state_dir)
    src_side, tgt_side = text_pairs.build_vocabularies(train_texts, args, state_dir)
    train, _ = text_pairs.encode_corpus(train_texts, src_side, tgt_side)
    valid, valid_texts = text_pairs.encode_corpus(valid_texts, src_side, tgt_side)
    model = _pairs_model(args, src_side, tgt_side, state_dir)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.98), eps=1e-9,
                            weight_decay=0.01)
    c = model.config
    print(f"{len(train):,} training pairs, {len(valid):,} validation pairs, vocab "
          f"{c.src_vocab_size:,} / {c.tgt_vocab_size:,}, "
          f"{model.num_parameters():,} parameters, ready in {time.time() - t_start:.0f} s")
    counts = source_counts(without_noise((s for s, _ in train_texts), args.pairs),
                           src_side)  # the folder's train_counts, its spelling slips left out
    lengths = text_pairs.source_lengths(train)
    meta = train_loop(
        model, opt, train,
        LoopSettings(args.steps, args.eval_every, args.time_limit_min, "valid_bleu",
                     stop_after=args.stop_after, autocast=args.autocast),
        epoch_batches=lambda epoch: token_batches(train, args.max_tokens, args.seed + epoch),
        lr=lambda step, used: cosine_lr(step, args.lr, args.warmup, args.steps, time_used=used),
        validate=lambda m: text_pairs.validate(m, valid, valid_texts, tgt_side, device=device),
        on_best=lambda m, meta: text_pairs.write_folder(
            args, m, meta, src_side=src_side, tgt_side=tgt_side, command=command,
            n_train=len(train), n_valid=len(valid), lengths=lengths, counts=counts),
        device=device, state_dir=state_dir)
    if meta["paused"]:
        return False
    print(f"best validation BLEU {meta['best']} at step {meta.get('best_step')}; "
          f"the model is in {args.out}")
    if args.recipe and args.direction == "en-zh":
        evaluate_everyday(args.out, write_card=True)
    elif args.recipe:
        from .evaluate_zh_en import evaluate_zh_en

        evaluate_zh_en(args.out, write_card=True)
    return True


def main(argv: list[str] | None = None) -> None:
    """Command-line entry point; see the module docstring. ``--pairs`` or ``--recipe``
    choose the parallel-text path (``pairs.parse_args``), else the grammar task
    (``task_args``)."""
    args_in = sys.argv[1:] if argv is None else list(argv)
    command = "python -m model.training.train " + " ".join(shlex.quote(a) for a in args_in)
    if any(a.split("=")[0] in ("--pairs", "--recipe") for a in args_in):
        args = text_pairs.parse_args(args_in)
        if getattr(args, "architecture", "encoder-decoder") == "decoder-only":
            from .train_prefix_lm import train_prefix_lm

            return train_prefix_lm(args, command)
        return train_pairs(args, command)
    return train_task(task_args(args_in), command)


if __name__ == "__main__":
    main()
