"""Server-side speed of the app and of decoding, on this machine.

    .venv/bin/python benchmarks/speed.py            # prints the figures
    .venv/bin/python benchmarks/speed.py --write    # also updates benchmarks/RESULTS.md

Measured with Streamlit's AppTest (the real app and model, in process): the time of one
script run after a step change (moving the step slider) and after a head change, i.e. the
server-side work per interaction, whole script included (an upper bound: in the browser a
step change reruns only the step-through fragment). Decoding is timed through the public
API, per generated token, for greedy search and for beam search with 4 beams.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from streamlit.testing.v1 import AppTest  # noqa: E402

from model import load_pretrained  # noqa: E402

SENTENCES = ["why do we work ?", "he reads books in the library .",
             "i know the man who reads books .", "do you like cats ?"]


def timed(fn) -> float:
    """Milliseconds one call of ``fn`` takes."""
    t = time.perf_counter()
    fn()
    return (time.perf_counter() - t) * 1000


def app_figures(repeat: int) -> dict[str, float]:
    """Median ms of a step change and of a head change in the cross-attention tab."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).run()
    at.session_state["view"] = "Cross-attention"
    at.run()
    step_ms, head_ms = [], []
    for i in range(repeat):
        step, target = at.slider(key="step"), 1 + (i + 1) % 9
        step_ms.append(timed(lambda s=step, v=target: s.set_value(v).run()))
        head, pick = at.selectbox(key="Cross-attention_head"), i % 8
        head_ms.append(timed(lambda h=head, v=pick: h.select(v).run()))
    assert not at.exception, at.exception
    return {"step change (ms, median)": statistics.median(step_ms),
            "head change (ms, median)": statistics.median(head_ms)}


def decode_figures(repeat: int) -> dict[str, float]:
    """Median ms per generated token, greedy and with 4 beams."""
    m = load_pretrained("en-zh")
    out = {}
    for label, kwargs in (("greedy", {}), ("beam search, 4 beams", {"num_beams": 4})):
        per_token = []
        for i in range(repeat):
            s = SENTENCES[i % len(SENTENCES)]
            t0 = time.perf_counter()
            trace = m.decode(s, **kwargs)
            per_token.append((time.perf_counter() - t0) * 1000 / len(trace.steps))
        out[f"decode per token, {label} (ms, median)"] = statistics.median(per_token)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--write", action="store_true", help="update benchmarks/RESULTS.md")
    args = ap.parse_args()
    import torch

    torch.set_num_threads(1)  # as the app does
    figures = {**app_figures(args.repeat), **decode_figures(args.repeat)}
    lines = [f"| {name} | {value:.1f} |" for name, value in figures.items()]
    table = "\n".join(["| measure | value |", "|---|---|", *lines])
    print(table)
    if args.write:
        from classroom import machine_description  # noqa: I001  (filled in below)

        results = ROOT / "benchmarks" / "RESULTS.md"
        text = results.read_text(encoding="utf-8") if results.exists() else "# Benchmarks\n"
        marker = "## Speed of one interaction (benchmarks/speed.py)"
        text = text.split(marker)[0].rstrip() + "\n\n" + marker + "\n\n" + \
            f"{machine_description()}\n\nTarget: at most 50 ms per step or head change.\n\n" + \
            table + "\n"
        results.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
