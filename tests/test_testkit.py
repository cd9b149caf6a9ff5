"""``benchmarks/`` and ``tests/`` share their helpers through ``testkit/``, not each other: no
benchmark imports a test module or puts ``tests/`` on ``sys.path``, ``testkit`` imports
neither, and a test imports a benchmark only where the test is about that benchmark (the
files listed in ``ABOUT_A_BENCHMARK``)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The tests that test a benchmark itself -> the benchmark modules each may import.
ABOUT_A_BENCHMARK = {
    # the click benchmark finds its widgets by the app's own ids
    "tests/test_benchmark_keys.py": {"benchmarks.clicks_page"},
    # the rule that chooses where the sidebar's sampling starts
    "tests/test_settings.py": {"benchmarks.sampling"},
    # the classroom benchmark's scenario, run with fewer clicks and more checks
    "tests/browser/test_classroom.py": {"benchmarks.classroom"},
    # the protocol and nginx benchmarks' clients and proxy, checked without timings
    "tests/test_serving.py": {"benchmarks.protocol", "benchmarks.proxy"},
}


def imported_modules(source: str) -> set[str]:
    """Every absolute module ``source`` imports, anywhere in the file (``from a import b``
    counts as ``a`` and ``a.b``)."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found |= {node.module} | {f"{node.module}.{a.name}" for a in node.names}
    return found


def path_insertions(source: str) -> list[str]:
    """The ``sys.path.insert`` / ``append`` calls of ``source`` that name ``tests``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("insert", "append")
                and ast.unparse(node.func.value) == "sys.path"
                and any(isinstance(n, ast.Constant) and "tests" in str(n.value)
                        for a in node.args for n in ast.walk(a))):
            found.append(f"line {node.lineno}: {ast.unparse(node)}")
    return found


def _top(names: set[str], packages: set[str]) -> set[str]:
    return {n for n in names if n.split(".")[0] in packages}


def _sources(folder: str) -> dict[str, str]:
    return {str(p.relative_to(ROOT)): p.read_text(encoding="utf-8")
            for p in sorted((ROOT / folder).rglob("*.py"))}


def test_the_finders_find_a_test_import_and_a_path_insertion():
    planted = ("import sys\nsys.path.insert(1, str(ROOT / 'tests'))\n"
               "from tests.apptest_helpers import run\nimport hf_tiny\n"
               "def f():\n    from benchmarks.harness import ROOT\n")
    assert path_insertions(planted) == ["line 2: sys.path.insert(1, str(ROOT / 'tests'))"]
    assert _top(imported_modules(planted), {"tests", "benchmarks", "hf_tiny"}) == {
        "tests.apptest_helpers", "tests.apptest_helpers.run", "hf_tiny", "benchmarks.harness",
        "benchmarks.harness.ROOT"}


def test_no_benchmark_imports_the_tests_or_puts_them_on_the_path():
    # a test module is importable by its bare name once tests/ is on sys.path
    test_modules = {"tests"} | {p.stem for p in (ROOT / "tests").rglob("*.py")}
    found = {}
    for folder in ("benchmarks", "testkit"):
        for name, source in _sources(folder).items():
            bad = sorted(_top(imported_modules(source), test_modules)) + path_insertions(source)
            if bad:
                found[name] = bad
    assert found == {}


def test_testkit_imports_no_benchmark():
    found = {name: sorted(_top(imported_modules(source), {"benchmarks"}))
             for name, source in _sources("testkit").items()}
    assert {k: v for k, v in found.items() if v} == {}


def test_tests_import_a_benchmark_only_where_they_test_it():
    found = {}
    for name, source in _sources("tests").items():
        modules = {m for m in _top(imported_modules(source), {"benchmarks"})
                   if (ROOT / f"{m.replace('.', '/')}.py").is_file()}  # the modules only
        if modules:
            found[name] = modules
    assert found == ABOUT_A_BENCHMARK
