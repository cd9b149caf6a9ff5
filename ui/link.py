"""The page's state in its URL, so that the address bar is always a link that reopens the
same view, in either language.

Every value in a link is a stable, language-independent id or a number:
- bound to query parameters by Streamlit (``bind="query-params"``, ``BIND``): ``model`` (a
  folder or hub name), ``sentence`` (the text typed), ``lang`` (``English`` or
  ``简体中文``, each valid in a link), ``present`` and ``pinyin`` (``true`` / ``false``, written
  only where they differ from the default: ``ui.charts.present_switch``, ``ui.pinyin.switch``);
- written by ``write_link`` after each run and read back by ``apply_link`` when a session
  opens a link: the decoding settings in ``GenerationSettings.to_query``'s encoding
  (``strategy=beam&num_beams=4``), ``view`` (the view's id: ``cross``), ``step``, and the
  ``layer`` and ``head`` of an attention view, numbered as a person reads them (from 1,
  ``viz.convention``: ``layer=2`` is the view's "Layer 2"; ``head=all`` for every head); in
  lesson mode ``lesson`` (the chapter's
  number, 1-based: ``?lesson=3``; a number out of range opens chapter 1 and is reported).

Links made before the ids still open: a view or strategy named by its label in either
language (``view=Cross-attention``, ``strategy=束搜索``) is read as its id. A value that
does not fit (an unknown model, a step past the end, a layer the model does not have, a
setting out of range) is left out and the default shown; ``report_dropped`` names them
at the top of the page, once per session.
"""

from __future__ import annotations

import streamlit as st

from model import GenerationSettings
from model.core.config import layer_counts
from model.decoding.settings import QUERY_FIELDS, STRATEGY_FIELDS
from viz.convention import FIRST_NUMBER, head_number, layer_number

from . import state as view_state
from .controls import ANY_STRATEGY, strategy_aliases
from .i18n import KIND_VIEWS, LANG_KEY, LANGUAGES, ONE_STACK_KINDS, URL_ALIASES, t, view_id
from .state import ALL_HEADS, DEFAULT_VIEW
from .text import clip, code_span

BIND = "query-params"
_OPENED, _APPLIED, _REPORTED = "link_opened", "link_applied", "link_reported"
_DROPPED = "link_dropped"
ATTENTION_VIEWS = {**{view: kind for kind, view in KIND_VIEWS.items()},
                   **ONE_STACK_KINDS}  # views with layer and head pickers, and their kind
VIEW_PARAMS = ("view", "step", "layer", "head", "lesson")  # written by write_link
SETTING_PARAMS = ("strategy", *dict.fromkeys(f for fs in STRATEGY_FIELDS.values() for f in fs),
                  *QUERY_FIELDS)


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


def settings_from_link(opened: dict[str, str]) -> tuple[dict[str, object], list[str]]:
    """The link's decoding settings as the sidebar's widget values (widget key -> value:
    ``strategy`` and the settings of its widgets), and the names of the parameters that
    could not be used. A value is used exactly when ``GenerationSettings.from_query``
    accepts it: the widgets' ranges are the settings' own (``ui.controls.RANGES``). The
    languages, the task, the chat template and a length limit are left to ``apply_link``
    (dropped here)."""
    settings, dropped = GenerationSettings.from_query(opened, strategy_aliases())
    dropped = list(dropped)
    values: dict[str, object] = {}
    if "strategy" in opened and "strategy" not in dropped:
        values["strategy"] = settings.strategy
    # The strategy's widgets, and those of every strategy.
    for name in (*STRATEGY_FIELDS[settings.strategy], *ANY_STRATEGY):
        if name in opened and name not in dropped:
            values[name] = getattr(settings, name)
    # The languages and the task: apply_link, which knows the model's; no widget takes a
    # length limit.
    dropped += [name for name in ("src_lang", "tgt_lang", "task", "chat", "max_new_tokens")
                if name in opened]
    return values, dropped


def apply_link(translator, *, chapters: int) -> None:
    """On a session's first run, once its model is known: the link's settings, view, step,
    layer and head put into the widgets' state, each only if it fits the model (the step is
    clamped to the sentence later by the stepper), and its lesson chapter if it is one of
    ``chapters``; what did not fit is kept for ``report_dropped``."""
    state = st.session_state
    if state.get(_APPLIED):
        return
    state[_APPLIED] = True
    opened, c = state.get(_OPENED) or {}, translator.config
    values, dropped = settings_from_link(opened)
    state.update(values)
    info = translator.info
    for name, allowed in (("src_lang", info.languages), ("tgt_lang", info.languages),
                          ("task", info.task_prefixes)):  # the model's own pickers
        if name in opened and opened[name] in allowed:
            state[name] = opened[name]
            dropped.remove(name)
    if info.chat_template and str(opened.get("chat", "")).lower() in ("true", "false"):
        state["chat"] = str(opened["chat"]).lower() == "true"  # the chat switch
        dropped.remove("chat")
    view = view_id(opened.get("view"))  # its id, or its label in either language
    if "view" in opened and view is None:
        dropped.append("view")
    if view is not None:
        view_state.set_view(view)
    kind = ATTENTION_VIEWS.get(view)
    for name in ("layer", "head"):
        if name not in opened:
            continue
        if kind is None:
            dropped.append(name)
            continue
        count = layer_counts(c)[kind] if name == "layer" else c.nhead
        number = _int(opened[name], FIRST_NUMBER, count - 1 + FIRST_NUMBER)  # as people read
        value = (ALL_HEADS if name == "head" and opened[name] == ALL_HEADS
                 else None if number is None else number - FIRST_NUMBER)
        if value is None:
            dropped.append(name)
        else:
            view_state.set_picked(view, **{name: value})
    if "lesson" in opened:  # lesson mode, at the chapter asked for (chapter 1 if none fits)
        view_state.set_mode("lesson")
        number = _int(opened["lesson"], 1, chapters)
        view_state.set_chapter(number or 1)
        if number is None:
            dropped.append("lesson")
    step = _int(opened.get("step"), 1, c.max_len)
    if step is not None:
        view_state.set_step(step)
    elif "step" in opened:
        dropped.append("step")
    state[_DROPPED] = dropped


def remember_settings(settings: GenerationSettings) -> None:
    """After the sidebar: the settings' URL encoding, for ``write_link`` (which a step
    click's fragment run calls without the sidebar)."""
    view_state.set_settings(settings.to_query())


def _link_values() -> dict[str, str]:
    """The values ``write_link`` puts into the URL for the current view state."""
    now = view_state.read()
    view = view_id(now.view) or DEFAULT_VIEW
    values = {**dict(now.settings), "view": view, "step": str(now.step)}
    if view in ATTENTION_VIEWS:
        values["layer"] = str(layer_number(0 if now.layer is None else now.layer))
        head = ALL_HEADS if now.head is None else now.head
        values["head"] = head if head == ALL_HEADS else str(head_number(head))
    if now.lesson:
        values["lesson"] = str(now.chapter)
    return values


def write_link() -> None:
    """After a run (or a fragment's): the settings, view, step, layer and head into the
    URL, and any stale one of them out of it."""
    values = _link_values()
    for name in (*SETTING_PARAMS, *VIEW_PARAMS):
        if name in values:
            if st.query_params.get(name) != values[name]:
                st.query_params[name] = values[name]
        elif name in st.query_params:
            del st.query_params[name]


def _bound_applied(name: str, value: str, now: dict[str, str]) -> bool:
    """Whether a bound parameter of the link was used: its value is in the URL now, or (a
    bound value equal to the default is left out of the URL) the widget shows it."""
    if name == LANG_KEY:  # English (the default) or 简体中文, or a short form of either
        wanted = URL_ALIASES.get(value.strip().lower(), value)
        return LANGUAGES.get(wanted) is not None and st.session_state.get(LANG_KEY) == wanted
    shown = st.session_state.get(name)
    if isinstance(shown, bool):  # a switch: the link says true / false
        return now.get(name) == value or str(shown).lower() == value.strip().lower()
    return now.get(name) == value or shown == value


def report_dropped(where) -> None:
    """Once per session, after its widgets are drawn: a warning in ``where`` (a container
    at the top of the page) naming the parameters of the link it was opened with that did
    not fit and were left out."""
    opened = st.session_state.get(_OPENED)
    if not opened or st.session_state.get(_REPORTED):
        return
    st.session_state[_REPORTED] = True
    now, handled = st.query_params.to_dict(), set(st.session_state.get(_DROPPED, []))
    ours = {*SETTING_PARAMS, *VIEW_PARAMS}
    dropped = [f"{name}={value}" for name, value in opened.items()
               if name in handled or (name not in ours and not _bound_applied(name, value, now))]
    if dropped:
        where.warning(t("link_dropped", params=", ".join(code_span(clip(d, 60))
                                                         for d in dropped[:8])))
