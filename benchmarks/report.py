"""What the benchmarks report: percentiles, the machine the figures come from, and their
sections of ``benchmarks/RESULTS.md``."""

from __future__ import annotations

import functools
import os
import platform
import re
import statistics
import subprocess
from pathlib import Path

from testkit.harness import CHROMIUM, ROOT

RESULTS = ROOT / "benchmarks" / "RESULTS.md"


def percentile(values: list[float], q: float) -> float:
    """The ``q``-th percentile (0-100) of ``values``, interpolated between closest ranks."""
    data = sorted(values)
    if len(data) == 1:
        return data[0]
    return statistics.quantiles(data, n=100, method="inclusive")[round(q) - 1]


# ---------------------------------------------------------------------------------------------
# The machine and RESULTS.md
# ---------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=1)
def app_model():
    """The model the app preselects (``translator.default_model``), loaded once."""
    from model.backends.load import available_models, default_model, load_pretrained

    return load_pretrained(default_model(available_models()))


def machine() -> dict:
    """Where the figures come from: CPU, cores, memory, software versions, model."""

    import streamlit
    import torch
    from playwright._repo_version import version as playwright_version

    info = {"cores": os.cpu_count(), "cpu": platform.processor() or platform.machine(),
            "ram": "?", "python": platform.python_version(), "torch": torch.__version__,
            "streamlit": streamlit.__version__, "playwright": playwright_version,
            "chromium": "?", "model": "?", "load": "?", "commit": "?"}
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                info["cpu"] = line.split(":", 1)[1].strip()
                break
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                info["ram"] = f"{int(line.split()[1]) / 2**20:.1f} GiB"
        info["load"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        pass
    try:
        info["chromium"] = subprocess.run([CHROMIUM, "--version"], capture_output=True,
                                          text=True, timeout=30).stdout.strip() or "?"
    except (OSError, subprocess.SubprocessError):
        pass
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                                capture_output=True, text=True, timeout=30).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               cwd=ROOT, capture_output=True, text=True, timeout=30).stdout
        info["commit"] = f"{commit}{' with uncommitted changes' if dirty.strip() else ''}"
    except (OSError, subprocess.SubprocessError):
        pass
    try:
        model = app_model()  # the model the app preselects
        info["model"] = (f"pretrained/{model.name}: {model.config.num_encoder_layers}+"
                         f"{model.config.num_decoder_layers} layers, d_model "
                         f"{model.config.d_model}, {model.card.get('parameters', 0):,} "
                         "parameters")
    except (OSError, ValueError):
        pass
    return info


def publish(text: str, heading: str, write: bool) -> None:
    """Print a benchmark's report ``text``; with ``write``, also put it in RESULTS.md as the
    section starting with ``heading``."""
    print(text)
    if write:
        RESULTS.write_text(with_section(RESULTS, text, heading=heading), encoding="utf-8")
        print(f"wrote {RESULTS.relative_to(ROOT)}")


def with_section(path: Path, section: str, heading: str = "## Classroom") -> str:
    """``path``'s text with its section starting with ``heading`` replaced by ``section``
    (other sections are kept; a missing file or section is created)."""
    old = path.read_text(encoding="utf-8") if path.exists() else "# Benchmark results\n"
    match = re.search(rf"^{re.escape(heading)}.*?(?=^## |\Z)", old, flags=re.S | re.M)
    if match:
        return old[:match.start()] + section + ("\n" if old[match.end():] else "") + \
            old[match.end():]
    return old.rstrip("\n") + "\n\n" + section
