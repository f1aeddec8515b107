"""The tidy long-format results store: one file per finished cell, written atomically.

Layout under the results root (``results/`` by default)::

    results/<experiment>/cells/<profile>/<cell-key>.csv   one finished cell (its rows)
    results/<experiment>/results.csv                        every cell of every profile, rebuilt from the above
    results/<experiment>/artifacts/<profile>/...            small side files a figure needs (PNG grids, .npz)
    results/<experiment>/work/<profile>/<cell-key>/         checkpoints of unfinished cells (not committed)

Every row has the columns of :data:`CORE_COLUMNS`; rows that reproduce a published cell also fill
``paper``, ``table``, ``setting`` and ``paper_row`` with the keys of ``fyexp/reference/paper_tables.csv``
and use the paper's column name as ``metric``.  Extra columns (``rho``, ``gamma``, ``component`` ...) are
allowed.  A cell file is written to a temporary file in the same folder, flushed, fsynced and renamed over
its final name, so an interrupted run (Ctrl-C, ``kill -9``) never leaves a half-written cell: a cell is either
finished and complete or absent.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

import pandas as pd

CORE_COLUMNS = [
    "experiment", "profile", "method", "params", "seed", "metric", "value",
    "paper", "table", "setting", "paper_row", "label", "status",
    "git_commit", "fyexp_version", "device", "wall_time_s", "timestamp", "cell",
]
PAPER_KEYS = ["paper", "table", "setting", "paper_row"]


@dataclass(frozen=True)
class Cell:
    """One unit of work of a run: a method at given parameters and seed.

    ``params`` holds JSON-able values only; together with ``method`` and ``seed`` it names the cell.
    """

    method: str
    seed: int
    params: dict[str, Any] = field(default_factory=dict)

    @property
    def params_json(self) -> str:
        return json.dumps(self.params, sort_keys=True, separators=(",", ":"))

    @property
    def key(self) -> str:
        """A file-name-safe, stable identifier: ``standard__rho=2__seed=0``."""
        parts = [self.method] + [f"{k}={_fmt(v)}" for k, v in sorted(self.params.items())] + [f"seed={self.seed}"]
        return re.sub(r"[^A-Za-z0-9=._,+-]+", "-", "__".join(parts))


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, (list, tuple)):
        return ",".join(_fmt(v) for v in value)
    return str(value)


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` so that readers see the old file or the whole new one, never a part."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def atomic_write_frame(path: Path, frame: pd.DataFrame) -> None:
    atomic_write_text(path, frame.to_csv(index=False))


class ResultStore:
    """Reads and writes one experiment's results under ``root/<experiment>/``."""

    def __init__(self, root: Path, experiment: str):
        self.root = Path(root)
        self.experiment = experiment
        self.folder = self.root / experiment

    # paths -------------------------------------------------------------------------------------------
    def cell_path(self, profile: str, cell: Cell) -> Path:
        return self.folder / "cells" / profile / f"{cell.key}.csv"

    def work_dir(self, profile: str, cell: Cell) -> Path:
        return self.folder / "work" / profile / cell.key

    def artifact_dir(self, profile: str) -> Path:
        return self.folder / "artifacts" / profile

    @property
    def table_path(self) -> Path:
        return self.folder / "results.csv"

    # cells -------------------------------------------------------------------------------------------
    def is_finished(self, profile: str, cell: Cell) -> bool:
        """A cell is finished when its file exists and records no failure (failed cells are retried)."""
        path = self.cell_path(profile, cell)
        if not path.is_file():
            return False
        try:
            frame = pd.read_csv(path, usecols=["status"])
        except (ValueError, pd.errors.EmptyDataError):
            return False
        return bool(len(frame)) and not (frame["status"] == "failed").any()

    def write_cell(self, profile: str, cell: Cell, rows: Iterable[dict], provenance: dict) -> pd.DataFrame:
        """Write one finished cell's rows atomically, with the cell's identity and provenance on each row."""
        frame = pd.DataFrame(list(rows))
        if frame.empty:
            raise ValueError(f"cell {cell.key} produced no rows")
        identity = {
            "experiment": self.experiment, "profile": profile, "seed": cell.seed,
            "params": cell.params_json, "cell": cell.key,
        }
        for column, value in {**identity, **provenance}.items():
            frame[column] = value
        if "method" not in frame:
            frame["method"] = cell.method
        frame["method"] = frame["method"].fillna(cell.method)
        if "status" not in frame:
            frame["status"] = "ok"
        frame = _ordered(frame)
        atomic_write_frame(self.cell_path(profile, cell), frame)
        return frame

    def write_failure(self, profile: str, cell: Cell, message: str, provenance: dict) -> None:
        """Record a cell that stopped on an error: a row with status ``failed`` and no number."""
        self.write_cell(profile, cell, [{"metric": "error", "value": float("nan"), "status": "failed",
                                         "label": message}], provenance)

    # whole tables ------------------------------------------------------------------------------------
    def cell_files(self) -> list[Path]:
        return sorted((self.folder / "cells").glob("*/*.csv"))

    def consolidate(self) -> pd.DataFrame:
        """Rebuild ``results.csv`` from the cell files and return it (empty frame if nothing ran)."""
        frames = [pd.read_csv(p, keep_default_na=True) for p in self.cell_files()]
        frames = [f for f in frames if not f.empty]
        if not frames:
            return pd.DataFrame(columns=CORE_COLUMNS)
        frame = _ordered(pd.concat(frames, ignore_index=True))
        atomic_write_frame(self.table_path, frame)
        return frame

    def load(self) -> pd.DataFrame:
        """All rows of this experiment: from the cell files when there are any, else from ``results.csv``."""
        if self.cell_files():
            return self.consolidate()
        if self.table_path.is_file():
            return pd.read_csv(self.table_path)
        return pd.DataFrame(columns=CORE_COLUMNS)


def _ordered(frame: pd.DataFrame) -> pd.DataFrame:
    for column in CORE_COLUMNS:
        if column not in frame:
            frame[column] = pd.NA
    extra = [c for c in frame.columns if c not in CORE_COLUMNS]
    return frame[CORE_COLUMNS + extra]
