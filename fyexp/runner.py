"""Run a resolved spec: iterate its cells with progress, skip finished ones, store each atomically."""

from __future__ import annotations

import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console

from fyexp.cell_filter import CellFilter
from fyexp.errors import CellFailed, CellSkipped
from fyexp.experiments import Experiment, RunContext
from fyexp.progress import RunProgress, make_progress
from fyexp.provenance import provenance
from fyexp.results import Cell, ResultStore
from fyexp.specs import ResolvedSpec

if TYPE_CHECKING:
    from fyexp.executors import ExecutorOptions


@dataclass
class RunSummary:
    ran: int
    skipped: int
    failed: int
    wall_time_s: float
    results_csv: Path
    data_missing: int = 0   # cells skipped because their data is absent (CellSkipped)


def pending_cells(resolved: ResolvedSpec, experiment: Experiment, store: ResultStore,
                  force: bool, only: CellFilter | None = None) -> tuple[list[Cell], list[Cell]]:
    """The grid's cells (those ``only`` selects) and those still to run (all with ``force``; else the unfinished)."""
    cells = experiment.cells(resolved.config, resolved.seeds)
    if only is not None:
        cells = only.select(cells)
    return cells, [c for c in cells if force or not store.is_finished(resolved.profile, c)]


def execute_cell(resolved: ResolvedSpec, experiment: Experiment, cell: Cell, store: ResultStore, *, device: str,
                 data_dir: Path | None, force: bool, progress: RunProgress) -> str:
    """Run one cell and store its rows (or its failure) atomically; return ``'ok'``, ``'failed'`` or, for a cell
    whose data is absent (:class:`CellSkipped`, nothing written), ``'skipped: <why>'``.

    The one code path of a cell, whether it runs in this process or in an executor's job.
    """
    ctx = RunContext(experiment=resolved.name, profile=resolved.profile, device=device, data_dir=data_dir,
                     work_dir=store.work_dir(resolved.profile, cell),
                     artifact_dir=store.artifact_dir(resolved.profile), progress=progress, force=force)
    cell_start = time.perf_counter()
    try:
        rows = list(experiment.run_cell(resolved.config, cell, ctx))
    except CellSkipped as exc:
        return f"skipped: {exc}"
    except CellFailed as exc:
        progress.note(f"cell {cell.key} failed: {exc}")
        store.write_failure(resolved.profile, cell, str(exc),
                            provenance(device, time.perf_counter() - cell_start, experiment))
        return "failed"
    store.write_cell(resolved.profile, cell, rows, provenance(device, time.perf_counter() - cell_start, experiment))
    return "ok"


def prefit_ensembles(resolved: ResolvedSpec, experiment: Experiment, todo: list[Cell], store: ResultStore, *,
                     device: str, data_dir: Path | None, force: bool, progress: RunProgress) -> None:
    """With ``train.ensemble: true``: let the experiment train the seeds of each pending cell as one ensemble.

    Cells that differ only by seed form a group; ``experiment.prefit(config, cells, ctxs)`` trains them together
    and leaves each member's solo-format checkpoint in its cell's work folder, so :func:`execute_cell` then only
    evaluates (with the solo run's numbers).  An experiment without ``prefit`` trains every cell alone.
    """
    train = getattr(resolved.config, "train", None)
    if not getattr(train, "ensemble", False) or not hasattr(experiment, "prefit"):
        return
    groups: dict[tuple[str, str], list[Cell]] = {}
    for cell in todo:
        groups.setdefault((cell.method, cell.params_json), []).append(cell)
    for cells in groups.values():
        ctxs = [RunContext(experiment=resolved.name, profile=resolved.profile, device=device, data_dir=data_dir,
                           work_dir=store.work_dir(resolved.profile, c),
                           artifact_dir=store.artifact_dir(resolved.profile), progress=progress, force=force)
                for c in cells]
        progress.note(f"ensemble: training {len(cells)} seed(s) of {cells[0].key.rsplit('__seed=', 1)[0]} together")
        experiment.prefit(resolved.config, cells, ctxs)


def run_experiment(resolved: ResolvedSpec, experiment: Experiment, *, device: str, data_dir: Path | None,
                   results_dir: Path, force: bool = False, console: Console | None = None,
                   show_progress: bool = True, progress: RunProgress | None = None,
                   executor: "ExecutorOptions | None" = None, only: CellFilter | None = None) -> RunSummary:
    """Run every unfinished cell of ``resolved`` (all of them with ``force``; ``only`` the cells it selects,
    :mod:`fyexp.cell_filter`) and consolidate the results.

    A cell's rows are written the moment it finishes; an interruption loses at most the cells in flight.
    ``progress`` defaults to a live bar on a terminal (``show_progress``) and plain lines otherwise.  With an
    ``executor`` (:mod:`fyexp.executors`: submitit's local or SLURM executor) the cells run as jobs, each through
    :func:`execute_cell`, writing to the same results folder.
    """
    console = console or Console(stderr=True)
    progress = progress or make_progress(console, live=show_progress)
    store = ResultStore(results_dir, resolved.name)
    cells, todo = pending_cells(resolved, experiment, store, force, only)
    skipped = len(cells) - len(todo)
    for path, problem in store.damaged_cells():
        progress.note(f"warning: {path}: damaged cell file ({problem}); it will be redone")
    if skipped:
        progress.note(f"{skipped} of {len(cells)} cells already finished in {store.folder} (use --force to redo)")
    if force:  # redo means retrain: a finished checkpoint in a cell's work folder must not be reloaded
        for cell in todo:
            shutil.rmtree(store.work_dir(resolved.profile, cell), ignore_errors=True)
    failed = data_missing = 0
    start = time.perf_counter()
    try:
        progress.start(f"{resolved.name} [{resolved.profile}]", len(todo))
        if executor is not None and todo:
            from fyexp.executors import run_cells_as_jobs

            failed = run_cells_as_jobs(resolved, todo, store, options=executor, device=device, data_dir=data_dir,
                                       force=force, progress=progress)
        else:
            prefit_ensembles(resolved, experiment, todo, store, device=device, data_dir=data_dir, force=force,
                             progress=progress)
            for cell in todo:
                progress.cell_started(cell.key)
                cell_start = time.perf_counter()
                status = execute_cell(resolved, experiment, cell, store, device=device, data_dir=data_dir,
                                      force=force, progress=progress)
                failed += status == "failed"
                data_missing += status.startswith("skipped")
                progress.cell_finished(cell.key, status, time.perf_counter() - cell_start)
    finally:
        progress.stop()
        store.consolidate()
    return RunSummary(ran=len(todo) - failed - data_missing, skipped=skipped, failed=failed, data_missing=data_missing,
                      wall_time_s=time.perf_counter() - start, results_csv=store.table_path)
