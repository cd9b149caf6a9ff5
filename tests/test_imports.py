"""The project's modules import in one direction only: no import cycles (imports inside
functions and under ``TYPE_CHECKING`` count), ``model``'s packages by role each import
only those below them, and so do ``ui``'s (the view state, the page's shared parts, the
views and the player, the lesson), ``model`` imports no Streamlit or Plotly, ``viz`` no torch,
Streamlit or ``model``; no module is over 600 lines; and outside ``tests/`` no function is
over 60 lines or takes more than four parameters by position."""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("model", "viz", "ui", "benchmarks", "testkit")
SCRIPTS = ("app.py", "serve.py")
MAX_LINES = 600
MAX_FUNCTION_LINES = 60  # outside tests/: from ``def`` to the last line, docstring included
MAX_POSITIONAL = 4  # outside tests/: parameters that may be passed by position, less self/cls
# model's packages, lowest first: each may import only those at its level or below.
MODEL_LAYERS = {"model.errors": 0, "model.tasks": 0, "model.core": 1, "model.decoding": 2,
                "model.backends": 3, "model.analysis": 4, "model.training": 5}
# ui's parts by role, lowest first (the longest prefix decides): the view state, the page's
# shared parts (ui's top-level modules), the views and the player, the lesson.
# ui.warm, like app.py, imports every panel (the warm-up imports what app.py imports).
UI_LAYERS = {"ui.state": 0, "ui": 1, "ui.views": 2, "ui.player": 2, "ui.lesson": 3,
             "ui.warm": 4}


def module_names(root: Path, packages=PACKAGES, scripts=SCRIPTS) -> dict[str, Path]:
    """Dotted module name -> file, for every module of ``packages`` and the ``scripts``."""
    files = [p for pkg in packages for p in (root / pkg).rglob("*.py")]
    files += [root / s for s in scripts if (root / s).is_file()]
    names = {}
    for path in files:
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join(parts)] = path
    return names


def import_graph(root: Path, packages=PACKAGES, scripts=SCRIPTS) -> nx.DiGraph:
    """Module -> the project modules it imports, wherever the import statement is
    (module level, inside a function, under ``if TYPE_CHECKING``). ``from pkg import name``
    is an edge to ``pkg.name`` when that is a module, else to ``pkg``."""
    modules = module_names(root, packages, scripts)
    graph = nx.DiGraph()
    graph.add_nodes_from(modules)
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    source = ".".join(base + ([node.module] if node.module else []))
                else:
                    source = node.module or ""
                targets = [f"{source}.{a.name}" if f"{source}.{a.name}" in modules else source
                           for a in node.names]
            for target in targets:
                while target and target not in modules:  # `import a.b.c` of a package a.b
                    target = target.rpartition(".")[0]
                if target and target != name:
                    graph.add_edge(name, target)
    return graph


def external_imports(path: Path) -> set[str]:
    """The top-level names of every package ``path`` imports, anywhere in the file."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_the_cycle_finder_finds_a_cycle_through_a_function_level_import(tmp_path):
    pkg = tmp_path / "model"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from .b import f\n")
    (pkg / "b.py").write_text("def f():\n    from . import a\n")
    graph = import_graph(tmp_path, packages=("model",), scripts=())
    assert list(nx.simple_cycles(graph)) in ([["model.a", "model.b"]], [["model.b", "model.a"]])


def test_no_import_cycles():
    cycles = sorted(sorted(c) for c in nx.simple_cycles(import_graph(ROOT)))
    assert cycles == [], f"import cycles: {cycles[:5]}"


def _layer(module: str) -> tuple[str, int] | None:
    for prefix, level in MODEL_LAYERS.items():
        if module == prefix or module.startswith(prefix + "."):
            return prefix, level
    return None


def test_model_packages_import_only_downwards():
    graph = import_graph(ROOT)
    every = [m for m in graph if m.startswith("model.")]
    assert all(_layer(m) for m in every), [m for m in every if not _layer(m)]
    upward = [(a, b) for a, b in graph.edges if _layer(a) and _layer(b)
              and _layer(a)[1] < _layer(b)[1]]
    assert upward == []


def _ui_layer(module: str) -> int | None:
    prefixes = [p for p in UI_LAYERS if module == p or module.startswith(p + ".")]
    return UI_LAYERS[max(prefixes, key=len)] if prefixes else None


def test_ui_packages_import_only_downwards():
    graph = import_graph(ROOT)
    assert {_ui_layer(m) for m in graph if m.startswith("ui.")} == {0, 1, 2, 3, 4}
    upward = [(a, b) for a, b in graph.edges if _ui_layer(a) is not None
              and _ui_layer(b) is not None and _ui_layer(a) < _ui_layer(b)]
    assert upward == [], "ui's shared parts import no view, player or lesson; views no lesson"
    sideways = [(a, b) for a, b in graph.edges
                if {a.split(".")[:2][-1], b.split(".")[:2][-1]} == {"views", "player"}]
    assert sideways == [], "the views and the player do not import each other"


@pytest.mark.parametrize(("package", "banned"), [
    ("model", {"streamlit", "plotly", "ui", "viz", "app", "benchmarks", "testkit"}),
    ("viz", {"streamlit", "torch", "model", "ui", "app", "benchmarks", "testkit"}),
])
def test_layers_keep_their_dependencies(package, banned):
    found = {str(p.relative_to(ROOT)): sorted(external_imports(p) & banned)
             for p in (ROOT / package).rglob("*.py")}
    assert {k: v for k, v in found.items() if v} == {}


def test_no_module_is_over_600_lines():
    files = [p for p in ROOT.rglob("*.py")
             if not {".venv", ".git", "node_modules"} & set(p.relative_to(ROOT).parts)]
    long = {str(p.relative_to(ROOT)): n for p in files
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert long == {}


def test_every_table_is_drawn_by_export_show_and_built_without_pa_array():
    # pyarrow's array builders and Streamlit's lazy dataframe check import pandas: the app
    # draws tables only through ui.export.show (lazy=False) and builds them with its table().
    for name, path in module_names(ROOT).items():
        if name == "ui.export" or name.startswith(("benchmarks", "testkit")):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute):
                assert node.attr not in ("dataframe", "data_editor", "table") or not (
                    isinstance(node.value, ast.Name) and node.value.id in ("st", "box")), \
                    f"{name} draws a table itself (line {node.lineno})"
            if isinstance(node, ast.Import | ast.ImportFrom):
                modules = [a.name for a in node.names] if isinstance(node, ast.Import) else [
                    node.module or ""]
                assert not any(m.split(".")[0] in ("pyarrow", "pandas") for m in modules), \
                    f"{name} imports {modules} (tables come from ui.export.table)"


def function_shapes(path: Path) -> list[tuple[str, int, int]]:
    """(name, lines, positional parameters) of every function and method in ``path``,
    nested ones included: lines from ``def`` (decorators not counted) to the function's last
    line, docstring included; positional parameters those that may be passed by position
    (``*args`` not counted), less a method's ``self`` or ``cls``."""
    shapes = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            names = [a.arg for a in node.args.posonlyargs + node.args.args]
            if names and names[0] in ("self", "cls"):
                names = names[1:]
            shapes.append((node.name, node.end_lineno - node.lineno + 1, len(names)))
    return shapes


def _checked_modules() -> list[Path]:
    """Every Python file of the repository outside ``tests/`` (the app, serve.py, model/,
    viz/, ui/, benchmarks/, testkit/, docs/)."""
    skip = {".venv", ".git", "tests", "node_modules", "runs", "data"}
    return sorted(p for p in ROOT.rglob("*.py") if not skip & set(p.relative_to(ROOT).parts))


def test_the_function_shape_finder_counts_lines_and_positional_parameters(tmp_path):
    path = tmp_path / "m.py"
    path.write_text("class A:\n"
                    "    @staticmethod\n"
                    "    def f(self, a, b, c, d, *, e):\n"
                    '        """Doc."""\n'
                    "        return a\n"
                    "def g(a, b, c, d, e, *args, f=1):\n"
                    "    def h(cls, /, x):\n"
                    "        pass\n")
    assert sorted(function_shapes(path)) == [("f", 3, 4), ("g", 3, 5), ("h", 2, 1)]


def test_no_function_outside_tests_is_over_60_lines():
    long = [f"{p.relative_to(ROOT)}: {name} ({n} lines)" for p in _checked_modules()
            for name, n, _ in function_shapes(p) if n > MAX_FUNCTION_LINES]
    assert long == [], "split these into private helpers, one job each"


def test_functions_outside_tests_take_parameters_past_the_fourth_by_keyword():
    wide = [f"{p.relative_to(ROOT)}: {name} ({n} positional parameters)"
            for p in _checked_modules() for name, _, n in function_shapes(p)
            if n > MAX_POSITIONAL]
    assert wide == [], "make the parameters after the fourth keyword-only (*)"
