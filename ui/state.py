"""The page's view state, in one place: which view is open, at which step, with which layer
and head, on which sentence, in which mode, and the decoding settings' link form.

``read()`` returns it as a frozen ``ViewState``; the writers below are the only code that
changes it, and the session-state key names are the constants of this module only (a test,
``tests/test_state.py``, holds every other module of ``ui/`` and ``app.py`` to that). The
widgets that show a part of the view state (the step slider, the view picker, the layer and
head pickers, the sentence box, the model picker, the lesson switch) take their ``key=`` from
here, so a widget and the code that opens a view name the same value.

Values are ids and numbers, as a link holds them (``ui.link``), except that layers and heads
are 0-based indices here (a link numbers them from 1: ``viz.convention``). This module imports
no other module of ``ui``: every other one may import it.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

# -- the session-state keys of the view state ---------------------------------------------------
VIEW_KEY = "view"  # the view picker's key: its value is the view's id (``ui.i18n.VIEWS``)
STEP_KEY = "step"  # the step slider's key: the step, 1-based
SENTENCE_KEY = "sentence"  # the sidebar's sentence box
DEFAULT_SENTENCE = "why do we work ?"  # a first visit's sentence (serve.py decodes it first)
DEFAULT_SENTENCES = {"zh": "我们今天不能回家。"}  # a model reading Chinese (zh -> en) starts here
COMPARE_KEY = "compare"  # the Side by side view's second sentence (``compare=`` in links)
COMPARE_MODEL_KEY = "compare_model"  # the Side by side view's second model (a widget's key)
MODEL_KEY = "model"  # the model picker (a folder or hub name)
PLAYING_KEY = "playing"  # Play is on
SHOWN_KEY = "shown"  # (model, sentence) of the decoding shown: a new one starts at step 1
BRANCH_KEY = "branch"  # (step, token) of the open branch
HYPOTHESIS_KEY = "hypothesis"  # the beam hypothesis picker (its index)
MODE_KEY = "page_mode"  # the Explore / Lesson switch: one of ``MODES``
CHAPTER_KEY = "lesson"  # the lesson's chapter, 1-based (a link's ``?lesson=N``)
SETTINGS_KEY = "link_settings"  # the decoding settings' link form (``to_query``)

MODES = ("explore", "lesson")
# The view a first visit opens: attention, the thing a class came to see (issue 33).
DEFAULT_VIEW = "cross"
# The views with a layer and a head of their own (``layer_key``, ``head_key``).
PICKED_VIEWS = ("encoder", "decoder", "cross", "attribution", "compare",
                "sequence", "to_prompt", "prompt", "continuation")  # the last: one stack
ALL_HEADS = "all"  # the head of an attention view that shows every head of the layer


def layer_key(view: str) -> str:
    """The key of view ``view``'s layer picker (its value a 0-based layer)."""
    return f"{view}_layer"


def head_key(view: str) -> str:
    """The key of view ``view``'s head picker (a 0-based head, or ``ALL_HEADS``, or the Side
    by side view's mean)."""
    return f"{view}_head"


PICKER_KEYS = tuple(key(view) for view in PICKED_VIEWS for key in (layer_key, head_key))
#: Every key of the view state (the pickers' included).
KEYS = (VIEW_KEY, STEP_KEY, SENTENCE_KEY, COMPARE_KEY, MODEL_KEY, PLAYING_KEY, SHOWN_KEY,
        BRANCH_KEY, HYPOTHESIS_KEY, MODE_KEY, CHAPTER_KEY, SETTINGS_KEY, *PICKER_KEYS)


@dataclass(frozen=True)
class ViewState:
    """What the page shows, as ids and numbers.

    Attributes:
        view: the open view's id (``DEFAULT_VIEW`` until one is chosen).
        step: the decoding step, 1-based (clamped to the decoding by ``ui.stepper``).
        layer: the open view's layer, 0-based; None when it has no picker or none was set.
        head: the open view's head, 0-based, or ``ALL_HEADS``; None as for ``layer``.
        sentence: the sidebar's sentence (None before the sidebar sets it).
        compare: the Side by side view's second sentence ("" when none).
        model: the model picker's choice (None before the picker is drawn).
        mode: "explore" or "lesson".
        chapter: the lesson's chapter, 1-based.
        playing: whether Play is on.
        branch: (step, token) of the open branch, or None.
        hypothesis: the beam hypothesis shown (an index), or None.
        settings: the decoding settings in their link form, as (name, value) pairs.
    """

    view: str = DEFAULT_VIEW
    step: int = 1
    layer: int | None = None
    head: int | str | None = None
    sentence: str | None = None
    compare: str = ""
    model: str | None = None
    mode: str = "explore"
    chapter: int = 1
    playing: bool = False
    branch: tuple[int, str] | None = None
    hypothesis: int | None = None
    settings: tuple[tuple[str, str], ...] = ()

    @property
    def lesson(self) -> bool:
        """Whether the page is in lesson mode."""
        return self.mode == "lesson"


def _int(value, default: int) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


def read() -> ViewState:
    """The session's view state (defaults where a part was never set)."""
    state = st.session_state
    view = state.get(VIEW_KEY) or DEFAULT_VIEW
    picked = view in PICKED_VIEWS
    branch = state.get(BRANCH_KEY)
    hypothesis = state.get(HYPOTHESIS_KEY)
    return ViewState(
        view=view, step=_int(state.get(STEP_KEY), 1),
        layer=state.get(layer_key(view)) if picked else None,
        head=state.get(head_key(view)) if picked else None,
        sentence=state.get(SENTENCE_KEY), compare=state.get(COMPARE_KEY) or "",
        model=state.get(MODEL_KEY), mode=state.get(MODE_KEY) or "explore",
        chapter=_int(state.get(CHAPTER_KEY), 1), playing=bool(state.get(PLAYING_KEY, False)),
        branch=tuple(branch) if branch is not None else None,
        hypothesis=None if hypothesis is None else _int(hypothesis, 0),
        settings=tuple(sorted((state.get(SETTINGS_KEY) or {}).items())))


# -- the writers ----------------------------------------------------------------------------------

def set_step(k: int) -> None:
    """Go to step ``k`` (1-based)."""
    st.session_state[STEP_KEY] = k


def open_step(k: int) -> None:
    """Go to step ``k`` and stop Play (a button that opens one step)."""
    set_step(k)
    set_playing(False)


def set_playing(on: bool) -> None:
    """Start or stop Play."""
    st.session_state[PLAYING_KEY] = on


def set_view(view: str) -> None:
    """Open view ``view`` (an id), leaving the mode as it is."""
    st.session_state[VIEW_KEY] = view


def settle_view(view: str) -> None:
    """Before the view picker: its value is ``view`` (an id), set only where it is not
    already (a first run, or a view named by its label)."""
    if st.session_state.get(VIEW_KEY) != view:
        set_view(view)


def set_picked(view: str, *, layer: int | None = None, head: int | str | None = None) -> None:
    """View ``view``'s layer and head (0-based; None leaves one as it is)."""
    if layer is not None:
        st.session_state[layer_key(view)] = layer
    if head is not None:
        st.session_state[head_key(view)] = head


def default_head(view: str, head: int | str) -> None:
    """View ``view``'s head, if none is chosen yet."""
    st.session_state.setdefault(head_key(view), head)


def open_view(view: str, *, layer: int | None = None, head: int | str | None = None,
              sentence: str | None = None, compare: str | None = None) -> None:
    """Explore view ``view`` (leaving the lesson if it is shown), at ``layer`` and ``head``
    when given, on ``sentence`` (and the second sentence ``compare``) when given."""
    st.session_state[MODE_KEY] = "explore"
    set_view(view)
    set_picked(view, layer=layer, head=head)
    if sentence is not None or compare is not None:
        set_sentence(sentence, compare=compare)


def set_compare_model(name: str) -> None:
    """The Side by side view's second model (a folder or hub name; "" = the page's)."""
    st.session_state[COMPARE_MODEL_KEY] = name


def set_sentence(sentence: str | None, *, compare: str | None = None) -> None:
    """The sidebar's sentence (and the second sentence); None leaves one as it is."""
    if sentence is not None:
        st.session_state[SENTENCE_KEY] = sentence
    if compare is not None:
        st.session_state[COMPARE_KEY] = compare


def default_sentence(sentence: str) -> None:
    """The sidebar's sentence, if none is set yet."""
    st.session_state.setdefault(SENTENCE_KEY, sentence)


def set_model(name: str) -> None:
    """The model picker's choice."""
    st.session_state[MODEL_KEY] = name


def set_mode(mode: str) -> None:
    """Explore or lesson mode (one of ``MODES``)."""
    st.session_state[MODE_KEY] = mode


def set_chapter(number: int) -> None:
    """The lesson's chapter (1-based), kept while the lesson is not shown."""
    st.session_state[CHAPTER_KEY] = number


def set_branch(step: int, token: str) -> None:
    """Open a branch: ``token`` at ``step`` instead of the model's choice."""
    st.session_state[BRANCH_KEY] = (step, token)


def close_branch() -> None:
    """Close the branch, if one is open."""
    st.session_state.pop(BRANCH_KEY, None)


def set_settings(query: dict[str, str]) -> None:
    """The decoding settings' link form (``GenerationSettings.to_query``)."""
    st.session_state[SETTINGS_KEY] = query


def settings_query() -> dict[str, str]:
    """The decoding settings' link form, as ``set_settings`` left it ({} before)."""
    return dict(st.session_state.get(SETTINGS_KEY) or {})


def decoding_shown(model: str, sentence: str) -> None:
    """The page shows ``sentence`` decoded by ``model``: when that is a new decoding, a
    later one starts at step 1 (a link's step stays for the first), with Play stopped, no
    branch and the best beam hypothesis."""
    state = st.session_state
    shown = state.get(SHOWN_KEY)
    if shown == (model, sentence):
        return
    state[SHOWN_KEY] = (model, sentence)
    if shown is not None:
        set_step(1)
    for stale in (BRANCH_KEY, PLAYING_KEY, HYPOTHESIS_KEY):
        state.pop(stale, None)
