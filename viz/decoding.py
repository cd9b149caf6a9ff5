"""Decoding figures: the top-k next-token probabilities at one step, and the beam-search
tree of every step's candidates."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from .axes import FONT, axis_title, figure, label_px, margins, token_axis
from .colors import BAR_COLOR, BEAM_COLORS, EDGE_COLOR, START_COLOR
from .colors import HIGHLIGHT_COLOR as CHOSEN_COLOR
from .convention import rank_number
from .text import ENGLISH, VizText, check_text
from .validate import check_index, check_range, check_tokens, check_vector, escape_html

__all__ = [
    "BAR_COLOR",
    "BEAM_COLORS",
    "CHOSEN_COLOR",
    "beam_path",
    "beam_tree",
    "probability_bars",
    "sequence_probabilities",
]


def probability_bars(
    tokens: Sequence[str],
    probs: np.ndarray,
    chosen: int | None = None,
    title: str = "",
    *,
    text: VizText = ENGLISH,
) -> go.Figure:
    """Horizontal bar chart of candidate next tokens, most probable on top.

    Args:
        tokens: K candidate token strings (repeats allowed; each keeps its own bar).
        probs: (K,) probabilities in [0, 1], in the same order as ``tokens`` (any order;
            the bars are sorted descending, ties keep their input order).
        chosen: index into ``tokens``/``probs`` of the token the decoder picked, drawn in
            ``CHOSEN_COLOR``; None highlights nothing.
        title: figure title (shown literally; HTML is escaped).
        text: the figure's own labels (axis titles, hover).

    Returns:
        A figure with one horizontal ``go.Bar``: y = integer positions 0..K-1 from the
        top, ticks showing the escaped tokens (axis ``text.token``), x = probability on a
        fixed 0-1 axis titled ``text.probability``, a percentage label on each bar and
        hover giving token and percent.

    Raises:
        ValueError: if probs is not a finite 1-D array of K values in [0, 1], tokens are
            not K strings, or chosen is not an int in 0..K-1.
    """
    return figure(**bars_panel(tokens, probs, chosen, title, text=text))


def bars_panel(
    tokens: Sequence[str],
    probs: np.ndarray,
    chosen: int | None = None,
    title: str = "",
    *,
    text: VizText = ENGLISH,
) -> dict:
    """:func:`probability_bars` as ``dict(data=[trace dict], layout={...})``, a panel for
    :func:`viz.axes.side_by_side` (no figure is built: Plotly validates a figure's every
    property, which the step figure would otherwise pay for twice). Arguments and errors
    as :func:`probability_bars`."""
    text = check_text(text)
    toks = check_tokens(tokens, "tokens")
    p = check_vector(probs, toks, "probs")
    check_range(p, 0.0, 1.0, "probs", hint="Apply softmax to the logits first.")
    pick = None if chosen is None else check_index(chosen, len(p), "chosen")

    order = np.argsort(-p, kind="stable")
    txt = [escape_html(toks[i]) for i in order]
    colors = [CHOSEN_COLOR if i == pick else BAR_COLOR for i in order]
    bar = dict(
        type="bar",
        x=p[order],  # sent as a list by viz.axes.figure
        y=list(range(len(p))),
        orientation="h",
        marker=dict(color=colors),
        text=[f"{v:.1%}" for v in p[order]],
        textposition="outside",
        cliponaxis=False,
        customdata=txt,
        hovertemplate="%{customdata}<br>" + text.hover_probability + "%{x:.1%}<extra></extra>",
    )
    return dict(
        data=[bar],
        layout=dict(
            title=dict(text=escape_html(title)),
            font=FONT,
            xaxis=dict(title=dict(text=text.probability), range=[0, 1], tickformat=".0%"),
            yaxis=token_axis(txt, reverse=True),
            annotations=[axis_title(text.token, txt, "y")],
            width=label_px(txt) + 560,
            height=len(p) * 30 + 160,
            margin=margins(txt) | dict(r=70),
            plot_bgcolor="white",
            showlegend=False,
        ),
    )


_BEAM_SYMBOLS = {"kept": "circle", "finished": "star", "pruned": "x"}
BEAM_STATUSES = tuple(BEAM_COLORS)
_Steps = Sequence[Sequence[tuple[int, str, float, str]]]  # beam_tree's steps


def beam_path(
    steps: Sequence[Sequence[tuple[int, str, float, str]]], end: tuple[int, int]
) -> list[tuple[int, int]]:
    """The (step, rank) nodes from step 0 to ``end`` along the parent links.

    Raises:
        ValueError: ``end`` or a parent index outside the recorded steps.
    """
    t, rank = end
    if not 0 <= t < len(steps) or not 0 <= rank < len(steps[t]):
        raise ValueError(f"end {end} is not a recorded candidate")
    path = [(t, rank)]
    while t > 0:
        kept = [r for r, c in enumerate(steps[t - 1]) if c[3] == "kept"]
        parent = steps[t][rank][0]
        if not 0 <= parent < len(kept):
            raise ValueError(
                f"step {t} candidate {rank} has parent {parent}, but step "
                f"{t - 1} kept {len(kept)} beams"
            )
        t, rank = t - 1, kept[parent]
        path.append((t, rank))
    return path[::-1]


def beam_tree(
    steps: Sequence[Sequence[tuple[int, str, float, str]]],
    highlight: tuple[int, int] | None = None,
    title: str = "",
    *,
    text: VizText = ENGLISH,
) -> go.Figure:
    """The beam-search tree: each step's ranked candidates and where they came from.

    Args:
        steps: for each step t, its candidates in rank order as
            ``(parent, token, cumulative_logprob, status)``; ``parent`` indexes the kept
            candidates of step t - 1 (0 for step 0, whose parent is ``<s>``); ``status`` is
            ``"kept"``, ``"finished"`` or ``"pruned"``; log-probabilities are natural logs.
        highlight: the (step, rank) where a hypothesis ends; its path is drawn in red.
        title: figure title (escaped).
        text: the figure's own labels: axis titles, the legend names of the statuses
            (``text.kept``, ``text.finished``, ``text.pruned``) and of the highlighted path
            (``text.selected_hypothesis``).

    Returns:
        A scatter figure: x = step (0 is ``<s>``, untitled; the steps' ticks read 1..T),
        y = rank within the step (best on top, at 0, its tick reading rank 1),
        one marker trace per status coloured by it (``BEAM_COLORS``), named by its label
        and labelled with each candidate's token, grey lines from each candidate to its
        parent, the highlighted path in red, and hover giving the token, its cumulative
        log-probability (``customdata`` [token, logprob]) and the status's label.

    Raises:
        ValueError: an unknown status, a parent that is not a kept beam, or a bad highlight.
    """
    text = check_text(text)
    _check_statuses(steps)
    edge_x, edge_y = _beam_edges(steps)
    traces = [go.Scatter(x=edge_x, y=edge_y, mode="lines", hoverinfo="skip",
                         line=dict(color=EDGE_COLOR, width=1), showlegend=False)]
    if highlight is not None:
        path = beam_path(steps, highlight)
        traces.append(go.Scatter(
            x=[0] + [t + 1 for t, _ in path],  # from <s> at (0, 0) to the end node
            y=[0] + [r for _, r in path],
            mode="lines",
            line=dict(color=CHOSEN_COLOR, width=3),
            hoverinfo="skip",
            name=text.selected_hypothesis,
        ))
    traces.append(go.Scatter(x=[0], y=[0], mode="markers+text", text=["&lt;s&gt;"],
                             textposition="middle left",
                             marker=dict(color=START_COLOR, size=10), hoverinfo="skip",
                             showlegend=False))
    traces += _status_traces(steps, text)
    return figure(data=traces, layout=_beam_layout(steps, title, text))


def _check_statuses(steps: _Steps) -> None:
    """Raise ``ValueError`` unless there is a step and every candidate is ``(parent, token,
    logprob, status)`` with a known status (``BEAM_STATUSES``)."""
    if not steps:
        raise ValueError("steps is empty: run at least one beam-search step")
    for t, step in enumerate(steps):
        for c in step:
            if len(c) != 4 or c[3] not in BEAM_COLORS:
                raise ValueError(
                    f"step {t}: each candidate must be (parent, token, logprob, "
                    f"status in {BEAM_STATUSES}), got {c!r}"
                )


def _beam_edges(steps: _Steps) -> tuple[list, list]:
    """The tree's lines, candidate to parent, as one trace's x and y (None between lines):
    step t's candidates at x = t + 1, their parents at x = t (``<s>`` at 0).

    Raises:
        ValueError: a parent that is not a kept beam of the step before.
    """
    edge_x: list = []
    edge_y: list = []
    for t, step in enumerate(steps):
        kept = [r for r, c in enumerate(steps[t - 1]) if c[3] == "kept"] if t else [0]
        for rank, c in enumerate(step):
            if not 0 <= c[0] < len(kept):
                raise ValueError(f"step {t} candidate {rank}: parent {c[0]} is not a kept beam")
            edge_x += [t, t + 1, None]
            edge_y += [kept[c[0]], rank, None]
    return edge_x, edge_y


def _status_traces(steps: _Steps, text: VizText) -> list[go.Scatter]:
    """One marker trace per status that has candidates, in ``BEAM_STATUSES`` order: named by
    the status's label, each candidate labelled with its token, hover giving the token, its
    cumulative log-probability and the status."""
    status_label = {"kept": text.kept, "finished": text.finished, "pruned": text.pruned}
    traces = []
    for status in BEAM_STATUSES:
        pts = [
            (t + 1, r, c)
            for t, step in enumerate(steps)
            for r, c in enumerate(step)
            if c[3] == status
        ]
        if not pts:
            continue
        tokens = [escape_html(c[1]) for _, _, c in pts]
        traces.append(
            go.Scatter(
                x=[p[0] for p in pts],
                y=[p[1] for p in pts],
                mode="markers+text",
                name=status_label[status],
                text=tokens,
                textposition="top center",
                marker=dict(color=BEAM_COLORS[status], symbol=_BEAM_SYMBOLS[status], size=11),
                customdata=[[tok, c[2]] for tok, (_, _, c) in zip(tokens, pts, strict=True)],
                hovertemplate="%{customdata[0]}<br>log p = %{customdata[1]:.3f}<br>"
                + status_label[status] + "<extra></extra>",
            )
        )
    return traces


def _beam_layout(steps: _Steps, title: str, text: VizText) -> dict:
    """The tree's layout: steps across (ticks 1..T), ranks down (best on top, rank 1:
    ``viz.convention``), as tall as the widest step needs, the legend under the plot."""
    width = max(len(s) for s in steps)
    return dict(
        title=dict(text=escape_html(title)),
        font=FONT,
        xaxis=dict(  # step t at x = t, from 1 (<s> at 0, the start, has no tick)
            title=dict(text=text.decoding_step),
            tickmode="array",
            tickvals=list(range(1, len(steps) + 1)),
            zeroline=False,
            showgrid=False,
        ),
        yaxis=dict(  # the best at y = 0, read as rank 1
            title=dict(text=text.rank_in_step),
            autorange="reversed",
            tickmode="array",
            tickvals=list(range(width)),
            ticktext=[str(rank_number(r)) for r in range(width)],
            zeroline=False,
        ),
        height=120 + 45 * width,
        plot_bgcolor="white",
        legend=dict(orientation="h", y=-0.2),
    )


def sequence_probabilities(
    tokens: Sequence[str],
    probs: np.ndarray,
    mark: int | None = None,
    title: str = "",
    *,
    forced: Sequence[bool] | None = None,
    text: VizText = ENGLISH,
) -> go.Figure:
    """The probability the model gave each token of a sequence, in sequence order.

    Args:
        tokens: T tokens (repeats keep their own bar).
        probs: (T,) probabilities in [0, 1] of those tokens at their steps.
        mark: index of a token to highlight (e.g. where a reference first differs from the
            model's own choice), drawn in ``CHOSEN_COLOR``; None marks nothing.
        forced: T flags; forced tokens are drawn hatched (given, not chosen).
        text: the figure's own labels (axis titles ``text.token``, ``text.probability``;
            hover).

    Returns:
        A vertical bar chart: x = positions 0..T-1 with the escaped tokens as ticks,
        y = probability on a fixed 0-1 axis, hover giving token and percent.

    Raises:
        ValueError: probs not T finite values in [0, 1], or a bad ``mark``/``forced``.
    """
    text = check_text(text)
    p, txt, pick = _check_sequence(tokens, probs, mark, forced)
    traces = [
        go.Bar(
            x=list(range(len(p))),
            y=p,
            marker=dict(
                color=[CHOSEN_COLOR if i == pick else BAR_COLOR for i in range(len(p))],
                pattern=dict(shape=["/" if f else "" for f in (forced or [False] * len(p))]),
            ),
            text=[f"{v:.0%}" for v in p],
            textposition="outside",
            cliponaxis=False,
            customdata=txt,
            hovertemplate="%{customdata}<br>" + text.hover_probability
            + "%{y:.1%}<extra></extra>",
        )
    ]
    return figure(
        data=traces,
        layout=dict(
            title=dict(text=escape_html(title)),
            font=FONT,
            xaxis=token_axis(txt),
            annotations=[axis_title(text.token, txt, "x")],
            yaxis=dict(title=dict(text=text.probability), range=[0, 1.12], tickformat=".0%"),
            height=300,
            margin=margins(None, txt) | dict(t=50),
            plot_bgcolor="white",
            showlegend=False,
        ),
    )


def _check_sequence(
    tokens: Sequence[str], probs: np.ndarray, mark: int | None,
    forced: Sequence[bool] | None,
) -> tuple[np.ndarray, list[str], int | None]:
    """:func:`sequence_probabilities`'s inputs checked: ``(p, txt, pick)``, the (T,) float32
    probabilities, the escaped tokens and the marked index (None: none). Raises as
    :func:`sequence_probabilities`."""
    toks = check_tokens(tokens, "tokens")
    p = check_vector(probs, toks, "probs")
    check_range(p, 0.0, 1.0, "probs", hint="Pass probabilities, not log-probabilities.")
    pick = None if mark is None else check_index(mark, len(p), "mark")
    if forced is not None and len(forced) != len(p):
        raise ValueError(f"forced has {len(forced)} flags for {len(p)} tokens")
    return p, [escape_html(t) for t in toks], pick
