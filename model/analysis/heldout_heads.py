"""What the Heads view shows over held-out sentences, computed once and kept in the model's
folder: per-head statistics (``headstats``), Michel et al.'s importance and the pruning
curve (``pruning``), over the first ``HELDOUT_SIZE`` held-out pairs; for our own models also
what the Attribution view shows over them: each cross-attention head's agreement with value
zeroing and with gradient x input (``agreement.head_agreement``).

    python -m model.analysis.heldout_heads pretrained/en-zh-everyday pretrained/en-zh

writes ``heads.npz`` beside the weights: plain arrays (``np.load(allow_pickle=False)``),
tied to the weights by their sha256, so a retrained model never shows another model's
figures. ``load`` returns None for a folder without the file, for stale or damaged files
(the caller computes live instead, as before).

Array names: ``stats/{kind}/{statistic}`` (L, H) float64 and ``stats/{kind}/rows``,
``stats/{kind}/sentences``; ``importance/{kind}`` (L, H) float64; ``curve/kinds`` (P0,) str,
``curve/heads`` (P0, 2) int64 (layer, head) in pruning order; ``curve/pruned`` (P,) int64,
``curve/bleu`` (P,) float64, ``curve/n_pairs``; ``agreement/{method}/rho`` and
``agreement/{method}/top1`` (L, H) float64 (methods ``AGREEMENT_METHODS``; absent for a
Hugging Face model and in older files); ``n`` the pairs asked for and ``sha256``.
"""

from __future__ import annotations

import argparse
import io
import json
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..core.checkpoint import WEIGHTS, sha256_file
from ..core.config import layer_counts
from ..core.heldout import HELDOUT_SIZE, sample_pairs
from .agreement import head_agreement
from .headstats import STATISTICS, HeadStats, head_stats_over, statistics_for
from .pruning import PruningCurve, importance, pruning_curve

HEADS_FILE = "heads.npz"
MAX_BYTES = 5_000_000  # a heads.npz larger than this is not read
AGREEMENT_METHODS = ("value_zeroing", "input_x_gradient")  # compared with each head


@dataclass(frozen=True, eq=False)
class HeldoutHeads:
    """The Heads view's held-out figures of one model.

    Attributes:
        stats: kind -> ``HeadStats`` pooled over the pairs' greedy decodings.
        importance: kind -> (L, H) float64 head importance.
        curve: the pruning curve.
        n: the number of held-out pairs asked for.
        agreement: method (``AGREEMENT_METHODS``) -> (rho, top1), each (L, H) float64: every
            cross-attention head's Spearman rho with the method's map, and the share of steps
            whose top source token is the method's, pooled over the pairs' steps; None for a
            Hugging Face model (or a file written before).
    """

    stats: dict[str, HeadStats]
    importance: dict[str, np.ndarray]
    curve: PruningCurve
    n: int
    agreement: dict[str, tuple[np.ndarray, np.ndarray]] | None = None


def compute(translator, n: int = HELDOUT_SIZE, progress=None) -> HeldoutHeads | None:
    """The figures over the model's first ``n`` held-out pairs (``heldout.sample_pairs``),
    or None when it has none. ``progress(stage, i, m)`` is called as each stage moves
    (``"heads"``, ``"importance"``, ``"pruning"``)."""
    pairs = sample_pairs(translator, n)
    if not pairs:
        return None

    def report(stage):
        return None if progress is None else (lambda i, m: progress(stage, i, m))

    traces = [translator.generate(src) for src, _ in pairs]
    stats = head_stats_over(traces, eos=translator.info.eos_token,
                            progress=report("heads"))
    imp = importance(translator, pairs, report("importance"))
    curve = pruning_curve(translator, pairs, imp, progress=report("pruning"))
    two_stacks = translator.info.architecture == "encoder-decoder"  # cross-attention to agree
    agreement = (heldout_agreement(translator.model, traces, report("agreement"))
                 if translator.info.backend == "ours" and two_stacks else None)
    return HeldoutHeads(stats, imp, curve, n, agreement)


def heldout_agreement(model, traces, progress=None) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Every cross-attention head's agreement (``agreement.head_agreement``) with value
    zeroing of its layer and with gradient x input, over ``traces`` (our model's decodings):
    each sentence's (L, H) rho and top-1 share weighted by its steps. ``progress(i, m)``
    after each sentence."""
    import torch

    from .attribution import attribute
    from .value_zeroing import value_zeroing

    sums = {m: [0.0, 0.0] for m in AGREEMENT_METHODS}
    weight = 0
    for i, trace in enumerate(traces):
        src, tgt = torch.as_tensor(trace.src_ids), torch.as_tensor(trace.tgt_ids)
        maps = {"value_zeroing": value_zeroing(model, src, tgt[:-1]).normalised()[0],
                "input_x_gradient": attribute(model, src, tgt, "input_x_gradient")
                .normalised()[0]}
        T = trace.cross_attentions.shape[2]
        for method, attribution in maps.items():
            rho, top1 = head_agreement(trace.cross_attentions, attribution)
            sums[method][0] = sums[method][0] + T * np.nan_to_num(rho)
            sums[method][1] = sums[method][1] + T * top1
        weight += T
        if progress is not None:
            progress(i + 1, len(traces))
    return {m: (np.asarray(r) / weight, np.asarray(p) / weight) for m, (r, p) in sums.items()}


def save(folder: Path, heads: HeldoutHeads) -> Path:
    """Write ``heads`` as ``folder/heads.npz``, tied to the folder's weights' sha256."""
    arrays: dict[str, np.ndarray] = {"n": np.array(heads.n),
                                     "sha256": np.array(sha256_file(Path(folder) / WEIGHTS))}
    for kind, s in heads.stats.items():
        arrays[f"stats/{kind}/rows"] = np.array(s.rows)
        arrays[f"stats/{kind}/sentences"] = np.array(s.sentences)
        arrays.update({f"stats/{kind}/{name}": np.asarray(v) for name, v in s.values.items()})
    arrays.update({f"importance/{kind}": np.asarray(v) for kind, v in heads.importance.items()})
    c = heads.curve
    arrays["curve/kinds"] = np.array([k for k, _, _ in c.order], dtype=str)
    arrays["curve/heads"] = np.array([(la, h) for _, la, h in c.order],
                                     dtype=np.int64).reshape(-1, 2)
    arrays["curve/pruned"] = np.asarray(c.pruned, dtype=np.int64)
    arrays["curve/bleu"] = np.asarray(c.bleu, dtype=np.float64)
    arrays["curve/n_pairs"] = np.array(c.n_pairs)
    for method, (rho, top1) in (heads.agreement or {}).items():
        arrays[f"agreement/{method}/rho"] = np.asarray(rho, dtype=np.float64)
        arrays[f"agreement/{method}/top1"] = np.asarray(top1, dtype=np.float64)
    path = Path(folder) / HEADS_FILE
    np.savez(path, **arrays)
    return path


def _read(path: Path) -> dict[str, np.ndarray]:
    data = path.read_bytes()
    if len(data) > MAX_BYTES:
        raise ValueError(f"{HEADS_FILE} is larger than {MAX_BYTES:,} bytes")
    with np.load(io.BytesIO(data), allow_pickle=False) as npz:
        return {name: npz[name] for name in npz.files}


def load(folder: Path, translator, n: int = HELDOUT_SIZE) -> HeldoutHeads | None:
    """``folder/heads.npz`` when it holds the figures of exactly these weights over ``n``
    pairs with the model's shapes, else None (no file, stale, or damaged: never an error,
    the caller computes them live).

    Raises:
        nothing: a damaged file reads as None.
    """
    path = Path(folder) / HEADS_FILE
    if not path.is_file():
        return None
    try:
        a = _read(path)
        if int(a["n"]) != n or str(a["sha256"]) != sha256_file(Path(folder) / WEIGHTS):
            return None
        counts = layer_counts(translator.config)
        architecture = translator.info.architecture
        stats, imp = {}, {}
        for kind in (k for k in STATISTICS if counts[k]):  # a one stack's: "decoder" only
            names = statistics_for(kind, architecture)
            shape = (counts[kind], translator.config.nhead)
            values = {name: a[f"stats/{kind}/{name}"].astype(np.float64) for name in names}
            if any(v.shape != shape or not np.all(np.isfinite(v)) for v in values.values()):
                return None
            for v in values.values():
                v.setflags(write=False)
            stats[kind] = HeadStats(kind, int(a[f"stats/{kind}/rows"]),
                                    int(a[f"stats/{kind}/sentences"]), values)
            imp[kind] = a[f"importance/{kind}"].astype(np.float64)
            imp[kind].setflags(write=False)
            if imp[kind].shape != shape:
                return None
        kinds, heads = a["curve/kinds"], a["curve/heads"]
        order = tuple((str(k), int(la), int(h)) for k, (la, h) in zip(kinds, heads, strict=True))
        nhead = translator.config.nhead
        if any(k not in counts or not (0 <= la < counts[k] and 0 <= h < nhead)
               for k, la, h in order):
            return None
        curve = PruningCurve(order, a["curve/pruned"].astype(np.int64),
                             a["curve/bleu"].astype(np.float64), int(a["curve/n_pairs"]))
        if curve.pruned.shape != curve.bleu.shape:
            return None
        agreement = None
        if all(f"agreement/{m}/rho" in a for m in AGREEMENT_METHODS):
            shape = (counts["cross"], nhead)
            agreement = {m: (a[f"agreement/{m}/rho"].astype(np.float64),
                             a[f"agreement/{m}/top1"].astype(np.float64))
                         for m in AGREEMENT_METHODS}
            if any(x.shape != shape for pair in agreement.values() for x in pair):
                return None
        return HeldoutHeads(stats, imp, curve, n, agreement)
    except (KeyError, ValueError, TypeError, OSError, EOFError, zipfile.BadZipFile):
        return None


def main(argv: list[str] | None = None) -> None:
    """``python -m model.analysis.heldout_heads FOLDER [FOLDER ...]``: compute and save."""
    import time

    import torch

    from ..backends.load import load_pretrained

    ap = argparse.ArgumentParser(description="Compute the Heads view's held-out figures once "
                                 "and keep them in each model folder.")
    ap.add_argument("folders", type=Path, nargs="+")
    ap.add_argument("--n", type=int, default=HELDOUT_SIZE)
    args = ap.parse_args(argv)
    torch.set_num_threads(2)
    for folder in args.folders:
        t0 = time.time()
        heads = compute(load_pretrained(folder), args.n)
        if heads is None:
            print(f"{folder}: no held-out pairs, nothing written")
            continue
        path = save(folder, heads)
        print(json.dumps({"folder": str(folder), "file": str(path),
                          "seconds": round(time.time() - t0, 1)}))


if __name__ == "__main__":
    main()
