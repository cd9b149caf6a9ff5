"""Server-side speed of the app and of decoding, on this machine.

    .venv/bin/python -m benchmarks.speed            # prints the figures
    .venv/bin/python -m benchmarks.speed --write    # also updates benchmarks/RESULTS.md

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
sys.path.insert(0, str(ROOT))  # run as a script from anywhere

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
    at.session_state["view"] = "cross"
    at.run()
    step_ms, head_ms = [], []
    for i in range(repeat):
        step, target = at.slider(key="step"), 1 + (i + 1) % 9
        step_ms.append(timed(lambda s=step, v=target: s.set_value(v).run()))
        head, pick = at.selectbox(key="cross_head"), i % 8
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
            trace = m.generate(s, **kwargs)
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
        write_results(table, args.repeat)


def write_results(table: str, repeat: int) -> None:
    """Replace (or add) the "## Speed" section of benchmarks/RESULTS.md."""
    import datetime as dt

    from benchmarks.report import RESULTS, machine, with_section

    info = machine()
    when = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    section = f"""## Speed of one interaction

`python -m benchmarks.speed --write`, {when}, median of {repeat}. Server-side time of one
whole script run after moving the step slider or picking another head in the
cross-attention tab (AppTest, in process; in the browser a step change reruns only the
step-through fragment, so this is an upper bound), and decoding time per generated token
through the API with one torch thread, as the app runs. This is not what a person waits
for: the browser's share and Streamlit's work around the script are in "Clicks in
Chromium" (benchmarks/clicks.py), the server's whole share per click in "Classroom over
the protocol".

{table}

Machine: {info['cpu']}, {info['cores']} cores, {info['ram']} RAM; Python {info['python']},
torch {info['torch']}, Streamlit {info['streamlit']}; load average {info['load']}.
"""
    RESULTS.write_text(with_section(RESULTS, section, "## Speed"), encoding="utf-8")
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
