"""Layout helpers shared by the figure builders (token axes, sizes, hover data)."""

from __future__ import annotations

import numpy as np

from .validate import escape_html

# Simplified-Chinese faces first: Debian names Noto's "Noto Sans CJK SC"; without it Chromium
# falls back to the Japanese variant, which draws some characters in Japanese forms.
FONT = dict(
    family="Noto Sans SC, Noto Sans CJK SC, Source Han Sans SC, Microsoft YaHei, PingFang SC, "
    "Arial, sans-serif",
    size=13,
)
ATTENTION_SCALE = "Blues"


def tick_font_size(n: int) -> int:
    """Tick-label font size (px) that stays readable for ``n`` ticks."""
    return 13 if n <= 20 else 11 if n <= 40 else 9


def cell_px(n: int) -> int:
    """Side of one heatmap cell in pixels for ``n`` rows/columns."""
    return int(np.clip(640 // max(n, 1), 12, 44))


def label_px(ticktext: list[str]) -> int:
    """Rough pixel room that the longest tick label needs (capped)."""
    return min(max((len(t) for t in ticktext), default=1), 16) * 9


def token_axis(ticktext: list[str], title: str, *, reverse: bool = False) -> dict:
    """Integer axis 0..n-1 whose ticks show the (already escaped) tokens."""
    n = len(ticktext)
    return dict(
        title=dict(text=escape_html(title)),
        tickmode="array",
        tickvals=list(range(n)),
        ticktext=ticktext,
        tickfont=dict(size=tick_font_size(n)),
        autorange="reversed" if reverse else True,
        showgrid=False,
        zeroline=False,
        automargin=True,
    )


def pair_customdata(rows: list[str], cols: list[str], *extra: np.ndarray) -> np.ndarray:
    """Object array (R, C, 2 + len(extra)): [row token, column token, *extra] per cell."""
    data = np.empty((len(rows), len(cols), 2 + len(extra)), dtype=object)
    data[..., 0] = np.array(rows, dtype=object)[:, None]
    data[..., 1] = np.array(cols, dtype=object)[None, :]
    for i, values in enumerate(extra):
        data[..., 2 + i] = values
    return data


def nice_step(n: int, max_ticks: int) -> int:
    """Smallest step from 1, 2, 5, 10, 20, 50, ... giving at most ``max_ticks`` ticks."""
    step = 1
    while n / step > max_ticks:
        for factor in (2, 2.5, 2):
            step = int(step * factor)
            if n / step <= max_ticks:
                break
    return step
