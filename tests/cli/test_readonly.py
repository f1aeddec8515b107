"""Read-only commands stay light (issue 49): `run --help`, `reproduce --help` and a repeated `reproduce --dry-run`
import none of torch, pandas, matplotlib, scipy, optuna or sklearn (which modules, not how long: no timing here;
scripts/bench_readonly.py times them).  A dry run's plan is kept in the user cache under what it is derived from:
the same plan again, and a new one when the results folder changes."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from tests.conftest import ROOT, cli_env, fyexp_script, run_in_process

pytestmark = pytest.mark.slow

HEAVY = {"torch", "pandas", "matplotlib", "scipy", "optuna", "sklearn", "sqlalchemy"}


def _run(*args: str, env: dict) -> tuple[subprocess.CompletedProcess, set[str]]:
    """The installed ``fyexp ARGS`` under ``python -X importtime``: its result and the top-level packages imported."""
    done = subprocess.run([sys.executable, "-X", "importtime", fyexp_script(), *args], capture_output=True, text=True,
                          env=cli_env({"FYEXP_EXPERIMENTS_DIR": str(ROOT / "experiments"), **env}), cwd=ROOT,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = [line.split("|")[-1] for line in done.stderr.splitlines() if line.startswith("import time:")]
    return done, {line.strip().split(".")[0] for line in lines[1:]}


@pytest.mark.parametrize("args", [("run", "--help"), ("reproduce", "--help"), ("tune", "--help")])
def test_a_commands_help_imports_nothing_heavy(args, tmp_path):
    _, imported = _run(*args, env={"FYEXP_CACHE_DIR": str(tmp_path)})
    assert not imported & HEAVY, sorted(imported & HEAVY)


def test_a_repeated_dry_run_reads_its_plan_and_imports_no_runner(tmp_path):
    env = {"FYEXP_CACHE_DIR": str(tmp_path / "cache")}
    results = tmp_path / "results"
    args = ("reproduce", "tvem", "--dry-run", "--results-dir", str(results))
    cold, imported = _run(*args, env=env)
    assert "torch" in imported                                # planning the first time imports the runner
    assert "tvem-bsc: 81 cells, 0 finished, 81 to run" in cold.stdout
    warm, imported = _run(*args, env=env)
    assert warm.stdout == cold.stdout and not imported & HEAVY, sorted(imported & HEAVY)
    shutil.copytree(ROOT / "results" / "tvem-bsc", results / "tvem-bsc")   # the results folder changed: planned again
    changed, imported = _run(*args, env=env)
    assert "tvem-bsc: 81 cells, 81 finished, 0 to run" in changed.stdout and "torch" in imported
    other = run_in_process("reproduce", "tvem", "--dry-run", "--results-dir", str(results), "--only", "method=exact",
                           env={"FYEXP_EXPERIMENTS_DIR": str(ROOT / "experiments"), **env})   # its imports aside
    assert other.returncode == 0 and other.stdout != changed.stdout   # other options: another entry, not the same plan


def test_reproduces_papers_are_the_claims_papers():
    from fyexp.claims.keys import PAPERS
    from fyexp.reference import papers  # what `fyexp reproduce` lists, without pandas

    assert tuple(papers()) == PAPERS
