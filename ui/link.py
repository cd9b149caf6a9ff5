"""The page's state in its URL, so that the address bar is always a link that reopens the
same view in the same language.

- The sidebar's settings are widgets bound to query parameters (``bind="query-params"``,
  ``BIND``): ``model``, ``sentence``, ``strategy`` and its settings, ``lang``.
- What the app itself changes (buttons move the step, a table row opens a head) and the
  view picker are written by ``write_link`` after each run as the same values in every
  language: ``view`` (the view's English id), ``step``, ``layer`` and ``head`` (of an
  attention view) and ``seed``; ``apply_link`` reads them back when a session opens a link.

A value in a link that does not fit (an unknown model, a step past the end, a layer the
model does not have) is left out and the default shown; ``report_dropped`` says which, once
per session.
"""

from __future__ import annotations

import streamlit as st

from model.core.config import layer_counts

from .i18n import KIND_VIEWS, LANG_KEY, STRINGS, TABS, URL_ALIASES, t, view_id
from .panels import ALL_HEADS
from .text import clip, code_span

BIND = "query-params"
_OPENED, _APPLIED, _REPORTED = "link_opened", "link_applied", "link_reported"
ATTENTION_VIEWS = {view: kind for kind, view in KIND_VIEWS.items()}  # views with pickers
MANUAL = ("view", "step", "layer", "head", "seed")  # the values write_link keeps


def remember_link() -> None:
    """On a session's first run, before any widget: the query parameters it was opened
    with."""
    if _OPENED not in st.session_state:
        st.session_state[_OPENED] = st.query_params.to_dict()


def _int(value: str | None, low: int, high: int) -> int | None:
    """``value`` as an int in [low, high], else None."""
    try:
        number = int(str(value))
    except ValueError:
        return None
    return number if low <= number <= high else None


def apply_link(translator) -> None:
    """On a session's first run, once its model is known: the link's view, step, layer,
    head and seed put into the widgets' state, each only if it fits the model (the step is
    clamped to the sentence later by the stepper)."""
    state = st.session_state
    if state.get(_APPLIED):
        return
    state[_APPLIED] = True
    opened, c = state.get(_OPENED) or {}, translator.config
    view = view_id(opened.get("view"))  # its id, or its label in either language
    if view is None:
        return
    state["view"] = view
    kind = ATTENTION_VIEWS.get(view)
    if kind is not None:
        layer = _int(opened.get("layer"), 0, layer_counts(c)[kind] - 1)
        head = (ALL_HEADS if opened.get("head") == ALL_HEADS
                else _int(opened.get("head"), 0, c.nhead - 1))
        if layer is not None:
            state[f"{view}_layer"] = layer
        if head is not None:
            state[f"{view}_head"] = head
    step = _int(opened.get("step"), 1, c.max_len)
    if step is not None:
        state["step"] = step
    seed = _int(opened.get("seed"), 0, 2**31 - 1)
    if seed is not None:
        state["seed"] = seed


def _manual_values() -> dict[str, str]:
    """The values ``write_link`` puts into the URL for the current state."""
    state = st.session_state
    view = view_id(state.get("view")) or TABS[0]
    values = {"view": view, "step": str(state.get("step", 1))}
    if view in ATTENTION_VIEWS:
        values["layer"] = str(state.get(f"{view}_layer", 0))
        values["head"] = str(state.get(f"{view}_head", ALL_HEADS))
    if state.get("strategy") == STRINGS["strategy_sampling"]["en"] and "seed" in state:
        values["seed"] = str(state["seed"])  # the sampling strategy's (controls.SAMPLING)
    return values


def write_link() -> None:
    """After a run (or a fragment's): the view, step, layer, head and seed into the URL."""
    values = _manual_values()
    for name in MANUAL:
        if name in values:
            if st.query_params.get(name) != values[name]:
                st.query_params[name] = values[name]
        elif name in st.query_params:
            del st.query_params[name]


def report_dropped() -> None:
    """Once per session, after its widgets are drawn: a warning naming the parameters of the
    link it was opened with that did not fit and were left out (a bound value equal to the
    default is left out too, but the app never writes one into a link)."""
    opened = st.session_state.get(_OPENED)
    if not opened or st.session_state.get(_REPORTED):
        return
    st.session_state[_REPORTED] = True
    now, manual = st.query_params.to_dict(), _manual_values()

    def applied(name: str, value: str) -> bool:
        if name == LANG_KEY:  # a short form (?lang=zh) is replaced by the option it names
            return now.get(name) in (value, URL_ALIASES.get(value.strip().lower()))
        if name == "view":
            return manual["view"] == view_id(value)
        if name in MANUAL:
            return manual.get(name) == value
        return now.get(name) == value

    dropped = [f"{name}={value}" for name, value in opened.items() if not applied(name, value)]
    if dropped:
        st.warning(t("link_dropped", params=", ".join(code_span(clip(d, 60))
                                                      for d in dropped[:8])))
