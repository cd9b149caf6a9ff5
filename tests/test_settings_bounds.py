"""Every bound of a decoding setting is written once, in ``model.decoding.settings.BOUNDS``:
``GenerationSettings`` checks against it, the sidebar's widgets are built from it, a link's
value is used exactly when the settings accept it, and the decoding functions (strategies,
processors, the padded batch) check their arguments with its ``check`` instead of numbers
of their own."""

from __future__ import annotations

import ast
import math
from dataclasses import fields
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from model import GenerationSettings, InputError
from model.decoding.settings import BOUNDS, STARTS, STRATEGY_FIELDS
from ui.controls import BEAM_SEARCH_LOW, RANGES
from ui.link import settings_from_link

ROOT = Path(__file__).resolve().parent.parent
SETTINGS = Path("model/decoding/settings.py")
SCANNED = ("model", "ui", "viz", "benchmarks", "app.py", "serve.py")
FIELDS = {f.name for f in fields(GenerationSettings)} & set(BOUNDS)  # the numeric settings
# Parameters that hold a setting under another name, by module.
ALIASES = {Path("model/decoding/processors.py"): {"size", "penalty"}}
# The decoding functions that check a setting's bound: each calls settings.check.
CHECKERS = ("model/decoding/strategies.py", "model/decoding/processors.py",
            "model/analysis/batch.py")


def _names_a_setting(node: ast.AST, names: set[str]) -> bool:
    return (isinstance(node, ast.Name) and node.id in names
            or isinstance(node, ast.Attribute) and node.attr in names)


def _is_number(node: ast.AST) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        node = node.operand
    return (isinstance(node, ast.Constant) and isinstance(node.value, int | float)
            and not isinstance(node.value, bool))


def bound_literals(source: str, names: set[str]) -> list[str]:
    """The checks in ``source`` that compare a setting (one of ``names``) with a number
    written in place: an ``if`` whose body raises, or an ``assert``, e.g.
    ``if not 1 <= num_beams <= 8: raise ...``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.If) and any(isinstance(n, ast.Raise) for s in node.body
                                            for n in ast.walk(s)):
            test = node.test
        elif isinstance(node, ast.Assert):
            test = node.test
        else:
            continue
        for cmp in (n for n in ast.walk(test) if isinstance(n, ast.Compare)):
            operands = [cmp.left, *cmp.comparators]
            if any(_names_a_setting(o, names) for o in operands) and any(
                    _is_number(o) for o in operands):
                found.append(f"line {cmp.lineno}: {ast.unparse(cmp)}")
    return found


def scanned_files() -> list[Path]:
    files = []
    for entry in SCANNED:
        path = ROOT / entry
        files += sorted(path.rglob("*.py")) if path.is_dir() else [path]
    return [p for p in files if p.relative_to(ROOT) != SETTINGS]


def test_the_bound_finder_finds_a_bound_written_in_place():
    planted = ("def f(num_beams, s):\n"
               "    if not 1 <= num_beams <= 8:\n        raise ValueError(num_beams)\n"
               "    assert s.top_p > 0\n"
               "    if s.num_beams > 1:\n        return 'beam'\n")  # a branch, not a check
    assert bound_literals(planted, FIELDS) == ["line 2: 1 <= num_beams <= 8",
                                               "line 4: s.top_p > 0"]


def test_no_module_but_settings_writes_a_decoding_bound():
    found = {}
    for path in scanned_files():
        names = FIELDS | ALIASES.get(path.relative_to(ROOT), set())
        hits = bound_literals(path.read_text(encoding="utf-8"), names)
        if hits:
            found[str(path.relative_to(ROOT))] = hits
    assert found == {}, "check these with model.decoding.settings.check / BOUNDS"


@pytest.mark.parametrize("module", CHECKERS)
def test_the_decoding_functions_check_with_the_settings_table(module):
    tree = ast.parse((ROOT / module).read_text(encoding="utf-8"))
    imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
                and (n.module or "").endswith("settings") for a in n.names}
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)
             and isinstance(n.func, ast.Name) and n.func.id == "check"]
    assert "check" in imported and calls, module
    for call in calls:  # each names a setting of the table
        assert isinstance(call.args[0], ast.Constant | ast.Name), ast.unparse(call)
        if isinstance(call.args[0], ast.Constant):
            assert call.args[0].value in BOUNDS, ast.unparse(call)


def _owner(name: str) -> str:
    """The strategy whose widgets include setting ``name`` (greedy: every strategy's)."""
    return next((s for s, names in STRATEGY_FIELDS.items() if name in names), "greedy")


def test_the_sidebar_widgets_are_the_settings_table():
    assert set(RANGES) == {name for name, b in BOUNDS.items() if b.step is not None}
    for name, (low, high, default, step) in RANGES.items():
        bound = BOUNDS[name]
        assert (low if name != "num_beams" else BEAM_SEARCH_LOW - 1) == bound.low, name
        assert (high, step) == (bound.high, bound.step), name
        assert default == getattr(STARTS[_owner(name)], name), name
        kind = int if bound.integer else float  # a widget's numbers are of one type
        assert {type(x) for x in (low, high, default, step)} == {kind}, name
        assert low <= default <= high and step > 0, name
    # one beam is greedy decoding, the strategy radio's own choice; two is beam search
    assert GenerationSettings(num_beams=BEAM_SEARCH_LOW - 1).strategy == "greedy"
    assert GenerationSettings(num_beams=BEAM_SEARCH_LOW).strategy == "beam"


def _value(bound) -> st.SearchStrategy:
    """Numbers around and on ``bound``'s edges: whole numbers for an integer setting, any
    float (NaN and infinities too) otherwise."""
    if bound.integer:
        return st.integers(bound.low - 3, bound.high + 3)
    edges = [bound.low, bound.high, math.nextafter(bound.low, -math.inf),
             math.nextafter(bound.high, math.inf), math.nan, math.inf, -math.inf]
    return st.floats(bound.low - 1, bound.high + 1) | st.sampled_from(edges)


def _sidebar_offers(name: str, value) -> bool:
    """Whether the sidebar can give setting ``name`` this ``value``: within its widget's
    range, or one beam (the greedy strategy, chosen by the radio)."""
    low, high, _, _ = RANGES[name]
    return low <= value <= high or name == "num_beams" and value == BEAM_SEARCH_LOW - 1


@given(st.sampled_from(sorted(RANGES)).flatmap(
    lambda name: st.tuples(st.just(name), _value(BOUNDS[name]))))
def test_the_settings_a_link_and_the_sidebar_accept_the_same_values(case):
    name, value = case
    try:
        accepted = GenerationSettings(**{name: value})
    except InputError:
        accepted = None
    values, dropped = settings_from_link({"strategy": _owner(name), name: str(value)})
    if name == "num_beams" and value == BEAM_SEARCH_LOW - 1:  # a beam link of one beam
        linked = values.get("strategy") == "greedy" and name not in dropped
    else:
        linked = name in values and name not in dropped
    assert linked == (accepted is not None) == _sidebar_offers(name, value), (name, value)
    if linked and name in values:  # the link's value is the settings' own
        assert values[name] == getattr(accepted, name)


def test_a_temperature_of_3_is_refused_by_the_settings_the_link_and_the_sidebar():
    with pytest.raises(InputError, match=r"temperature must be a number from 0 to 2; got 3"):
        GenerationSettings(do_sample=True, temperature=3)
    values, dropped = settings_from_link({"strategy": "sampling", "temperature": "3"})
    assert "temperature" in dropped and values == {"strategy": "sampling"}
    assert not _sidebar_offers("temperature", 3)
