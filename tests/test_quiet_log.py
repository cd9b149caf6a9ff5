"""Every button and switch of the app, pressed in AppTest (the real app and models, no mocks),
leaves the log quiet: not one warning or traceback from Streamlit's loggers or any other, no
exception on the page (issue 54).

Each session opens a model of one direction (English -> Chinese in the English interface,
Chinese -> English in the Chinese one), then presses, found on the page as it is: every
button, every toggle and checkbox (turned over and back), every option of every radio and
segmented control, on the default page, in every view, for a sentence in the other language
(where the verdict offers the model of the other direction: the switch button), and in every
chapter of the lesson.
What one press changes (the model, the sentence, the language, the mode, the view, the
chapter) is set back with the page's own widgets before the next press.

Streamlit logs its warning for a widget given a default value and a Session State value only
once per process (``streamlit.elements.lib.policies``): the flag that keeps it quiet is reset
before every press, so that each press can show it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import pytest
import streamlit.elements.lib.policies as policies
from apptest_helpers import APP
from streamlit.testing.v1 import AppTest

from ui.i18n import LANGUAGES, VIEWS
from ui.lesson import chapters
from ui.state import CHAPTER_KEY, MODE_KEY, MODEL_KEY, SENTENCE_KEY, VIEW_KEY

#: The widgets pressed: a click for a button, over and back for a toggle or a checkbox, each
#: option for a radio or a segmented control (``button_group``).
KINDS = ("button", "toggle", "checkbox", "radio", "button_group")
#: The model of each direction, and a sentence in the other language (its verdict offers a
#: button that opens the sentence with the model of the other direction).
DIRECTIONS = {"en-zh-everyday": "我们为什么工作？", "zh-en-everyday": "Why do we work?"}


@dataclass(frozen=True)
class Place:
    """Where a press is made, as the page's own widgets set it: the model, the sentence, the
    interface language (a ``LANGUAGES`` label), the mode, the view (explore) and the chapter
    (lesson, 1-based)."""

    model: str
    sentence: str
    lang: str
    mode: str = "explore"
    view: str = "cross"
    chapter: int = 1

    def __str__(self) -> str:
        where = self.view if self.mode == "explore" else f"chapter {self.chapter}"
        return f"{self.lang}, {self.model}, {where}"


class Collected(logging.Handler):
    """Every record at WARNING or above, kept."""

    def __init__(self) -> None:
        super().__init__(level=logging.WARNING)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@contextmanager
def logged() -> Iterator[Collected]:
    """Records at WARNING or above from the root logger and every ``streamlit`` logger
    (Streamlit's loggers do not propagate to the root: each gets the handler itself),
    while the block runs."""
    handler = Collected()
    loggers = [logging.getLogger()] + [
        lg for name, lg in logging.root.manager.loggerDict.items()
        if name.startswith("streamlit") and isinstance(lg, logging.Logger)]
    for lg in loggers:
        lg.addHandler(handler)
    try:
        yield handler
    finally:
        for lg in loggers:
            lg.removeHandler(handler)


def said(records: list[logging.LogRecord]) -> list[str]:
    """Each record as its logger, level and first line, with a traceback's last line."""
    out = []
    for r in records:
        line = f"{r.name} {r.levelname}: {r.getMessage().splitlines()[0]}"
        if r.exc_info or r.stack_info:
            line += " (with a traceback)"
        out.append(line)
    return out


def find(at: AppTest, kind: str, name: str):
    """The widget of ``kind`` named ``name`` (its key, else its label) on the page, or
    None."""
    return next((w for w in at.get(kind) if (w.key or w.label) == name and not w.disabled),
                None)


def names(at: AppTest) -> list[tuple[str, str]]:
    """(kind, name) of every button and switch on the page, the sidebar's first."""
    found = [(kind, w.key or w.label) for area in (at.sidebar, at.main) for kind in KINDS
             for w in area.get(kind) if not w.disabled]
    return [c for c in dict.fromkeys(found) if c != ("button_group", VIEW_KEY)]  # walked


def steps(widget, kind: str) -> list[object]:
    """What pressing ``widget`` sets, in order: a click; a switch turned over and back; each
    other option of a radio or a segmented control (by its label, which the app's
    ``format_func`` gives back as it is), then the one it had."""
    if kind == "button":
        return ["click"]
    if kind in ("toggle", "checkbox"):
        return [not widget.value, bool(widget.value)]
    shown = widget.options
    was = (widget.index if kind == "radio" else (widget.indices or [None])[0])
    if was is None:  # nothing chosen yet (a lesson's question): each option
        return list(shown)
    return [*(label for label in shown if label != shown[was]), shown[was]]


def _set(at: AppTest, kind: str, key: str, value) -> None:
    """The widget ``key`` set to ``value`` (a selectbox's and a radio's by value, a
    segmented control's by value) if it is not, and the page run."""
    widget = find(at, kind, key)
    if widget.value != value:
        (widget.input(value) if kind == "text_input" else widget.set_value(value)).run()


def go_to(at: AppTest, place: Place) -> None:
    """Set the page back to ``place`` with its own widgets: language, model, sentence, mode,
    then the view or the chapter."""
    _set(at, "radio", "lang", place.lang)
    _set(at, "selectbox", MODEL_KEY, place.model)
    _set(at, "text_input", SENTENCE_KEY, place.sentence)
    _set(at, "radio", MODE_KEY, place.mode)
    if place.mode == "explore":
        _set(at, "button_group", VIEW_KEY, place.view)
        return
    for _ in range(len(chapters())):
        k = at.session_state[CHAPTER_KEY]
        if k == place.chapter:
            return
        find(at, "button", "lesson_next" if k < place.chapter else "lesson_prev").click().run()
    raise AssertionError(f"chapter {place.chapter} not reached")


class Session:
    """One AppTest session and what its presses left in the log."""

    def __init__(self, place: Place, handler: Collected) -> None:
        self.at = AppTest.from_file(APP, default_timeout=180)
        self.at.query_params.update({"model": place.model, "lang": place.lang})
        self.handler = handler
        self.noise: list[str] = []
        self.done: set[tuple[str, str]] = set()  # pressed, and not to be pressed again
        self.common: set[tuple[str, str]] | None = None  # those of the first page walked
        self.presses = 0
        self.act(place, "open", self.at.run)

    def act(self, place: Place, what: str, run: Callable[[], object]) -> None:
        """``run`` (a press, then a run of the page), with Streamlit's once-a-process warning
        made possible again; what it logged, or the exception the page shows, noted."""
        policies._shown_default_value_warning = False
        before = len(self.handler.records)
        run()
        self.presses += 1
        where = f"{place}: {what}"
        self.noise += [f"{where}: {line}" for line in said(self.handler.records[before:])]
        if self.at.exception:
            self.noise.append(f"{where}: exception {self.at.exception[0].value}")

    def press(self, place: Place, kind: str, name: str, *, deeper: bool = True) -> None:
        """Press one widget (``steps``); after each step that leaves the page in another state,
        the buttons and switches that came with it, each once; then back to ``place``."""
        widget = find(self.at, kind, name)
        for step in steps(widget, kind) if widget is not None else []:
            widget = find(self.at, kind, name)
            if widget is None:
                break
            before = set(names(self.at))
            self.act(place, f"{kind} {name} -> {step}",
                     lambda w=widget, s=step: (w.click() if s == "click" else w.set_value(s)).run())
            if deeper and kind != "button":
                for new in [c for c in names(self.at) if c not in before]:
                    self.press(place, *new, deeper=False)
        self.act(place, "back", lambda: go_to(self.at, place))

    def walk(self, place: Place) -> None:
        """Press every button and switch of the page at ``place`` until none is left that
        has not been pressed: the sidebar's, and those of the first page walked (above the
        views: the stepper, the view's switches), once a session; the rest (a view's own, a
        chapter's) at each place."""
        self.act(place, "go", lambda: go_to(self.at, place))
        while todo := [c for c in names(self.at) if c not in self.done]:
            self.done.add(todo[0])
            self.press(place, *todo[0])
        sidebar = {(kind, w.key or w.label) for kind in KINDS for w in self.at.sidebar.get(kind)}
        if self.common is None:
            self.common = set(self.done)
        self.done &= self.common | sidebar


@pytest.fixture
def quiet():
    """The handler that collects the log, on every logger, for the test."""
    with logged() as handler:
        yield handler


@pytest.mark.slow
@pytest.mark.parametrize(("model", "lang"), zip(DIRECTIONS, LANGUAGES, strict=True))
def test_every_button_and_switch_leaves_the_log_quiet(model, lang, quiet):
    # One session per direction, each in one interface language (English -> Chinese in
    # English, Chinese -> English in Chinese): the language switch is among the controls
    # pressed, so each session also turns the page to the other language and back.
    home = Place(model, "", lang)
    session = Session(home, quiet)
    home = Place(model, session.at.text_input(key=SENTENCE_KEY).value, lang)
    session.walk(home)  # the default page
    for view in VIEWS:
        session.walk(Place(home.model, home.sentence, lang, view=view))
    session.walk(Place(model, DIRECTIONS[model], lang))  # the other language: the switch
    for chapter in range(1, len(chapters()) + 1):
        session.walk(Place(model, home.sentence, lang, mode="lesson", chapter=chapter))
    assert session.presses > 100
    assert not session.noise, f"{len(session.noise)} noisy presses:\n" + "\n".join(
        session.noise[:20])
