"""The import graph of fyexp: no cycle (file and package level) and no import from a lower layer to a higher one.

Every module of ``fyexp/`` is parsed with :mod:`ast`; every ``import`` counts, those inside functions and under
``TYPE_CHECKING`` included (a lazy import is still a dependency).  ``from A import b`` is an edge to ``A`` and, when
``A.b`` is a module, to ``A.b``; an import of a module's own ancestor package is not an edge (importing a module
runs its parents anyway).  A module's *package* is ``fyexp.<first component>`` (a top-level module is its own).

:data:`LAYERS` is the layer order, bottom first, written down once (docs/layout.md describes it): a module may
import its own layer and the layers below, never one above; inside a layer the package graph must still be acyclic.
A new top-level package must be placed in a layer, or :func:`test_every_package_has_a_layer` fails.

Imports follow need: ``fyexp --help``, ``list`` and ``show`` read YAML and print, so the installed script imports
none of :data:`HEAVY` for them (checked with ``python -X importtime``, ``show`` for every experiment of
``experiments/``).  ``show NAME`` resolves the spec against the ``Config`` of the runner's sibling module
``<runner>_config``, which imports nothing heavy (checked in a fresh interpreter); the runner itself, with its
heavy pieces, is imported when a cell runs.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import networkx as nx
import pytest
import yaml

from tests.conftest import ROOT, TOY_SPECS, cli_env, fyexp_script

# bottom first; each entry one layer of packages (fyexp.<name>)
LAYERS: list[tuple[str, ...]] = [
    ("errors", "io", "plain", "allocator", "gitinfo", "damaged", "domains", "constraints", "devices", "progress", "reference", "results",
     "provenance", "latent", "plots", "work_dirs", "latex", "user_cache"),
    ("distributions", "maps", "losses"),
    ("models", "objectives", "em", "data", "metrics", "topics", "calibration"),
    ("train",),
    ("specs",),
    ("settings", "cell_filter", "tuning"),
    ("experiments",),
    ("runner", "fingerprints", "spec_freshness"),
    ("executors", "lease", "plan", "plan_scaled", "overview"),
    ("claims",),
    ("report",),
    ("commands",),
    ("reproduce",),
    ("cli",),
]


# third-party packages `fyexp --help / list / show` must not import (hundreds of ms and MB each)
HEAVY = ("torch", "optuna", "sqlalchemy", "matplotlib", "pandas", "sklearn", "scipy")

def modules(root: Path) -> dict[str, Path]:
    """Dotted module name → file, for every ``*.py`` under ``root`` (a package folder named like its package)."""
    found = {}
    for path in root.rglob("*.py"):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def import_graph(root: Path = ROOT / "fyexp") -> nx.DiGraph:
    """Module → module edges of every import of the package at ``root`` (see the module docstring)."""
    mods = modules(root)
    top = root.name

    def resolve(name: str) -> str | None:
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name or None

    graph = nx.DiGraph()
    for name, path in mods.items():
        graph.add_node(name)
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(parts + ([base] if base else []))
                targets = [base] + [f"{base}.{alias.name}" for alias in node.names]
            else:
                continue
            for target in targets:
                if target == top or target.startswith(top + "."):
                    found = resolve(target)
                    if found and found != name and not name.startswith(found + "."):
                        graph.add_edge(name, found)
    return graph


def package_of(module: str) -> str:
    return ".".join(module.split(".")[:2])


def package_graph(graph: nx.DiGraph) -> nx.DiGraph:
    packages = nx.DiGraph()
    packages.add_nodes_from(package_of(m) for m in graph if "." in m)
    packages.add_edges_from((package_of(a), package_of(b)) for a, b in graph.edges if package_of(a) != package_of(b))
    return packages


def cycles(graph: nx.DiGraph) -> list[list[str]]:
    """The strongly connected components of more than one node, each sorted (an import cycle each)."""
    return sorted(sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1)


def cycle_edges(graph: nx.DiGraph, component: list[str]) -> list[str]:
    inside = set(component)
    return [f"{a} -> {b}" for a, b in graph.edges if a in inside and b in inside]


def layer_violations(graph: nx.DiGraph, layers=LAYERS, top: str = "fyexp") -> list[str]:
    """Every edge from a module of a lower layer to a module of a higher one."""
    rank = {f"{top}.{p}": i for i, layer in enumerate(layers) for p in layer}
    return sorted(f"{a} -> {b} (layer {rank[package_of(a)]} imports layer {rank[package_of(b)]})"
                  for a, b in graph.edges
                  if package_of(a) in rank and package_of(b) in rank and rank[package_of(a)] < rank[package_of(b)])


GRAPH = import_graph()


def test_no_import_cycle_between_modules():
    found = cycles(GRAPH)
    assert not found, "\n".join(f"cycle {c}:\n  " + "\n  ".join(cycle_edges(GRAPH, c)) for c in found)


def test_no_import_cycle_between_packages():
    packages = package_graph(GRAPH)
    found = cycles(packages)
    detail = [f"{a} -> {b}" for a, b in GRAPH.edges
              for c in found if package_of(a) in c and package_of(b) in c and package_of(a) != package_of(b)]
    assert not found, f"package cycles {found}, through:\n  " + "\n  ".join(detail)


def test_no_lower_layer_imports_a_higher_one():
    violations = layer_violations(GRAPH)
    assert not violations, "\n".join(violations)


def test_every_package_has_a_layer():
    declared = {f"fyexp.{p}" for layer in LAYERS for p in layer}
    assert len(declared) == sum(len(layer) for layer in LAYERS), "a package is named in two layers"
    present = set(package_graph(GRAPH)) - {"fyexp"}
    assert present <= declared, f"place these packages in LAYERS: {sorted(present - declared)}"
    assert declared <= present, f"LAYERS names packages that do not exist: {sorted(declared - present)}"


def test_the_checks_see_a_planted_cycle_and_an_upward_import(tmp_path):
    """The graph builder finds imports inside functions and under TYPE_CHECKING; a cycle and a layer breach fail."""
    pkg = tmp_path / "fyexp"
    (pkg / "report").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "errors.py").write_text("def f():\n    from fyexp.report import tables\n")
    (pkg / "report" / "__init__.py").write_text("")
    (pkg / "report" / "tables.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..errors import f\n")
    graph = import_graph(pkg)
    assert set(graph.edges) >= {("fyexp.errors", "fyexp.report.tables"), ("fyexp.report.tables", "fyexp.errors")}
    assert cycles(graph) == [["fyexp.errors", "fyexp.report.tables"]]
    assert cycles(package_graph(graph)) == [["fyexp.errors", "fyexp.report"]]
    assert layer_violations(graph, [("errors",), ("report",)]) == [
        "fyexp.errors -> fyexp.report (layer 0 imports layer 1)",
        "fyexp.errors -> fyexp.report.tables (layer 0 imports layer 1)"]


# ------------------------------------------------------------------------------------------ imports follow need
def top_level_imports(path: Path) -> set[str]:
    """Modules imported when ``path`` is imported: its imports outside functions and ``if TYPE_CHECKING:``."""
    found: set[str] = set()

    def visit(nodes):
        for node in nodes:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                continue
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                visit(node.orelse)
                continue
            if isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and not node.level:
                found.update([node.module] + [f"{node.module}.{alias.name}" for alias in node.names])
            visit(ast.iter_child_nodes(node))

    visit(ast.parse(path.read_text(encoding="utf-8")).body)
    return found


def heavy_at_import(module: str, root: Path = ROOT / "fyexp") -> set[str]:
    """The packages of :data:`HEAVY` that importing ``module`` (with its parent packages) imports."""
    mods = modules(root)
    seen, todo, heavy = set(), [module], set()
    while todo:
        name = todo.pop()
        parents = [".".join(name.split(".")[:i]) for i in range(1, name.count(".") + 2)]
        for part in parents:
            if part in seen or part not in mods:
                continue
            seen.add(part)
            for target in top_level_imports(mods[part]):
                if target.split(".")[0] in HEAVY:
                    heavy.add(target.split(".")[0])
                elif target.startswith("fyexp"):
                    todo.append(target)
    return heavy


def test_the_static_import_check_follows_top_level_imports_only(tmp_path):
    pkg = tmp_path / "fyexp"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "light.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import torch\n"
                                  "def f():\n    import optuna\nfrom fyexp import middle\n")
    (pkg / "middle.py").write_text("import yaml\n")
    (pkg / "heavy.py").write_text("from fyexp.light import f\ntry:\n    import matplotlib.pyplot\nexcept ImportError:\n"
                                  "    pass\n")
    assert heavy_at_import("fyexp.light", pkg) == set()
    assert heavy_at_import("fyexp.heavy", pkg) == {"matplotlib"}


RUNNERS = sorted({yaml.safe_load(p.read_text(encoding="utf-8"))["runner"] for p in (ROOT / "experiments").glob("*.yaml")})
EXPERIMENTS = sorted(p.stem for p in (ROOT / "experiments").glob("*.yaml"))


def test_the_framework_a_config_needs_is_light():
    framework = ["fyexp.cli", "fyexp.specs", "fyexp.experiments", "fyexp.experiments.grid", "fyexp.results",
                 "fyexp.train", "fyexp.train.config", "fyexp.tuning"]   # what a Config may need, all light
    assert {m: heavy_at_import(m) for m in framework} == {m: set() for m in framework}


@pytest.mark.slow
@pytest.mark.parametrize("runner", RUNNERS)
def test_every_config_module_imports_nothing_heavy(runner):
    """``fyexp.experiments.<runner>_config`` exists and importing it (in a fresh interpreter) loads none of HEAVY."""
    code = (f"import importlib, sys; importlib.import_module('fyexp.experiments.{runner}_config'); "
            f"print(' '.join(sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r}))))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=cli_env(), cwd=ROOT,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == [], f"fyexp.experiments.{runner}_config imports {done.stdout.split()}"


@pytest.mark.parametrize("runner", RUNNERS)
def test_the_light_config_is_the_runners_config(runner):
    from fyexp.experiments import get_config_class, get_experiment

    assert get_config_class(runner) is get_experiment(runner).Config


def _imported_by_the_script(*args: str, experiments_dir: Path = TOY_SPECS) -> set[str]:
    """Top-level packages the installed ``fyexp ARGS`` imports (``python -X importtime``, in a subprocess)."""
    done = subprocess.run([sys.executable, "-X", "importtime", fyexp_script(), *args], capture_output=True, text=True,
                          env=cli_env({"FYEXP_EXPERIMENTS_DIR": str(experiments_dir)}), cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = [line.split("|")[-1] for line in done.stderr.splitlines() if line.startswith("import time:")]
    return {line.strip().split(".")[0] for line in lines[1:]}   # the first line is the header


@pytest.mark.slow
@pytest.mark.parametrize("args", [("--help",), ("list",), ("list", "--json"), ("show", "toy", "--profile", "quick")])
def test_list_show_and_help_import_nothing_heavy(args):
    imported = _imported_by_the_script(*args)
    assert "fyexp" in imported and "yaml" in imported or args == ("--help",)
    assert not imported & set(HEAVY), f"fyexp {' '.join(args)} imported {sorted(imported & set(HEAVY))}"


@pytest.mark.slow
@pytest.mark.parametrize("name", EXPERIMENTS)
def test_show_of_every_experiment_imports_nothing_heavy(name):
    imported = _imported_by_the_script("show", name, experiments_dir=ROOT / "experiments")
    assert "fyexp" in imported
    assert not imported & set(HEAVY), f"fyexp show {name} imported {sorted(imported & set(HEAVY))}"
