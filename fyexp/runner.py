"""Run a resolved spec: iterate its cells with a progress bar, skip finished ones, store each atomically."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.progress import (BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn,
                           TimeElapsedColumn, TimeRemainingColumn)

from fyexp.errors import CellFailed
from fyexp.experiments import Experiment, RunContext
from fyexp.provenance import provenance
from fyexp.results import ResultStore
from fyexp.specs import ResolvedSpec


@dataclass
class RunSummary:
    ran: int
    skipped: int
    failed: int
    wall_time_s: float
    results_csv: Path


def make_progress(console: Console | None = None) -> Progress:
    return Progress(SpinnerColumn(), TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(), TextColumn("{task.fields[info]}"),
                    console=console, transient=False)


def run_experiment(resolved: ResolvedSpec, experiment: Experiment, *, device: str, data_dir: Path | None,
                   results_dir: Path, force: bool = False, console: Console | None = None,
                   show_progress: bool = True) -> RunSummary:
    """Run every unfinished cell of ``resolved`` (all of them with ``force``) and consolidate the results.

    A cell's rows are written the moment it finishes; an interruption loses at most the cell in flight.
    """
    console = console or Console(stderr=True)
    store = ResultStore(results_dir, resolved.name)
    cells = experiment.cells(resolved.config, resolved.seeds)
    todo = [c for c in cells if force or not store.is_finished(resolved.profile, c)]
    skipped = len(cells) - len(todo)
    if skipped:
        console.print(f"[dim]{skipped} of {len(cells)} cells already finished in {store.folder} (use --force to redo)[/]")
    failed = 0
    start = time.perf_counter()
    progress = make_progress(console) if show_progress else None
    try:
        if progress is not None:
            progress.start()
            task = progress.add_task(f"{resolved.name} [{resolved.profile}]", total=len(todo), info="")
        for cell in todo:
            if progress is not None:
                progress.update(task, info=cell.key)
            ctx = RunContext(experiment=resolved.name, profile=resolved.profile, device=device, data_dir=data_dir,
                             work_dir=store.work_dir(resolved.profile, cell),
                             artifact_dir=store.artifact_dir(resolved.profile), progress=progress, force=force)
            cell_start = time.perf_counter()
            try:
                rows = list(experiment.run_cell(resolved.config, cell, ctx))
            except CellFailed as exc:
                failed += 1
                console.print(f"[red]cell {cell.key} failed:[/] {exc}")
                store.write_failure(resolved.profile, cell, str(exc),
                                    provenance(device, time.perf_counter() - cell_start))
            else:
                store.write_cell(resolved.profile, cell, rows, provenance(device, time.perf_counter() - cell_start))
            if progress is not None:
                progress.advance(task)
    finally:
        if progress is not None:
            progress.stop()
        store.consolidate()
    return RunSummary(ran=len(todo) - failed, skipped=skipped, failed=failed,
                      wall_time_s=time.perf_counter() - start, results_csv=store.table_path)
