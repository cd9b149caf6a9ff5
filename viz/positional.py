"""Positional-encoding figures: a position x dimension heatmap and per-dimension curves."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from .axes import FONT, colorbar, figure, nice_step, row_outline
from .colors import SIGNED_SCALE
from .convention import FIRST_NUMBER, formula_pos, position_label, position_number
from .panel import check_panel, heatmap_panel
from .text import ENGLISH, VizText, check_text
from .validate import check_index, check_matrix, escape_html

__all__ = ["positional_curves", "positional_heatmap", "rope_curves"]


LAYOUTS = ("interleaved", "halves", "learned")  # how a table's dimensions are laid out


def _dim_name(d: int, n_dim: int, layout: str, text: VizText) -> str:
    """Legend name of dimension d: interleaved (the paper: even = sin, odd = cos), halves
    (Marian, M2M100, tensor2tensor: the first D/2 are sin, the rest cos) or learned (no
    sin or cos)."""
    if layout == "learned":
        return text.dim.format(n=d)
    sin = d % 2 == 0 if layout == "interleaved" else d < (n_dim + 1) // 2
    return (text.dim_sin if sin else text.dim_cos).format(n=d)


def _int_ticks(n: int, max_ticks: int) -> dict:
    """Whole-number ticks for an axis 0..n-1, at most ``max_ticks`` of them."""
    return dict(tickmode="linear", tick0=0, dtick=nice_step(n, max_ticks))


def _shown_positions(n: int, max_ticks: int) -> list[int]:
    """The positions (as a person reads them, 1..n) an axis of n tokens has ticks at:
    position 1, then every ``nice_step``-th (1, 5, 10, ... or 1, 2, 3, ...), at most about
    ``max_ticks`` of them."""
    step = nice_step(n, max_ticks)
    return sorted({1, *range(step, n + 1, step)}) if n else []


def _position_ticks(n: int, max_ticks: int) -> dict:
    """Ticks for an axis of token indices 0..n-1 that read the positions a person reads
    (``viz.convention.position_number``: index + 1), at ``_shown_positions``."""
    shown = _shown_positions(n, max_ticks)
    return dict(tickmode="array", tickvals=[p - FIRST_NUMBER for p in shown],
                ticktext=[str(p) for p in shown])


def _position_hover(text: VizText, pos: str | None) -> str:
    """A curve point's position in its hover: ``text.hover_position_x`` ("Position %{x}",
    x being the position a person reads) and the formula's pos (``text.formula_pos``, the
    Plotly placeholder ``pos``) beside it: "Position 3 (pos = 2 in the formula)"; ``pos``
    None: a learned table, which has no formula."""
    shown = text.hover_position_x
    return shown if pos is None else shown + text.formula_pos.format(n=pos)


def _rows_hover(txt: list[str] | None, shape: tuple[int, int], formula: bool, text: VizText
                ) -> tuple[list[str] | None, dict]:
    """:func:`positional_heatmap`'s ``(ticks, hover)`` for a (T, D) ``shape``: the row ticks
    "1: <s>" (None without the escaped tokens ``txt``), and the heatmap's hover properties:
    each cell's position as a person reads it, with its token (``text``, (T, D) strings),
    with ``formula`` the formula's pos beside it (``customdata``, (T, D) uint16, a typed
    array: plotly.py copies every object of a figure's arrays, not numbers), and the
    ``hovertemplate`` naming them ("Position 5: you (pos = 4 in the formula)"), the
    dimension and the value."""
    n_pos, n_dim = shape
    ticks = None if txt is None else [position_label(i, t) for i, t in enumerate(txt)]
    rows = [r.replace("\n", " ") for r in ticks] if ticks else [  # a token's pinyin beside it
        str(position_number(i)) for i in range(n_pos)]
    cells = dict(text=np.repeat(np.array(rows, dtype=object)[:, None], n_dim, axis=1))
    where = text.hover_position_y.replace("%{y}", "%{text}")
    if formula:
        pos = np.array([formula_pos(i) for i in range(n_pos)], dtype=np.uint16)  # (T,)
        cells["customdata"] = np.repeat(pos[:, None], n_dim, axis=1)
        where += text.formula_pos.format(n="%{customdata}")
    return ticks, cells | dict(hovertemplate=f"{where}<br>{text.hover_dimension}<br>"
                                             f"{text.hover_value}%{{z:.3f}}<extra></extra>")


def positional_heatmap(
    pe: np.ndarray,
    tokens: Sequence[str] | None = None,
    title: str | None = None,
    *,
    mark_row: int | None = None,
    formula: bool = True,
    text: VizText = ENGLISH,
) -> go.Figure:
    """Heatmap of a positional-encoding matrix, positions down and dimensions across.

    Args:
        pe: (T, D) encoding values (sinusoidal ones lie in [-1, 1]; larger values are
            drawn with the end colours of the scale).
        tokens: optional T token strings; when given, the y ticks read "position: token"
            ("1: <s>", ``viz.convention.position_label``) and the hover shows the token.
        title: figure title (shown literally; HTML is escaped); None:
            ``text.positional_title``.
        mark_row: a position whose row is outlined in red (``viz.axes.row_outline``, a
            second trace); None: nothing outlined.
        formula: the table is a formula's (sines and cosines of pos): the hover gives the
            formula's pos beside each position; False: a learned table (no formula).
        text: the figure's own labels (axis and colour-bar titles, hover).

    Returns:
        A figure with one float32 ``go.Heatmap``: y = token indices 0..T-1 (the first on
        top), read as positions 1..T (ticks and hover, ``viz.convention.position_number``),
        x = "Dimension i" 0..D-1 (the formula's own index), the signed scale
        ``viz.colors.SIGNED_SCALE`` (blue negative, white 0, red positive, as
        ``viz.matrix_heatmap`` draws the same table) fixed to -1..1, hover giving the
        position, its token, the formula's pos beside it ("Position 3: you (pos = 2 in the
        formula)": the position and token as ``text``, the pos as ``customdata``; no pos
        without ``formula``), the dimension and the value.

    Raises:
        ValueError: if pe is not a finite 2-D array, tokens does not have T strings, or
            mark_row is not a position 0..T-1.
    """
    text = check_text(text)
    z, txt, _ = check_panel(pe, tokens, None, "pe", row_name="tokens")
    n_pos, n_dim = z.shape
    over = () if mark_row is None else [row_outline(check_index(mark_row, n_pos, "mark_row"),
                                                    n_dim)]
    ticks, hover = _rows_hover(txt, z.shape, formula, text)
    return heatmap_panel(
        z, ticks, None,
        SIGNED_SCALE | dict(zmin=-1.0, zmax=1.0, zmid=0.0, colorbar=colorbar(text.value),
                            **hover),
        title=text.positional_title if title is None else title,
        row_title=text.position,
        col_title=text.dimension_i,
        width=900,
        height=int(np.clip(n_pos * 16, 300, 800)) + 120,
        square=False,
        over=over,
        xaxis=_int_ticks(n_dim, 16),
        yaxis=_position_ticks(n_pos, 25) if ticks is None else None,
    )


def positional_curves(
    pe: np.ndarray, dims: Sequence[int], title: str | None = None,
    layout: str = "interleaved", *, text: VizText = ENGLISH,
) -> go.Figure:
    """Line chart of encoding value against position for a few chosen dimensions.

    Args:
        pe: (T, D) encoding values.
        dims: non-empty list of distinct dimension indices in 0..D-1. Legend entries read
            "dim 4 (sin)" / "dim 5 (cos)" as ``layout`` says (``text.dim_sin``,
            ``text.dim_cos``).
        title: figure title (shown literally; HTML is escaped); None:
            ``text.positional_curves_title``.
        layout: one of ``LAYOUTS``: ``"interleaved"`` (the paper's: even = sin, odd = cos),
            ``"halves"`` (first D/2 sin, then cos, as Marian and M2M100) or ``"learned"``
            (a trained table: legend "dim 4", ``text.dim``).
        text: the figure's own labels (axis and legend titles, legend entries, hover).

    Returns:
        A figure with one ``go.Scatter`` line per dimension, in the order given:
        x = the positions a person reads, 1..T (``viz.convention.position_number``), y =
        pe[:, d] (float32, as a list: ``viz.axes.figure``), ``customdata`` the formula's
        pos of each point (0..T-1), the hover giving both ("Position 3 (pos = 2 in the
        formula)"; a learned table's, the position alone).

    Raises:
        ValueError: if pe is not a finite 2-D array, dims is empty, a dim is not an int,
            out of range or repeated, or an unknown layout.
    """
    text = check_text(text)
    title = text.positional_curves_title if title is None else title
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {', '.join(LAYOUTS)}; got {layout!r}.")
    z = check_matrix(pe, None, None, "pe")
    n_pos, n_dim = z.shape
    chosen = _check_dims(dims, n_dim)
    where = _position_hover(text, None if layout == "learned" else "%{customdata}")
    return figure(
        data=[_curve(z[:, d], _dim_name(d, n_dim, layout, text), where, text) for d in chosen],
        layout=dict(
            title=dict(text=escape_html(title)),
            font=FONT,
            xaxis=dict(title=dict(text=text.position), zeroline=False, showgrid=True,
                       tickmode="array", tickvals=_shown_positions(n_pos, 20)),
            yaxis=dict(title=dict(text=text.value), zeroline=True),
            legend=dict(title=dict(text=text.dimension)),
            width=900,
            height=450,
        ),
    )


def _curve(values: np.ndarray, name: str, where: str, text: VizText) -> go.Scatter:
    """One dimension's (T,) ``values`` as a line named ``name`` over the positions a person
    reads (1..T), ``customdata`` the formula's pos of each point, the hover naming the
    line, the position (``where``, a hover piece) and the value."""
    n_pos = len(values)
    return go.Scatter(x=[position_number(i) for i in range(n_pos)], y=values,
                      mode="lines+markers" if n_pos <= 40 else "lines", name=name,
                      customdata=[formula_pos(i) for i in range(n_pos)],
                      hovertemplate=f"{name}<br>{where}<br>{text.hover_value}"
                      "%{y:.3f}<extra></extra>")


def _check_dims(dims: Sequence[int], n_dim: int) -> list[int]:
    """:func:`positional_curves`'s ``dims`` checked against D = ``n_dim`` dimensions: the
    indices as ints, in the order given.

    Raises:
        ValueError: dims not a list, empty, or an index not an int in 0..D-1 or repeated.
    """
    if isinstance(dims, (str, bytes)) or not isinstance(dims, Sequence | np.ndarray):
        raise ValueError(f"dims must be a list of dimension indices, got {dims!r}.")
    if len(dims) == 0:
        raise ValueError(f"dims is empty; choose at least one dimension in 0..{n_dim - 1}.")
    chosen = [check_index(d, n_dim, f"dims[{i}]") for i, d in enumerate(dims)]
    if len(set(chosen)) != len(chosen):
        raise ValueError(f"dims contains repeated dimensions: {chosen}.")
    return chosen


def rope_curves(distances: np.ndarray, score: np.ndarray, wavelengths: np.ndarray, *,
                titles: tuple[str, str], labels: tuple[str, str, str, str],
                text: VizText = ENGLISH) -> tuple[go.Figure, go.Figure]:
    """Two line charts of a rotary model's positions (RoPE, Su et al. 2021;
    ``model.core.rope``): the score of two all-ones vectors against their distance
    (``score`` (K,) at ``distances`` (K,), s(0) = 1), and each dimension pair's wavelength,
    2 pi / theta_i tokens (``wavelengths`` (Dh/2,)), on a log axis.

    Args:
        titles: the two figures' titles (shown literally; HTML is escaped).
        labels: (distance axis, score axis, pair axis, wavelength axis) titles.
        text: the figures' own labels (the hover's value).

    Raises:
        ValueError: arrays that are not finite 1-D, of different lengths (distances and
            score), or a wavelength that is not positive.
    """
    text = check_text(text)
    d, s = (np.asarray(a, dtype=np.float64) for a in (distances, score))
    w = np.asarray(wavelengths, dtype=np.float64)
    if d.ndim != 1 or d.shape != s.shape or w.ndim != 1 or not len(w):
        raise ValueError(f"distances and score must be (K,) and wavelengths (Dh/2,); got "
                         f"{d.shape}, {s.shape}, {w.shape}.")
    if not (np.isfinite(d).all() and np.isfinite(s).all() and np.isfinite(w).all()) \
            or (w <= 0).any():
        raise ValueError("the values must be finite and the wavelengths positive.")
    hover = f"%{{x}}<br>{text.hover_value}%{{y:.3f}}<extra></extra>"
    return (_line_chart(d, s, title=titles[0], axes=labels[:2], log=False, hover=hover),
            _line_chart(np.arange(1, len(w) + 1), w, title=titles[1], axes=labels[2:],
                        log=True, hover=hover))


def _line_chart(x: np.ndarray, y: np.ndarray, *, title: str, axes: tuple[str, str],
                log: bool, hover: str) -> go.Figure:
    """One line of (K,) ``y`` over (K,) ``x``, the axes titled ``axes`` (x, y), y on a log
    axis when ``log``."""
    return figure(data=[go.Scatter(x=x.tolist(), y=y, mode="lines+markers" if len(y) <= 64
                                   else "lines", hovertemplate=hover)],
                  layout=dict(title=dict(text=escape_html(title)), font=FONT,
                              xaxis=dict(title=dict(text=escape_html(axes[0]))),
                              yaxis=dict(title=dict(text=escape_html(axes[1])),
                                         type="log" if log else "linear"),
                              width=700, height=380))
