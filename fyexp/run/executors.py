"""Cells as jobs of submitit: its local executor (this machine) or SLURM (a cluster, one job array).

Each job runs one cell through the in-process code path (:func:`fyexp.run.runner.execute_cell`) into the shared
results folder: resume, ``--force`` and failures behave the same, a job killed mid-cell leaves no file.  Logs:
``results/<exp>/work/<profile>/jobs/``.  Each job has ``threads_per_job`` threads (default 1: small GEMMs do not
scale, ``scripts/bench_grid.py``) and trains its own cell (no ``train.ensemble``)."""

from __future__ import annotations

import functools
import os
import re
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal
from unittest import mock

from fyexp.core.constraints import OPTION_DOMAINS, check_options
from fyexp.core.errors import FyexpError
from fyexp.run.progress import LineProgress, RunProgress
from fyexp.store.results import Cell, ResultStore

ExecutorKind = Literal["local", "slurm"]
THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")
POLL_S = 0.5
SLURM_POLL_S = 2.0   # how often `fyexp run --executor slurm` looks at its jobs (squeue at most every WATCH_S)
WATCH_S = 5
RESULT_WAIT_S = 2    # how long an ended job's result file is waited for (submitit: 15 s, for slow shared disks)
#: slurmstepd's line in a job's log when SLURM ended the job (scancel, time limit, node failure, preemption)
SLURM_VERDICT = re.compile(r"\*\*\* (JOB|STEP) \S+ ON \S+ (CANCELLED|FAILED|TIMEOUT)|DUE TO (TIME LIMIT|PREEMPTION|NODE)")


@dataclass(frozen=True)
class ExecutorOptions:
    """How cells become jobs.  ``jobs``: concurrent jobs (local: default one per core; slurm: array parallelism)."""

    kind: ExecutorKind = "local"
    jobs: int | None = None
    threads_per_job: int = 1
    slurm_partition: str | None = None
    slurm_gpus_per_job: int = 0
    slurm_cpus_per_job: int | None = None
    slurm_mem_gb: float | None = None
    slurm_time_min: int = 24 * 60

    def __post_init__(self):
        if self.kind not in ("local", "slurm"):
            raise FyexpError(f"--executor: expected one of local, slurm, got '{self.kind}'")
        check_options({option: getattr(self, name) for option, name in OPTIONS.items() if option in OPTION_DOMAINS})

    def concurrency(self, n_cells: int) -> int:
        default = (os.cpu_count() or 1) if self.kind == "local" else n_cells
        return max(1, min(n_cells, self.jobs or default))

    def run_cells(self, resolved: Any, cells: list[Cell], store: ResultStore, *, device: str,
                  data_dir: Path | None, force: bool, progress: RunProgress) -> Counter:
        """``cells`` as jobs (:func:`_run_jobs`) for :func:`fyexp.run.runner.run_experiment`; their statuses counted."""
        call = functools.partial(run_cell_job, resolved, results_dir=str(Path(store.root).resolve()), device=device,
                                 data_dir=str(Path(data_dir).resolve()) if data_dir else None, force=force,
                                 threads=self.threads_per_job)
        return _run_jobs(self, *_jobs_folder_and_name(resolved, store), call, cells, [c.key for c in cells], progress)


def _jobs_folder_and_name(resolved: Any, store: ResultStore) -> tuple[Path, str]:
    return store.folder / "work" / resolved.profile / "jobs", f"fyexp-{resolved.name}-{resolved.profile}"


#: the command-line option of each field (their domains: :data:`fyexp.core.constraints.OPTION_DOMAINS`)
OPTIONS = {"--jobs": "jobs", "--threads-per-job": "threads_per_job", "--slurm-partition": "slurm_partition",
           "--slurm-gpus-per-job": "slurm_gpus_per_job", "--slurm-cpus-per-job": "slurm_cpus_per_job",
           "--slurm-mem-gb": "slurm_mem_gb", "--slurm-time": "slurm_time_min"}


def executor_options(kind: str | None, given: dict[str, Any]) -> ExecutorOptions | None:
    """The options of ``--executor kind`` from the command line's ``given`` values (None: the default; names not in
    :data:`OPTIONS` ignored), or None without ``--executor``."""
    values = {OPTIONS[option]: value for option, value in given.items() if option in OPTIONS and value is not None}
    options = ExecutorOptions(kind=kind or "local", **values)   # every value checked, with or without --executor
    if kind is None and "jobs" in values:
        raise FyexpError("--jobs needs --executor local or slurm")
    return options if kind is not None else None


def slurm_parameters(options: ExecutorOptions, n_cells: int, job_name: str) -> dict[str, Any]:
    """The parameters of ``submitit.SlurmExecutor.update_parameters`` for ``n_cells`` cells."""
    given = {"partition": options.slurm_partition, "gpus_per_node": options.slurm_gpus_per_job,
             "mem": options.slurm_mem_gb and f"{int(options.slurm_mem_gb * 1024)}M"}
    return {"job_name": job_name, "time": options.slurm_time_min, "nodes": 1, "ntasks_per_node": 1,
            "cpus_per_task": options.slurm_cpus_per_job or options.threads_per_job,
            "array_parallelism": options.concurrency(n_cells), **{k: v for k, v in given.items() if v}}


def run_cell_job(resolved: Any, cell: Cell, *, results_dir: str, device: str, data_dir: str | None, force: bool,
                 threads: int) -> str:
    """The body of one job: limit threads, run ``cell`` through the in-process code path, return its status."""
    print(f"fyexp job: {resolved.name} [{resolved.profile}] cell {cell.key}, {threads} thread(s), pid {os.getpid()}",
          flush=True)
    os.environ.update({name: str(threads) for name in THREAD_VARIABLES})   # before torch is imported
    import torch
    from rich.console import Console
    from threadpoolctl import threadpool_limits

    from fyexp.experiments import get_experiment
    from fyexp.run.runner import execute_cell

    torch.set_num_threads(threads)
    progress = LineProgress(Console(file=None, soft_wrap=True), heartbeat_s=60)
    with threadpool_limits(threads):  # under the cell's claim: skipped when running or finished elsewhere
        return execute_cell(resolved, get_experiment(resolved.spec.runner), cell, ResultStore(Path(results_dir),
                            resolved.name), device=device, data_dir=Path(data_dir) if data_dir else None, force=force,
                            progress=progress)


def describe_slurm_submission(resolved: Any, cells: list[Cell], store: ResultStore, options: ExecutorOptions) -> str:
    """What ``--executor slurm`` would submit (nothing is): the sbatch script submitit renders for the array, then one
    line per array task (its cell)."""
    import shlex
    import sys

    from submitit.slurm import slurm

    folder, name = _jobs_folder_and_name(resolved, store)
    command = " ".join([shlex.quote(sys.executable), "-u -m submitit.core._submit", shlex.quote(str(folder))])
    lines = [slurm._make_sbatch_string(command=command, folder=folder, map_count=len(cells),
                                       **slurm_parameters(options, len(cells), name)), ""]
    lines += [f"# array task {i}: fyexp.run.executors.run_cell_job({resolved.name} [{resolved.profile}], {cell.key})"
              for i, cell in enumerate(cells)]
    return "\n".join(lines)


def failure_reason(exc: BaseException) -> str:
    """One line on why a job failed: SLURM's own word when its log has one (``*** JOB 7 ON node CANCELLED AT ...
    DUE TO TIME LIMIT ***``), else the last line of the error (the job's last traceback line, for a raise)."""
    text = str(exc)
    parts = re.split(r"^-{10,}$", text, flags=re.M)  # submitit: "... with trace:\n----\nTRACE\n----\n(paths)"
    text = parts[1] if len(parts) >= 3 else text
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()] or [type(exc).__name__]
    slurm = [line for line in lines if SLURM_VERDICT.search(line)]
    return (slurm or lines)[-1][:200]


def _run_jobs(options: ExecutorOptions, folder: Path, job_name: str, call, items: list, labels: list[str],
              progress: RunProgress, cells: bool = True) -> Counter:
    """``call(item)`` of every item as a job under its label, the statuses counted by kind (``'skipped: <why>'`` as
    ``skipped``); ``cells``: the items are cells, else tuning workers.  Local: at most
    :meth:`ExecutorOptions.concurrency` at once, with :data:`THREAD_VARIABLES` set, cancelled on Ctrl-C; SLURM: one
    job array watched with ``squeue`` (:mod:`fyexp.run.slurm_watcher`)."""
    import submitit

    from fyexp.run.slurm_watcher import SqueueWatcher

    local, watcher = options.kind == "local", SqueueWatcher(delay_s=WATCH_S)
    folder.mkdir(parents=True, exist_ok=True)
    executor = submitit.LocalExecutor(folder=folder) if local else submitit.SlurmExecutor(folder=folder)
    executor.update_parameters(**{"timeout_min": 7 * 24 * 60} if local else
                               slurm_parameters(options, len(items), job_name))
    limit = options.concurrency(len(items)) if local else len(items)
    queue, running, counts = list(zip(items, labels)), {}, Counter()
    threads = {name: str(options.threads_per_job) for name in THREAD_VARIABLES} if local and cells else {}
    try:
        with mock.patch.dict(os.environ, threads):
            while queue or running:
                batch, queue = queue[:limit - len(running)], queue[limit - len(running):]
                if batch:
                    args = [item for item, _ in batch]
                    jobs = [executor.submit(call, a) for a in args] if local else executor.map_array(call, args)
                    for job in jobs if not local else ():   # squeue, not sacct; a short wait for result files
                        job.watcher, job._results_timeout_s = watcher, RESULT_WAIT_S
                    for job, (_, label) in zip(jobs, batch):
                        progress.cell_started(label if cells else f"{label} (job {job.job_id})")
                        running[job] = (label, time.perf_counter())
                time.sleep(POLL_S if local else SLURM_POLL_S)
                for job in [j for j in running if j.done()]:
                    label, started = running.pop(job)
                    try:
                        status = str(job.result())
                    except Exception as exc:  # the job raised, was killed, or timed out: its cell has no file
                        progress.note(f"{f'cell {label}' if cells else label}: job {job.job_id} failed "
                                      f"({failure_reason(exc)}); log: {job.paths.stderr}")
                        status = "failed"
                    counts[status.split(":", 1)[0]] += 1
                    progress.cell_finished(label, status, time.perf_counter() - started)
    except BaseException:
        for job in running if local else ():
            job.cancel(check=False)
        raise
    return counts


def tune_job(experiment: Any, config: Any, ctx: Any, worker: int, *, storage: str, results_dir: str, budget: int,
             timeout: float | None, threads: int) -> str:
    """The body of tuning worker ``worker``: trials of the shared study until its ``budget`` is used up."""
    print(f"fyexp tune worker: {ctx.experiment} [{ctx.profile}] #{worker}, budget {budget}, pid {os.getpid()}",
          flush=True)
    import torch

    from fyexp.spec.tuning import tune_experiment

    torch.set_num_threads(threads)
    tune_experiment(experiment, config, ctx, timeout=timeout, storage=storage, results_dir=Path(results_dir),
                    budget=budget)
    return "ok"


def tune_as_jobs(experiment: Any, config: Any, ctx: Any, *, options: ExecutorOptions, n_trials: int | None,
                 timeout: float | None, storage: str, results_dir: Path, progress: RunProgress) -> int:
    """Run ``options.jobs`` Optuna workers as jobs on one study; return how many failed.  Their exact budget: the
    profile's ``n_trials`` in all, or ``n_trials`` more than the study counts
    (:func:`fyexp.spec.tuning.counted_trials`)."""
    from fyexp.spec.tuning import StudyOptions, counted_trials, open_study

    study = open_study(f"{ctx.experiment}-{ctx.profile}", storage, StudyOptions())
    budget = counted_trials(study) + n_trials if n_trials is not None else getattr(config, "n_trials", 20)
    workers = options.jobs or (os.cpu_count() or 1)
    call = functools.partial(tune_job, experiment, config, ctx, storage=storage,
                             results_dir=str(Path(results_dir).resolve()), budget=budget, timeout=timeout,
                             threads=options.threads_per_job)
    progress.start(f"tune {ctx.experiment} [{ctx.profile}]: {workers} workers, budget {budget} trials", workers,
                   unit="workers")
    try:
        return _run_jobs(options, Path(results_dir) / ctx.experiment / "work" / ctx.profile /
                         "tune-jobs", f"fyexp-tune-{ctx.experiment}-{ctx.profile}", call, list(range(workers)),
                         [f"worker {i}" for i in range(workers)], progress, cells=False)["failed"]
    finally:
        progress.stop()
