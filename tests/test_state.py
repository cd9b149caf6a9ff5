"""The one typed view state (``ui.state``): no other module of ``ui/`` or ``app.py`` spells
one of its session-state keys, ``read()`` returns what a link opened, and the writers change
what they say."""

from __future__ import annotations

import ast
from pathlib import Path
from types import SimpleNamespace

import pytest
from apptest_helpers import APP, GRAMMAR_MODEL
from streamlit.testing.v1 import AppTest

from ui import state
from ui.state import ALL_HEADS, ViewState
from viz.convention import FIRST_NUMBER

ROOT = Path(__file__).resolve().parents[1]
ACCESS = ("get", "setdefault", "pop", "update", "__contains__", "__getitem__", "__setitem__")
PICKER_SUFFIXES = ("_layer", "_head")


def _is_session_state(node: ast.AST, aliases: set[str]) -> bool:
    """``st.session_state`` (or ``session_state`` of any name), or a name bound to it."""
    return ((isinstance(node, ast.Attribute) and node.attr == "session_state")
            or (isinstance(node, ast.Name) and node.id in aliases))


def _aliases(tree: ast.AST) -> set[str]:
    """Names a module binds to ``st.session_state`` (``state = st.session_state``, or one
    name of a tuple assignment)."""
    names = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Assign):
            continue
        for target in node.targets:
            pairs = ([(target, node.value)] if not isinstance(target, ast.Tuple) else
                     zip(target.elts, getattr(node.value, "elts", []), strict=False))
            names |= {t.id for t, v in pairs if isinstance(t, ast.Name)
                      and _is_session_state(v, set())}
    return names


def _spelled(node: ast.AST | None) -> list[str]:
    """The view-state keys ``node`` spells: a string literal that is one, or an f-string
    ``f"{...}_layer"`` / ``f"{...}_head"`` (a view's picker key built by hand); inside a
    tuple, list or set, each element's; a dict's keys."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value] if node.value in state.KEYS else []
    if isinstance(node, ast.JoinedStr) and node.values:
        last = node.values[-1]
        if (isinstance(last, ast.Constant) and isinstance(last.value, str)
                and last.value in PICKER_SUFFIXES and len(node.values) == 2):
            return [ast.unparse(node)]
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return [k for e in node.elts for k in _spelled(e)]
    if isinstance(node, ast.Dict):
        return [k for e in node.keys for k in _spelled(e)]
    return []


def spelled_keys(source: str) -> list[tuple[int, str]]:
    """(line, key) of every view-state key spelled in a ``st.session_state`` access
    (subscript, ``.get``, ``.setdefault``, ``.pop``, ``.update`` (dict keys and keyword
    names), ``in``, a callback ``on_click=st.session_state.pop, args=(...)``) or as a
    widget's ``key=``."""
    tree = ast.parse(source)
    aliases = _aliases(tree)
    found: list[tuple[int, list[str]]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and _is_session_state(node.value, aliases):
            found.append((node.lineno, _spelled(node.slice)))
        elif isinstance(node, ast.Compare) and any(
                isinstance(op, ast.In | ast.NotIn) for op in node.ops) and any(
                _is_session_state(c, aliases) for c in node.comparators):
            found.append((node.lineno, _spelled(node.left)))
        elif isinstance(node, ast.Call):
            func = node.func
            if (isinstance(func, ast.Attribute) and func.attr in ACCESS
                    and _is_session_state(func.value, aliases)):
                found.append((node.lineno, [k for a in node.args for k in _spelled(a)]))
                found.append((node.lineno, [kw.arg for kw in node.keywords
                                            if kw.arg in state.KEYS]))
            for kw in node.keywords:
                if kw.arg == "key":
                    found.append((node.lineno, _spelled(kw.value)))
                elif (isinstance(kw.value, ast.Attribute) and kw.value.attr in ACCESS
                      and _is_session_state(kw.value.value, aliases)):  # on_click=...pop
                    found += [(node.lineno, _spelled(k.value)) for k in node.keywords
                              if k.arg == "args"]
    return sorted((line, key) for line, keys in found for key in keys)


def test_the_key_finder_finds_every_kind_of_access():
    source = '''
import streamlit as st
state = st.session_state
a, s = 1, st.session_state
st.session_state["step"] = 1
x = st.session_state.get("view")
st.session_state.setdefault("sentence", "")
state.pop("branch", None)
s.update(playing=True)
state.update({"shown": 1})
if "hypothesis" in st.session_state: pass
st.slider("Step", 1, 9, key="step")
st.selectbox("Layer", [0], key=f"{view}_layer")
st.button("x", on_click=st.session_state.pop, args=("branch",))
st.session_state["ticked"] = True
st.button("y", key="lesson_try")
st.selectbox("Layer", [0], key="batch_layer")
print("step", {"view": 1})
'''
    assert spelled_keys(source) == [
        (5, "step"), (6, "view"), (7, "sentence"), (8, "branch"), (9, "playing"),
        (10, "shown"), (11, "hypothesis"), (12, "step"), (13, "f'{view}_layer'"),
        (14, "branch")]


def _modules() -> list[Path]:
    return [ROOT / "app.py", *sorted(p for p in (ROOT / "ui").rglob("*.py")
                                     if p != ROOT / "ui" / "state.py")]


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_only_ui_state_spells_a_view_state_key(path):
    spelled = spelled_keys(path.read_text(encoding="utf-8"))
    assert spelled == [], f"read and write these through ui.state: {spelled}"


def test_the_key_names_are_defined_only_in_ui_state():
    """No other module assigns a view-state key's name as a string literal to a constant."""
    for path in _modules():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
                assert node.value.value not in state.PICKER_KEYS, (path, node.lineno)


@pytest.fixture
def session(monkeypatch) -> dict:
    """``ui.state`` reading and writing a plain dict as its session state."""
    values: dict = {}
    monkeypatch.setattr(state, "st", SimpleNamespace(session_state=values))
    return values


def test_read_has_defaults_and_each_view_its_own_layer_and_head(session):
    assert state.read() == ViewState()
    session.update({state.layer_key("cross"): 1, state.head_key("cross"): 2,
                    state.layer_key("encoder"): 0, state.head_key("encoder"): ALL_HEADS})
    state.set_view("encoder")
    assert (state.read().layer, state.read().head) == (0, ALL_HEADS)
    state.open_view("cross")
    assert (state.read().view, state.read().layer, state.read().head) == ("cross", 1, 2)
    state.open_view("heads")  # no pickers of its own
    assert (state.read().layer, state.read().head) == (None, None)


def test_the_writers(session):
    state.set_mode("lesson")
    state.set_chapter(4)
    assert state.read().lesson and state.read().chapter == 4
    state.open_view("compare", sentence="a b", compare="c d", layer=1, head=-1)
    now = state.read()
    assert (now.mode, now.view, now.sentence, now.compare, now.layer, now.head) == (
        "explore", "compare", "a b", "c d", 1, -1)
    state.set_playing(True)
    state.set_branch(3, "x")
    state.decoding_shown("m", "a b")  # the first decoding keeps a link's step
    state.set_step(5)
    state.decoding_shown("m", "a b")
    assert (state.read().step, state.read().playing, state.read().branch) == (5, False, None)
    state.set_playing(True)
    state.decoding_shown("m", "other")  # a new sentence starts at step 1, stopped
    assert (state.read().step, state.read().playing) == (1, False)
    state.open_step(4)
    assert (state.read().step, state.read().playing) == (4, False)
    state.set_settings({"strategy": "beam", "num_beams": "4"})
    assert dict(state.read().settings) == {"strategy": "beam", "num_beams": "4"}


def test_read_returns_what_a_link_opened(monkeypatch):
    """``?view=cross&layer=2&head=3&step=2``: layers and heads in a link are numbered from
    ``FIRST_NUMBER`` (``viz.convention``), in the view state from 0."""
    at = AppTest.from_file(APP, default_timeout=180)
    for name, value in {"model": GRAMMAR_MODEL, "view": "cross", "layer": "2", "head": "3",
                        "step": "2"}.items():
        at.query_params[name] = value
    at.run()
    assert not at.exception, at.exception
    values = {key: at.session_state[key] for key in state.KEYS if key in at.session_state}
    monkeypatch.setattr(state, "st", SimpleNamespace(session_state=values))
    now = state.read()
    assert (now.view, now.layer, now.head, now.step) == (
        "cross", 2 - FIRST_NUMBER, 3 - FIRST_NUMBER, 2)
    assert now.model == GRAMMAR_MODEL and now.mode == "explore" and now.sentence
    assert hash(now) == hash(state.read())  # frozen and hashable: a cache key if need be
