"""Run a resolved spec: iterate its cells with progress, skip finished ones, store each atomically."""

from __future__ import annotations

import json
import shutil
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console

from fyexp.train import allocator
from fyexp.run.cell_claims import claims_cell
from fyexp.run.cell_filter import CellFilter
from fyexp.core.errors import CellFailed, CellSkipped
from fyexp.experiments import Experiment, RunContext
from fyexp.store.io import atomic_write_text
from fyexp.run.progress import RunProgress, make_progress
from fyexp.store.provenance.executed import ExecutedCode, function_hashes, prefit_record_path
from fyexp.store.provenance.freshness import OLD_SETTINGS
from fyexp.store.provenance.record import rows_identity, write_record
from fyexp.store.provenance.source import provenance_columns
from fyexp.store.results import Cell, ResultStore, read_cell_file
from fyexp.spec.settings import expectation, expected_settings, settings_hash
from fyexp.spec.specs import ResolvedSpec, shown_override
from fyexp.store.work_dirs import claim_work_dir, earlier_training_s
from fyexp.core.words import counted


@dataclass
class RunSummary:
    ran: int
    skipped: int
    failed: int
    wall_time_s: float
    results_csv: Path
    data_missing: int = 0   # cells skipped because their data is absent (CellSkipped)
    elsewhere: int = 0      # cells another process held or finished meanwhile (run.cell_claims); not counted in ran


@dataclass
class Pending:
    cells: list[Cell]      # the grid's cells (those ``only`` selects)
    todo: list[Cell]       # still to run
    changed: list[Cell]    # of ``todo``: finished, but at other settings (:mod:`fyexp.store.provenance.freshness`)
    settings_hashes: dict[str, str] = field(default_factory=dict)  # per cell key, of the settings it runs at


def classify_cells(resolved: ResolvedSpec, experiment: Experiment, store: ResultStore, force: bool,
                   only: CellFilter | None = None, *, device: str = "cpu", data_dir: Path | None = None) -> Pending:
    """The grid's cells, those still to run (all with ``force``, else those not finished at the same settings on
    ``device``: :meth:`ResultStore.freshness`) and, among them, those whose finished file has other settings."""
    cells = experiment.cells(resolved.config, resolved.seeds)
    if only is not None:
        cells = only.select(cells)
    settings = {c.key: expected_settings(resolved, experiment, c, device, data_dir) for c in cells}
    found = {} if force else {c.key: store.freshness(resolved.profile, c, expectation(
        resolved, experiment, c, device, data_dir, settings=settings[c.key])) for c in cells}
    todo = [c for c in cells if force or found[c.key] is None or not found[c.key].finished]
    changed = [c for c in todo if found.get(c.key) is not None and found[c.key].kind == OLD_SETTINGS]
    return Pending(cells, todo, changed, {key: settings_hash(value) for key, value in settings.items()})


@claims_cell  # one job per cell at a time (fyexp.run.cell_claims)
def execute_cell(resolved: ResolvedSpec, experiment: Experiment, cell: Cell, store: ResultStore, *, device: str,
                 data_dir: Path | None, force: bool, progress: RunProgress) -> str:
    """Run one cell, in this process or an executor's job, and store its rows (or its failure) atomically; return
    ``'ok'``, ``'failed'`` or, for a cell whose data is absent (nothing written), ``'skipped: <why>'``.  glibc's
    malloc is set up for training loops first (:func:`fyexp.train.allocator.tune_allocator`: the same numbers)."""
    allocator.tune_allocator()
    ctx = _context(resolved, store, cell, device, data_dir, progress, force)
    settings = expected_settings(resolved, experiment, cell, device, data_dir)
    identity = {"settings_hash": settings_hash(settings)}
    if overrides := getattr(resolved, "overrides", ()):
        identity["overrides"] = ",".join(f"{k}={shown_override(k, v)}" for k, v in overrides)
    # the clock of a resumed cell starts at its first process (its training in earlier processes)
    cell_start = time.perf_counter() - earlier_training_s(ctx.work_dir)
    recorder, failure = ExecutedCode(), None
    try:
        with recorder:
            rows = list(experiment.run_cell(resolved.config, cell, ctx))
    except CellSkipped as exc:
        return f"skipped: {exc}"
    except CellFailed as exc:
        progress.note(f"cell {cell.key} failed: {exc}")
        failure = str(exc)
    # the functions the cell ran, with those its ensemble's prefit ran for it (None: recording is off)
    functions, prefit = recorder.functions(), prefit_record_path(ctx.work_dir)
    if functions is not None and prefit.is_file():
        functions |= set(json.loads(prefit.read_text(encoding="utf-8")))
    # a finished file at other settings superseded; the run record written; the cell file last (it marks it finished)
    path, hashed = store.cell_path(resolved.profile, cell), identity["settings_hash"]
    if path.is_file() and (frame := read_cell_file(path)[0]) is not None and rows_identity(frame)[0] != hashed:
        store.supersede(resolved.profile, cell)
    write_record(path, settings, function_hashes(functions) if functions is not None else None)
    prov = {**provenance_columns(device, time.perf_counter() - cell_start), **identity}
    if failure is None:
        store.write_cell(resolved.profile, cell, rows, prov)
    else:
        store.write_failure(resolved.profile, cell, failure, prov)
    return "ok" if failure is None else "failed"


def _context(resolved: ResolvedSpec, store: ResultStore, cell: Cell, device: str, data_dir: Path | None,
             progress: RunProgress, force: bool) -> RunContext:
    return RunContext(experiment=resolved.name, profile=resolved.profile, device=device, data_dir=data_dir,
                      work_dir=store.work_dir(resolved.profile, cell),
                      artifact_dir=store.artifact_dir(resolved.profile), progress=progress, force=force)


def forget_finished_training(store: ResultStore, profile: str, cells: list[Cell], progress: RunProgress) -> None:
    """``--force``: redo means retrain, so a work folder whose training finished before its cell's result was
    written is emptied (its checkpoint would be returned at once).  Kept, with one line saying so: a training
    stopped part-way (a forced run interrupted), which resumes, and one finished after the cell's last result, or
    with none (a run cut short between training and measuring), which is measured, not trained again."""
    from fyexp.train import training_finished

    for cell in cells:
        work = store.work_dir(profile, cell)
        if not training_finished(work):
            progress.note(f"cell {cell.key}: resuming its unfinished training (an interrupted run; delete {work} "
                          "to start it over)")
        elif trained_since_result(work, store.cell_path(profile, cell)):
            progress.note(f"cell {cell.key}: its training finished after its last result was written (a run cut "
                          f"short before measuring); measuring it, not retraining (delete {work} to start it over)")
        else:
            shutil.rmtree(work, ignore_errors=True)


def trained_since_result(work: Path, cell_file: Path) -> bool:
    """Whether ``work`` holds checkpoints (``checkpoint.pt`` at any depth) all written after ``cell_file`` — or
    ``cell_file`` is absent: a training that no result written so far has measured."""
    from fyexp.train import CHECKPOINT

    stamps = [p.stat().st_mtime_ns for p in Path(work).rglob(CHECKPOINT)]  # none for an absent folder
    return bool(stamps) and (not cell_file.is_file() or min(stamps) > cell_file.stat().st_mtime_ns)


def prefit_ensembles(resolved: ResolvedSpec, experiment: Experiment, todo: list[Cell], store: ResultStore, *,
                     device: str, data_dir: Path | None, force: bool, progress: RunProgress) -> None:
    """With ``train.ensemble: true``: the cells that differ only by seed trained together by ``experiment.prefit``,
    leaving each member's solo-format checkpoint in its work folder: :func:`execute_cell` then only evaluates."""
    if not getattr(getattr(resolved.config, "train", None), "ensemble", False) or not experiment.trains_ensembles:
        return
    groups: dict[tuple[str, str], list[Cell]] = {}
    for cell in todo:
        groups.setdefault((cell.method, cell.params_json), []).append(cell)
    for cells in groups.values():
        ctxs = [_context(resolved, store, c, device, data_dir, progress, force) for c in cells]
        progress.note(f"ensemble: training {len(cells)} seed(s) of {cells[0].key.rsplit('__seed=', 1)[0]} together")
        with ExecutedCode() as recorder:
            experiment.prefit(resolved.config, cells, ctxs)
        for ctx in ctxs if recorder.enabled else ():
            Path(ctx.work_dir).mkdir(parents=True, exist_ok=True)
            atomic_write_text(prefit_record_path(ctx.work_dir), json.dumps(sorted(recorder.functions())) + "\n")


def run_experiment(resolved: ResolvedSpec, experiment: Experiment, *, device: str, data_dir: Path | None,
                   results_dir: Path, force: bool = False, console: Console | None = None,
                   show_progress: bool = True, progress: RunProgress | None = None, executor: Any = None,
                   only: CellFilter | None = None, pending: Pending | None = None) -> RunSummary:
    """Run every unfinished cell (all with ``force``; of those ``only`` selects), in this process or as jobs
    (``executor.run_cells``), each cell's rows written as it finishes; consolidate the results.  ``progress``: a live
    bar on a terminal (``show_progress``), else plain lines; ``pending``: the plan's classification, else done here."""
    progress = progress or make_progress(console or Console(stderr=True), live=show_progress)
    store = ResultStore(results_dir, resolved.name)
    store.refuse_links_leaving()  # every write and delete below stays inside the results folder
    if removed := store.remove_leftovers():  # temporary files of writes killed in an earlier run
        progress.note(f"removed {len(removed)} leftover temporary file(s) of interrupted writes under {store.folder}")
    if pending is None:
        pending = classify_cells(resolved, experiment, store, force, only, device=device, data_dir=data_dir)
    cells, todo = pending.cells, pending.todo
    skipped = len(cells) - len(todo)
    for path, problem in store.read_cells()[1]:
        progress.note(f"warning: {path}: damaged cell file ({problem}); it will be redone")
    if pending.changed:
        progress.note(f"{counted(len(pending.changed))}: settings changed since they ran; they are rerun "
                      f"(the old rows move to {store.folder / 'superseded' / resolved.profile})")
    if skipped:
        progress.note(f"{skipped} of {len(cells)} cells already finished in {store.folder} (use --force to redo)")
    if force:
        forget_finished_training(store, resolved.profile, todo, progress)
    for cell in todo:  # all before any runs: a cell may train in another's folder (frac's Table 7 reference)
        if claim_work_dir(store.work_dir(resolved.profile, cell), pending.settings_hashes[cell.key]):
            progress.note(f"cell {cell.key}: its work folder held checkpoints trained at other settings; discarded")
    start, counts = time.perf_counter(), Counter()   # by status: failed, skipped (data missing), elsewhere
    try:
        progress.start(f"{resolved.name} [{resolved.profile}]", len(todo))
        if executor is not None and todo:
            counts = executor.run_cells(resolved, todo, store, device=device, data_dir=data_dir, force=force,
                                        progress=progress)
        else:
            prefit_ensembles(resolved, experiment, todo, store, device=device, data_dir=data_dir, force=force,
                             progress=progress)
            for cell in todo:
                progress.cell_started(cell.key)
                cell_start = time.perf_counter()
                status = execute_cell(resolved, experiment, cell, store, device=device, data_dir=data_dir,
                                      force=force, progress=progress)
                # "ok: <why>": claimed or finished by another run (fyexp.run.cell_claims)
                counts["elsewhere" if status.startswith("ok:") else status.split(":", 1)[0]] += 1
                progress.cell_finished(cell.key, status, time.perf_counter() - cell_start)
    finally:
        progress.stop()
        store.consolidate()
    failed, data_missing, elsewhere = counts["failed"], counts["skipped"], counts["elsewhere"]
    return RunSummary(len(todo) - failed - data_missing - elsewhere, skipped, failed, time.perf_counter() - start,
                      store.table_path, data_missing, elsewhere)
