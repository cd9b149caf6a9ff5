"""Hugging Face models of the published shapes, opened and stepped through as the app does.

    .venv/bin/python -m benchmarks.hf_shapes                 # all five (several minutes)
    .venv/bin/python -m benchmarks.hf_shapes --only t5-small --repeat 5

For each of five published encoder-decoder models it builds a random-weight model with the
published configuration (``CONFIGS``: the hyper-parameters of each hub repository's
``config.json`` as published on huggingface.co, written here as dicts; the vocabulary size is
kept, so the embedding and output layers have their real size), saves it with
``save_pretrained`` (``model.safetensors``) into a temporary folder with a small tokenizer
trained offline by ``testkit/hf_tiny.py`` (Marian's and M2M100's ``vocab.json`` padded with
unused pieces to the published size), and then, in a fresh process:

* opens the folder with ``model.load_pretrained`` (the app's loader: the checks of
  ``hf_load``, ``AutoModelForSeq2SeqLM`` with eager attention, the tokenizer): load time;
* steps through one fixed English sentence (the longest start of ``SOURCE`` that the
  model's tokenizer makes at most 20 ids of, special tokens included) in the app's code path,
  ``translator.generate(text, max_new_tokens=20)`` (greedy, the key/value cache, every
  layer's and head's maps, the full distribution and top-10 at every step); a forward hook
  on the output layer sets the ``</s>`` logit to -inf for both decodings (``ban_eos``), so
  every run makes exactly 20 steps: ms per step = call / 20. (A generation config's
  ``bad_words_ids`` cannot do it: ``generate()`` drops ``</s>`` from that list);
* ``hf.generate(...)`` on the same source ids with the same (greedy) generation config,
  returning the attentions and scores (``output_attentions=True, output_scores=True``):
  ms per token;
* memory: the process's resident set after loading (``VmRSS``) and its peak (``VmHWM``),
  from ``/proc/self/status``, in MiB.

One model is alive at a time: building and measuring each run in their own processes
(``--stage build`` / ``--stage measure``), and the folder is deleted before the next.
Timings are medians of ``--repeat`` runs after one warm-up, with one torch thread (as the
app serves a session). Figures only: nothing here asserts a timing.

Where the configurations come from (huggingface.co/<repo>/blob/main/config.json):
Helsinki-NLP/opus-mt-en-zh (Marian, Tiedemann & Thottingal 2020), t5-small (Raffel et al.
2020), google/flan-t5-small (T5 v1.1: H * d_kv = 384 != d_model 512, gated-gelu, untied
lm_head; Chung et al. 2022), facebook/bart-base (Lewis et al. 2020), facebook/m2m100_418M
(Fan et al. 2021). Dropout and other training-only fields are left out (eval mode).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run as a script from anywhere

NEW_TOKENS = 20  # N: steps each decoding makes
SOURCE_TOKENS = 20  # the source: the longest start of SOURCE that is at most this many ids
SOURCE = "My mother is a doctor, and she likes to read books at night in the small house."

# repo -> (model_type, the tiny tokenizer family of testkit/hf_tiny.py, config.json values)
CONFIGS: dict[str, tuple[str, str, dict]] = {
    "Helsinki-NLP/opus-mt-en-zh": ("marian", "marian", dict(
        vocab_size=65001, decoder_vocab_size=65001, d_model=512, encoder_layers=6,
        decoder_layers=6, encoder_attention_heads=8, decoder_attention_heads=8,
        encoder_ffn_dim=2048, decoder_ffn_dim=2048, max_position_embeddings=512,
        activation_function="swish", scale_embedding=True, static_position_embeddings=True,
        share_encoder_decoder_embeddings=True, pad_token_id=65000,
        decoder_start_token_id=65000, eos_token_id=0, bos_token_id=0, forced_eos_token_id=0)),
    "t5-small": ("t5", "t5", dict(
        vocab_size=32128, d_model=512, d_kv=64, d_ff=2048, num_layers=6, num_heads=8,
        relative_attention_num_buckets=32, feed_forward_proj="relu", layer_norm_epsilon=1e-6,
        pad_token_id=0, eos_token_id=1, decoder_start_token_id=0)),
    "google/flan-t5-small": ("t5", "t5", dict(
        vocab_size=32128, d_model=512, d_kv=64, d_ff=1024, num_layers=8,
        num_decoder_layers=8, num_heads=6, relative_attention_num_buckets=32,
        relative_attention_max_distance=128, feed_forward_proj="gated-gelu",
        tie_word_embeddings=False, layer_norm_epsilon=1e-6, pad_token_id=0, eos_token_id=1,
        decoder_start_token_id=0)),
    "facebook/bart-base": ("bart", "bart", dict(
        vocab_size=50265, d_model=768, encoder_layers=6, decoder_layers=6,
        encoder_attention_heads=12, decoder_attention_heads=12, encoder_ffn_dim=3072,
        decoder_ffn_dim=3072, max_position_embeddings=1024, activation_function="gelu",
        scale_embedding=False, pad_token_id=1, bos_token_id=0, eos_token_id=2,
        decoder_start_token_id=2, forced_bos_token_id=0, forced_eos_token_id=2)),
    "facebook/m2m100_418M": ("m2m_100", "m2m100", dict(
        vocab_size=128112, d_model=1024, encoder_layers=12, decoder_layers=12,
        encoder_attention_heads=16, decoder_attention_heads=16, encoder_ffn_dim=4096,
        decoder_ffn_dim=4096, max_position_embeddings=1024, activation_function="relu",
        scale_embedding=True, pad_token_id=1, bos_token_id=0, eos_token_id=2,
        decoder_start_token_id=2)),
}
TRAINING_ONLY = dict(dropout=0.0, attention_dropout=0.0, activation_dropout=0.0)
T5_TRAINING_ONLY = dict(dropout_rate=0.0)


def _status_mib(field: str) -> float:
    """``VmRSS`` / ``VmHWM`` of this process from ``/proc/self/status``, in MiB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024  # kB
    return float("nan")


def _pad_vocab(folder: Path, size: int, last: str | None) -> None:
    """Pad ``vocab.json`` with unused pieces ``<unused_i>`` to ``size`` entries (``last``,
    Marian's ``<pad>``, kept as the last entry), as the published files are that large."""
    path = folder / "vocab.json"
    vocab = json.loads(path.read_text(encoding="utf-8"))
    tokens = sorted(vocab, key=vocab.get)
    if last is not None:
        tokens.remove(last)
    tokens += [f"<unused_{i}>" for i in range(size - len(tokens) - (last is not None))]
    tokens += [last] if last is not None else []
    path.write_text(json.dumps({t: i for i, t in enumerate(tokens)}, ensure_ascii=False),
                    encoding="utf-8")


def _tokenizer(family: str, folder: Path, vocab_size: int):
    """The small offline tokenizer of ``testkit/hf_tiny.py`` for ``family``; Marian's and
    M2M100's vocab.json padded to the published vocabulary (the python tokenizers map an id
    beyond their table to ``<unk>``)."""
    from transformers import M2M100Tokenizer, MarianTokenizer

    from testkit.hf_tiny import train_tokenizer

    tokenizer = train_tokenizer(family, folder)
    if family == "marian":
        _pad_vocab(folder, vocab_size, "<pad>")
        tokenizer = MarianTokenizer(source_spm=str(folder / "source.spm"),
                                    target_spm=str(folder / "target.spm"),
                                    vocab=str(folder / "vocab.json"), source_lang="en",
                                    target_lang="zh")
    elif family == "m2m100":
        madeup = tokenizer.num_madeup_words
        _pad_vocab(folder, vocab_size - len(tokenizer.lang_code_to_id) - madeup, None)
        tokenizer = M2M100Tokenizer(vocab_file=str(folder / "vocab.json"),
                                    spm_file=str(folder / "sentencepiece.bpe.model"),
                                    src_lang="en", tgt_lang="zh")
    return tokenizer


def build(repo: str, folder: Path) -> dict:
    """Build the random-weight model of ``repo``'s configuration and its tokenizer, save both
    in ``folder``; returns the parameter count, fp32 bytes and build seconds."""
    import torch
    from transformers import CONFIG_MAPPING, AutoModelForSeq2SeqLM, GenerationConfig

    t0 = time.perf_counter()
    model_type, family, values = CONFIGS[repo]
    extra = T5_TRAINING_ONLY if model_type == "t5" else TRAINING_ONLY
    config = CONFIG_MAPPING[model_type](**values, **extra)
    torch.manual_seed(0)
    hf = AutoModelForSeq2SeqLM.from_config(config).eval()
    if values.get("tie_word_embeddings") is False:  # flan-t5: an lm_head of its own
        weight = hf.lm_head.weight
        hf.lm_head.weight = torch.nn.Parameter(torch.randn(weight.shape) * 0.05)
    eos = values["eos_token_id"]
    hf.generation_config = GenerationConfig(  # plain greedy search
        decoder_start_token_id=values["decoder_start_token_id"], eos_token_id=eos,
        pad_token_id=values["pad_token_id"], bos_token_id=values.get("bos_token_id"),
        num_beams=1, do_sample=False, max_length=NEW_TOKENS + 1)
    folder.mkdir(parents=True, exist_ok=True)
    hf.save_pretrained(folder)
    if values.get("tie_word_embeddings") is False:  # as the published config.json has it
        path = folder / "config.json"
        saved = json.loads(path.read_text(encoding="utf-8"))
        saved["tie_word_embeddings"] = False
        for derived in ("scale_decoder_outputs", "is_gated_act", "dense_act_fn"):
            saved.pop(derived, None)
        path.write_text(json.dumps(saved, indent=2), encoding="utf-8")
    _tokenizer(family, folder, values["vocab_size"]).save_pretrained(folder)
    return {"parameters": sum(p.numel() for p in hf.parameters()),
            "weights_mb": (folder / "model.safetensors").stat().st_size / 2**20,
            "build_s": time.perf_counter() - t0}


def ban_eos(hf, eos: int):
    """A forward hook on ``hf``'s output layer that sets the ``</s>`` logit (column ``eos``
    of the (B, T, V) logits) to -inf, seen alike by our decoding and by ``generate()``;
    returns its handle."""
    def hook(module, args, logits):
        logits = logits.clone()
        logits[..., eos] = float("-inf")
        return logits

    return hf.get_output_embeddings().register_forward_hook(hook)


def measure(folder: Path, repeat: int) -> dict:
    """Open ``folder`` with ``load_pretrained`` and time our step-through against
    ``generate()``, one torch thread; returns the figures (ms, MiB, s)."""
    import torch

    from model import load_pretrained

    torch.set_num_threads(1)
    t0 = time.perf_counter()
    tr = load_pretrained(folder)
    load_s = time.perf_counter() - t0
    rss_loaded = _status_mib("VmRSS")
    hf = tr.model.hf
    words = SOURCE.split()
    text = next(" ".join(words[:n]) for n in range(len(words), 0, -1)
                if len(tr.source(" ".join(words[:n])).ids) <= SOURCE_TOKENS)
    src = torch.from_numpy(tr.source(text).ids)[None]  # (1, S)

    def ours():
        return tr.generate(text, max_new_tokens=NEW_TOKENS)

    def theirs():
        with torch.inference_mode():
            return hf.generate(src, attention_mask=torch.ones_like(src), max_new_tokens=NEW_TOKENS,
                               max_length=None, output_attentions=True, output_scores=True,
                               return_dict_in_generate=True)

    ban_eos(hf, tr.config.eos_id)
    trace, gen = ours(), theirs()
    same = tr.target.vocab.encode(trace.tgt_tokens) == gen.sequences[0].tolist()
    times = median_ms({"ours": ours, "generate": theirs}, repeat)
    return {"load_s": load_s, "rss_loaded_mib": rss_loaded, "peak_rss_mib": _status_mib("VmHWM"),
            "ours_ms_per_step": times["ours"] / NEW_TOKENS,
            "generate_ms_per_token": times["generate"] / NEW_TOKENS,
            "steps": len(trace.steps), "generate_tokens": gen.sequences.size(1) - 1,
            "same_tokens": same, "source_tokens": int(src.size(1)), "source": text,
            "head_dim": tr.config.head_dim, "nhead": tr.config.nhead,
            "d_model": tr.config.d_model}


def median_ms(calls: dict, repeat: int) -> dict[str, float]:
    """Each of ``calls`` (name -> function) timed ``repeat`` times, the calls taking turns:
    name -> the median in ms."""
    times: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(repeat):
        for name, fn in calls.items():
            t = time.perf_counter()
            fn()
            times[name].append((time.perf_counter() - t) * 1000)
    return {name: statistics.median(v) for name, v in times.items()}


def run_stage(stage: str, repo: str, folder: Path, repeat: int, *,
              module: str = "benchmarks.hf_shapes") -> dict:
    """Run one stage of ``module`` in a fresh Python process, offline; its JSON result."""
    cmd = [sys.executable, "-m", module, "--stage", stage, "--repo", repo,
           "--folder", str(folder), "--repeat", str(repeat)]
    out = subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True, text=True,
                         env={**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"})
    return json.loads(out.stdout.strip().splitlines()[-1])


def table(rows: dict[str, dict]) -> str:
    """The figures as a Markdown table."""
    lines = ["| model (published shape) | parameters | H x Dh / D | source ids | load s "
             "| RSS after load MiB | peak RSS MiB | ours ms / step | generate() ms / token "
             "| ours / generate() | same tokens |",
             "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for repo, r in rows.items():
        lines.append(
            f"| {repo} | {r['parameters'] / 1e6:.1f} M | {r['nhead']} x {r['head_dim']} / "
            f"{r['d_model']} | {r['source_tokens']} | {r['load_s']:.2f} | "
            f"{r['rss_loaded_mib']:.0f} | "
            f"{r['peak_rss_mib']:.0f} | {r['ours_ms_per_step']:.1f} | "
            f"{r['generate_ms_per_token']:.1f} | "
            f"{r['ours_ms_per_step'] / r['generate_ms_per_token']:.2f} | "
            f"{'yes' if r['same_tokens'] else 'NO'} ({r['steps']} steps) |")
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
    repos = [r for r in CONFIGS if not args.only or r in args.only or r.split("/")[-1]
             in args.only]
    rows = {}
    for repo in repos:
        with tempfile.TemporaryDirectory(prefix="hf-shapes-") as tmp:
            folder = Path(tmp) / repo.split("/")[-1]
            built = run_stage("build", repo, folder, args.repeat)
            rows[repo] = {**built, **run_stage("measure", repo, folder, args.repeat)}
            shutil.rmtree(folder, ignore_errors=True)
        print(f"{repo}: {json.dumps(rows[repo])}", flush=True)
    print(f"\nmedian of {args.repeat} after 1 warm-up, 1 torch thread; source: the longest "
          f"start of {SOURCE!r} of at most {SOURCE_TOKENS} ids; {NEW_TOKENS} steps, greedy, "
          "</s> banned\n")
    print(table(rows))
    from benchmarks.hf_step import cpu_name

    print(f"\nmachine: {cpu_name()}, {os.cpu_count()} cores, "
          f"{os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES') / 2**30:.0f} GiB; "
          f"Python {platform.python_version()}, torch {__import__('torch').__version__}, "
          f"transformers {__import__('transformers').__version__}; load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}; whole run "
          f"{time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
