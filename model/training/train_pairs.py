"""Train a Transformer on any parallel text file, or reproduce a shipped model by recipe.

    python -m model.training.train --pairs train.tsv --valid valid.tsv --out runs/mine
    python -m model.training.train --recipe en-zh-everyday --out pretrained/en-zh-everyday

A TSV has one ``source<TAB>target`` pair per line. The source side gets a byte-level BPE
tokenizer (``model.core.subword``, never an unknown token); the target side one token per
character (``vocab.tokenize_zh``), so each decoding step is one character a reader can see.

Training: pre-LN Transformer, AdamW with linear warm-up and cosine decay, label smoothing
0.1, token-bucketed batches, a tqdm bar, periodic validation (loss, greedy BLEU and chrF with
sacrebleu), the best checkpoint by validation BLEU written as a pretrained folder, and the
training state (weights, optimiser, position in the data, random states) saved in
``OUT/train_state/`` as safetensors + JSON so that the same command resumes after an
interruption. ``--device cuda`` trains on a GPU where there is one.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import shlex
import sys
import time
from collections import Counter
from dataclasses import asdict
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file
from torch.nn import functional as F
from tqdm import tqdm

from ..core.checkpoint import save_checkpoint
from ..core.config import TransformerConfig
from ..core.subword import SRC_TOKENIZER, load_tokenizer, train_bpe
from ..core.transformer import Transformer
from ..core.vocab import Vocab, tokenize_zh
from ..decoding import greedy_batch
from .data import read_pairs
from .evaluate import evaluate_everyday
from .recipes import RECIPES

ROOT = Path(__file__).resolve().parents[2]  # the repository
DEFAULTS = dict(d_model=256, nhead=8, layers=3, dim_feedforward=1024, dropout=0.1,
                src_vocab_size=8000, min_char_count=2, max_tokens=4096, lr=1e-3, warmup=800,
                steps=9000, eval_every=750, time_limit_min=150.0, valid_size=600)
MAX_LEN = 96  # positions in the model; training pairs longer than MAX_TRAIN_TOKENS are dropped
MAX_TRAIN_TOKENS = 64


def encode_corpus(pairs, src_tok, tgt_vocab: Vocab):
    """(source ids + ``</s>``, ``<s>`` + target ids + ``</s>``) per pair, and the pairs
    kept: those longer than MAX_TRAIN_TOKENS on either side are dropped."""
    encs = src_tok.encode_batch([s for s, _ in pairs])
    out, kept = [], []
    for enc, pair in zip(encs, pairs, strict=True):
        src_ids = [*enc.ids, 3]
        tgt_ids = [2, *tgt_vocab.encode(tokenize_zh(pair[1])), 3]
        if len(src_ids) <= MAX_TRAIN_TOKENS and len(tgt_ids) <= MAX_TRAIN_TOKENS:
            out.append((src_ids, tgt_ids))
            kept.append(pair)
    return out, kept


def token_batches(data, max_tokens: int, seed: int) -> list[list[int]]:
    """One epoch of batches: shuffled, sorted by length within chunks, each batch holding
    at most ``max_tokens`` (rows x longest side) tokens, then the batches shuffled."""
    rng = random.Random(seed)
    order = list(range(len(data)))
    rng.shuffle(order)
    batches: list[list[int]] = []
    chunk = 8192
    for c in range(0, len(order), chunk):
        part = sorted(order[c : c + chunk], key=lambda i: (len(data[i][1]), len(data[i][0])))
        batch: list[int] = []
        longest = 0
        for i in part:
            n = max(len(data[i][0]), len(data[i][1]))
            if batch and max(longest, n) * (len(batch) + 1) > max_tokens:
                batches.append(batch)
                batch, longest = [], 0
            batch.append(i)
            longest = max(longest, n)
        if batch:
            batches.append(batch)
    rng.shuffle(batches)
    return batches


def pad(seqs: list[list[int]], device) -> torch.Tensor:
    """Right-pad id lists with 0 into a (B, T) int64 tensor."""
    T = max(len(s) for s in seqs)
    return torch.tensor([s + [0] * (T - len(s)) for s in seqs], dtype=torch.long, device=device)


def batch_loss(model: Transformer, data, idx, smoothing: float, device) -> torch.Tensor:
    """Mean token cross-entropy (nats) of the pairs ``idx``."""
    src = pad([data[i][0] for i in idx], device)  # (B, S)
    tgt = pad([data[i][1] for i in idx], device)  # (B, T + 1)
    logits = model(src, tgt[:, :-1]).logits  # (B, T, V)
    return F.cross_entropy(logits.reshape(-1, logits.size(-1)), tgt[:, 1:].reshape(-1),
                           ignore_index=0, label_smoothing=smoothing)


def lr_at(step: int, peak: float, warmup: int, total: int, time_used: float = 0.0) -> float:
    """Linear warm-up to ``peak`` over ``warmup`` steps, then cosine decay to 0 at the end
    of the budget: ``total`` steps or, if that comes first, the time limit (``time_used``
    is the fraction of it spent, 0 to 1), so a slower machine still ends its schedule."""
    if step <= warmup:
        return peak * step / max(warmup, 1)
    progress = min(1.0, max((step - warmup) / max(total - warmup, 1), time_used))
    return peak * 0.5 * (1.0 + math.cos(math.pi * progress))


def save_state(folder: Path, model, opt, meta: dict) -> None:
    """Write the resumable training state: weights and optimiser moments (safetensors) and
    ``meta`` (JSON: step, epoch, position, random states). No pickle."""
    folder.mkdir(parents=True, exist_ok=True)
    tensors = {f"model.{k}": v.detach().cpu().contiguous() for k, v in model.state_dict().items()}
    for i, p in enumerate(model.parameters()):
        st = opt.state.get(p)
        if st:
            tensors[f"opt.{i}.exp_avg"] = st["exp_avg"].cpu().contiguous()
            tensors[f"opt.{i}.exp_avg_sq"] = st["exp_avg_sq"].cpu().contiguous()
            meta.setdefault("opt_steps", {})[str(i)] = float(st["step"])
    tensors["torch_rng"] = torch.get_rng_state()
    save_file(tensors, str(folder / "state.safetensors.tmp"))
    (folder / "state.safetensors.tmp").replace(folder / "state.safetensors")
    (folder / "state.json").write_text(json.dumps(meta, indent=1))


def load_state(folder: Path, model, opt, device) -> dict:
    """Restore what ``save_state`` wrote; returns its ``meta``."""
    tensors = load_file(str(folder / "state.safetensors"))
    meta = json.loads((folder / "state.json").read_text())
    model.load_state_dict({k[6:]: v for k, v in tensors.items() if k.startswith("model.")})
    for i, p in enumerate(model.parameters()):
        if f"opt.{i}.exp_avg" in tensors:
            opt.state[p] = {"step": torch.tensor(meta["opt_steps"][str(i)]),
                            "exp_avg": tensors[f"opt.{i}.exp_avg"].to(device),
                            "exp_avg_sq": tensors[f"opt.{i}.exp_avg_sq"].to(device)}
    torch.set_rng_state(tensors["torch_rng"])
    return meta


def build_vocabularies(train_pairs, args, state_dir: Path):
    """The source BPE tokenizer and the target character vocabulary (reloaded on resume)."""
    if (state_dir / SRC_TOKENIZER).exists():
        src_tok = load_tokenizer(state_dir / SRC_TOKENIZER)
        tgt_vocab = Vocab(json.loads((state_dir / "tgt_vocab.json").read_text()))
        return src_tok, tgt_vocab
    src_tok = train_bpe((s for s, _ in train_pairs), args.src_vocab_size)
    counts = Counter(ch for _, t in train_pairs for ch in tokenize_zh(t))
    tgt_vocab = Vocab.build(ch for ch, n in counts.items() if n >= args.min_char_count)
    state_dir.mkdir(parents=True, exist_ok=True)
    src_tok.save(str(state_dir / SRC_TOKENIZER))
    (state_dir / "tgt_vocab.json").write_text(json.dumps(tgt_vocab.itos, ensure_ascii=False))
    return src_tok, tgt_vocab


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pairs", type=Path, help="training TSV (source<TAB>target)")
    ap.add_argument("--valid", type=Path, help="validation TSV (default: 2%% of --pairs)")
    ap.add_argument("--recipe", choices=sorted(RECIPES))
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--fresh", action="store_true", help="ignore a saved training state")
    ap.add_argument("--stop-after", type=int, default=0,
                    help="stop (resumable) after this many steps of this run (0 = off)")
    for name, default in DEFAULTS.items():  # None here: a recipe's value, else the default
        ap.add_argument(f"--{name.replace('_', '-')}", type=type(default), default=None,
                        help=f"default {default}")
    args = ap.parse_args(argv)
    defaults = dict(DEFAULTS)
    if args.recipe:
        recipe = RECIPES[args.recipe]["train"]
        defaults.update({k: v for k, v in recipe.items() if k != "data"})
        data = ROOT / recipe["data"]
        args.pairs = args.pairs or data / "train.tsv"
        args.valid = args.valid or data / "valid.tsv"
        if not args.pairs.exists():
            ap.error(f"{args.pairs} is missing: run `python -m model.training.data everyday` first")
    for k, v in defaults.items():
        if getattr(args, k) is None:
            setattr(args, k, v)
    if args.pairs is None:
        ap.error("give --pairs FILE.tsv or --recipe NAME")
    return args


def validate(model, valid, valid_pairs, tgt_vocab, device) -> dict:
    """Validation loss (nats/token, no smoothing) and greedy BLEU / chrF (sacrebleu, zh)."""
    import sacrebleu

    model.eval()
    with torch.inference_mode():
        idx = list(range(len(valid)))
        chunks = [idx[i : i + 100] for i in range(0, len(idx), 100)]
        vloss = sum(batch_loss(model, valid, c, 0.0, device).item() for c in chunks) / len(chunks)
        hyps = []
        for c in chunks:
            out = greedy_batch(model, pad([valid[i][0] for i in c], device),
                               60).outputs(model.config.eos_id)
            hyps += ["".join(tgt_vocab.decode(ids)) for ids in out]
    refs = ["".join(tokenize_zh(t)) for _, t in valid_pairs]
    return {"valid_loss": round(vloss, 4),
            "valid_bleu": round(sacrebleu.corpus_bleu(hyps, [refs], tokenize="zh").score, 2),
            "valid_chrf": round(sacrebleu.corpus_chrf(hyps, [refs]).score, 2)}


def main(argv: list[str] | None = None) -> None:
    """Command-line entry point; see the module docstring."""
    args = parse_args(argv)
    command = "python -m model.training.train " + " ".join(
        shlex.quote(a) for a in (argv or sys.argv[1:]))
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    device = torch.device(args.device)
    t_start = time.time()
    train_pairs = read_pairs(args.pairs)
    if args.valid:
        valid_pairs = read_pairs(args.valid)
    else:
        random.Random(args.seed).shuffle(train_pairs)
        n = max(1, len(train_pairs) // 50)
        valid_pairs, train_pairs = train_pairs[:n], train_pairs[n:]
    valid_pairs = random.Random(args.seed).sample(valid_pairs,
                                                  min(args.valid_size, len(valid_pairs)))
    state_dir = args.out / "train_state"
    if args.fresh and state_dir.exists():
        for f in state_dir.iterdir():
            f.unlink()
    src_tok, tgt_vocab = build_vocabularies(train_pairs, args, state_dir)
    train, _ = encode_corpus(train_pairs, src_tok, tgt_vocab)
    valid, valid_pairs = encode_corpus(valid_pairs, src_tok, tgt_vocab)
    config = TransformerConfig(
        src_vocab_size=src_tok.get_vocab_size(), tgt_vocab_size=len(tgt_vocab),
        d_model=args.d_model, nhead=args.nhead, num_encoder_layers=args.layers,
        num_decoder_layers=args.layers, dim_feedforward=args.dim_feedforward,
        dropout=args.dropout, max_len=MAX_LEN, norm_first=True,
    )
    model = Transformer(config).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.98), eps=1e-9,
                            weight_decay=0.01)
    meta = {"step": 0, "epoch": 0, "position": 0, "history": [], "best_bleu": -1.0,
            "minutes": 0.0}
    if (state_dir / "state.json").exists():
        meta = load_state(state_dir, model, opt, device)
        print(f"resumed from step {meta['step']} ({state_dir})")
    print(f"{len(train):,} training pairs, {len(valid):,} validation pairs, vocab "
          f"{config.src_vocab_size:,} / {config.tgt_vocab_size:,}, "
          f"{model.num_parameters():,} parameters, ready in {time.time() - t_start:.0f} s")
    minutes_before = meta["minutes"]
    t0 = time.time()
    bar = tqdm(total=args.steps, initial=meta["step"], desc="train", mininterval=10,
               file=sys.stdout)
    epoch_batches = token_batches(train, args.max_tokens, args.seed + meta["epoch"])
    step = first_step = meta["step"]
    while step < args.steps:
        if meta["position"] >= len(epoch_batches):
            meta["epoch"] += 1
            meta["position"] = 0
            epoch_batches = token_batches(train, args.max_tokens, args.seed + meta["epoch"])
        idx = epoch_batches[meta["position"]]
        meta["position"] += 1
        step += 1
        model.train()
        minutes = minutes_before + (time.time() - t0) / 60
        for g in opt.param_groups:
            g["lr"] = lr_at(step, args.lr, args.warmup, args.steps,
                            minutes / args.time_limit_min)
        loss = batch_loss(model, train, idx, 0.1, device)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        bar.update(1)
        if step % 50 == 0:
            bar.set_postfix(loss=f"{loss.item():.3f}", epoch=meta["epoch"])
        minutes = minutes_before + (time.time() - t0) / 60
        out_of_time = minutes > args.time_limit_min
        paused = args.stop_after > 0 and step - first_step >= args.stop_after
        if step % args.eval_every == 0 or step == args.steps or out_of_time or paused:
            record = {"step": step, **validate(model, valid, valid_pairs, tgt_vocab, device),
                      "minutes": round(minutes, 1)}
            meta["history"].append(record)
            tqdm.write(str(record), file=sys.stdout)
            meta.update(step=step, minutes=minutes)
            if record["valid_bleu"] >= meta["best_bleu"]:
                meta["best_bleu"] = record["valid_bleu"]
                meta["best_step"] = step
                write_folder(args, model, src_tok, tgt_vocab, meta, command, len(train),
                             len(valid))
            save_state(state_dir, model, opt, meta)
        if out_of_time:
            tqdm.write(f"time limit of {args.time_limit_min} min reached at step {step}")
            break
        if paused:
            tqdm.write(f"stopped after {args.stop_after} steps; the same command resumes")
            return
    bar.close()
    print(f"best validation BLEU {meta['best_bleu']} at step {meta.get('best_step')}; "
          f"the model is in {args.out}")
    if args.recipe:
        evaluate_everyday(args.out, write_card=True)


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


def write_folder(args, model, src_tok, tgt_vocab, meta, command, n_train, n_valid) -> None:
    """Save the current weights as a pretrained folder with its card (no test metrics:
    those come from ``python -m model.training.evaluate``, which adds them)."""
    card = {
        "name": args.out.name,
        "task": args.recipe or "pairs",
        "description": f"trained on {args.pairs.name}",
        "command": command,
        "seed": args.seed,
        "data": {"train_file": str(args.pairs), "valid_file": str(args.valid or ""),
                 "n_train": n_train, "n_valid_used": n_valid},
        "config": asdict(model.config),
        "training": {
            "steps": meta["step"], "best_step": meta["step"], "max_tokens": args.max_tokens,
            "optimizer": "AdamW(0.9, 0.98, eps=1e-9, weight_decay=0.01), linear warm-up "
                         "then cosine decay", "lr": args.lr, "warmup": args.warmup,
            "planned_steps": args.steps, "label_smoothing": 0.1,
            "wall_time_minutes": round(meta["minutes"], 1), "threads": args.threads,
            "device": str(args.device), "hardware": hardware(args.device, args.threads),
            "torch": torch.__version__,
            "history": meta["history"],
        },
    }
    if args.recipe:
        card.update(RECIPES[args.recipe]["card"])
        manifest = ROOT / RECIPES[args.recipe]["train"]["data"] / "manifest.json"
        if manifest.exists():
            card["data"]["manifest"] = json.loads(manifest.read_text(encoding="utf-8"))
    model.eval()
    save_checkpoint(args.out, model, None, tgt_vocab, card, src_tokenizer=src_tok)
