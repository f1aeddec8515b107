"""Cells as submitit jobs: the local executor end to end (a killed job's cell is redone, nothing duplicated),
and the SLURM submission rendered without a cluster."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from fyexp.core.errors import FyexpError
from fyexp.run.executors import ExecutorOptions, slurm_parameters
from tests.conftest import ROOT, TOY_SPECS, cli_env, fyexp_script, run_cli, run_in_process

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
def test_local_executor_runs_every_cell_counts_a_skip_and_a_rerun_runs_only_the_skipped(tmp_path):
    """Every cell a job; issue 18, class 9 under an executor: a job's 'skipped: data missing' status is counted as
    in-process (exit 0, --strict makes it fail the run); a rerun skips the finished cells and retries the skipped."""
    results = tmp_path / "results"
    specs = _specs(tmp_path, "[1.0, 2.0, 3.0]\n    skip_on: 3.0", 0.0)
    env = {"FYEXP_EXPERIMENTS_DIR": str(specs), "FYEXP_RESULTS_DIR": str(results)}
    first = run_cli("run", "toy", "--profile", "quick", "--executor", "local", "--jobs", "2", "--no-progress", env=env)
    assert first.returncode == 0, first.stderr  # skips alone exit 0, as in-process
    assert "2 cells run, 0 already finished, 0 failed, 1 skipped (data missing)" in first.stderr, first.stderr
    assert first.stderr.count("skipped: data missing") == 1 and "Traceback" not in first.stderr
    frame = pd.read_csv(results / "toy" / "results.csv")
    assert sorted(frame["value"]) == [1.0, 4.0]
    assert len(list((results / "toy" / "cells" / "quick").glob("*.csv"))) == 2  # the skipped cell wrote nothing
    assert (results / "toy" / "work" / "quick" / "jobs").is_dir()  # submitit's logs
    again = run_cli("run", "toy", "--profile", "quick", "--executor", "local", "--no-progress", "--strict", env=env)
    assert again.returncode == 1, again.stderr  # --strict: the skip fails the run
    assert "0 cells run, 2 already finished, 0 failed, 1 skipped (data missing)" in again.stderr, again.stderr


@pytest.mark.slow
def test_a_killed_job_fails_alone_and_its_cell_is_redone_not_duplicated(tmp_path):
    results = tmp_path / "results"
    # each cell sleeps a second: the job of x=1 is killed while it runs (its pid is said before torch is imported)
    env = {"FYEXP_EXPERIMENTS_DIR": str(_specs(tmp_path, "[1.0, 2.0, 3.0]", 1.0)),
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
    assert len(list(cells.glob("*.csv"))) == 2  # the other jobs went on
    redo = run_cli("run", "toy", "--profile", "quick", "--executor", "local", "--jobs", "2", env=env)
    assert redo.returncode == 0 and "1 cell run, 2 already finished" in redo.stderr, redo.stderr
    rows = _cell_rows(results)
    assert len(rows) == 3 and sorted(rows["value"]) == [1.0, 4.0, 9.0]
    assert len(pd.read_csv(results / "toy" / "results.csv")) == 3


@pytest.mark.slow
def test_slurm_submission_is_rendered_without_a_cluster(toy_env):
    shown = run_in_process("run", "toy", "--profile", "paper", "--allow-dirty", "--executor", "slurm", "--jobs", "3",
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
    for bad in ({"kind": "pbs"}, {"jobs": 0}, {"threads_per_job": 0}):
        with pytest.raises(FyexpError):
            ExecutorOptions(**bad)


@pytest.mark.slow
def test_jobs_without_an_executor_is_an_error(toy_env):
    result = run_in_process("run", "toy", "--profile", "quick", "--jobs", "2", env=toy_env)
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


# ---- cell claims (fyexp.run.cell_claims) and the squeue watcher (fyexp.run.slurm_watcher): no cluster needed
# --------------
_HOLD = """
import sys, time
from pathlib import Path
from fyexp.run.cell_claims import CellClaim
with CellClaim(Path(sys.argv[1])) as claim:
    print("held" if claim.held else "not held", flush=True)
    time.sleep(60)
"""


def _holder(path: Path) -> subprocess.Popen:
    """A process holding the claim ``path`` (it says so on stdout, then sleeps)."""
    proc = subprocess.Popen([sys.executable, "-c", _HOLD, str(path)], stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT), "SLURM_JOB_ID": "4242"})
    assert proc.stdout.readline().strip() == "held"
    return proc


def test_a_claim_held_by_a_live_process_is_refused_and_names_its_holder(tmp_path):
    from fyexp.run.cell_claims import CellClaim

    path = tmp_path / "claims" / "c.claim"
    holder = _holder(path)
    try:
        with CellClaim(path) as claim:
            assert not claim.held and f"pid {holder.pid}" in claim.holder and "SLURM job 4242" in claim.holder
        assert path.is_file()  # a refused claimer removes nothing
    finally:
        holder.kill()
        holder.wait()


def test_a_dead_holders_claim_is_recovered_and_a_released_claim_leaves_no_file(tmp_path):
    from fyexp.run.cell_claims import CellClaim

    path = tmp_path / "c.claim"
    holder = _holder(path)
    holder.send_signal(signal.SIGKILL)  # the holder dies mid-cell: its file stays, its lock goes with it
    holder.wait()
    assert path.is_file()
    with CellClaim(path) as claim:
        assert claim.held and f'"pid": {os.getpid()}' in path.read_text()
        with CellClaim(path) as second:  # one claim per cell, even within one process (flock is per open file)
            assert not second.held
    assert not path.exists()
    with CellClaim(path) as again:  # claimable again once released
        assert again.held


def test_a_claim_whose_file_was_removed_under_it_is_taken_afresh(tmp_path, monkeypatch):
    """A claimer that opened the file just before its holder removed it must not think it holds the cell."""
    import fyexp.run.cell_claims as cell_claims

    path = tmp_path / "c.claim"
    real_flock, calls = cell_claims.fcntl.flock, []

    def flock_after_release(fd, operation):
        if not calls:  # the holder finished between our open and our lock: the path names no file now
            path.unlink()
        calls.append(fd)
        return real_flock(fd, operation)

    path.write_text("{}")
    monkeypatch.setattr(cell_claims.fcntl, "flock", flock_after_release)
    with cell_claims.CellClaim(path) as claim:
        assert claim.held and len(calls) == 2 and path.is_file()  # the second try locked the new file
        assert os.stat(path).st_ino == os.fstat(claim._fd).st_ino


def test_a_cell_runs_under_its_claim_and_not_when_claimed_or_finished(tmp_path):
    """fyexp.run.runner.execute_cell: skipped while another process holds the cell, skipped once it finished at the
    same settings (unless --force), run otherwise; the claim file is gone afterwards."""
    from fyexp.run.cell_claims import FINISHED_ELSEWHERE, RUNNING_ELSEWHERE, claim_path
    from fyexp.experiments import get_experiment
    from fyexp.run.progress import RunProgress
    from fyexp.store.results import ResultStore
    from fyexp.run.runner import execute_cell
    from fyexp.spec.specs import load_spec, resolve

    spec = load_spec("toy", TOY_SPECS)
    experiment = get_experiment(spec.runner)
    resolved = resolve(spec, "quick", experiment.Config)
    (cell,) = experiment.cells(resolved.config, resolved.seeds)
    store = ResultStore(tmp_path, "toy")
    kwargs = dict(device="cpu", data_dir=None, progress=RunProgress())
    holder = _holder(claim_path(store, "quick", cell))
    try:
        assert execute_cell(resolved, experiment, cell, store, force=False, **kwargs) == RUNNING_ELSEWHERE
        assert not store.cell_path("quick", cell).exists()
    finally:
        holder.kill()
        holder.wait()
    assert execute_cell(resolved, experiment, cell, store, force=False, **kwargs) == "ok"
    stamp = store.cell_path("quick", cell).stat().st_mtime_ns
    assert execute_cell(resolved, experiment, cell, store, force=False, **kwargs) == FINISHED_ELSEWHERE
    assert store.cell_path("quick", cell).stat().st_mtime_ns == stamp
    assert execute_cell(resolved, experiment, cell, store, force=True, **kwargs) == "ok"
    assert store.cell_path("quick", cell).stat().st_mtime_ns > stamp
    assert not list(tmp_path.rglob("*.claim"))


def test_the_squeue_watcher_reads_states_and_counts_an_unlisted_job_as_ended(monkeypatch):
    from fyexp.run.slurm_watcher import ENDED, SqueueWatcher

    answers = []

    def squeue(command, **_):
        assert command[:2] == ["squeue", "--noheader"] and "--states=all" in command and "--array" in command
        assert command[-1] == "7"  # one call for every task of array 7
        return answers.pop(0)

    monkeypatch.setattr("fyexp.run.slurm_watcher.subprocess.run", squeue)
    watcher = SqueueWatcher(delay_s=0)
    for job in ("7_0", "7_1", "7_2"):
        watcher.register_job(job)
    answers.append(subprocess.CompletedProcess([], 0, "7_0|RUNNING\n7_1|TIMEOUT\n", ""))
    watcher.update()
    assert [watcher.get_state(j, mode="cache") for j in ("7_0", "7_1", "7_2")] == ["RUNNING", "TIMEOUT", ENDED]
    assert not watcher.is_done("7_0", mode="cache") and watcher.is_done("7_1", mode="cache")
    answers.append(subprocess.CompletedProcess([], 1, "", "slurm_load_jobs error: Invalid job id specified"))
    watcher.update()  # none listed any more
    assert watcher.get_state("7_0", mode="cache") == ENDED
    answers.append(subprocess.CompletedProcess([], 1, "", "Unable to contact slurm controller"))
    watcher.register_job("7_3")
    watcher.update()  # no answer: nothing is taken for ended
    assert watcher.get_state("7_3", mode="cache") == "UNKNOWN" and not watcher.is_done("7_3", mode="cache")


@pytest.mark.parametrize("message, reason", [
    ("Job 5_1 (task: 0) has not produced any output (state: ENDED)\nError stream produced:\n----\n"
     "srun: Job step aborted\nslurmstepd: error: *** JOB 9 ON vm CANCELLED AT 2026-12-01T22:30:00 ***\nsrun: x",
     "slurmstepd: error: *** JOB 9 ON vm CANCELLED AT 2026-12-01T22:30:00 ***"),
    ("Job (task=0) failed during processing with trace:\n----------------------\nTraceback\n  File x\n"
     "ValueError: bad\n----------------------\nYou can check full logs at paths:\n  - /a.err\n  - /a.out",
     "ValueError: bad"),
    ("one\ntwo", "two"),
])
def test_a_failed_jobs_reason_is_slurms_word_or_the_traces_last_line(message, reason):
    from fyexp.run.executors import failure_reason

    assert failure_reason(RuntimeError(message)) == reason
