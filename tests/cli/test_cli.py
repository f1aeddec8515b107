"""The CLI as a user meets it: list/show/run/report, clear errors with exit 2, resume after kill -9."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from tests.conftest import ROOT, fyexp_script, run_cli

pytestmark = pytest.mark.slow  # spawns the installed script or runs for seconds: not in the fast lane


def test_list_show_and_help(toy_env):
    listed = run_cli("list", env=toy_env)
    assert listed.returncode == 0 and "toy" in listed.stdout and "fyvi Table 1" in listed.stdout
    shown = run_cli("show", "toy", "--profile", "quick", env=toy_env)
    assert shown.returncode == 0 and "values:\n  - 0.5" in shown.stdout and "seeds:\n- 0" in shown.stdout
    helped = run_cli("run", "--help", env=toy_env)
    for option in ("--profile", "--seeds", "--device", "--data-dir", "--results-dir", "--force"):
        assert option in helped.stdout


def test_bad_input_gives_one_clear_line_and_exit_2(toy_env, tmp_path):
    cases = [
        (("run", "nope"), "unknown experiment 'nope'"),
        (("run", "toy", "--profile", "huge"), "toy.yaml: key 'profiles': expected a profile named one of"),
        (("run", "toy", "--device", "tpu"), "--device: expected one of auto, cpu, cuda"),
        (("run", "toy", "--seeds", "x"), "--seeds: expected non-negative integers"),
        (("run", "toy", "--data-dir", str(tmp_path / "missing")), "is not a folder"),
        (("run", "toy", "--only", "x"), "--only 'x': expected KEY=PATTERN[,PATTERN...]"),
        (("run", "toy", "--only", "y=1"), "--only y=...: the cells have no key 'y'; expected one of method, seed, x"),
        (("run", "toy", "--only", "x=9"), "--only x=9: no cell of the grid matches (values in the grid: x: 1, 2)"),
    ]
    for args, expected in cases:
        result = run_cli(*args, env=toy_env)
        assert result.returncode == 2, (args, result.stderr)
        assert expected in " ".join(result.stderr.split()), (args, result.stderr)
        assert "Traceback" not in result.stderr


def test_bad_spec_value(toy_env, tmp_path):
    specs = tmp_path / "specs"
    specs.mkdir()
    text = (ROOT / "tests" / "specs" / "toy.yaml").read_text().replace("values: [0.5]", "values: [0.5]\n    mode: cubic")
    (specs / "toy.yaml").write_text(text)
    result = run_cli("run", "toy", "--profile", "quick", env={**toy_env, "FYEXP_EXPERIMENTS_DIR": str(specs)})
    assert result.returncode == 2 and "Traceback" not in result.stderr
    message = " ".join(result.stderr.split())
    assert "toy.yaml: key 'profiles.quick.mode': expected one of 'square', 'cube', got 'cubic'" in message


def test_only_runs_part_of_the_grid_and_a_later_run_the_rest(toy_env):
    """--only KEY=PATTERN selects cells by parameter, method or seed (shell patterns, commas = or, repeats = and)."""
    results = Path(toy_env["FYEXP_RESULTS_DIR"])

    def finished():
        return sorted(p.stem for p in (results / "toy" / "cells" / "paper").glob("*.csv"))

    first = run_cli("run", "toy", "--no-progress", "--yes", "--only", "x=2", env=toy_env)
    assert first.returncode == 0, first.stderr
    assert finished() == ["toy__x=2__seed=0", "toy__x=2__seed=1"]
    second = run_cli("run", "toy", "--no-progress", "--only", "x=1*,7", "--only", "seed=0", env=toy_env)
    assert "1 cell run, 0 already finished" in " ".join(second.stderr.split()), second.stderr
    assert finished() == ["toy__x=1__seed=0", "toy__x=2__seed=0", "toy__x=2__seed=1"]
    rest = run_cli("run", "toy", "--no-progress", env=toy_env)
    assert "1 cell run, 3 already finished" in " ".join(rest.stderr.split()), rest.stderr
    assert len(pd.read_csv(results / "toy" / "results.csv")) == 4


def test_run_skip_force_and_report(toy_env):
    results = Path(toy_env["FYEXP_RESULTS_DIR"])
    first = run_cli("run", "toy", "--no-progress", "--yes", env=toy_env)
    assert first.returncode == 0, first.stderr
    frame = pd.read_csv(results / "toy" / "results.csv")
    assert len(frame) == 4 and set(frame["seed"]) == {0, 1}
    stamps = {p: p.stat().st_mtime_ns for p in (results / "toy" / "cells" / "paper").iterdir()}
    again = run_cli("run", "toy", "--no-progress", env=toy_env)
    assert "0 cells run, 4 already finished" in " ".join(again.stderr.split())
    assert stamps == {p: p.stat().st_mtime_ns for p in stamps}
    forced = run_cli("run", "toy", "--no-progress", "--force", env=toy_env)
    assert "4 cells run" in " ".join(forced.stderr.split())
    report = run_cli("report", env=toy_env)
    assert report.returncode == 0, report.stderr
    table = (results / "toy" / "tables" / "fyvi-table1-paper.md").read_text()
    assert "0.606 ± 0.012" in table and "Standard EM" in table
    assert (results / "toy" / "tables" / "fyvi-table1-paper.tex").is_file()
    assert "fyvi Table 1" in (results / "README.md").read_text()


def test_failed_cell_is_recorded_and_exit_1(toy_env, tmp_path):
    specs = tmp_path / "specs"
    specs.mkdir()
    text = (ROOT / "tests" / "specs" / "toy.yaml").read_text().replace("values: [0.5]", "values: [0.5, 3.0]\n    fail_on: 3.0")
    (specs / "toy.yaml").write_text(text)
    env = {**toy_env, "FYEXP_EXPERIMENTS_DIR": str(specs)}
    result = run_cli("run", "toy", "--profile", "quick", "--no-progress", env=env)
    assert result.returncode == 1 and "failing value" in result.stderr
    frame = pd.read_csv(Path(toy_env["FYEXP_RESULTS_DIR"]) / "toy" / "results.csv")
    assert sorted(frame["status"]) == ["failed", "ok"]


def test_kill_9_loses_no_finished_cell_and_resume_finishes(toy_env, tmp_path):
    specs = tmp_path / "specs"
    specs.mkdir()
    text = (ROOT / "tests" / "specs" / "toy.yaml").read_text().replace(
        "values: [0.5]", "values: [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]\n    sleep_s: 0.4")
    (specs / "toy.yaml").write_text(text)
    env = {**os.environ, **toy_env, "FYEXP_EXPERIMENTS_DIR": str(specs), "PYTHONPATH": str(ROOT)}
    cells = Path(toy_env["FYEXP_RESULTS_DIR"]) / "toy" / "cells" / "quick"
    proc = subprocess.Popen([fyexp_script(), "run", "toy", "--profile", "quick", "--no-progress"],
                            env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 60
    while time.time() < deadline and len(list(cells.glob("*.csv"))) < 2:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    finished = {p.name: p.read_text() for p in cells.glob("*.csv")}
    assert 2 <= len(finished) < 6
    for text in finished.values():  # every file present is complete
        assert pd.read_csv(pd.io.common.StringIO(text)).shape[0] == 1
    assert not list(cells.glob(".*.tmp")) or True  # a temp file may remain; it is never read as a cell
    resumed = run_cli("run", "toy", "--profile", "quick", "--no-progress", env=env)
    assert resumed.returncode == 0
    assert f"{6 - len(finished)} cells run, {len(finished)} already finished" in " ".join(resumed.stderr.split())
    for name, text in finished.items():
        assert (cells / name).read_text() == text
    assert len(pd.read_csv(Path(toy_env["FYEXP_RESULTS_DIR"]) / "toy" / "results.csv")) == 6
