"""The one training loop, used by both paths of ``python -m model.training.train`` (the
grammar task and any parallel text / a recipe), and what it is made of: the loss
(label-smoothed cross-entropy), the two learning-rate schedules, the two batch plans, the
resumable training state and the validation hook.

An encoded pair is (source ids ending with ``</s>``, ``<s>`` + target ids + ``</s>``); a
batch is a list of indices into the encoded pairs, padded by ``decoding.pad_rows`` (the one
padding helper). Shape letters: B batch, S source length, T decoder inputs, V target
vocabulary size.
"""

from __future__ import annotations

import json
import math
import random
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file
from tqdm import tqdm

from ..core.transformer import Transformer
from ..decoding import pad_rows

Pair = tuple[list[int], list[int]]  # (source ids + </s>, <s> + target ids + </s>)


def label_smoothed_cross_entropy(logits: torch.Tensor, targets: torch.Tensor, pad_id: int,
                                 smoothing: float) -> torch.Tensor:
    """Cross-entropy against label-smoothed targets, averaged over the non-padding tokens
    (nats per token): Szegedy et al. 2016 ("Rethinking the Inception Architecture",
    section 7), as the Transformer paper trains (Vaswani et al. 2017, section 5.4,
    epsilon_ls = 0.1). Each target y becomes the distribution
    q = (1 - smoothing) * onehot(y) + smoothing / V, so per token

        loss = (1 - smoothing) * -log p(y) + smoothing * mean_v -log p(v),

    equal to ``F.cross_entropy(logits, targets, ignore_index=pad_id,
    label_smoothing=smoothing)``.

    Args:
        logits: (..., V) float, unnormalised scores (``TransformerOutput.logits``: (B, T, V)).
        targets: (...) int64, the reference ids (B, T); positions equal to ``pad_id`` are left
            out of the mean.
        pad_id: the padding id.
        smoothing: epsilon in [0, 1]; 0 is the plain negative log-likelihood.

    Returns:
        () float tensor, nats per token (NaN if every target is ``pad_id``).

    Raises:
        ValueError: ``targets``' shape is not ``logits``' without its last axis, or
            ``smoothing`` outside [0, 1].
    """
    if tuple(logits.shape[:-1]) != tuple(targets.shape):
        raise ValueError(f"logits {tuple(logits.shape)} do not fit targets "
                         f"{tuple(targets.shape)}: want (..., V) and (...)")
    if not 0.0 <= smoothing <= 1.0:
        raise ValueError(f"smoothing must be in [0, 1], got {smoothing!r}")
    logp = logits.reshape(-1, logits.size(-1)).log_softmax(-1)  # (N, V)
    y = targets.reshape(-1)  # (N,)
    nll = -logp.gather(1, y[:, None])[:, 0]  # (N,)
    per_token = (1.0 - smoothing) * nll - smoothing * logp.mean(-1)  # (N,)
    return per_token[y != pad_id].mean()


def batch_loss(model: Transformer, data: Sequence[Pair], idx: Sequence[int], smoothing: float,
               *, device: torch.device | str = "cpu") -> torch.Tensor:
    """Teacher-forced loss of the encoded pairs ``data[i]`` for i in ``idx``: the sources
    padded to (B, S), the targets to (B, T + 1) with ``pad_rows``; the decoder reads
    ``tgt[:, :-1]`` (B, T) and is scored on ``tgt[:, 1:]`` (B, T) with
    ``label_smoothed_cross_entropy`` (nats per token, padding left out).

    Raises:
        ValueError: ``idx`` is empty; ``smoothing`` outside [0, 1].
    """
    pad_id = model.config.pad_id
    src = pad_rows([data[i][0] for i in idx], pad_id).to(device)  # (B, S)
    tgt = pad_rows([data[i][1] for i in idx], pad_id).to(device)  # (B, T + 1)
    logits = model(src, tgt[:, :-1]).logits  # (B, T, V); bf16 under autocast
    return label_smoothed_cross_entropy(logits.float(), tgt[:, 1:], pad_id, smoothing)


def prefix_lm_loss(model, data: Sequence[Pair], idx: Sequence[int], smoothing: float,
                   *, device: torch.device | str = "cpu") -> torch.Tensor:
    """Teacher-forced loss of a decoder-only prefix language model (``core.prefix_lm``;
    Liu et al. 2018, section 4.2) on the encoded pairs ``data[i]`` = (prompt ids
    ``<s> English <sep>``, continuation ids ``Chinese </s>``) for i in ``idx``.

    Each row is prompt + continuation, right-padded to (B, N) by ``pad_rows``, with
    ``key_padding_mask`` (B, N) True on the padding. Position j's logits predict token
    j + 1; only continuation tokens are scored (the Chinese ids and the closing ``</s>``):
    the targets (B, N - 1) are ``ids[:, 1:]`` with every prompt token set to ``<pad>``, so
    ``label_smoothed_cross_entropy`` leaves them and the padding out of its mean (nats per
    scored token). Only the last K = N - (the shortest prompt) positions, where the first
    scored target can be, are projected to the vocabulary (``logits_to_keep``).

    Raises:
        ValueError: ``idx`` is empty; ``smoothing`` outside [0, 1].
    """
    pad_id = model.config.pad_id
    rows = [data[i][0] + data[i][1] for i in idx]
    ids = pad_rows(rows, pad_id).to(device)  # (B, N)
    prompt = pad_rows([[1] * len(data[i][0]) + [0] * len(data[i][1]) for i in idx],
                      0).to(device).bool()  # (B, N) True on the prompt
    targets = ids.masked_fill(prompt, pad_id)[:, 1:]  # (B, N - 1): prompt and padding = pad
    keep = ids.size(1) - min(len(data[i][0]) for i in idx)  # K: from the first scored target
    logits = model(ids[:, :-1], ids[:, :-1] == pad_id, logits_to_keep=keep).logits  # (B, K, V)
    return label_smoothed_cross_entropy(logits.float(), targets[:, -keep:], pad_id, smoothing)


def valid_loss(model: Transformer, data: Sequence[Pair], chunk: int = 100,
               device: torch.device | str = "cpu", *,
               loss: Callable[..., torch.Tensor] | None = None) -> float:
    """Validation loss: the mean over chunks of ``chunk`` pairs of ``loss`` (``batch_loss``
    when None; ``prefix_lm_loss`` for a decoder-only model) without smoothing (nats per
    token), in eval mode and without gradients.

    Raises:
        ValueError: no pairs.
    """
    if not data:
        raise ValueError("valid_loss needs at least one pair.")
    model.eval()
    idx = list(range(len(data)))
    parts = [idx[i : i + chunk] for i in range(0, len(idx), chunk)]
    with torch.inference_mode():
        losses = [(loss or batch_loss)(model, data, p, 0.0, device=device).item()
                  for p in parts]
    return sum(losses) / len(parts)


def noam_lr(step: int, d_model: int, warmup: int, factor: float = 1.0) -> float:
    """The Transformer paper's schedule (Vaswani et al. 2017, section 5.3, equation 3):
    lrate = factor * d_model^-0.5 * min(step^-0.5, step * warmup^-1.5): a linear rise over
    ``warmup`` steps, then decay with the inverse square root of the step. Step 0 counts as
    step 1."""
    step = max(step, 1)
    return factor * d_model**-0.5 * min(step**-0.5, step * warmup**-1.5)


def cosine_lr(step: int, peak: float, warmup: int, total: int, *, time_used: float = 0.0
              ) -> float:
    """Linear warm-up to ``peak`` over ``warmup`` steps, then cosine decay to 0 at the end
    of the budget (Loshchilov and Hutter 2017, SGDR, without restarts):
    peak * (1 + cos(pi * progress)) / 2, where progress is the larger of the fraction of
    the ``total - warmup`` decay steps done and ``time_used``, the fraction of the time
    limit spent (0 to 1), so a slower machine still ends its schedule."""
    if step <= warmup:
        return peak * step / max(warmup, 1)
    progress = min(1.0, max((step - warmup) / max(total - warmup, 1), time_used))
    return peak * 0.5 * (1.0 + math.cos(math.pi * progress))


def length_batches(data: Sequence[Pair], batch_size: int, seed: int) -> list[list[int]]:
    """One epoch of ``batch_size``-pair batches (the last of a chunk may be smaller):
    shuffled, sorted by target length within chunks of 50 batches so that little padding
    is wasted, then the batches shuffled. The same ``seed`` gives the same batches."""
    rng = random.Random(seed)
    order = list(range(len(data)))
    rng.shuffle(order)
    chunk = batch_size * 50
    batches: list[list[int]] = []
    for c in range(0, len(order), chunk):
        part = sorted(order[c : c + chunk], key=lambda i: len(data[i][1]))
        group = [part[i : i + batch_size] for i in range(0, len(part), batch_size)]
        rng.shuffle(group)
        batches += group
    return batches


def token_batches(data: Sequence[Pair], max_tokens: int, seed: int, *, joined: bool = False
                  ) -> list[list[int]]:
    """One epoch of batches: shuffled, sorted by length within chunks, each batch holding
    at most ``max_tokens`` (rows x longest side) tokens (a longer pair alone), then the
    batches shuffled. The same ``seed`` gives the same batches. ``joined``: a pair is one
    row of both sides' length (a prefix language model's prompt + continuation,
    ``prefix_lm_loss``), so a batch holds at most ``max_tokens`` rows x longest row."""
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
            a, b = len(data[i][0]), len(data[i][1])
            n = a + b if joined else max(a, b)
            if batch and max(longest, n) * (len(batch) + 1) > max_tokens:
                batches.append(batch)
                batch, longest = [], 0
            batch.append(i)
            longest = max(longest, n)
        if batch:
            batches.append(batch)
    rng.shuffle(batches)
    return batches


def save_state(folder: Path, model: Transformer, opt: torch.optim.Optimizer, meta: dict
               ) -> None:
    """Write the resumable training state into ``folder``: the weights and the Adam /
    AdamW moments (``exp_avg``, ``exp_avg_sq``) with torch's random state as safetensors,
    and ``meta`` (step, epoch, position in the epoch, history, the optimiser's step counts)
    as ``state.json``. No pickle; the weights file is replaced atomically."""
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


def load_state(folder: Path, model: Transformer, opt: torch.optim.Optimizer,
               device: torch.device | str = "cpu") -> dict:
    """Restore what ``save_state`` wrote into ``model``, ``opt`` and torch's random state;
    returns its ``meta``.

    Raises:
        FileNotFoundError: a state file is missing; KeyError / RuntimeError: it does not
        fit the model.
    """
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


@dataclass(frozen=True)
class LoopSettings:
    """How long and how the loop trains.

    Attributes:
        steps: the planned optimiser steps.
        eval_every: validate every this many steps (and at the last step).
        time_limit_min: wall-clock minutes (of this run and those before it, when resumed)
            after which training validates and stops.
        metric: the validation record's key whose highest value marks the best weights
            (``valid_bleu``, ``valid_exact_match``).
        label_smoothing: epsilon of the training loss (paper section 5.4: 0.1).
        stop_after: stop, resumably, after this many steps of this run (0 = off).
        clip_norm: the gradients' global L2 norm is clipped to this.
        autocast: ``"bf16"`` runs each training step's forward pass under
            ``torch.autocast`` in bfloat16 (matrix products in bf16, weights, optimiser and
            loss in float32; 1.8x faster on CPUs with AMX, slower on CPUs without bf16
            support); ``"none"``: float32 throughout. Validation is always float32.
    """

    steps: int
    eval_every: int
    time_limit_min: float
    metric: str
    label_smoothing: float = 0.1
    stop_after: int = 0
    clip_norm: float = 1.0
    autocast: str = "none"

    def __post_init__(self) -> None:
        if self.autocast not in ("none", "bf16"):
            raise ValueError(f"autocast must be 'none' or 'bf16', got {self.autocast!r}")


def _start(model: Transformer, opt: torch.optim.Optimizer, device: torch.device | str,
           state_dir: Path | None) -> dict:
    """The loop's ``meta`` at its start: a fresh one, or the state saved in ``state_dir``
    (``load_state``, which also restores the weights, optimiser and random numbers)."""
    meta = {"step": 0, "epoch": 0, "position": 0, "history": [], "best": -1.0,
            "minutes": 0.0}
    if state_dir is not None and (state_dir / "state.json").exists():
        meta = load_state(state_dir, model, opt, device)
        meta.setdefault("best", meta.pop("best_bleu", -1.0))  # a state written before
        print(f"resumed from step {meta['step']} ({state_dir})")
    meta["paused"] = False
    return meta


def _catch_stop_signals(interrupted: list[int]) -> dict:
    """Make SIGTERM and Ctrl-C (SIGINT) append their number to ``interrupted`` instead of
    stopping the process (from the main thread only; elsewhere nothing changes). Returns
    the handlers replaced, for ``signal.signal`` to put back."""
    if threading.current_thread() is not threading.main_thread():
        return {}
    return {sig: signal.signal(sig, lambda signum, frame: interrupted.append(signum))
            for sig in (signal.SIGTERM, signal.SIGINT)}


def _restore_signals(previous: dict) -> None:
    """Put back the handlers ``_catch_stop_signals`` replaced."""
    for sig, handler in previous.items():
        signal.signal(sig, handler)


def _optimiser_step(model: Transformer, opt: torch.optim.Optimizer, data: Sequence[Pair],
                    idx: Sequence[int], *, settings: LoopSettings,
                    device: torch.device | str,
                    loss_fn: Callable[..., torch.Tensor] | None = None) -> torch.Tensor:
    """One training step on the batch ``idx``: ``loss_fn`` (``batch_loss`` when None; under
    bf16 autocast when ``settings.autocast`` says so), backward, global-norm clipping,
    ``opt.step()``. Returns the loss (a scalar tensor)."""
    model.train()
    with torch.autocast(torch.device(device).type, dtype=torch.bfloat16,
                        enabled=settings.autocast == "bf16"):
        loss = (loss_fn or batch_loss)(model, data, idx, settings.label_smoothing,
                                       device=device)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), settings.clip_norm)
    opt.step()
    return loss


def _next_batch(meta: dict, batches: list[list[int]],
                epoch_batches: Callable[[int], list[list[int]]]
                ) -> tuple[list[int], list[list[int]]]:
    """The next batch of the epoch at ``meta``'s ``position`` (both advanced in ``meta``; a
    new epoch's ``epoch_batches`` when this one has run out) and the epoch's batches."""
    if meta["position"] >= len(batches):
        meta["epoch"] += 1
        meta["position"] = 0
        batches = epoch_batches(meta["epoch"])
    meta["position"] += 1
    return batches[meta["position"] - 1], batches


def _record(model: Transformer, meta: dict, step: int, minutes: float, *,
            validate: Callable[[Transformer], dict],
            on_best: Callable[[Transformer, dict], None], metric: str) -> None:
    """Validate at ``step``: append {"step", the metrics, "minutes"} to ``meta``'s history
    and call ``on_best`` when ``metric`` is at least as high as the best before."""
    record = {"step": step, **validate(model), "minutes": round(minutes, 1)}
    meta["history"].append(record)
    tqdm.write(str(record), file=sys.stdout)
    meta.update(step=step, minutes=minutes)
    if record[metric] >= meta["best"]:
        meta.update(best=record[metric], best_step=step)
        on_best(model, meta)


def _say_stopped(meta: dict, step: int, *, out_of_time: bool, limit: float) -> None:
    """Say why the loop stops at ``step``: the time limit (``limit`` minutes), else a pause
    (``meta["paused"]`` set: the same command resumes)."""
    if out_of_time:
        tqdm.write(f"time limit of {limit} min reached at step {step}")
    else:
        tqdm.write(f"stopped at step {step}; the same command resumes")
        meta["paused"] = True


def train_loop(model: Transformer, opt: torch.optim.Optimizer, data: Sequence[Pair],
               settings: LoopSettings, *,
               epoch_batches: Callable[[int], list[list[int]]],
               lr: Callable[[int, float], float], validate: Callable[[Transformer], dict],
               on_best: Callable[[Transformer, dict], None],
               device: torch.device | str = "cpu", state_dir: Path | None = None,
               loss_fn: Callable[..., torch.Tensor] | None = None) -> dict:
    """Train ``model`` on the encoded pairs ``data``: the one loop of both training paths.

    Each step takes the next batch (``epoch_batches(epoch)``: lists of indices into
    ``data``), sets the learning rate to ``lr(step, fraction of the time limit used)`` and
    takes an ``_optimiser_step`` with ``loss_fn`` (``batch_loss`` when None,
    ``prefix_lm_loss`` for a prefix LM). Every ``eval_every`` steps, at the last step,
    when out of time or pausing it validates (``_record``: ``validate(model)``, a dict with
    ``settings.metric``; ``on_best(model, meta)`` at a best) and with a ``state_dir`` saves
    the training state there (``save_state``); a state found there is resumed first
    (``load_state``): the same command continues with the same batches and random numbers.
    SIGTERM or Ctrl-C (SIGINT) pauses like ``stop_after`` (main thread only).

    Returns:
        meta: ``step`` (the last), ``epoch``, ``position``, ``history`` (validation records),
        ``best``, ``best_step``, ``minutes`` (all runs), ``paused`` (by ``stop_after``).

    Raises:
        KeyError: the validation record has no ``settings.metric``.
    """
    meta = _start(model, opt, device, state_dir)
    interrupted: list[int] = []  # SIGTERM or Ctrl-C: finish the step, save, stop
    previous = _catch_stop_signals(interrupted)
    minutes_before, t0 = meta["minutes"], time.time()
    bar = tqdm(total=settings.steps, initial=meta["step"], desc="train", mininterval=10,
               file=sys.stdout)
    batches = epoch_batches(meta["epoch"])
    step = first_step = meta["step"]
    while step < settings.steps:
        idx, batches = _next_batch(meta, batches, epoch_batches)
        step += 1
        minutes = minutes_before + (time.time() - t0) / 60
        for g in opt.param_groups:
            g["lr"] = lr(step, minutes / settings.time_limit_min)
        loss = _optimiser_step(model, opt, data, idx, settings=settings, device=device,
                               loss_fn=loss_fn)
        bar.update(1)
        if step % 50 == 0:
            bar.set_postfix(loss=f"{loss.item():.3f}", epoch=meta["epoch"])
        minutes = minutes_before + (time.time() - t0) / 60
        out_of_time = minutes > settings.time_limit_min
        paused = (settings.stop_after > 0 and step - first_step >= settings.stop_after
                  or bool(interrupted))
        if step % settings.eval_every == 0 or step == settings.steps or out_of_time or paused:
            _record(model, meta, step, minutes, validate=validate, on_best=on_best,
                    metric=settings.metric)
            if state_dir is not None:
                save_state(state_dir, model, opt, meta)
        if out_of_time or paused:
            _say_stopped(meta, step, out_of_time=out_of_time, limit=settings.time_limit_min)
            break
    bar.close()
    _restore_signals(previous)
    return meta
