"""Our step-through of a Hugging Face model against Hugging Face's own ``generate()``.

    .venv/bin/python -m benchmarks.hf_step              # prints the figures (about 20 s)
    .venv/bin/python -m benchmarks.hf_step --repeat 9   # more repeats

Builds a random-weight Marian model the size of Helsinki-NLP/opus-mt-en-zh (d_model 512,
6 + 6 layers, 8 heads, feed-forward 2048, a shared vocabulary of 65,001 pieces, about 78 M
parameters; eager attention, the only implementation that returns attention weights) and
translates one fixed 20-token source into exactly 20 new tokens, greedily, ``</s>`` banned
so that every run does the same work. It times, per decoding step (one call's time / 20,
encoder included), with one torch thread (as the app runs) and with two:

* ours: ``greedy_decode`` on ``HFSeq2Seq``, the app's step-through: a key/value cache, every
  layer's and head's decoder self-attention and cross-attention row, the full next-token
  distribution and the top-10 candidates recorded at every step;
* ``generate(..., output_attentions=True, output_scores=True, return_dict_in_generate=True)``:
  Hugging Face's greedy search returning the same maps;
* ``generate()`` returning only the token ids: the floor;

and the encoder pass alone. All under ``torch.inference_mode()``; median of ``--repeat``
runs after one warm-up, the variants taking turns. It checks that ours and ``generate()``
choose the same tokens and attend alike. Figures only: nothing here asserts a timing.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run as a script from anywhere

from model.backends.hf import HFSeq2Seq  # noqa: E402
from model.backends.hf_load import _our_config  # noqa: E402
from model.decoding import DecodeTrace, GenerationSettings, greedy_decode  # noqa: E402

# Helsinki-NLP/opus-mt-en-zh's config: vocab 65,001, pad = decoder start = 65000, eos = 0, giving
# its 77.9 M parameters (58,101, MarianConfig's default, is another opus-mt pair's: 74.4 M).
VOCAB = 65_001
EOS = 0
NEW_TOKENS = 20  # N: tokens each decoding produces
SOURCE = [812, 17, 4096, 233, 9, 30517, 1204, 77, 58, 2310, 641, 12903, 5, 388, 44444, 2718,
          91, 6002, 3, EOS]  # 20 fixed source ids, ending with </s>
THREADS = (1, 2)
NOISE = 0.05  # "not slower": ours / generate() at most 1 + NOISE at every thread count


def build_model():
    """A random-weight ``MarianMTModel`` shaped like opus-mt-en-zh, eval mode, eager attention
    (``torch.manual_seed(0)``)."""
    from transformers import MarianConfig, MarianMTModel

    config = MarianConfig(
        vocab_size=VOCAB, decoder_vocab_size=VOCAB, d_model=512, encoder_layers=6,
        decoder_layers=6, encoder_attention_heads=8, decoder_attention_heads=8,
        encoder_ffn_dim=2048, decoder_ffn_dim=2048, max_position_embeddings=512,
        activation_function="swish", scale_embedding=True, pad_token_id=VOCAB - 1,
        decoder_start_token_id=VOCAB - 1, eos_token_id=EOS, bos_token_id=EOS,
        forced_eos_token_id=None, attn_implementation="eager")
    torch.manual_seed(0)
    hf = MarianMTModel(config).eval()
    assert hf.config._attn_implementation == "eager", hf.config._attn_implementation
    return hf


def ban_eos(t: int, logp: torch.Tensor, input_ids: torch.Tensor) -> torch.Tensor:
    """Our logits processor: ``</s>`` impossible, as ``generate(min_new_tokens=N)`` does."""
    logp = logp.clone()
    logp[:, EOS] = -float("inf")
    return logp


def timed_ms(fn: Callable[[], object]) -> float:
    """Milliseconds one call of ``fn`` takes."""
    t = time.perf_counter()
    fn()
    return (time.perf_counter() - t) * 1000


def variants(hf, ours: HFSeq2Seq, src: torch.Tensor) -> dict[str, Callable[[], object]]:
    """The calls to time, by name: the three decodings and the encoder pass alone."""
    mask = torch.ones_like(src)
    itos = [f"<{i}>" for i in range(VOCAB)]  # the app passes its tokenizer's table
    common = {"attention_mask": mask, "do_sample": False, "num_beams": 1,
              "min_new_tokens": NEW_TOKENS, "max_new_tokens": NEW_TOKENS}
    return {
        "ours": lambda: greedy_decode(ours, src, GenerationSettings(max_new_tokens=NEW_TOKENS),
                                      [ban_eos], tgt_itos=itos),
        "generate": lambda: hf.generate(src, output_attentions=True, output_scores=True,
                                        return_dict_in_generate=True, **common),
        "floor": lambda: hf.generate(src, **common),
        "encoder": lambda: ours.encode(src),
    }


def check_same(trace: DecodeTrace, gen) -> tuple[bool, float]:
    """Whether ours and ``generate()`` chose the same ids, and the largest difference between
    their decoder self-attention and cross-attention weights (every layer, head, step)."""
    same = trace.tgt_ids.tolist() == gen.sequences[0].tolist()
    diff = 0.0
    for t, (self_layers, cross_layers) in enumerate(zip(gen.decoder_attentions,
                                                        gen.cross_attentions, strict=True)):
        for layer, (sa, ca) in enumerate(zip(self_layers, cross_layers, strict=True)):
            ours_sa = torch.from_numpy(trace.decoder_attentions[layer, :, t, : t + 1])
            ours_ca = torch.from_numpy(trace.cross_attentions[layer, :, t])
            diff = max(diff, float((ours_sa - sa[0, :, -1]).abs().max()),
                       float((ours_ca - ca[0, :, -1]).abs().max()))
    return same, diff


def measure(calls: dict[str, Callable[[], object]], repeat: int) -> dict[str, float]:
    """Median ms of each call: one warm-up each, then ``repeat`` rounds taking turns."""
    for fn in calls.values():
        fn()
    times: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(repeat):
        for name, fn in calls.items():
            times[name].append(timed_ms(fn))
    return {name: statistics.median(ms) for name, ms in times.items()}


def cpu_name() -> str:
    """The CPU's model name (``/proc/cpuinfo``), or what ``platform`` knows."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def table(results: dict[int, dict[str, float]]) -> str:
    """The figures as a Markdown table: ms per step at each thread count, and ratios."""
    head = " | ".join(f"{n} thread{'s' * (n > 1)}" for n in results)
    ratio = " | ".join(f"ours / this, {n}t" for n in results)
    rows = [f"| ms per decoding step (call / {NEW_TOKENS}) | {head} | {ratio} |",
            "|---|" + "---:|" * (2 * len(results))]
    labels = {"ours": "ours: `greedy_decode` on `HFSeq2Seq` (all maps, full distributions)",
              "generate": "`generate()` with attentions and scores",
              "floor": "`generate()`, token ids only (the floor)"}
    for key, label in labels.items():
        ms = " | ".join(f"{r[key] / NEW_TOKENS:.2f}" for r in results.values())
        ratios = " | ".join(f"{r['ours'] / r[key]:.2f}" for r in results.values())
        rows.append(f"| {label} | {ms} | {ratios} |")
    enc = " | ".join(f"{r['encoder']:.2f} (whole pass)" for r in results.values())
    rows.append(f"| encoder pass alone, {len(SOURCE)} tokens | {enc} |"
                + " |" * len(results))
    return "\n".join(rows)


def main() -> None:
    """Build the model, check ours against ``generate()``, time both, print the figures."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=5, help="timed runs per figure (median)")
    args = ap.parse_args()

    t0 = time.perf_counter()
    hf = build_model()
    n_params = sum(p.numel() for p in hf.parameters())
    n_bytes = sum(p.numel() * p.element_size() for p in hf.parameters())
    print(f"model: random-weight MarianMTModel (opus-mt-en-zh shape), {n_params / 1e6:.1f} M "
          f"parameters, {n_bytes / 1e6:.0f} MB of fp32 weights, "
          f"attention {hf.config._attn_implementation}; built in "
          f"{time.perf_counter() - t0:.1f} s")
    ours = HFSeq2Seq(hf, _our_config(hf.config, VOCAB))
    src = torch.tensor([SOURCE])
    calls = variants(hf, ours, src)

    results: dict[int, dict[str, float]] = {}
    with torch.inference_mode():
        torch.set_num_threads(THREADS[0])
        trace, gen = calls["ours"](), calls["generate"]()
        assert gen.cross_attentions and gen.decoder_attentions, "generate() gave no attentions"
        same, diff = check_same(trace, gen)
        print(f"same token ids, ours and generate(): {'yes' if same else 'NO'} "
              f"({len(trace.steps)} and {gen.sequences.size(1) - 1} new tokens; ours "
              f"{trace.tgt_ids[1:8].tolist()} ...); largest attention difference {diff:.1e}")
        for n in THREADS:
            torch.set_num_threads(n)
            results[n] = measure(calls, args.repeat)

    print(f"\nmedian of {args.repeat} after 1 warm-up; source {len(SOURCE)} tokens, "
          f"{NEW_TOKENS} new tokens, greedy, </s> banned\n")
    print(table(results))
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    print(f"\npeak RSS of the process: {rss:.0f} MiB")
    print(f"machine: {cpu_name()}, {os.cpu_count()} cores; Python {platform.python_version()}, "
          f"torch {torch.__version__}, transformers {__import__('transformers').__version__}; "
          f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}; "
          f"whole run {time.perf_counter() - t0:.0f} s")
    worst = max(r["ours"] / r["generate"] for r in results.values())
    verdict = "yes" if worst <= 1 + NOISE else "no"
    print(f"ours is not slower: {verdict} (ours / generate() at most {worst:.2f} over "
          f"{', '.join(map(str, THREADS))} threads; allowance {NOISE:.0%})")


if __name__ == "__main__":
    main()
