"""fyexp on a real SLURM cluster: the one-node cluster of ``scripts/ci_slurm.sh`` (``.ci/run`` starts it).

Every test runs the installed ``fyexp`` script with ``--executor slurm`` and skips, with one line saying why, when
no cluster answers (``FYEXP_TEST_SLURM`` unset, or ``sinfo`` shows no idle node).  The faults are real: ``scancel``
of a running array task, SIGKILL of a job's process mid-cell, the node drained and resumed, a job at its time
limit; each rerun must redo exactly the unfinished cells, lose and duplicate nothing and leave no temporary file.

This module is also the runner of the cells the fault tests run (``runner: tests.run.test_slurm``): the toy
experiment, whose cell ``x`` prints that it started, appends ``x`` to ``$FYEXP_TEST_RAN_LOG`` when it ends, and sleeps
``$FYEXP_TEST_SLOW`` (``x:seconds,...``) seconds more — the slowness lives in the environment, not the settings,
so a rerun without it runs the same cells at the same settings, quickly.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from fyexp.experiments import register
from fyexp.store.results import read_cell_file, read_table
from tests.conftest import ROOT, TOY_SPECS, cli_env, fyexp_script, run_cli
from tests.toy_experiment import Toy

pytestmark = pytest.mark.slow
# the data root: $FYEXP_DATA_DIR, else a `shared/data` folder beside the checkout (as tests/data/test_newsgroups.py)
DATA = Path(os.environ.get("FYEXP_DATA_DIR", Path(__file__).resolve().parents[3] / "shared" / "data"))


@register
class SlurmToy(Toy):
    """The toy experiment, slowed and logged per cell through the environment (module docstring)."""

    name = "slurm-toy"

    def run_cell(self, config, cell, ctx):
        x = cell.params["x"]
        print(f"cell x={x:g} started, pid {os.getpid()}", flush=True)
        slow = dict(item.split(":") for item in filter(None, os.environ.get("FYEXP_TEST_SLOW", "").split(",")))
        time.sleep(float(slow.get(f"{x:g}", 0)))
        rows = super().run_cell(config, cell, ctx)
        with open(os.environ["FYEXP_TEST_RAN_LOG"], "a") as log:
            log.write(f"{x:g}\n")
        return rows


# ---- the cluster ------------------------------------------------------------------------------------------------
def _cluster_problem() -> str | None:
    if not os.environ.get("FYEXP_TEST_SLURM"):
        return "FYEXP_TEST_SLURM is not set (source scripts/ci_slurm.sh starts a one-node SLURM cluster)"
    try:
        state = subprocess.run(["sinfo", "--noheader", "--Node", "--format=%t"], capture_output=True, text=True,
                               timeout=20)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"sinfo did not answer ({exc})"
    if state.returncode != 0 or "idle" not in state.stdout.split():
        return f"the SLURM cluster has no idle node (sinfo: {(state.stdout + state.stderr).strip()[:120]})"
    return None


@pytest.fixture
def cluster():
    problem = _cluster_problem()
    if problem:
        pytest.skip(f"no SLURM cluster: {problem}")
    yield
    subprocess.run(["scontrol", "update", f"NodeName={_node()}", "State=RESUME"], capture_output=True)


def _node() -> str:
    return subprocess.run(["sinfo", "--noheader", "--Node", "--format=%N"], capture_output=True,
                          text=True).stdout.split()[0]


def _queue() -> dict[str, tuple[str, str]]:
    """Our jobs: id (``MAIN_TASK``) → (state, reason)."""
    out = subprocess.run(["squeue", "--noheader", "--array", "--format=%i|%T|%r"], capture_output=True,
                         text=True).stdout
    return {i: (s, r) for i, s, r in (line.split("|") for line in out.splitlines() if line.count("|") == 2)}


def _toy(tmp_path: Path, values: str, sleep_s: float = 0.0) -> dict:
    """An environment running the slurm toy on ``values`` into a fresh results folder."""
    specs = tmp_path / "specs"
    specs.mkdir()
    text = (TOY_SPECS / "toy.yaml").read_text().replace("runner: tests.toy_experiment",
                                                        "runner: tests.run.test_slurm")
    text = text.replace("values: [0.5]", f"values: {values}\n    sleep_s: {sleep_s}")
    (specs / "toy.yaml").write_text(text)
    log = tmp_path / "ran.log"
    log.touch()
    return {"FYEXP_EXPERIMENTS_DIR": str(specs), "FYEXP_RESULTS_DIR": str(tmp_path / "results"),
            "FYEXP_TEST_RAN_LOG": str(log),
            "FYEXP_RUNNERS": "tests.run.test_slurm"}  # a runner of our own (issue 51)


def _start(*args: str, env: dict) -> subprocess.Popen:
    return subprocess.Popen([fyexp_script(), *args], env=cli_env(env), cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _wait_for(what: str, found, timeout: float = 180):
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = found()
        if value:
            return value
        time.sleep(0.2)
    pytest.fail(f"timed out after {timeout:.0f} s waiting for {what}")


def _started(jobs: Path, x: str) -> tuple[str, int] | None:
    """(array task id, pid) of the job whose cell x has started (its log says so), or None."""
    for log in jobs.glob("*_log.out") if jobs.is_dir() else ():
        found = re.search(rf"cell x={x} started, pid (\d+)", log.read_text(errors="replace"))
        if found:
            return log.name.split("_0_log")[0], int(found.group(1))
    return None


def _failure_lines(stderr: str) -> dict[str, str]:
    """cell key → its one failure line (``cell KEY: job ID failed (REASON); log: PATH``)."""
    return {m.group(1): m.group(0) for m in re.finditer(r"cell (\S+): job \S+ failed \(.*\); log: (\S+)", stderr)}


def _leftovers(results: Path) -> list[Path]:
    """Temporary files of writes and cell claims still on disk."""
    return sorted(results.rglob(".*.tmp")) + sorted(results.rglob("*.claim"))


def _damage(results: Path, ran_log: Path, xs: list[float]) -> dict[str, int]:
    """Counted, not assumed, over the toy grid ``xs`` (seed 0): cells *lost* (no cell file, no row in results.csv,
    or never run to completion), *duplicated* (run to completion more than once, or more than one row) and
    *corrupt* (a cell file or results.csv that fyexp's readers reject, or a row whose value is not x²)."""
    ran = ran_log.read_text().split()
    table, problem = read_table(results / "toy" / "results.csv")
    lost = duplicated = corrupt = 0
    for x in xs:
        key = f"toy__x={x:g}__seed=0"
        cell_file = results / "toy" / "cells" / "quick" / f"{key}.csv"
        rows = table[table["cell"] == key] if table is not None else pd.DataFrame(columns=["value"])
        lost += not cell_file.is_file() or rows.empty or f"{x:g}" not in ran
        duplicated += ran.count(f"{x:g}") > 1 or len(rows) > 1
        cell, cell_problem = read_cell_file(cell_file, key) if cell_file.is_file() else (None, None)
        corrupt += (cell_problem is not None or (cell is not None and list(cell["value"]) != [x * x])
                    or list(rows["value"]) not in ([], [x * x]))
    return {"lost": int(lost), "duplicated": int(duplicated), "corrupt": int(corrupt) + (problem is not None)}


def _cells(results: Path, experiment: str = "toy") -> dict[str, int]:
    """cell file name → modification time (ns)."""
    return {p.name: p.stat().st_mtime_ns for p in (results / experiment / "cells" / "quick").glob("*.csv")}


# ---- the tests ----------------------------------------------------------------------------------------------------
def test_a_job_array_gives_the_local_executors_rows_bit_for_bit(cluster, tmp_path):
    """``fyexp run gmm-clustering --profile quick --only seed=0 --only method=sparse --executor slurm``: one array of
    2 jobs (sparse EM at rho 1 and 2, one seed: every method's 6 or 12 cells took three to six times as long and
    checked nothing more, a job being a job whatever its method), rows equal to those of ``--executor local``
    (scripts/compare_results.py)."""
    on_cluster, on_machine = tmp_path / "slurm", tmp_path / "local"
    started = time.perf_counter()
    # side by side: CI's time is the longer one's
    runs = {kind: _start("run", "gmm-clustering", "--profile", "quick", "--only", "seed=0", "--only", "method=sparse",
                         "--executor", kind, "--no-progress", "--results-dir", str(folder), env={})
            for kind, folder in (("slurm", on_cluster), ("local", on_machine))}
    for kind, run in runs.items():
        _, stderr = run.communicate(timeout=900)
        print(f"{kind}: done after {time.perf_counter() - started:.1f} s\n{stderr}")
        assert run.returncode == 0, stderr
        assert "2 cells run, 0 already finished, 0 failed" in stderr, stderr
    jobs = on_cluster / "gmm-clustering" / "work" / "quick" / "jobs"
    (script,) = jobs.glob("*_submission.sh")
    assert "#SBATCH --array=0-1%2" in script.read_text()
    logs = sorted(jobs.glob("*_*_0_log.out"))  # one log per array task: MAIN_TASK_0_log.out
    assert len(logs) == 2 and len({p.name.split("_")[0] for p in logs}) == 1  # one array, two tasks
    compared = subprocess.run([sys.executable, str(ROOT / "scripts" / "compare_results.py"), str(on_machine),
                               str(on_cluster), "gmm-clustering"], capture_output=True, text=True)
    assert compared.returncode == 0 and "IDENTICAL" in compared.stdout, compared.stdout + compared.stderr
    print(compared.stdout.strip())


def test_faults_redo_exactly_the_unfinished_cells(cluster, tmp_path):
    """One array of five cells: x=1 is scancelled while it runs, x=2's process is killed (SIGKILL) mid-cell, the
    node is drained while they run (x=3 and x=4 wait, then run once it is resumed), x=5 reaches its time limit.
    The run reports the three failed jobs in one line each with their log; the rerun runs exactly those three."""
    env = _toy(tmp_path, "[1.0, 2.0, 3.0, 4.0, 5.0]")
    results, ran_log = Path(env["FYEXP_RESULTS_DIR"]), Path(env["FYEXP_TEST_RAN_LOG"])
    jobs = results / "toy" / "work" / "quick" / "jobs"
    node = _node()
    started = time.perf_counter()
    run = _start("run", "toy", "--profile", "quick", "--executor", "slurm", "--slurm-time", "3", "--no-progress",
                 env={**env, "FYEXP_TEST_SLOW": "1:300,2:300,5:300"})
    cancelled, _ = _wait_for("cell x=1 to start", lambda: _started(jobs, "1"))
    _, victim = _wait_for("cell x=2 to start", lambda: _started(jobs, "2"))
    subprocess.run(["scontrol", "update", f"NodeName={node}", "State=DRAIN", "Reason=fyexp-test"], check=True)
    subprocess.run(["scancel", cancelled], check=True)
    os.kill(victim, signal.SIGKILL)
    time.sleep(8)  # both slots are free: only the drained node keeps x=3 and x=4 waiting
    waiting = {i: s for i, s in _queue().items() if s[0] == "PENDING"}
    assert len(waiting) == 3, _queue()  # x=3, x=4, x=5
    assert not _started(jobs, "3") and not _started(jobs, "4")
    subprocess.run(["scontrol", "update", f"NodeName={node}", "State=RESUME"], check=True)
    _, stderr = run.communicate(timeout=400)
    first_s = time.perf_counter() - started
    print(stderr)  # what the user sees (docs/executors.md quotes it)
    assert run.returncode == 1, stderr
    assert "2 cells run, 0 already finished, 3 failed" in stderr, stderr
    failures = _failure_lines(stderr)
    assert set(failures) == {"toy__x=1__seed=0", "toy__x=2__seed=0", "toy__x=5__seed=0"}, stderr
    assert "CANCELLED" in failures["toy__x=1__seed=0"]
    assert re.search(r"timed-out|TIME LIMIT", failures["toy__x=5__seed=0"]), failures
    for line in failures.values():
        assert Path(line.rsplit("log: ", 1)[1]).is_file()
    finished = _cells(results)
    assert set(finished) == {"toy__x=3__seed=0.csv", "toy__x=4__seed=0.csv"}
    assert sorted(ran_log.read_text().split()) == ["3", "4"]

    started = time.perf_counter()
    redo = run_cli("run", "toy", "--profile", "quick", "--executor", "slurm", "--no-progress", env=env)
    redo_s = time.perf_counter() - started
    print(redo.stderr)
    assert redo.returncode == 0, redo.stderr
    assert "3 cells run, 2 already finished, 0 failed" in redo.stderr, redo.stderr
    assert sorted(re.findall(r"\] (toy__x=\S+) \.\.\.", redo.stderr)) == [
        "toy__x=1__seed=0", "toy__x=2__seed=0", "toy__x=5__seed=0"]
    after = _cells(results)
    assert len(after) == 5 and all(after[name] == stamp for name, stamp in finished.items())  # finished: untouched
    damage = _damage(results, ran_log, [1.0, 2.0, 3.0, 4.0, 5.0])
    print(f"faults: first run {first_s:.1f} s, rerun {redo_s:.1f} s; "
          + ", ".join(f"{what} {count}" for what, count in damage.items()))
    assert damage == {"lost": 0, "duplicated": 0, "corrupt": 0}, damage
    assert sorted(ran_log.read_text().split()) == ["1", "2", "3", "4", "5"]  # each cell ran to completion once
    assert sorted(pd.read_csv(results / "toy" / "results.csv")["value"]) == [1.0, 4.0, 9.0, 16.0, 25.0]
    assert _leftovers(results) == []


def test_two_submissions_into_one_folder_run_each_cell_once(cluster, tmp_path):
    """Two ``fyexp run --executor slurm --jobs 1`` started together into one results folder: their arrays run side
    by side, one job per cell at a time (fyexp.run.cell_claims); each cell runs once and both runs end ok."""
    env = _toy(tmp_path, "[1.0, 2.0, 3.0, 4.0]", sleep_s=6.0)
    results, ran_log = Path(env["FYEXP_RESULTS_DIR"]), Path(env["FYEXP_TEST_RAN_LOG"])
    args = ("run", "toy", "--profile", "quick", "--executor", "slurm", "--jobs", "1", "--no-progress")
    started = time.perf_counter()
    runs = [_start(*args, env=env) for _ in range(2)]
    outputs = [run.communicate(timeout=400)[1] for run in runs]
    both_s = time.perf_counter() - started
    print(*outputs, sep="\n")
    for run, stderr in zip(runs, outputs):
        assert run.returncode == 0, stderr
        assert "4 cells run, 0 already finished, 0 failed" in stderr, stderr
    assert sorted(ran_log.read_text().split()) == ["1", "2", "3", "4"]  # each cell ran once
    skipped = sum(stderr.count(" ok: running in another job in ") for stderr in outputs)
    assert skipped >= 1, outputs  # the arrays did meet on a cell: its second job found it claimed
    notes = "".join(p.read_text() for p in results.rglob("*_log.out"))
    assert notes.count("claimed by another job (host ") == skipped, notes
    damage = _damage(results, ran_log, [1.0, 2.0, 3.0, 4.0])
    print(f"two submissions: {both_s:.1f} s, {skipped} cell job(s) found their cell claimed; "
          + ", ".join(f"{what} {count}" for what, count in damage.items()))
    assert damage == {"lost": 0, "duplicated": 0, "corrupt": 0}, damage
    table = pd.read_csv(results / "toy" / "results.csv")
    assert sorted(table["value"]) == [1.0, 4.0, 9.0, 16.0] and len(_cells(results)) == 4
    assert _leftovers(results) == []


#: a study sized for CI (a trial: ~15 s on 2 busy cores): lr only, one epoch of a small NVDM, heartbeats every second
NVDM_FAST = ("--set", "search={train.optimizer.lr: {low: 3.0e-4, high: 3.0e-3, log: true}}",
             "--set", "train.epochs=1", "--set", "hidden=32", "--set", "n_topics=20", "--set", "train.batch_size=1024",
             "--set", "perplexity_samples=1", "--set", "heartbeat_interval=1", "--set", "grace_period=4")


def _synthetic_newsgroups(root: Path) -> Path:
    """A data root whose ``20newsgroups`` holds the two by-date split folders (20 groups of posts, 550 training and
    370 test posts a group, as many as the real set's 11,314 and 7,532 roughly, each a header and 100 words drawn
    from NVDM's vocabulary, a group's words favoured): the tuning test's data where the real set is not supplied,
    of the real set's size so that a trial lasts as long."""
    import random

    from fyexp.data.newsgroups import nvdm_vocabulary

    vocabulary, rng = nvdm_vocabulary(), random.Random(0)
    for split, per_group in (("20news-bydate-train", 550), ("20news-bydate-test", 370)):
        for g in range(20):
            folder = root / "20newsgroups" / split / f"group.{g}"
            folder.mkdir(parents=True)
            favoured = vocabulary[g * 100:(g + 1) * 100]
            for i in range(per_group):
                words = [rng.choice(favoured if rng.random() < 0.5 else vocabulary) for _ in range(100)]
                (folder / str(i)).write_text(f"From: poster{i}@example.org\nSubject: post {i}\n\n{' '.join(words)}\n")
    return root


def test_tuning_workers_as_jobs_share_one_postgresql_study(cluster, tmp_path):
    """``fyexp tune nvdm --profile quick`` with 2 workers as SLURM jobs on one PostgreSQL study (sized by
    :data:`NVDM_FAST`), one worker SIGKILLed mid-trial: exactly the profile's 4 trials
    finish (complete or pruned), the killed one is failed and retried, nothing is left running; ``run --best``
    reads the result."""
    import optuna
    from optuna.trial import TrialState

    from fyexp.spec.tuning import retry_root

    url = os.environ.get("FYEXP_TEST_POSTGRES_URL")
    if not url:
        pytest.skip("FYEXP_TEST_POSTGRES_URL is not set (scripts/ci_postgres.sh starts a throw-away server)")
    data = DATA if (DATA / "20newsgroups").is_dir() else _synthetic_newsgroups(tmp_path / "data")
    results = tmp_path / "results"
    for summary in optuna.get_all_study_summaries(url):  # an earlier session's study on this server
        if summary.study_name.startswith("nvdm-quick"):
            optuna.delete_study(study_name=summary.study_name, storage=url)
    env = {"FYEXP_RESULTS_DIR": str(results)}
    workers = results / "nvdm" / "work"
    started = time.perf_counter()
    tune = _start("tune", "nvdm", "--profile", "quick", *NVDM_FAST, "--executor", "slurm", "--jobs", "2",
                  "--storage", url, "--data-dir", str(data), env=env)

    def study():
        try:
            return {s.study_name: s for s in optuna.get_all_study_summaries(url)}
        except Exception:
            return {}

    def running_worker():
        names = [n for n in study() if n.startswith("nvdm-quick")]
        if not names:
            return None
        trials = optuna.load_study(study_name=names[0], storage=url).get_trials(deepcopy=False)
        if not any(t.state == TrialState.RUNNING for t in trials):
            return None
        pids = [int(m) for log in workers.rglob("*_log.out")
                for m in re.findall(r"fyexp tune worker: .* pid (\d+)", log.read_text(errors="replace"))]
        return (names[0], pids[0]) if len(pids) == 2 else None

    study_name, victim = _wait_for("a trial to run", running_worker, timeout=300)
    time.sleep(1.5)  # inside its trial
    os.kill(victim, signal.SIGKILL)
    _, stderr = tune.communicate(timeout=500)
    tune_s = time.perf_counter() - started
    print(stderr)
    assert tune.returncode == 1, stderr  # one worker failed: said in one line with its log
    assert len(re.findall(r"worker \d+: job \S+ failed \(.*\); log: \S+", stderr)) == 1, stderr
    trials = optuna.load_study(study_name=study_name, storage=url).get_trials(deepcopy=False)
    # the profile's n_trials, exactly, counted as the study's budget counts them: completed or pruned (the median
    # pruner may stop a trial whose first epoch is worse than the others', which depends on which finished first)
    finished = [t for t in trials if t.state in (TrialState.COMPLETE, TrialState.PRUNED)]
    assert len(finished) == 4, [(t.number, t.state.name) for t in trials]
    assert any(t.state == TrialState.COMPLETE for t in finished)
    assert not [t for t in trials if t.state in (TrialState.RUNNING, TrialState.WAITING)]
    killed = [t for t in trials if t.state == TrialState.FAIL and not t.user_attrs.get("surplus")]
    assert killed and all(any(retry_root(c) == k.number for c in finished) for k in killed)  # retried, once
    assert len({retry_root(t) for t in finished}) == 4  # no parameter set evaluated twice
    best = run_cli("run", "nvdm", "--profile", "quick", *NVDM_FAST, "--best", "--only", "seed=0", "--no-progress",
                   "--data-dir", str(data), env=env)
    assert best.returncode == 0, best.stderr
    assert "1 cell run" in best.stderr, best.stderr
    frame = pd.read_csv(results / "nvdm" / "results.csv")
    best_lr = optuna.load_study(study_name=study_name, storage=url).best_params["train.optimizer.lr"]
    used = {json.loads(p)["learning_rate"] for p in frame["params"]}
    assert len(used) == 1 and used.pop() == pytest.approx(best_lr, rel=1e-12)  # run --best: the study's best lr
    print(f"tune: {tune_s:.1f} s for 4 trials on 2 workers, one killed; study {study_name}")


def test_the_damage_count_sees_each_kind_of_damage(tmp_path):
    """The fault tests' 0 lost / 0 duplicated / 0 corrupt are counts (:func:`_damage`), here shown to count: a
    clean local run of three cells counts 0 of each; then a second completion of x=1 in the log, x=2's cell file
    removed, x=3's row given a wrong value and its cell file overwritten count one of each (no cluster needed)."""
    env = _toy(tmp_path, "[1.0, 2.0, 3.0]")
    results, ran_log = Path(env["FYEXP_RESULTS_DIR"]), Path(env["FYEXP_TEST_RAN_LOG"])
    done = run_cli("run", "toy", "--profile", "quick", "--no-progress", env=env)
    assert done.returncode == 0, done.stderr
    assert _damage(results, ran_log, [1.0, 2.0, 3.0]) == {"lost": 0, "duplicated": 0, "corrupt": 0}
    with ran_log.open("a") as log:
        log.write("1\n")
    assert _damage(results, ran_log, [1.0, 2.0, 3.0]) == {"lost": 0, "duplicated": 1, "corrupt": 0}
    cells = results / "toy" / "cells" / "quick"
    (cells / "toy__x=2__seed=0.csv").unlink()
    assert _damage(results, ran_log, [1.0, 2.0, 3.0]) == {"lost": 1, "duplicated": 1, "corrupt": 0}
    table = pd.read_csv(results / "toy" / "results.csv")
    table.loc[table["cell"] == "toy__x=3__seed=0", "value"] = 10.0
    table.to_csv(results / "toy" / "results.csv", index=False)
    assert _damage(results, ran_log, [1.0, 2.0, 3.0]) == {"lost": 1, "duplicated": 1, "corrupt": 1}
    table.loc[table["cell"] == "toy__x=3__seed=0", "value"] = 9.0
    table.to_csv(results / "toy" / "results.csv", index=False)
    (cells / "toy__x=3__seed=0.csv").write_text("not,a\ncell file\n")
    assert _damage(results, ran_log, [1.0, 2.0, 3.0]) == {"lost": 1, "duplicated": 1, "corrupt": 1}
