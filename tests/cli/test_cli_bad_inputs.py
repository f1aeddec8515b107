"""Bad inputs of the command line refused like their spec-file equivalents (issue 32), through the installed script.

Each refusal is one line (what, where, what was expected), exit 2, no traceback, nothing written; each is tested
beside an input just on the other side that is accepted: an empty grid (from ``--set`` and from a spec file) and a
grid that keeps one method; ``reproduce`` with an ``--only`` that selects nothing and one that selects a cell of one
experiment, with an unknown profile and a known one, each with and without ``--dry-run``; a ``--set`` that fails for
one experiment of a paper names it.  A variant's folder name stays bounded however long its ``--set`` values.
Every kind of declared domain (:mod:`fyexp.core.constraints`) accepts the value at its edge and refuses the one just
outside, from ``--set`` and from a spec file.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from fyexp.spec.specs import MAX_LABEL, Override, variant_label
from tests.conftest import ROOT, TOY_SPECS, run_cli, strip_ansi

GMM = ROOT / "experiments" / "gmm-clustering.yaml"


def _refused(result, *expected: str) -> str:
    """The one line of a refusal (exit 2, no traceback), checked to contain each of ``expected``."""
    lines = [line for line in strip_ansi(result.stderr).splitlines() if line.strip()]
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    for text in expected:
        assert text in lines[0], (text, lines[0])
    return lines[0]


def _gmm_spec(tmp_path: Path, empty_grid: bool) -> Path:
    """gmm-clustering's spec whose grid (in ``defaults``; ``quick`` adds none) is empty or keeps standard EM only."""
    text = GMM.read_text(encoding="utf-8").replace("    grid: {sparse: {rho: [1.0, 2.0]}}\n", "")
    start, end = text.index("  grid:\n"), text.index("profiles:")
    folder = tmp_path / ("empty" if empty_grid else "one")
    folder.mkdir()
    grid = "  grid: {}\n" if empty_grid else "  grid: {standard: {}}\n"
    (folder / GMM.name).write_text(text[:start] + grid + text[end:], encoding="utf-8")
    return folder


@pytest.mark.slow
def test_an_empty_grid_is_refused_from_set_and_from_a_spec_file_alike(tmp_path):
    results = tmp_path / "results"
    base = ("run", "gmm-clustering", "--profile", "quick", "--no-progress", "--results-dir", str(results))
    _refused(run_cli(*base, "--set", "grid={}"), "error: --set: key 'grid': expected a grid of at least one cell, got {}")
    _refused(run_cli(*base, "--experiments-dir", str(_gmm_spec(tmp_path, empty_grid=True))),
             "gmm-clustering.yaml: key 'profiles.quick.grid': expected a grid of at least one cell, got {}")
    # an override elsewhere does not take the blame for the spec's own empty grid
    _refused(run_cli(*base, "--experiments-dir", str(tmp_path / "empty"), "--set", "n_iter=3"),
             "gmm-clustering.yaml: key 'profiles.quick.grid'")
    assert not results.joinpath("gmm-clustering", "cells").exists()
    left = ["--set", "grid.standard=false", "--set", "grid.hard=false", "--set", "grid.truncated=false",
            "--set", "grid.sklearn=false"]
    _refused(run_cli(*base, *left, "--set", "grid.sparse=false"),
             "--set: key 'grid.standard, grid.hard, grid.truncated, grid.sklearn, grid.sparse': expected a grid of "
             "at least one cell")
    one_method = run_cli(*base, *left, "--dry-run")  # the other side: sparse EM at rho 1, 2 is left, × 2 seeds
    assert one_method.returncode == 0, one_method.stderr
    assert re.match(r"plan: gmm-clustering \[quick\+[^]]+\]: 4 cells: 4 to run", one_method.stdout)
    one_cell = run_cli("run", "gmm-clustering", "--profile", "quick", "--dry-run", "--results-dir", str(results),
                       "--experiments-dir", str(_gmm_spec(tmp_path, empty_grid=False)))
    assert one_cell.returncode == 0 and "plan: gmm-clustering [quick]: 2 cells" in one_cell.stdout, one_cell.stderr


def test_variant_labels_are_bounded_distinct_and_keep_their_profile():
    def label(text: str) -> str:
        return variant_label("paper", [Override("train.optimizer.lr", 1e-4, "1e-4"), Override("values", [], text)])

    assert label("[1,2]") == "paper+lr=1e-4,values=1,2"  # a short label is as before
    longest = "[" + "1" * (MAX_LABEL - len(label("[]"))) + "]"
    assert label(longest) == "paper+lr=1e-4,values=" + "1" * (MAX_LABEL - len(label("[]")))
    assert len(label(longest)) == MAX_LABEL
    over = "[" + "1" * (MAX_LABEL - len(label("[]")) + 1) + "]"
    a, b = label(over + "1" * 300 + "2"), label(over + "1" * 300 + "3")
    assert len(a) == len(b) == len(label(over)) == MAX_LABEL and a != b
    assert a.startswith("paper+lr=1e-4,values=111") and re.fullmatch(r".*-[0-9a-f]{10}", a)


@pytest.mark.slow
def test_a_long_set_value_runs_in_a_bounded_folder_and_the_settings_keep_it_whole(toy_env):
    results = Path(toy_env["FYEXP_RESULTS_DIR"])
    one, two = "1." + "0" * 150 + "1", "2." + "0" * 150 + "2"   # YAML reads them as 1.0 and 2.0: two cells
    done = run_cli("run", "toy", "--profile", "quick", "--no-progress", "--set", f"values=[{one}, {two}]",
                   env=toy_env)
    assert done.returncode == 0, done.stderr
    folder, = (results / "toy" / "cells").iterdir()
    assert len(folder.name) == MAX_LABEL and folder.name.startswith("quick+values=1.000")
    assert sorted(p.name for p in folder.glob("*.csv")) == ["toy__x=1__seed=0.csv", "toy__x=2__seed=0.csv"]
    settings = json.loads(next(folder.glob("*.record.json")).read_text())["settings"]
    assert settings["overrides"] == {"values": [1.0, 2.0]} and settings["profile"] == "quick"
    assert f"toy [{folder.name}]: 2 cells run" in " ".join(done.stderr.split())


@pytest.fixture
def two_experiments(tmp_path) -> Path:
    """The toy experiment (cells x = 1, 2) and gmm-clustering (no x), both of the fyvi paper."""
    folder = tmp_path / "specs"
    folder.mkdir()
    shutil.copy(TOY_SPECS / "toy.yaml", folder / "toy.yaml")
    shutil.copy(GMM, folder / GMM.name)
    return folder


@pytest.mark.slow
@pytest.mark.parametrize("dry_run", [True, False])
def test_reproduce_refuses_a_bad_only_or_profile_with_or_without_dry_run(two_experiments, tmp_path, dry_run):
    results = tmp_path / "results"
    base = ["reproduce", "fyvi", "--experiments-dir", str(two_experiments), "--results-dir", str(results), "--yes"]
    base += ["--dry-run"] if dry_run else []
    _refused(run_cli(*base, "--only", "x=9"), "error: --only x=9: selects no cell of any experiment of fyvi (",
             "toy left out: --only x=9: no cell of the grid matches", "gmm-clustering left out")
    _refused(run_cli(*base, "--profile", "huge"), "error: --profile: unknown profile 'huge' for the experiments of "
             "fyvi (gmm-clustering, toy); expected one of paper, paper-text, quick, tune")
    _refused(run_cli(*base, "--profile", "quick", "--set", "values=[3.0]"),
             "error: --set, for experiment gmm-clustering: key 'values': expected one of the parameters [")
    assert not list(results.rglob("*.csv"))
    if dry_run:  # the other side: an --only one experiment's grid has, a profile one experiment defines
        shown = run_cli(*base, "--only", "x=2")
        assert shown.returncode == 0, shown.stderr
        assert "  toy: 2 cells, 0 finished, 2 to run" in shown.stdout and "  gmm-clustering: left out" in shown.stdout
        tune = run_cli(*base, "--profile", "tune")
        assert tune.returncode == 0 and "  gmm-clustering: no profile 'tune'" in tune.stdout, tune.stderr


@pytest.mark.slow
def test_every_option_of_every_command_is_explained_in_its_help():
    """Each option has help text, shown by the installed script's ``--help``; the executor options are the same
    declaration in run, tune and reproduce."""
    import typer.main

    from fyexp.cli.app import app

    group = typer.main.get_command(app)
    executors = {}
    for name, command in group.commands.items():
        helped = run_cli(name, "--help", env={"COLUMNS": "250"})
        assert helped.returncode == 0, helped.stderr
        screen = " ".join(re.sub(r"[│╭╮╰╯─]", " ", strip_ansi(helped.stdout)).split())
        for param in command.params:
            if not param.param_type_name == "option" or param.name == "help":
                continue
            words = " ".join((param.help or "").split())
            assert words, (name, param.name)
            assert param.opts[0] in screen and words[:60] in screen, (name, param.opts[0], words[:60])
        executors[name] = {p.opts[0]: p.help for p in command.params if p.opts[0].startswith(("--executor",
                                                                                               "--jobs", "--threads",
                                                                                               "--slurm"))}
    assert len(executors["run"]) == 8 and executors["run"] == executors["tune"] == executors["reproduce"]


# ---- every kind of declared domain (fyexp.core.constraints), both sides of its edge, through `fyexp show --set`
# --------
#: (experiment, a --set at the edge of a declared domain, accepted; the same key just outside it; what is expected)
EDGES = [
    ("fy-vae", "train.epochs=1", "train.epochs=0", "key 'train.epochs': expected an integer >= 1, got 0"),
    ("fy-vae", "train.optimizer.lr=1.0e-12", "train.optimizer.lr=0",
     "key 'train.optimizer.lr': expected a positive number, got 0"),
    ("fy-vae", "beta=0", "beta=-1.0e-12", "key 'beta': expected a number >= 0, got -1e-12"),
    ("fy-vae", "train.optimizer.betas=[0, 0.999]", "train.optimizer.betas=[0.9, 1]",
     "key 'train.optimizer.betas': expected numbers in [0, 1), got [0.9, 1]"),
    ("fy-vae", "grid.dataset=[FashionMNIST]", "grid.dataset=[FashionMNIST, CIFAR]",
     "key 'grid.dataset': expected names among ['MNIST', 'FashionMNIST'], got ['FashionMNIST', 'CIFAR']"),
    ("vr-vae", "freyface.train_fraction=0.999", "freyface.train_fraction=1",
     "key 'freyface.train_fraction': expected a number in (0, 1), got 1"),
    ("vr-vae", "validation.mnist=1", "validation.mnist=0",
     "key 'validation': expected a mapping with integers >= 1 as values, got {"),
    ("vr-vae", "validation.caltech=5", "validation.cifar=5",
     "key 'validation': expected a mapping with names among ['freyface', 'caltech', 'mnist'] as keys"),
    ("tvem-bsc", "figure1_keep=16", "figure1_keep=17", "key 'figure1_keep': expected an integer in [1, 16], got 17"),
    ("tvem-bsc", "recovery_threshold=1", "recovery_threshold=1.001",
     "key 'recovery_threshold': expected a number in (0, 1], got 1.001"),
    ("vr-bnn", "methods=[VI, VR-max]", "methods=[VI, VR-max, VI]",
     "key 'methods': expected distinct items, got ['VI', 'VR-max', 'VI']"),
    ("frac-vae", "n_test=2", "n_test=1", "key 'n_test': expected an integer >= 2 or null, got 1"),
]


@pytest.mark.parametrize("experiment", sorted({e[0] for e in EDGES}))
def test_each_declared_domain_accepts_its_edge(experiment):
    sets = [arg for e in EDGES if e[0] == experiment for arg in ("--set", e[1])]
    shown = run_cli("show", experiment, "--profile", "quick", *sets)
    assert shown.returncode == 0 and not shown.stderr.strip(), shown.stderr


@pytest.mark.parametrize("experiment, outside, expected", [(e[0], e[2], e[3]) for e in EDGES],
                         ids=[e[2] for e in EDGES])
def test_each_declared_domain_refuses_just_outside_its_edge_in_one_line(experiment, outside, expected):
    _refused(run_cli("show", experiment, "--profile", "quick", "--set", outside), f"error: --set: {expected}")


def test_a_declared_domain_names_the_spec_file_and_profile_key(tmp_path):
    """The same declaration refuses a spec file's value, naming the file and the profile's key path."""
    frac = ROOT / "experiments" / "frac-vae.yaml"
    for value, refused in (("2", False), ("1", True)):
        folder = tmp_path / value
        folder.mkdir()
        text = frac.read_text(encoding="utf-8").replace("    n_test: 12\n", f"    n_test: {value}\n", 1)
        (folder / frac.name).write_text(text, encoding="utf-8")
        shown = run_cli("show", "frac-vae", "--profile", "quick", "--experiments-dir", str(folder))
        if refused:
            _refused(shown, "frac-vae.yaml: key 'profiles.quick.n_test': expected an integer >= 2 or null, got 1")
        else:
            assert shown.returncode == 0 and "n_test: 2" in shown.stdout, shown.stderr
