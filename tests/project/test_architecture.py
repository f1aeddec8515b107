"""The import rules of fyexp: no lower layer imports a higher one, no import cycle, imports follow need.

The layer order and the acyclicity are two import-linter contracts, written once in ``pyproject.toml``
(``[tool.importlinter]``; docs/layout.md describes the layers): a ``layers`` contract over the children of ``fyexp``
(a module imports its own layer and those below, never one above; ``exhaustive``: a new top-level module or package
must be placed in a layer) and an ``acyclic_siblings`` contract (no cycle among the modules or packages of any one
package, ``fyexp`` itself included).  import-linter's graph (grimp) counts every import, those inside functions and
under ``TYPE_CHECKING`` too: a lazy import is still a dependency.  :func:`test_the_contracts_catch_a_planted_breach`
runs the same two contract types on a planted package, each side of each rule.

Imports follow need: ``fyexp --help``, ``list`` and ``show`` read YAML and print, so the installed script imports
none of :data:`HEAVY` for them (checked with ``python -X importtime``, ``show`` for every experiment of
``experiments/``).  ``show NAME`` resolves the spec against the ``Config`` of the runner's sibling module
``<runner>_config``, which imports nothing heavy (checked in a fresh interpreter); the runner itself, with its
heavy pieces, is imported when a cell runs.
"""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT, TOY_SPECS, cli_env, fyexp_script

# third-party packages `fyexp --help / list / show` must not import (hundreds of ms and MB each)
HEAVY = ("torch", "optuna", "sqlalchemy", "matplotlib", "pandas", "sklearn", "scipy")


def lint(config: Path, capsys) -> tuple[bool, str]:
    """Whether every import-linter contract of ``config`` is kept (no cache written), and its report."""
    from importlinter.cli import EXIT_STATUS_SUCCESS, lint_imports

    importlib.invalidate_caches()
    status = lint_imports(config_filename=str(config), no_cache=True, no_logo=True)
    return status == EXIT_STATUS_SUCCESS, capsys.readouterr().out


def test_fyexp_keeps_its_layer_and_acyclicity_contracts(capsys, monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT))
    kept, report = lint(ROOT / "pyproject.toml", capsys)
    assert kept, report
    assert "6 kept, 0 broken" in report


# the science: what the papers define (models, objectives, their data, their metrics); the rest is the framework
SCIENCE = {"calibration", "data", "distributions", "em", "losses", "maps", "metrics", "models", "objectives", "topics",
           "train"}


def test_the_package_top_is_the_science_beside_at_most_ten_concepts():
    """Issue 48: fyexp/ reads as its concepts (cli, spec, run, store, core, experiments, report, claims, reference)
    beside the science folders, not as loose modules; the layers contract names exactly these entries."""
    tracked = subprocess.run(["git", "ls-files", "fyexp"], cwd=ROOT, capture_output=True, text=True).stdout.split()
    entries = {path.split("/")[1].removesuffix(".py") for path in tracked}
    if not entries:
        pytest.skip("not a git checkout: the tracked files of fyexp/ are unknown")
    framework = entries - SCIENCE
    assert len(framework) <= 10, sorted(framework)
    assert SCIENCE <= entries
    layers = {name.strip() for layer in _contract("layers")["layers"] for name in layer.split(":")}
    assert layers == entries - {"__init__"}


def _contract(identifier: str) -> dict:
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    return next(c for c in config["contracts"] if c["id"] == identifier)


PLANTED = """
[tool.importlinter]
root_package = "planted"

[[tool.importlinter.contracts]]
id = "layers"
name = "layers"
type = "layers"
containers = ["planted"]
exhaustive = true
layers = ["high", "low : base"]

[[tool.importlinter.contracts]]
id = "acyclic"
name = "acyclic"
type = "acyclic_siblings"
ancestors = ["planted"]
"""


def test_the_contracts_catch_a_planted_breach(tmp_path, capsys, monkeypatch):
    """A lazy upward import, a cycle under ``TYPE_CHECKING`` and a module placed in no layer each break a contract;
    downward imports, and a layer's members importing each other without a cycle, keep them."""
    pkg = tmp_path / "planted"
    (pkg / "high").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "base.py").write_text("X = 1\n")
    (pkg / "low.py").write_text("from planted.base import X\n")          # its own layer: allowed
    (pkg / "high" / "__init__.py").write_text("")
    (pkg / "high" / "a.py").write_text("from planted import low\nfrom planted.high import b\n")
    (pkg / "high" / "b.py").write_text("")
    config = tmp_path / "contracts.toml"
    config.write_text(PLANTED)
    monkeypatch.syspath_prepend(str(tmp_path))
    kept, report = lint(config, capsys)
    assert kept, report

    (pkg / "low.py").write_text("from planted.base import X\ndef f():\n    from planted.high import a\n")
    kept, report = lint(config, capsys)
    assert not kept and "layers BROKEN" in report and "planted.low -> planted.high.a" in report
    (pkg / "low.py").write_text("from planted.base import X\n")

    (pkg / "high" / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                      "    from planted.high.a import low\n")
    kept, report = lint(config, capsys)
    assert not kept and "acyclic BROKEN" in report and "layers KEPT" in report
    (pkg / "high" / "b.py").write_text("")

    (pkg / "loose.py").write_text("")
    kept, report = lint(config, capsys)
    assert not kept and "planted.loose" in report


KIT = """
[tool.importlinter]
root_packages = ["planted", "kit"]

[[tool.importlinter.contracts]]
id = "kit-outside"
name = "kit-outside"
type = "forbidden"
source_modules = ["planted"]
forbidden_modules = ["kit"]
"""


def test_the_kit_contract_lets_the_kit_build_on_the_core_never_the_reverse(tmp_path, capsys, monkeypatch):
    """As ``gpu_kit`` beside ``fyexp``: the kit importing the core keeps the contract; the core importing the kit,
    even lazily, breaks it."""
    for name in ("planted", "kit"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text("")
    (tmp_path / "planted" / "core.py").write_text("X = 1\n")
    (tmp_path / "kit" / "queue.py").write_text("from planted.core import X\n")
    config = tmp_path / "contracts.toml"
    config.write_text(KIT)
    monkeypatch.syspath_prepend(str(tmp_path))
    kept, report = lint(config, capsys)
    assert kept, report
    (tmp_path / "planted" / "core.py").write_text("X = 1\ndef f():\n    import kit.queue\n")
    kept, report = lint(config, capsys)
    assert not kept and "planted.core -> kit.queue" in report, report


# ------------------------------------------------------------------------------------------ imports follow need
def modules(root: Path) -> dict[str, Path]:
    """Dotted module name → file, for every ``*.py`` under ``root`` (a package folder named like its package)."""
    found = {}
    for path in root.rglob("*.py"):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


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
    # what a Config may need, all light
    framework = ["fyexp.cli.app", "fyexp.spec.specs", "fyexp.experiments", "fyexp.experiments.grid",
                 "fyexp.store.results", "fyexp.train", "fyexp.train.config", "fyexp.spec.tuning"]
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
