"""Cells as submitit jobs: the local executor end to end (a killed job's cell is redone, nothing duplicated),
and the SLURM submission rendered without a cluster."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pandas as pd
import pytest

from fyexp.errors import FyexpError
from fyexp.executors import ExecutorOptions, slurm_parameters
from tests.conftest import ROOT, TOY_SPECS, cli_env, fyexp_script, run_cli

pytest.importorskip("submitit")


def _specs(tmp_path: Path, values: str, sleep_s: float) -> Path:
    folder = tmp_path / "specs"
    folder.mkdir()
    text = (TOY_SPECS / "toy.yaml").read_text().replace("values: [0.5]", f"values: {values}\n    sleep_s: {sleep_s}")
    (folder / "toy.yaml").write_text(text)
    return folder


def _cell_rows(results: Path) -> pd.DataFrame:
    return pd.concat([pd.read_csv(p) for p in (results / "toy" / "cells" / "quick").glob("*.csv")])


@pytest.mark.slow
def test_local_executor_runs_every_cell_and_a_rerun_skips_them(tmp_path):
    results = tmp_path / "results"
    env = {"FYEXP_EXPERIMENTS_DIR": str(_specs(tmp_path, "[1.0, 2.0, 3.0]", 0.0)), "FYEXP_RESULTS_DIR": str(results)}
    first = run_cli("run", "toy", "--profile", "quick", "--executor", "local", "--jobs", "2", env=env)
    assert first.returncode == 0, first.stderr
    assert "3 cells run, 0 already finished, 0 failed" in first.stderr
    frame = pd.read_csv(results / "toy" / "results.csv")
    assert sorted(frame["value"]) == [1.0, 4.0, 9.0]
    assert (results / "toy" / "work" / "quick" / "jobs").is_dir()  # submitit's logs
    again = run_cli("run", "toy", "--profile", "quick", "--executor", "local", env=env)
    assert again.returncode == 0 and "0 cells run, 3 already finished" in again.stderr


@pytest.mark.slow
def test_a_job_whose_data_is_missing_counts_as_skipped_not_run(tmp_path):
    """Issue 18, class 9 under an executor: the job's 'skipped: data missing' status is counted as in-process."""
    results = tmp_path / "results"
    specs = _specs(tmp_path, "[1.0, 2.0]\n    skip_on: 2.0", 0.0)
    env = {"FYEXP_EXPERIMENTS_DIR": str(specs), "FYEXP_RESULTS_DIR": str(results)}
    run = run_cli("run", "toy", "--profile", "quick", "--executor", "local", "--jobs", "2", "--no-progress",
                  "--strict", env=env)
    assert run.returncode == 1, run.stderr  # skips alone exit 0 (as in-process); --strict makes them fail the run
    assert "1 cells run, 0 already finished, 0 failed, 1 skipped (data missing)" in run.stderr, run.stderr
    assert run.stderr.count("skipped: data missing") == 1 and "Traceback" not in run.stderr
    assert len(list((results / "toy" / "cells" / "quick").glob("*.csv"))) == 1  # the skipped cell wrote nothing


@pytest.mark.slow
def test_a_killed_job_fails_alone_and_its_cell_is_redone_not_duplicated(tmp_path):
    results = tmp_path / "results"
    env = {"FYEXP_EXPERIMENTS_DIR": str(_specs(tmp_path, "[1.0, 2.0, 3.0, 4.0]", 4.0)),
           "FYEXP_RESULTS_DIR": str(results)}
    proc = subprocess.Popen([fyexp_script(), "run", "toy", "--profile", "quick", "--executor", "local", "--jobs", "2"],
                            env=cli_env(env), cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    jobs = results / "toy" / "work" / "quick" / "jobs"
    victim, deadline = None, time.time() + 120
    while victim is None and time.time() < deadline:  # a job whose cell is running (its process started)
        started = sorted(jobs.glob("*_log.out")) if jobs.is_dir() else []
        for log in started:
            found = re.search(r"cell toy__x=1__seed=0, .* pid (\d+)", log.read_text(errors="replace"))
            if found:  # the process running the cell (submitit's job id is its controller's)
                victim = int(found.group(1))
        time.sleep(0.1)
    assert victim is not None, proc.communicate(timeout=60)
    os.kill(victim, signal.SIGKILL)
    _, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 1, stderr
    assert "toy__x=1__seed=0" in stderr and "failed" in stderr and "log:" in stderr
    cells = results / "toy" / "cells" / "quick"
    assert not (cells / "toy__x=1__seed=0.csv").exists()
    assert len(list(cells.glob("*.csv"))) == 3  # the other jobs went on
    redo = run_cli("run", "toy", "--profile", "quick", "--executor", "local", "--jobs", "2", env=env)
    assert redo.returncode == 0 and "1 cells run, 3 already finished" in redo.stderr, redo.stderr
    rows = _cell_rows(results)
    assert len(rows) == 4 and sorted(rows["value"]) == [1.0, 4.0, 9.0, 16.0]
    assert len(pd.read_csv(results / "toy" / "results.csv")) == 4


@pytest.mark.slow
def test_slurm_submission_is_rendered_without_a_cluster(toy_env):
    shown = run_cli("run", "toy", "--profile", "paper", "--allow-dirty", "--executor", "slurm", "--jobs", "3",
                    "--slurm-partition", "gpu", "--slurm-gpus-per-job", "1", "--slurm-time", "90",
                    "--slurm-mem-gb", "8", "--dry-run", env=toy_env)
    assert shown.returncode == 0, shown.stderr
    script = shown.stdout
    for line in ("#SBATCH --array=0-3%3", "#SBATCH --partition=gpu", "#SBATCH --gpus-per-node=1",
                 "#SBATCH --time=90", "#SBATCH --mem=8192M", "#SBATCH --job-name=fyexp-toy-paper",
                 "-m submitit.core._submit"):
        assert line in script, (line, script)
    assert script.count("# array task") == 4 and "run_cell_job(toy [paper], toy__x=1__seed=0)" in script
    assert "nothing was submitted" in shown.stderr
    assert not list(Path(toy_env["FYEXP_RESULTS_DIR"]).rglob("*.csv"))


def test_executor_options_are_validated():
    assert slurm_parameters(ExecutorOptions(kind="slurm", threads_per_job=4), 10, "j")["cpus_per_task"] == 4
    assert ExecutorOptions(kind="local", jobs=8).concurrency(3) == 3
    assert ExecutorOptions(kind="slurm").concurrency(12) == 12
    for bad in ({"kind": "pbs"}, {"jobs": 0}, {"threads_per_job": 0}, {"kind": "local", "dry_run": True}):
        with pytest.raises(FyexpError):
            ExecutorOptions(**bad)


@pytest.mark.slow
def test_jobs_without_an_executor_is_an_error(toy_env):
    result = run_cli("run", "toy", "--profile", "quick", "--jobs", "2", env=toy_env)
    assert result.returncode == 2 and "--jobs needs --executor" in result.stderr


@pytest.mark.slow
def test_two_tune_workers_share_one_journal_study_with_an_exact_budget(toy_env, tmp_path):
    journal = tmp_path / "study.journal"
    tuned = run_cli("tune", "toy", "--profile", "tune", "--executor", "local", "--jobs", "2",
                    "--storage", f"journal:{journal}", env=toy_env)
    assert tuned.returncode == 0, tuned.stderr
    import optuna
    from optuna.storages import JournalStorage
    from optuna.storages.journal import JournalFileBackend

    study = optuna.load_study(study_name="toy-tune", storage=JournalStorage(JournalFileBackend(str(journal))))
    complete = [t for t in study.trials if t.state.name == "COMPLETE"]
    assert len(complete) == 5  # the profile's n_trials, shared by both workers
    assert all(t.user_attrs.get("surplus") for t in study.trials if t.state.name != "COMPLETE")
    logs = list((Path(toy_env["FYEXP_RESULTS_DIR"]) / "toy" / "work" / "tune" / "tune-jobs").glob("*_log.out"))
    assert len([p for p in logs if "fyexp tune worker" in p.read_text()]) == 2
