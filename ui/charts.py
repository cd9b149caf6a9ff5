"""Drawing a Plotly figure in the page: one place for the chart settings, and for putting
the text that the ``viz`` builders write themselves into the session's language."""

from __future__ import annotations

import streamlit as st

from .i18n import lang, viz_hover, viz_text

PLOTLY_CONFIG = {"displaylogo": False}

_BEAM_STATUS = "%{customdata[2]}"  # the beam tree's status, one status per trace
_MASK_STATES = {"blocked", "allowed"}


def _title(obj: dict | None) -> None:
    """Translate ``obj["title"]["text"]`` in place when it is one of the viz builders' own."""
    title = obj.get("title") if isinstance(obj, dict) else None
    if isinstance(title, dict) and isinstance(title.get("text"), str):
        title["text"] = viz_text(title["text"])


def localize_json(layout: dict, data: list[dict]) -> None:
    """Put the text a viz builder wrote itself into the session's language, in place, in a
    figure's JSON: axis, colour-bar and legend titles, subplot titles ("Head 3"), legend
    entries, hover labels and the mask's per-cell "blocked"/"allowed"."""
    for name, value in layout.items():
        if name.startswith(("xaxis", "yaxis", "legend")):
            _title(value)
    _title((layout.get("coloraxis") or {}).get("colorbar"))
    for ann in layout.get("annotations") or ():
        if isinstance(ann.get("text"), str):
            ann["text"] = viz_text(ann["text"])
    for trace in data:
        name, hover = trace.get("name"), trace.get("hovertemplate")
        if isinstance(hover, str):
            if name and _BEAM_STATUS in hover:
                hover = hover.replace(_BEAM_STATUS, viz_text(name))
            trace["hovertemplate"] = viz_hover(hover)
        if isinstance(name, str):
            trace["name"] = viz_text(name)
        colorbar = trace.get("colorbar")
        if isinstance(colorbar, dict):
            _title(colorbar)
            if colorbar.get("ticktext") is not None:
                colorbar["ticktext"] = [viz_text(x) for x in colorbar["ticktext"]]
        cells = trace.get("customdata")
        if getattr(cells, "ndim", 0) == 3 and cells.shape[-1] == 3 and cells.dtype == object \
                and set(cells[..., 2].flat) <= _MASK_STATES:
            cells = cells.copy()
            cells[..., 2] = [[viz_text(s) for s in row] for row in cells[..., 2]]
            trace["customdata"] = cells


def localize(fig):
    """``fig`` with its builder's own text in the session's language (as is in English).

    The strings are replaced in the figure's JSON, which Plotly keeps in ``fig._layout`` and
    ``fig._data``: one string for another needs no validation, and setting them through the
    property API would cost as much as building the figure again."""
    if lang() != "en":
        localize_json(fig._layout, fig._data)
    return fig


def chart(fig, key: str) -> None:
    """Draw a Plotly figure at the container's width, in the session's language."""
    st.plotly_chart(localize(fig), width="stretch", config=PLOTLY_CONFIG, key=key)
