"""Train a Transformer on a synthetic task and write a pretrained folder.

    python -m model.training.train --task en-zh --out pretrained/en-zh
    python -m model.training.train --pairs FILE.tsv --out DIR               # any parallel text file
    python -m model.training.train --recipe en-zh-everyday --out pretrained/en-zh-everyday
    python -m model.training.train --task en-zh --out /tmp/quick --steps 300   # a quick smoke run

Fixed seeds, Adam with the paper's warm-up schedule (section 5.3), label smoothing 0.1
(section 5.4), periodic validation (loss and greedy exact match), a tqdm progress bar, and a
wall-clock limit after which training stops and the best checkpoint so far is kept. At the
end the test split is decoded (``model.training.evaluate``) and the metrics go into ``card.json``.
"""

from __future__ import annotations

import argparse
import random
import shlex
import sys
import time
from dataclasses import asdict
from pathlib import Path

import torch
from torch.nn import functional as F
from tqdm import tqdm

from ..core.checkpoint import save_checkpoint
from ..core.config import TransformerConfig
from ..core.transformer import Transformer
from ..core.vocab import EOS, Vocab
from ..tasks import get_task
from .evaluate import evaluate_pairs
from .train_pairs import main as train_on_pairs


def pad_batch(seqs: list[list[int]], pad_id: int = 0) -> torch.Tensor:
    """Right-pad id lists into a (B, T) int64 tensor."""
    T = max(len(s) for s in seqs)
    out = torch.full((len(seqs), T), pad_id, dtype=torch.long)
    for i, s in enumerate(seqs):
        out[i, : len(s)] = torch.tensor(s, dtype=torch.long)
    return out


def encode_pairs(pairs, src_vocab: Vocab, tgt_vocab: Vocab) -> list[tuple[list[int], list[int]]]:
    """Pairs -> (source ids + ``</s>``, ``<s>`` + target ids + ``</s>``)."""
    return [
        (src_vocab.encode([*p.src, EOS]), [2, *tgt_vocab.encode(p.tgt), 3]) for p in pairs
    ]


def noam_lr(step: int, d_model: int, warmup: int, factor: float) -> float:
    """lrate = factor * d_model^-0.5 * min(step^-0.5, step * warmup^-1.5) (paper, eq. 3)."""
    step = max(step, 1)
    return factor * d_model**-0.5 * min(step**-0.5, step * warmup**-1.5)


def batches(data, batch_size: int, rng: random.Random):
    """Endless shuffled batches, bucketed by length so little padding is wasted."""
    while True:
        order = list(range(len(data)))
        rng.shuffle(order)
        chunk = batch_size * 50
        for c in range(0, len(order), chunk):
            part = sorted(order[c : c + chunk], key=lambda i: len(data[i][1]))
            group = [part[i : i + batch_size] for i in range(0, len(part), batch_size)]
            rng.shuffle(group)
            yield from group


def loss_on(model: Transformer, data, idx: list[int], smoothing: float) -> torch.Tensor:
    """Mean token cross-entropy (nats) of the batch ``idx`` of encoded pairs."""
    src = pad_batch([data[i][0] for i in idx])  # (B, S)
    tgt = pad_batch([data[i][1] for i in idx])  # (B, T + 1)
    logits = model(src, tgt[:, :-1]).logits  # (B, T, V)
    return F.cross_entropy(
        logits.reshape(-1, logits.size(-1)), tgt[:, 1:].reshape(-1),
        ignore_index=0, label_smoothing=smoothing,
    )


def main(argv: list[str] | None = None) -> None:
    """Command-line entry point; see the module docstring. ``--pairs`` or ``--recipe``
    train on a parallel text file instead (``model.training.train_pairs``)."""
    args_in = sys.argv[1:] if argv is None else argv
    if any(a.split("=")[0] in ("--pairs", "--recipe") for a in args_in):
        return train_on_pairs(args_in)
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
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
    args = ap.parse_args(argv)
    command = "python -m model.training.train " + " ".join(
        shlex.quote(a) for a in (argv or sys.argv[1:]))

    t0 = time.time()
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    rng = random.Random(args.seed)
    task = get_task(args.task)
    splits = task.build_splits(seed=args.seed, n_train=args.n_train)
    src_vocab = Vocab.build(task.source_words())
    tgt_vocab = Vocab.build(task.target_tokens())
    train = encode_pairs(splits.train, src_vocab, tgt_vocab)
    valid = encode_pairs(splits.valid, src_vocab, tgt_vocab)
    longest = max(max(len(s), len(t)) for s, t in train + valid)
    config = TransformerConfig(
        src_vocab_size=len(src_vocab), tgt_vocab_size=len(tgt_vocab), d_model=args.d_model,
        nhead=args.nhead, num_encoder_layers=args.layers, num_decoder_layers=args.layers,
        dim_feedforward=args.dim_feedforward, dropout=args.dropout,
        max_len=max(64, longest + 8),
    )
    model = Transformer(config)
    print(f"{len(train):,} training pairs, vocab {len(src_vocab)} / {len(tgt_vocab)}, "
          f"{model.num_parameters():,} parameters, data ready in {time.time() - t0:.0f} s")
    opt = torch.optim.Adam(model.parameters(), lr=0.0, betas=(0.9, 0.98), eps=1e-9)
    valid_idx = list(range(len(valid)))
    best = {"valid_exact_match": -1.0}
    history = []
    stream = batches(train, args.batch_size, rng)
    bar = tqdm(range(1, args.steps + 1), desc="train", mininterval=5, file=sys.stdout)
    step = 0
    for step in bar:
        model.train()
        for g in opt.param_groups:
            g["lr"] = noam_lr(step, args.d_model, args.warmup, args.lr_factor)
        loss = loss_on(model, train, next(stream), args.label_smoothing)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 50 == 0:
            bar.set_postfix(loss=f"{loss.item():.3f}")
        out_of_time = time.time() - t0 > args.time_limit_min * 60
        if step % args.eval_every == 0 or step == args.steps or out_of_time:
            model.eval()
            with torch.inference_mode():
                vloss = sum(
                    loss_on(model, valid, valid_idx[i : i + 250], 0.0).item()
                    for i in range(0, len(valid_idx), 250)
                ) / len(range(0, len(valid_idx), 250))
            metrics = evaluate_pairs(model, splits.valid[:500], src_vocab, tgt_vocab)
            record = {"step": step, "valid_loss": round(vloss, 4),
                      "valid_exact_match": metrics["exact_match"],
                      "minutes": round((time.time() - t0) / 60, 1)}
            history.append(record)
            tqdm.write(str(record), file=sys.stdout)
            if metrics["exact_match"] >= best["valid_exact_match"]:
                best = {**record, "state": {k: v.clone() for k, v in
                                            model.state_dict().items()}}
        if out_of_time:
            tqdm.write(f"time limit of {args.time_limit_min} min reached at step {step}")
            break
    train_minutes = (time.time() - t0) / 60
    model.load_state_dict(best.pop("state"))
    model.eval()
    test = evaluate_pairs(model, splits.test, src_vocab, tgt_vocab,
                          novel_indices=splits.novel_test_indices)
    print("test:", {k: v for k, v in test.items() if k != "failures"})
    card = {
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
        "config": asdict(config),
        "training": {
            "steps": step, "best_step": best["step"], "batch_size": args.batch_size,
            "optimizer": "Adam(0.9, 0.98, eps=1e-9), Noam schedule",
            "warmup": args.warmup, "lr_factor": args.lr_factor,
            "label_smoothing": args.label_smoothing,
            "wall_time_minutes": round(train_minutes, 1), "threads": args.threads,
            "torch": torch.__version__, "history": history,
        },
        "test_metrics": {k: v for k, v in test.items() if k != "failures"},
    }
    card = save_checkpoint(args.out, model, src_vocab, tgt_vocab, card)
    print(f"wrote {args.out} ({card['parameters']:,} parameters, sha256 {card['sha256'][:12]}…)")


if __name__ == "__main__":
    main()
