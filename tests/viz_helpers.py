"""Inputs and figure readers shared by the tests of ``viz`` (tests/test_viz_*.py)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import plotly.graph_objects as go

ROOT = Path(__file__).resolve().parents[1]

SRC = ["<s>", "the", "cat", "the", "<script>", "</s>"]  # repeated "the", HTML-like tokens
TGT = ["<s>", "猫", "猫", "&", "</s>"]  # repeated Chinese character
SRC_ESC = ["&lt;s&gt;", "the", "cat", "the", "&lt;script&gt;", "&lt;/s&gt;"]
TGT_ESC = ["&lt;s&gt;", "猫", "猫", "&amp;", "&lt;/s&gt;"]


def title_of(fig: go.Figure, axis: str = "x") -> str | None:
    """The title of ``axis`` ("x", "y2", ...): its own, or the annotation that titles it on
    its domain (``viz.axes.axis_title``: token axes); None if it has neither."""
    own = fig.layout[axis[0] + "axis" + axis[1:]].title.text
    if own is not None:
        return own
    ref = "xref" if axis.startswith("x") else "yref"
    found = [a.text for a in fig.layout.annotations if a[ref] == f"{axis} domain"
             and (a.textangle == -90) == axis.startswith("y")]
    assert len(found) <= 1, found
    return found[0] if found else None


def notes_of(fig: go.Figure) -> list:
    """The figure's annotations other than axis titles (head and panel titles)."""
    return [a for a in fig.layout.annotations if not str(a.xref).endswith(" domain")]


def softmax_rows(shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    """Random attention with rows summing to 1, as float64 (builders must cast)."""
    x = np.random.default_rng(seed).normal(size=shape)
    e = np.exp(x)
    return e / e.sum(-1, keepdims=True)


def sinusoid(t: int, d: int) -> np.ndarray:
    pos = np.arange(t)[:, None]
    div = 10000 ** (np.arange(0, d, 2) / d)
    pe = np.zeros((t, d))
    pe[:, 0::2], pe[:, 1::2] = np.sin(pos / div), np.cos(pos / div)
    return pe


def roundtrip(fig: go.Figure) -> dict:
    """Serialise like the app does and parse back, so the JSON path is exercised."""
    assert isinstance(fig, go.Figure)
    return json.loads(fig.to_json())


BEAM_STEPS = [
    [(0, "我", -0.1, "kept"), (0, "你", -2.0, "kept"), (0, "<script>", -3.0, "pruned")],
    [(0, "们", -0.2, "kept"), (1, "</s>", -2.5, "finished"), (1, "好", -2.6, "kept"),
     (0, "的", -4.0, "pruned")],
    [(1, "</s>", -2.7, "finished"), (0, "</s>", -0.3, "finished")],
]
