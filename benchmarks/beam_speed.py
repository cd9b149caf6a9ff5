"""How long the default model takes to translate a 20-token sentence with beam search (4
beams), and how large its weights file is: the figures issue 22 asks to print.

    .venv/bin/python -m benchmarks.beam_speed                 # the default model
    .venv/bin/python -m benchmarks.beam_speed pretrained/en-zh-everyday --repeat 20

Two paths, each the median of ``--repeat`` runs after one warm-up, with 1 thread (as the
app, which keeps each request on one) and with 2: ``generate`` (what the app runs: every
step's attention and top-k recorded, a ``DecodeTrace``) and ``translate_batch`` (the text
only, as the evaluation runs). The sentences are chosen by their length in the model's own
source tokens (with ``</s>``), so "20 tokens" means 20 encoder positions.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run as a script from anywhere

import torch  # noqa: E402

from model import GenerationSettings, load_pretrained  # noqa: E402
from model.backends.translate import translate_batch  # noqa: E402

CANDIDATES = [
    "The museum opened in 1925 and has 300 paintings, but most of them are kept in the basement.",
    "My grandmother was born in a small village near the river, and she still lives there today.",
    "The encoder reads the whole sentence before the decoder writes the first character.",
    "Tom said that he would come to the meeting tomorrow if the weather is good.",
    "When I was a student, I walked to school every morning with my two younger brothers.",
]


def sentence_of(translator, n_tokens: int) -> str:
    """The candidate whose source length is closest to ``n_tokens`` (``</s>`` included)."""
    return min(CANDIDATES, key=lambda s: abs(len(translator.source(s).tokens) - n_tokens))


def median_ms(fn, repeat: int) -> float:
    """Median milliseconds of ``repeat`` calls of ``fn``, after one warm-up call."""
    fn()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> None:
    """Print the weights file's size and the median times, one line each."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", type=Path, nargs="?", default=ROOT / "pretrained" / "en-zh-everyday")
    ap.add_argument("--tokens", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=10)
    args = ap.parse_args(argv)
    translator = load_pretrained(args.folder)
    weights = args.folder / "model.safetensors"
    print(f"model: {args.folder.name}, {weights.stat().st_size / 1e6:.1f} MB "
          f"({translator.card.get('parameters', 0):,} parameters)")
    text = sentence_of(translator, args.tokens)
    n = len(translator.source(text).tokens)
    beam = GenerationSettings(num_beams=4)
    print(f"sentence ({n} source tokens): {text}")
    for threads in (1, 2):
        torch.set_num_threads(threads)
        gen = median_ms(lambda: translator.generate(text, beam), args.repeat)
        out = translator.generate(text, beam)
        lean = median_ms(lambda: translate_batch(translator, [text], beam), args.repeat)
        print(f"{threads} thread(s): generate {gen:.0f} ms, translate_batch {lean:.0f} ms "
              f"({len(out.steps)} tokens out: {out.output_text})")


if __name__ == "__main__":
    main()
