"""Decoder-only Hugging Face models of published shapes, stepped through as the app does
(issue 55, "Speed and memory").

    .venv/bin/python -m benchmarks.causal_shapes                     # both (a few minutes)
    .venv/bin/python -m benchmarks.causal_shapes --only SmolLM2-135M --repeat 5

For each published configuration (``CONFIGS``: the hub repository's ``config.json`` values,
written here; the vocabulary keeps its real size, so the embedding and output layers do too)
it builds a random-weight ``AutoModelForCausalLM`` with a small byte-level tokenizer trained
offline (``testkit.hf_tiny_causal.train_tokenizer``), saves both in a temporary folder, and
then, in a fresh process:

* opens it with ``model.load_pretrained`` (the app's loader, eager attention): load time;
* steps through one fixed English prompt (the longest start of ``PROMPT`` of at most
  ``PROMPT_TOKENS`` ids) in the app's code path, ``translator.generate(prompt,
  max_new_tokens=20)``: greedy, the key/value cache, every layer's and head's attention row,
  the full distribution and top-10 at every step, the one (L, H, N, N) map of the trace;
* ``hf.generate(...)`` on the same ids, greedy, returning the attentions and scores
  (``output_attentions=True, output_scores=True``): ms per token;
* memory: the process's resident set after loading and its peak (``/proc/self/status``);
* value zeroing of that trace (``analysis.value_zeroing``, hooks on every layer's value
  projection), once: what the Attribution view computes before it draws.

A forward hook on the output layer (``only_known``) sets the logits of EOS and of every id
the small tokenizer does not have to -inf for both decodings, so each makes exactly 20 steps
over tokens it can print. One model is alive at a time (its own processes); medians of
``--repeat`` runs after one warm-up, one torch thread (as the app serves a session).
Figures only: nothing here asserts a timing.

Where the configurations come from (huggingface.co/<repo>/blob/main/config.json):
HuggingFaceTB/SmolLM2-135M (Llama: 30 layers, 9 query heads sharing 3 key/value heads, RoPE,
tied embeddings; Allal et al. 2025) and Qwen/Qwen2.5-0.5B (Qwen2: 24 layers, 14 query heads
sharing 2 key/value heads, biased q/k/v; Qwen team 2024).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run as a script from anywhere

NEW_TOKENS = 20  # steps each decoding makes
PROMPT_TOKENS = 20  # the prompt: the longest start of PROMPT that is at most this many ids
PROMPT = "My mother is a doctor, and she likes to read books at night in the small house."

# repo -> (model_type, the tiny tokenizer family of testkit/hf_tiny_causal.py, config values)
CONFIGS: dict[str, tuple[str, str, dict]] = {
    "HuggingFaceTB/SmolLM2-135M": ("llama", "llama", dict(
        vocab_size=49152, hidden_size=576, intermediate_size=1536, num_hidden_layers=30,
        num_attention_heads=9, num_key_value_heads=3, max_position_embeddings=8192,
        rms_norm_eps=1e-5, rope_theta=100000.0, tie_word_embeddings=True,
        hidden_act="silu")),
    "Qwen/Qwen2.5-0.5B": ("qwen2", "qwen2", dict(
        vocab_size=151936, hidden_size=896, intermediate_size=4864, num_hidden_layers=24,
        num_attention_heads=14, num_key_value_heads=2, max_position_embeddings=32768,
        rms_norm_eps=1e-6, rope_theta=1000000.0, tie_word_embeddings=True,
        hidden_act="silu")),
}


def build(repo: str, folder: Path) -> dict:
    """Build the random-weight model of ``repo``'s configuration with the small tokenizer's
    special ids, save both in ``folder``; the parameter count, fp32 MB and build seconds."""
    import torch
    from transformers import CONFIG_MAPPING, AutoModelForCausalLM, GenerationConfig

    from testkit.hf_tiny_causal import train_tokenizer

    t0 = time.perf_counter()
    model_type, family, values = CONFIGS[repo]
    tokenizer = train_tokenizer(family)
    eos = tokenizer.eos_token_id
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else eos
    config = CONFIG_MAPPING[model_type](**values, bos_token_id=tokenizer.bos_token_id,
                                        eos_token_id=eos, pad_token_id=pad)
    torch.manual_seed(0)
    hf = AutoModelForCausalLM.from_config(config).eval()
    hf.generation_config = GenerationConfig(bos_token_id=tokenizer.bos_token_id,
                                            eos_token_id=eos, pad_token_id=pad,
                                            do_sample=False, num_beams=1)
    folder.mkdir(parents=True, exist_ok=True)
    hf.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return {"parameters": sum(p.numel() for p in hf.parameters()),
            "weights_mb": (folder / "model.safetensors").stat().st_size / 2**20,
            "build_s": time.perf_counter() - t0, "tokenizer_ids": len(tokenizer)}


def only_known(hf, known: int, eos: int):
    """A forward hook on ``hf``'s output layer that sets the logits (B, T, V) of ``eos`` and
    of every id from ``known`` on to -inf, seen alike by our decoding and ``generate()``."""
    def hook(module, args, logits):
        logits = logits.clone()
        logits[..., known:] = float("-inf")
        logits[..., eos] = float("-inf")
        return logits

    return hf.get_output_embeddings().register_forward_hook(hook)


def measure(folder: Path, repeat: int) -> dict:
    """Open ``folder`` with ``load_pretrained`` and time our step-through against
    ``generate(output_attentions=True)``, one torch thread; the figures (ms, MiB, s)."""
    import torch

    from benchmarks.hf_shapes import _status_mib, median_ms
    from model import load_pretrained

    torch.set_num_threads(1)
    t0 = time.perf_counter()
    tr = load_pretrained(folder)
    load_s = time.perf_counter() - t0
    rss_loaded = _status_mib("VmRSS")
    hf = tr.model.hf
    words = PROMPT.split()
    text = next(" ".join(words[:n]) for n in range(len(words), 1, -1)
                if len(tr.source(" ".join(words[:n])).ids) + 1 <= PROMPT_TOKENS)
    src = tr.source(text)
    ids = torch.tensor([[*src.ids.tolist(), src.start_id]])  # (1, P): tokenizer(prompt)

    def ours():
        return tr.generate(src, max_new_tokens=NEW_TOKENS)

    def theirs():
        with torch.inference_mode():
            return hf.generate(ids, attention_mask=torch.ones_like(ids),
                               max_new_tokens=NEW_TOKENS, output_attentions=True,
                               output_scores=True, return_dict_in_generate=True)

    from transformers import AutoTokenizer

    only_known(hf, len(AutoTokenizer.from_pretrained(folder, local_files_only=True)),
               tr.config.eos_id)
    trace, gen = ours(), theirs()
    same = [int(i) for i in trace.tgt_ids[1:]] == gen.sequences[0, ids.size(1):].tolist()
    times = median_ms({"ours": ours, "generate": theirs}, repeat)
    from model.analysis.value_zeroing import value_zeroing

    t1 = time.perf_counter()  # once: the Attribution view computes it once per trace
    value_zeroing(tr.model, torch.from_numpy(trace.src_ids), torch.from_numpy(trace.tgt_ids[:-1]))
    zeroing_s = time.perf_counter() - t1
    c = tr.config
    return {"load_s": load_s, "rss_loaded_mib": rss_loaded,
            "peak_rss_mib": _status_mib("VmHWM"),
            "ours_ms": times["ours"], "generate_ms": times["generate"], "steps": len(trace.steps),
            "same_tokens": same, "zeroing_s": zeroing_s, "prompt_ids": int(ids.size(1)),
            "prompt": text,
            "layers": c.num_layers, "nhead": c.nhead, "kv_heads": c.num_key_value_heads,
            "d_model": c.d_model, "map_mb": trace.decoder_attentions.nbytes / 2**20,
            "probs_mb": trace.step_probs.nbytes / 2**20}


def _child(stage: str, repo: str, folder: Path, repeat: int) -> dict:
    """Run one stage of this benchmark in a fresh Python process (``hf_shapes.run_stage``)."""
    from benchmarks.hf_shapes import run_stage

    return run_stage(stage, repo, folder, repeat, module="benchmarks.causal_shapes")


def table(rows: dict[str, dict]) -> str:
    """The figures as a Markdown table."""
    lines = ["| model (published shape) | parameters | layers, H / Hkv, D | prompt ids | load s "
             "| RSS after load MiB | peak RSS MiB | ours ms (20 steps) | generate() ms "
             "| ours / generate() | the trace's map MiB, distributions MiB | same tokens "
             "| value zeroing s |",
             "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---|---|---:|"]
    for repo, r in rows.items():
        lines.append(
            f"| {repo} | {r['parameters'] / 1e6:.0f} M | {r['layers']}, {r['nhead']} / "
            f"{r['kv_heads']}, {r['d_model']} | {r['prompt_ids']} | {r['load_s']:.1f} | "
            f"{r['rss_loaded_mib']:.0f} | {r['peak_rss_mib']:.0f} | {r['ours_ms']:.0f} | "
            f"{r['generate_ms']:.0f} | {r['ours_ms'] / r['generate_ms']:.2f} | "
            f"{r['map_mb']:.1f}, {r['probs_mb']:.1f} | "
            f"{'yes' if r['same_tokens'] else 'NO'} ({r['steps']} steps) | "
            f"{r['zeroing_s']:.1f} |")
    return "\n".join(lines)


def main() -> None:
    """Build, open and time each configuration in turn; print the figures."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=3, help="timed runs per figure (median)")
    ap.add_argument("--only", nargs="*", default=None, help="repositories (default: all)")
    ap.add_argument("--stage", choices=("build", "measure"), help=argparse.SUPPRESS)
    ap.add_argument("--repo", help=argparse.SUPPRESS)
    ap.add_argument("--folder", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.stage == "build":
        print(json.dumps(build(args.repo, args.folder)))
        return
    if args.stage == "measure":
        print(json.dumps(measure(args.folder, args.repeat)))
        return
    t0 = time.perf_counter()
    rows = {}
    for repo in CONFIGS:
        if args.only and repo not in args.only and repo.split("/")[-1] not in args.only:
            continue
        with tempfile.TemporaryDirectory(prefix="causal-shapes-") as tmp:
            folder = Path(tmp) / repo.split("/")[-1]
            rows[repo] = {**_child("build", repo, folder, args.repeat),
                          **_child("measure", repo, folder, args.repeat)}
            shutil.rmtree(folder, ignore_errors=True)
        print(f"{repo}: {json.dumps(rows[repo])}", flush=True)
    print(f"\nmedian of {args.repeat} after 1 warm-up, 1 torch thread; {NEW_TOKENS} steps, "
          f"greedy, EOS and ids outside the small tokenizer banned; whole run "
          f"{time.perf_counter() - t0:.0f} s\n")
    print(table(rows))


if __name__ == "__main__":
    main()
