"""Run a resolved spec: iterate its cells with progress, skip finished ones, store each atomically."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console

from fyexp.errors import CellFailed
from fyexp.experiments import Experiment, RunContext
from fyexp.progress import RunProgress, make_progress
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


def run_experiment(resolved: ResolvedSpec, experiment: Experiment, *, device: str, data_dir: Path | None,
                   results_dir: Path, force: bool = False, console: Console | None = None,
                   show_progress: bool = True, progress: RunProgress | None = None) -> RunSummary:
    """Run every unfinished cell of ``resolved`` (all of them with ``force``) and consolidate the results.

    A cell's rows are written the moment it finishes; an interruption loses at most the cell in flight.
    ``progress`` defaults to a live bar on a terminal (``show_progress``) and plain lines otherwise.
    """
    console = console or Console(stderr=True)
    progress = progress or make_progress(console, live=show_progress)
    store = ResultStore(results_dir, resolved.name)
    cells = experiment.cells(resolved.config, resolved.seeds)
    todo = [c for c in cells if force or not store.is_finished(resolved.profile, c)]
    skipped = len(cells) - len(todo)
    for path, problem in store.damaged_cells():
        progress.note(f"warning: {path}: damaged cell file ({problem}); it will be redone")
    if skipped:
        progress.note(f"{skipped} of {len(cells)} cells already finished in {store.folder} (use --force to redo)")
    failed = 0
    start = time.perf_counter()
    try:
        progress.start(f"{resolved.name} [{resolved.profile}]", len(todo))
        for cell in todo:
            progress.cell_started(cell.key)
            ctx = RunContext(experiment=resolved.name, profile=resolved.profile, device=device, data_dir=data_dir,
                             work_dir=store.work_dir(resolved.profile, cell),
                             artifact_dir=store.artifact_dir(resolved.profile), progress=progress, force=force)
            cell_start = time.perf_counter()
            try:
                rows = list(experiment.run_cell(resolved.config, cell, ctx))
            except CellFailed as exc:
                failed += 1
                progress.note(f"cell {cell.key} failed: {exc}")
                store.write_failure(resolved.profile, cell, str(exc),
                                    provenance(device, time.perf_counter() - cell_start, experiment))
                status = "failed"
            else:
                store.write_cell(resolved.profile, cell, rows, provenance(device, time.perf_counter() - cell_start, experiment))
                status = "ok"
            progress.cell_finished(cell.key, status, time.perf_counter() - cell_start)
    finally:
        progress.stop()
        store.consolidate()
    return RunSummary(ran=len(todo) - failed, skipped=skipped, failed=failed,
                      wall_time_s=time.perf_counter() - start, results_csv=store.table_path)
