"""One job on the device: check the environment, unpack the data, run the units in order within a wall-clock budget.

A unit runs through the runner's own functions, as ``fyexp run NAME --profile P --only ... --seeds ...`` runs its
cells: :func:`fyexp.run.runner.classify_cells`, the work folders claimed for the cells' settings
(:func:`fyexp.store.work_dirs.claim_work_dir`), then, for an ensemble unit, :func:`fyexp.run.runner.prefit_ensembles`
with ``train.ensemble`` switched on for that call only, then :func:`fyexp.run.runner.run_experiment` with the profile as
it is.  So each member trains in its cell's work folder as one ensemble and the cell then evaluates from its
finished checkpoint (its rows are its solo run's, to float tolerance: ``tests/train/test_ensemble.py``), and the rows'
profile, settings hash and settings record are the plain profile's.  (``--set train.ensemble=true`` would make
them a variant, ``paper+ensemble=true``, never scored as the profile.)

The budget: :class:`BudgetSpent` is raised at the start of an epoch once the deadline has passed (the hook is
installed by ``scripts/gpu_lease.py``), i.e. after every member's checkpoint of the previous epoch is written;
the unit's work folders then hold a consistent checkpoint that the next job resumes.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path
from typing import Callable, Sequence

from fyexp.core.errors import FyexpError
from gpu_kit.queue import Unit, cell_state, resolve_entry, unit_filter

__all__ = ["BudgetSpent", "REQUIRED_MODULES", "missing_modules", "check_environment", "prepare", "pending_units",
           "run_unit", "run_units", "STATUS_OK", "STATUS_FAILED", "STATUS_BUDGET", "STATUS_ERROR"]

#: what fyexp imports on the cells' path (``yaml`` is pyyaml, ``sklearn`` scikit-learn)
REQUIRED_MODULES = ("torch", "numpy", "scipy", "pandas", "yaml", "typer", "rich", "matplotlib", "sklearn",
                    "torchvision", "entmax")
STATUS_OK, STATUS_FAILED, STATUS_ERROR, STATUS_BUDGET = 0, 1, 2, 3   # a worker's exit status


class BudgetSpent(KeyboardInterrupt):
    """The job's wall-clock budget ran out; raised between two epochs (a KeyboardInterrupt, so the runner's
    ``finally`` blocks consolidate as on Ctrl-C)."""


def missing_modules(names: Sequence[str] = REQUIRED_MODULES) -> list[str]:
    return [name for name in names if importlib.util.find_spec(name) is None]


def check_environment(device: str) -> list[str]:
    """What keeps this machine from running the units on ``device`` (empty when nothing does)."""
    missing = missing_modules()
    if missing:
        return [f"python modules missing: {', '.join(missing)} (python {sys.version.split()[0]} at {sys.executable}; "
                f"carry pure-Python ones with `pack --vendor NAME`, install the others)"]
    if device.startswith("cuda"):
        import torch

        if not torch.cuda.is_available():
            return [f"--device {device}: torch {torch.__version__} sees no CUDA device"]
    return []


def describe_machine(device: str) -> dict:
    import torch

    return {"python": sys.version.split()[0], "torch": torch.__version__, "device": device,
            "gpu": torch.cuda.get_device_name(0) if device.startswith("cuda") else None,
            "cpu_count": os.cpu_count()}


def prepare(lease_dir: Path, manifest: dict, data_root: Path, scratch_results: Path) -> None:
    """Unpack the manifest's data sets under ``data_root`` and the carried checkpoints (``state/``) under
    ``scratch_results``."""
    from gpu_kit.data import unpack_data_set

    for name, record in manifest.get("data", {}).items():
        unpack_data_set(record, lease_dir / "data" / record["file"], data_root)
    for part in sorted((lease_dir / "state").glob("*.tar.gz")):
        with tarfile.open(part) as tar:
            tar.extractall(scratch_results, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))


def pending_units(units: Sequence[Unit], results_dir: Path) -> list[Unit]:
    """The units with their seeds still missing from ``results_dir`` (:func:`gpu_kit.queue.cell_state`); cells
    merged since the pack (they travel with the working tree) are not run again."""
    from fyexp.store.results import ResultStore

    out = []
    for unit in units:
        experiment, resolved = resolve_entry(unit.entry())
        store = ResultStore(results_dir, resolved.name)
        seeds = [c.seed for c in unit.cells() if cell_state(store, resolved, experiment, c) == "missing"]
        if seeds:
            out.append(dataclasses.replace(unit, seeds=seeds, ensemble=unit.ensemble and len(seeds) > 1))
    return out


def run_unit(unit: Unit, *, results_dir: Path, data_dir: Path | None, device: str, console=None) -> int:
    """Run one unit's cells into ``results_dir`` (``STATUS_OK`` or ``STATUS_FAILED``); :class:`BudgetSpent`
    propagates."""
    from rich.console import Console

    from fyexp.run.progress import make_progress
    from fyexp.store.results import ResultStore
    from fyexp.run.runner import classify_cells, prefit_ensembles, run_experiment
    from fyexp.store.work_dirs import claim_work_dir

    console = console or Console(stderr=True)
    experiment, resolved = resolve_entry(unit.entry())
    only = unit_filter(unit)
    store = ResultStore(results_dir, resolved.name)
    if unit.ensemble:
        pending = classify_cells(resolved, experiment, store, False, only, device=device, data_dir=data_dir)
        for cell in pending.todo:
            claim_work_dir(store.work_dir(resolved.profile, cell), pending.settings_hashes[cell.key])
        train = dataclasses.replace(resolved.config.train, ensemble=True)
        together = dataclasses.replace(resolved, config=dataclasses.replace(resolved.config, train=train))
        progress = make_progress(console, live=False)
        prefit_ensembles(together, experiment, pending.todo, store, device=device, data_dir=data_dir, force=False,
                         progress=progress)
    summary = run_experiment(resolved, experiment, device=device, data_dir=data_dir, results_dir=results_dir,
                             console=console, show_progress=False, only=only,
                             pending=pending if unit.ensemble else None)  # prefit wrote no cell: as classified
    return STATUS_FAILED if summary.failed or summary.data_missing else STATUS_OK


def run_units(units: Sequence[Unit], *, jobs: int, deadline: float, min_start_s: float,
              clock: Callable[[], float], inline: Callable[[Unit], int],
              spawn: Callable[[int, Unit], subprocess.Popen], grace_s: float = 20.0,
              log: Callable[[str], None] = print) -> dict[str, str]:
    """Run ``units`` in order, ``jobs`` at a time (``jobs == 1``: one after another in this process through
    ``inline``; else worker processes from ``spawn``); a unit starts only while ``min_start_s`` of the budget is
    left.  Workers still running ``grace_s`` after the deadline (inside a long evaluation) are stopped.
    Returns each unit's outcome: ``finished``, ``failed``, ``stopped by budget``, ``error`` or ``not started``."""
    words = {STATUS_OK: "finished", STATUS_FAILED: "failed", STATUS_BUDGET: "stopped by budget"}
    outcome = {u.name: "not started" for u in units}
    if jobs <= 1:
        for unit in units:
            if clock() > deadline - min_start_s:
                break
            log(f"unit {unit.name}: starting ({len(unit.seeds)} cell(s){', one ensemble' if unit.ensemble else ''})")
            try:
                outcome[unit.name] = words[inline(unit)]
            except BudgetSpent:
                outcome[unit.name] = "stopped by budget"
                break
            log(f"unit {unit.name}: {outcome[unit.name]}")
        return outcome
    todo = list(enumerate(units))
    running: dict[int, tuple[Unit, subprocess.Popen]] = {}
    while todo or running:
        while todo and len(running) < jobs and clock() <= deadline - min_start_s:
            index, unit = todo.pop(0)
            log(f"unit {unit.name}: starting ({len(unit.seeds)} cell(s){', one ensemble' if unit.ensemble else ''})")
            running[index] = (unit, spawn(index, unit))
        if clock() > deadline - min_start_s:
            todo = []
        for index, (unit, process) in list(running.items()):
            code = process.poll()
            if code is None and clock() > deadline + grace_s:
                process.terminate()
                try:
                    code = process.wait(10)
                except subprocess.TimeoutExpired:
                    process.kill()
                    code = process.wait()
                code = STATUS_BUDGET
            if code is not None:
                outcome[unit.name] = words.get(code, "error")
                log(f"unit {unit.name}: {outcome[unit.name]} (exit status {code})")
                del running[index]
        if running:
            time.sleep(0.5)
    return outcome


def write_json(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1, sort_keys=True, default=str) + "\n", encoding="utf-8")


def clear(folder: Path) -> None:
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True, exist_ok=True)


MANIFEST_EXPECTED = "expected the manifest `scripts/gpu_lease.py pack` writes (pack anew)"
_UNIT_FIELDS = {"label": str, "experiment": str, "profile": str, "method": str, "params": dict, "seeds": list,
                "ensemble": bool, "data": list, "sets": list, "folder": str, "entry_seeds": (list, type(None))}


def load_manifest(lease_dir: Path) -> dict:
    """The pack's ``manifest.json`` in ``lease_dir``, read as data (:func:`read_manifest`)."""
    path = Path(lease_dir) / "manifest.json"
    if not os.path.lexists(path):
        raise FyexpError(f"{path}: no manifest (run `scripts/gpu_lease.py pack` first, and carry its folder)")
    return read_manifest(path)


def read_manifest(path: Path) -> dict:
    """The manifest ``path`` as a mapping whose ``units`` are units (:class:`gpu_kit.queue.Unit`'s fields, of
    their types; seeds integers), read as data: a regular JSON file (:func:`fyexp.store.damaged.read_json`).  Anything
    else is one-line :class:`FyexpError` naming the file, before the caller acts on any of it."""
    from fyexp.store.damaged import read_json

    data, problem = read_json(Path(path))
    if problem is None:
        problem = _manifest_problem(data)
    if problem is not None:
        raise FyexpError(f"{path}: {problem}; {MANIFEST_EXPECTED}")
    return data


def _manifest_problem(data: object) -> str | None:
    if not isinstance(data, dict):
        return f"a JSON {type(data).__name__}, not an object"
    units = data.get("units")
    if not isinstance(units, list):
        return f"its units is a {type(units).__name__}, not a list"
    for i, unit in enumerate(units):
        if not isinstance(unit, dict):
            return f"its units[{i}] is a {type(unit).__name__}, not an object"
        unknown = sorted(set(unit) - set(_UNIT_FIELDS))
        if unknown:
            return f"its units[{i}] has the unknown field {unknown[0]!r}"
        for key, kind in _UNIT_FIELDS.items():
            if key not in unit:
                if key in ("label", "experiment", "profile", "method", "params", "seeds", "ensemble"):
                    return f"its units[{i}] has no {key}"
                continue
            if not isinstance(unit[key], kind) or (kind is not bool and isinstance(unit[key], bool)):
                return f"its units[{i}].{key} is a {type(unit[key]).__name__}"
        for key in ("seeds", "entry_seeds"):
            if any(isinstance(s, bool) or not isinstance(s, int) for s in unit.get(key) or []):
                return f"its units[{i}].{key} holds a value that is not an integer seed"
        if not unit["seeds"]:
            return f"its units[{i}].seeds is empty"
        if any(not isinstance(v, str) for key in ("data", "sets") for v in unit.get(key, [])):
            return f"its units[{i}] lists a data set or --set that is not text"
    packed = data.get("data", {})   # the data sets a pack wrote: name -> {"packed_bytes": n, ...}
    if not isinstance(packed, dict) or any(not isinstance(r, dict) or isinstance(r.get("packed_bytes"), bool)
                                           or not isinstance(r.get("packed_bytes"), int) for r in packed.values()):
        return "its data is not a mapping of data sets to records with their packed_bytes (an integer)"
    return None
