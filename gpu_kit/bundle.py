"""What comes back from a job, and its merge into ``results/``.

``collect`` packs, from the job's scratch results folder:

- ``lease-cells.tar.gz``: every cell file the job wrote (finished or failed) with its run record
  (``.record.json``), and the artifacts of the
  experiments' profiles;
  paths as under ``results/`` (``<experiment>/cells/<profile>/<cell>.csv``);
- ``lease-work-<unit>-<member>.tar.gz.<piece>``: the work folders (checkpoints) of unfinished units, a folder
  in as many pieces as one returned file's limit asks, whole units only (an ensemble resumed with some members missing would train as two), the most advanced first, as many as
  fit in what may come back (8 files, 16 MiB each, 64 MiB in all).

``merge`` copies the cell files byte for byte (their provenance columns, device included, are the job's) and
refuses, as one line and before writing anything, an incoming cell whose key already has a finished file at home
that differs from it; a file identical to the one at home was merged before and is skipped.  It then rebuilds
each touched experiment's ``results.csv`` and keeps the returned work folders as the next job's ``state/``.
"""

from __future__ import annotations

import gzip
import io
import json
import re
import shutil
import tarfile
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from fyexp.core.errors import FyexpError
from fyexp.store.io import atomic_write_bytes

__all__ = ["CELLS_ARCHIVE", "STATUS_FILE", "LOG_FILE", "WORK_PREFIX", "collect", "merge", "MergeSummary"]

CELLS_ARCHIVE = "lease-cells.tar.gz"
STATUS_FILE = "lease-status.json"
LOG_FILE = "lease-log.txt"
WORK_PREFIX = "lease-work-"
MiB = 2 ** 20
PART_LIMIT = 16 * MiB - 64 * 1024        # one returned file
RETURN_LIMIT = 64 * MiB - 2 * MiB        # everything returned (the cells archive, status and log within the margin)
SIDECARS = (".record.json",)  # a cell's run record


def _add_tree(tar: tarfile.TarFile, root: Path, paths: Sequence[Path]) -> None:
    for path in paths:
        tar.add(path, arcname=path.relative_to(root).as_posix(), recursive=False)


def collect(scratch: Path, out_dir: Path, units: Sequence, *, max_work_files: int = 5,
            part_limit: int = PART_LIMIT) -> dict:
    """Write ``lease-cells.tar.gz`` and the work folders of unfinished units into ``out_dir``, each folder a
    ``.tar.gz`` in pieces of at most ``part_limit`` bytes (``lease-work-<unit>-<member>.tar.gz.<piece>``), at most
    ``max_work_files`` pieces; return what went where."""
    out_dir.mkdir(parents=True, exist_ok=True)
    cell_files = sorted(scratch.glob("*/cells/*/*.csv"))
    finished_keys = {(p.parts[-4], p.parent.name, p.stem) for p in cell_files}
    members = [p for c in cell_files for p in [c, *(c.with_suffix(s) for s in SIDECARS)] if p.is_file()]
    members += sorted(p for p in scratch.glob("*/artifacts/**/*") if p.is_file())
    with tarfile.open(out_dir / CELLS_ARCHIVE, "w:gz") as tar:
        _add_tree(tar, scratch, members)
    used = (out_dir / CELLS_ARCHIVE).stat().st_size
    files, returned, dropped = 0, [], []
    for unit, folders in _unfinished_work(scratch, units, finished_keys):
        blobs = [_tar_gz(scratch, folder) for folder in folders]
        pieces = [[blob[i:i + part_limit] for i in range(0, len(blob), part_limit)] for blob in blobs]
        if files + sum(map(len, pieces)) > max_work_files or used + sum(map(len, blobs)) > RETURN_LIMIT:
            dropped.append(unit.name)
            continue
        for member, chunks in enumerate(pieces, 1):
            for k, chunk in enumerate(chunks):   # a folder over one file's limit comes back in pieces
                atomic_write_bytes(out_dir / f"{WORK_PREFIX}{len(returned) + 1}-{member}.tar.gz.{k}", chunk)
            files, used = files + len(chunks), used + sum(map(len, chunks))
        returned.append(unit.name)
    return {"cells": sorted(f"{e}/{p}/{k}" for e, p, k in finished_keys), "work_returned": returned,
            "work_dropped": dropped, "returned_bytes": used}


def _tar_gz(root: Path, folder: Path) -> bytes:
    """``folder`` (paths relative to ``root``) as a gzipped tar; the gzip header's time is 0, so the same folder
    always packs to the same bytes (a piece re-joined is byte-equal to the whole, whenever each was packed)."""
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0) as zipped:
        with tarfile.open(fileobj=zipped, mode="w") as tar:
            _add_tree(tar, root, [folder, *sorted(p for p in folder.rglob("*"))])
    return buffer.getvalue()


def _epochs_done(folder: Path) -> int:
    metrics = folder / "metrics.csv"
    return max(0, len(metrics.read_text(encoding="utf-8").splitlines()) - 1) if metrics.is_file() else 0


def _unfinished_work(scratch: Path, units: Sequence, finished: set) -> list:
    """(unit, its cells' work folders holding a checkpoint) for units with an unfinished cell, most epochs first."""
    found = []
    for order, unit in enumerate(units):
        folders = [scratch / unit.experiment / "work" / unit.folder / cell.key for cell in unit.cells()
                   if (unit.experiment, unit.folder, cell.key) not in finished]
        folders = [f for f in folders if (f / "checkpoint.pt").is_file()]
        if folders:
            found.append((-min(_epochs_done(f) for f in folders), order, unit, folders))
    return [(unit, folders) for _, _, unit, folders in sorted(found, key=lambda t: t[:2])]


# ------------------------------------------------------------------------------------------------- merge
@dataclass
class MergeSummary:
    merged: list[str] = field(default_factory=list)
    already: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    experiments: set[str] = field(default_factory=set)
    state_parts: int | None = None     # work parts kept as the next job's state (None: state left as it was)
    state_dropped: int = 0             # units whose returned checkpoints would not travel again
    status: dict | None = None


def _archive(source: Path) -> Path:
    source = Path(source)
    path = source / CELLS_ARCHIVE if source.is_dir() else source
    if not path.is_file():
        raise FyexpError(f"merge: {path}: no {CELLS_ARCHIVE} there (give the folder the job's $OUT came back to, "
                         f"or the archive)")
    return path


def _read_status(path: Path) -> dict | None:
    """The job's status file (:data:`STATUS_FILE`) as a mapping, or None: absent, or damaged (not a regular file,
    over the size or depth limits, not JSON, not a mapping: :func:`fyexp.store.damaged.read_json`), which is one warning
    naming it; the cells merged before it is read are kept either way."""
    from fyexp.store.damaged import read_json, warn_damaged

    if not path.exists() and not path.is_symlink():
        return None
    status, problem = read_json(path)
    if problem is None and not isinstance(status, dict):
        problem = f"a JSON {type(status).__name__}, expected an object"
    if problem is not None:
        warn_damaged(path, "damaged status file", problem, "the merged cells are kept; its checkpoints are not")
        return None
    machine = status.get("machine")
    if machine is not None and not isinstance(machine, dict):   # what merge prints: one line, nothing merged
        raise FyexpError(f"merge: {path}: its machine is a {type(machine).__name__}, not an object; expected the "
                         f"status file `gpu_lease.py run` writes; nothing merged")
    return status


def merge(source: Path, results_dir: Path, lease_dir: Path | None = None, *, skip_conflicts: bool = False,
          state_room: int | None = None) -> MergeSummary:
    """Merge a job's cells (``source``: the returned folder or its cells archive) into ``results_dir``; keep its
    checkpoints in ``lease_dir/state``, whole units in the job's order while they take at most ``state_room``
    bytes (what may still travel), the others dropped (``summary.state_dropped``)."""
    from fyexp.store.results import ResultStore, read_cell_file

    archive, summary = _archive(source), MergeSummary()
    folder = Path(source) if Path(source).is_dir() else Path(source).parent
    status_path = folder / STATUS_FILE
    summary.status = _read_status(status_path)   # checked before anything is merged
    with tempfile.TemporaryDirectory(prefix="fyexp-lease-merge-") as tmp:
        staged = Path(tmp)
        try:
            with tarfile.open(archive) as tar:
                tar.extractall(staged, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
        except (tarfile.TarError, EOFError, OSError) as exc:
            raise FyexpError(f"merge: {archive}: not a readable archive ({type(exc).__name__}: {exc})") from None
        plan = []
        for incoming in sorted(staged.glob("*/cells/*/*.csv")):
            experiment, profile, key = incoming.parts[-4], incoming.parent.name, incoming.stem
            name = f"{experiment}/{profile}/{key}"
            frame, problem = read_cell_file(incoming, expected_key=key)
            if problem is not None:
                raise FyexpError(f"merge: {archive}: cell {name} is damaged ({problem}); nothing merged")
            home = Path(results_dir) / experiment / "cells" / profile / incoming.name
            if home.is_file():
                if home.read_bytes() == incoming.read_bytes():
                    summary.already.append(name)
                    continue
                home_frame, home_problem = read_cell_file(home, expected_key=key)
                if home_problem is None and not (home_frame["status"] == "failed").any():
                    summary.conflicts.append(f"{name} (at home: {_describe(home_frame)}; incoming: {_describe(frame)})")
                    continue
            plan.append((experiment, profile, key, incoming, home))
        if summary.conflicts and not skip_conflicts:
            more = f" and {len(summary.conflicts) - 1} more" if len(summary.conflicts) > 1 else ""
            raise FyexpError(f"merge: cell {summary.conflicts[0]} is already finished in {results_dir} with other "
                             f"rows{more}; nothing merged (move the finished file away, or pass --skip-conflicts "
                             f"to merge the others)")
        for experiment, profile, key, incoming, home in plan:
            home.parent.mkdir(parents=True, exist_ok=True)
            for suffix in SIDECARS:  # the records first, the cell file last: it is what marks the cell finished
                if incoming.with_suffix(suffix).is_file():
                    shutil.copyfile(incoming.with_suffix(suffix), home.with_suffix(suffix))
                else:
                    home.with_suffix(suffix).unlink(missing_ok=True)
            atomic_write_bytes(home, incoming.read_bytes())
            for artifact in (staged / experiment / "artifacts" / profile).glob("*"):
                if artifact.is_file() and re.search(rf"(?:^|[_-]){re.escape(key)}\.", artifact.name):
                    target = Path(results_dir) / experiment / "artifacts" / profile / artifact.name
                    target.parent.mkdir(parents=True, exist_ok=True)
                    atomic_write_bytes(target, artifact.read_bytes())
            summary.merged.append(f"{experiment}/{profile}/{key}")
            summary.experiments.add(experiment)
    for experiment in sorted(summary.experiments):
        ResultStore(results_dir, experiment).consolidate()
    if lease_dir is not None and summary.status is not None and summary.status.get("collected"):
        state = Path(lease_dir) / "state"
        shutil.rmtree(state, ignore_errors=True)
        state.mkdir(parents=True)
        units: dict[str, dict[str, list[Path]]] = {}
        for piece in folder.glob(f"{WORK_PREFIX}*.tar.gz.*"):
            unit_number, _ = piece.name[len(WORK_PREFIX):].split("-", 1)
            units.setdefault(unit_number, {}).setdefault(piece.name.rsplit(".", 1)[0], []).append(piece)
        kept = used = 0
        for number in sorted(units, key=lambda n: int(n) if n.isdigit() else 0):
            size = sum(p.stat().st_size for pieces in units[number].values() for p in pieces)
            if state_room is not None and used + size > state_room:
                summary.state_dropped += 1
                continue
            for name, pieces in units[number].items():   # the pieces of a folder, joined again
                ordered = sorted(pieces, key=lambda p: int(p.name.rsplit(".", 1)[1]))
                atomic_write_bytes(state / name, b"".join(p.read_bytes() for p in ordered))
            kept, used = kept + len(units[number]), used + size
        summary.state_parts = kept
    return summary


def _describe(frame) -> str:
    def first(column: str) -> str:
        values = frame[column].dropna().astype(str) if column in frame else []
        return values.iloc[0] if len(values) else "?"

    return f"settings {first('settings_hash')}, {first('device')}, commit {first('git_commit')}"
