"""The tidy long-format results store: one file per finished cell, written atomically.

Layout under the results root (``results/`` by default)::

    results/<experiment>/cells/<profile>/<cell-key>.csv   one finished cell (its rows)
    results/<experiment>/results.csv                        every cell of every profile, rebuilt from the above
    results/<experiment>/artifacts/<profile>/...            small side files a figure needs (PNG grids, .npz)
    results/<experiment>/work/<profile>/<cell-key>/         checkpoints of unfinished cells (not committed)

Every row has the columns of :data:`CORE_COLUMNS` (rows of a published cell fill ``paper``, ``table``, ``setting``
and ``paper_row`` with the keys of ``fyexp/reference/paper_tables.csv``); extra columns are allowed.  Writes are atomic
(:func:`fyexp.store.io.atomic_write`), loading never writes, and a damaged record is skipped with one warning line
naming it (:func:`fyexp.store.damaged.warn_damaged`), never a crash.
"""

from __future__ import annotations

import csv
import functools
import io
import json
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

from fyexp.store.damaged import MAX_TABLE_BYTES, TEMP_NAME, is_leftover, parsed_once, read_record_text, warn_damaged
from fyexp.store.io import atomic_write_text
from fyexp.store.user_cache import code_key, file_signature, remembered

if TYPE_CHECKING:  # pandas is imported where a frame is made: naming a cell (`fyexp show`) stays light
    import pandas as pd

CORE_COLUMNS = ["experiment", "profile", "method", "params", "seed", "metric", "value", "paper", "table", "setting",
                "paper_row", "label", "status", "git_commit", "fyexp_version", "device", "wall_time_s", "timestamp",
                "cell", "cell_rows"]
# identifiers that are text even when they look like numbers (a hash "34e404522701" reads as the float inf)
TEXT_COLUMNS = {"git_commit", "settings_hash", "fyexp_version", "cell", "label", "device", "params"}
# a diverged run's metric, measured at its last finite epoch: the epoch whose loss or gradient turned non-finite
DIVERGED_IN_EPOCH = "diverged_in_epoch"
# a row's settings_hash: a superseded file's name is built from it, so any other text ("x/../../y") is damage
SETTINGS_HASH = re.compile(r"[0-9a-f]{12}")
CELL_COLUMNS = ("experiment", "metric", "value", "status", "cell")   # every cell file has them
TABLE_COLUMNS = ("experiment", "profile", "method", "seed", "metric", "value", "status", "cell", "git_commit")
NAN_TOKENS = frozenset({"", "nan", "NaN", "NAN"})
VALUE_PROBLEMS = ("not a number", "not finite", "NaN without a reason")   # the first kind found is named


@dataclass(frozen=True)
class Cell:
    """One unit of work of a run: a method at given parameters (JSON-able values) and seed, which name it."""

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


class ResultStore:
    """Reads and writes one experiment's results under ``root/<experiment>/``."""

    def __init__(self, root: Path, experiment: str):
        self.root = Path(root)
        self.experiment = experiment
        self.folder = self.root / experiment
        self.table_path = self.folder / "results.csv"
        self.superseded_folder = self.folder / "superseded"

    def cell_path(self, profile: str, cell: Cell) -> Path:
        return self.folder / "cells" / profile / f"{cell.key}.csv"

    def work_dir(self, profile: str, cell: Cell) -> Path:
        return self.folder / "work" / profile / cell.key

    def artifact_dir(self, profile: str) -> Path:
        return self.folder / "artifacts" / profile

    # cells -------------------------------------------------------------------------------------------
    def is_finished(self, profile: str, cell: Cell, settings: Any = None) -> bool:
        """Whether ``cell``'s file is complete and records no failure; given ``settings``, also fresh at them."""
        found = self.freshness(profile, cell, settings)
        return found is not None and (settings is None or found.finished)

    def freshness(self, profile: str, cell: Cell, settings: Any) -> Any:
        """:func:`fyexp.store.provenance.freshness.cell_freshness` of ``cell``'s file at ``settings`` when the file is
        complete and records no failure (the one decision of a finished cell), else ``None``; ``settings`` None: True
        for such a file (:meth:`is_finished` without settings)."""
        from fyexp.store.provenance.freshness import cell_freshness
        from fyexp.store.provenance.record import rows_identity

        path = self.cell_path(profile, cell)
        frame, problem = read_cell_file(path, expected_key=cell.key) if path.is_file() else (None, "absent")
        if problem is not None or (frame["status"] == "failed").any():
            return None
        return True if settings is None else cell_freshness(path, *rows_identity(frame), settings)

    def supersede(self, profile: str, cell: Cell) -> Path | None:
        """Move ``cell``'s file and run record to ``superseded/<profile>/<key>.<settings hash or unknown>.csv``
        (:func:`read_cell_file` reads only 12-hex-digit hashes: never a path part); return the new path, if any."""
        from fyexp.store.provenance.record import record_path, rows_identity

        path = self.cell_path(profile, cell)
        if not path.is_file():
            return None
        tag = rows_identity(read_cell_file(path)[0])[0] or "unknown"
        target = self.superseded_folder / profile / f"{cell.key}.{tag}.csv"
        target.parent.mkdir(parents=True, exist_ok=True)
        path.replace(target)
        if record_path(path).is_file():
            record_path(path).replace(record_path(target))
        return target

    def write_cell(self, profile: str, cell: Cell, rows: Iterable[dict], provenance: dict) -> pd.DataFrame:
        """Write one finished cell's rows, with the cell's identity and provenance on each row."""
        import pandas as pd

        frame = pd.DataFrame(list(rows))
        if frame.empty:
            raise ValueError(f"cell {cell.key} produced no rows")
        for column, value in {"experiment": self.experiment, "profile": profile, "seed": cell.seed,
                              "params": cell.params_json, "cell": cell.key, **provenance}.items():
            frame[column] = value
        frame["method"] = frame["method"].fillna(cell.method) if "method" in frame else cell.method
        frame["status"] = frame.get("status", "ok")
        frame["cell_rows"] = len(frame)
        frame = _ordered(frame)
        atomic_write_text(self.cell_path(profile, cell), frame.to_csv(index=False))
        return frame

    def write_failure(self, profile: str, cell: Cell, message: str, provenance: dict) -> None:
        """Record a cell that stopped on an error: a row with status ``failed`` and no number."""
        self.write_cell(profile, cell, [{"metric": "error", "value": float("nan"), "status": "failed",
                                         "label": message}], provenance)

    # whole tables ------------------------------------------------------------------------------------
    def cell_files(self) -> list[Path]:
        return sorted((self.folder / "cells").glob("*/*.csv"))

    def read_cells(self) -> tuple[pd.DataFrame | None, list[tuple[Path, str]]]:
        """The complete cell files' rows in one frame (a copy; ``None`` without cell files) and the damaged ones,
        each with what is wrong; kept in the user cache under every file's stat signature and this module's code."""
        files = self.cell_files()
        if not files:
            return None, []
        signature = (_cells_code_key(), tuple((p.relative_to(self.folder).as_posix(), *file_signature(p))
                                              for p in files))
        rows, damaged = _read_cells_once(os.path.abspath(self.folder), signature)
        return rows.copy(), [(self.folder / rel, problem) for rel, problem in damaged]

    def consolidate(self) -> pd.DataFrame:
        """Rebuild ``results.csv`` from the complete cell files and return the rows (:meth:`load`); an unchanged
        table keeps its file and modification time."""
        frame = self.load()
        if frame.empty or not self.cell_files():
            return frame
        text = frame.to_csv(index=False)
        if not (self.table_path.is_file() and self.table_path.read_bytes() == text.encode("utf-8")):
            atomic_write_text(self.table_path, text)
        return frame

    def load(self) -> pd.DataFrame:
        """All rows: from the complete cell files when there are any, else from ``results.csv``; each damaged or
        leftover file is one warning line."""
        import pandas as pd

        for path in self.leftover_temp_files():
            warn_damaged(path, "leftover temporary file", "the write that made it was interrupted",
                         "`fyexp run` removes it")
        for path, problem in self.superseded_problems():
            warn_damaged(path, "skipped damaged superseded file", problem, "it is not read")
        rows, damaged = self.read_cells()
        for path, problem in damaged:
            warn_damaged(path, "skipped damaged cell file", problem, "`fyexp run` redoes it")
        if rows is not None:
            return rows
        if self.table_path.is_file():
            frame, problem = read_table(self.table_path)
            if problem is None:
                return frame
            warn_damaged(self.table_path, "skipped damaged results table", problem, "its rows are not read")
        return pd.DataFrame(columns=CORE_COLUMNS)

    # what else lies in the folder ----------------------------------------------------------------------------
    def links_leaving(self) -> list[tuple[Path, Path]]:
        """Symbolic links under this experiment's folder (itself included) leading out of the results folder, with
        their targets: a write or delete through one would land outside."""
        root = self.root.resolve()
        if self.folder.is_symlink():
            target = self.folder.resolve()
            return [] if target.is_relative_to(root) and target != root else [(self.folder, target)]
        return [(path, path.resolve()) for dirpath, dirnames, filenames in os.walk(self.folder)  # links never followed
                for path in (Path(dirpath) / name for name in dirnames + filenames)
                if path.is_symlink() and not path.resolve().is_relative_to(root)]

    def refuse_links_leaving(self) -> None:
        """A one-line :class:`fyexp.core.errors.FyexpError` naming the first of :meth:`links_leaving`."""
        from fyexp.core.errors import FyexpError

        if found := self.links_leaving():
            (path, target), more = found[0], len(found) - 1
            also = f" (and {more} more)" if more else ""
            raise FyexpError(f"{path}: a symbolic link leading out of the results folder {self.root.resolve()} (to "
                             f"{target}){also}; fyexp writes and deletes only inside it: replace the link by the "
                             f"folder or file itself")

    def superseded_problems(self) -> list[tuple[Path, str]]:
        """Files under ``superseded/`` that :meth:`supersede` does not put there, each with what is wrong; a cell
        file by its shape only (:func:`_cell_text`): parsing some 350 files on every load would cost too much."""
        found = []
        root = self.superseded_folder
        for path in sorted(p for p in root.rglob("*") if p.is_file()):  # none when there is no such folder
            if path.parent.parent != root:
                found.append((path, "not in a profile's folder"))
            elif path.name.endswith(".record.json") or TEMP_NAME.match(path.name):
                continue  # a run record (read by nobody) or a temporary file (see leftover_temp_files)
            elif path.suffix != ".csv" or "." not in path.stem:
                found.append((path, "not a superseded cell file (<cell>.<settings hash>.csv)"))
            elif (problem := _cell_text(path)[2]) is not None:
                found.append((path, problem))
        return found

    def leftover_temp_files(self) -> list[Path]:
        """Temporary files of killed writes under this folder (:func:`fyexp.store.damaged.is_leftover`)."""
        return [p for p in sorted(self.folder.rglob(".*.tmp")) if is_leftover(p)]

    def remove_leftovers(self) -> list[Path]:
        """Remove :meth:`leftover_temp_files` and return them."""
        for path in (found := self.leftover_temp_files()):
            path.unlink(missing_ok=True)
        return found


def superseded_rows(store: ResultStore) -> pd.DataFrame:
    """The rows of every superseded cell file, its profile relabelled ``<profile>~superseded-<settings hash>`` so
    that rows of different settings are never pooled; a damaged file is one warning line and not read."""
    import pandas as pd

    from fyexp.store.provenance.record import SUPERSEDED_MARK

    frames = []
    for path in sorted(store.superseded_folder.glob("*/*.csv")):
        frame, problem = read_cell_file(path)
        if problem is not None:
            warn_damaged(path, "skipped damaged superseded file", problem, "it is not read")
            continue
        frame["profile"] = f"{path.parent.name}{SUPERSEDED_MARK}{path.stem.rsplit('.', 1)[-1]}"
        frames.append(frame)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def read_table(path: Path) -> tuple[pd.DataFrame | None, str | None]:
    """``(frame, None)`` of a consolidated ``results.csv`` with :data:`TABLE_COLUMNS` and values that obey
    :func:`_values_checked`, else ``(None, what is wrong)``."""
    text, problem = read_record_text(path, MAX_TABLE_BYTES)  # a regular file, never a FIFO, a device or a link
    if problem is not None or not text.strip():
        return None, problem or "empty"
    frame, problem = _csv_frame(text, TABLE_COLUMNS)
    if problem is None:
        frame, problem = _values_checked(frame, list(csv.reader(io.StringIO(text))))
    return (None, problem) if problem is not None else (_ordered(frame), None)


_cells_code_key = functools.cache(lambda: code_key(__file__))   # the rules that read a cell file: this module


@functools.lru_cache(maxsize=64)
def _read_cells_once(folder: str, signature: tuple) -> tuple[pd.DataFrame, list[tuple[str, str]]]:
    """:meth:`ResultStore.read_cells` of the absolute ``folder`` at these (relative) file signatures, not copied:
    once per process and once across processes."""
    import pandas as pd

    def parse() -> tuple[pd.DataFrame, list[tuple[str, str]]]:
        read = {rel: read_cell_file(Path(folder) / rel) for rel, *_ in signature[1]}
        frames = [frame for frame, problem in read.values() if problem is None]
        return (_ordered(pd.concat(frames, ignore_index=True)) if frames else pd.DataFrame(columns=CORE_COLUMNS),
                [(rel, problem) for rel, (_, problem) in read.items() if problem is not None])

    return remembered("cells", folder, signature, parse)


def read_cell_file(path: Path, expected_key: str | None = None) -> tuple[pd.DataFrame | None, str | None]:
    """``(a copy of the frame, None)`` of a complete cell file (:func:`_read_cell_file`, parsed once:
    :func:`fyexp.store.damaged.parsed_once`) whose rows name cell ``expected_key`` (where given), else
    ``(None, reason)``: the one reader of a cell file."""
    frame, problem = parsed_once(path, _read_cell_file)
    if frame is not None and expected_key is not None and (key := frame["cell"].iloc[0]) != expected_key:
        return None, f"rows name cell(s) {[key]}, expected {expected_key}"
    return (None if frame is None else frame.copy()), problem


def _read_cell_file(path: Path) -> tuple[pd.DataFrame | None, str | None]:
    """``(frame, None)`` of a complete cell file, else ``(None, reason)``: the shape of a cell file
    (:func:`_cell_text`), every row naming one cell, an experiment, a metric, a status and at most one settings hash,
    ``cell_rows`` rows where recorded, values that obey :func:`_values_checked`.  fyexp's writes are atomic: a file
    failing these was damaged by something else (a copy cut short, a bad merge)."""
    import pandas as pd

    text, records, problem = _cell_text(path)
    frame, problem = (None, problem) if problem is not None else _csv_frame(text)
    if problem is not None:
        return None, problem
    if frame[["experiment", "metric", "cell", "status"]].isna().any(axis=None):
        return None, "a row is incomplete (cut short?)"
    if len(keys := set(frame["cell"].astype(str))) != 1:
        return None, f"rows name cell(s) {sorted(keys)}, expected one cell"
    if "settings_hash" in frame.columns:
        if frame["settings_hash"].astype("string").nunique(dropna=False) > 1:
            return None, "rows name different settings hashes"
        if bad := [h for h in frame["settings_hash"].dropna().astype(str) if not SETTINGS_HASH.fullmatch(h)]:
            return None, f"settings_hash {bad[0][:40]!r} is not a settings hash (12 hex digits)"
    if "cell_rows" in frame.columns and frame["cell_rows"].notna().any():
        declared = pd.to_numeric(frame["cell_rows"], errors="coerce")
        if declared.isna().any() or (declared != len(frame)).any():
            return None, f"{len(frame)} rows, but the cell wrote {frame['cell_rows'].iloc[0]}"
    return _values_checked(frame, records)


def _cell_text(path: Path) -> tuple[str, list[list[str]], str | None]:
    """A cell file's text, its CSV records and what makes it no cell file by its shape (else ``None``)."""
    text, problem = read_record_text(path)  # a regular file of at most 16 MiB, never a FIFO, a device or a link
    if problem is not None:
        return "", [], problem
    if not text.endswith("\n"):
        return text, [], "cut short (no final newline)"
    records = [r for r in csv.reader(io.StringIO(text)) if r]
    if len({len(r) for r in records}) != 1:
        return text, records, "rows of different lengths (cut short or garbage)"
    if missing := [c for c in CELL_COLUMNS if c not in records[0]]:
        return text, records, f"missing column(s) {', '.join(missing)}"
    return text, records, "no rows" if len(records) < 2 else None


def _csv_frame(text: str, required: Iterable[str] = ()) -> tuple[pd.DataFrame | None, str | None]:
    """The frame of the CSV ``text`` (:data:`TEXT_COLUMNS` as text), or what is wrong: not CSV, ``required`` missing."""
    import pandas as pd

    try:
        frame = pd.read_csv(io.StringIO(text), keep_default_na=True, dtype=dict.fromkeys(TEXT_COLUMNS, str))
    except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError) as exc:
        return None, f"not a readable CSV ({type(exc).__name__})"
    missing = [c for c in required if c not in frame.columns]
    return (None, f"missing column(s) {', '.join(missing)}") if missing else (frame, None)


def _values_checked(frame: pd.DataFrame, records: list[list[str]]) -> tuple[pd.DataFrame | None, str | None]:
    """``frame`` with its values as numbers when each value's text (in ``records``, the file's, header first) is a
    finite number or an explicit NaN with a reason, else ``None`` and the first bad value of the first kind of
    :data:`VALUE_PROBLEMS` found.  An explicit NaN is an empty field or ``nan`` / ``NaN`` / ``NAN``; its reason a status
    other than ``ok`` (empty reads ``ok``) or a label.  Anything else (``inf``, ``1e999``, ``1_000``, ``nAn``) is
    damage: the cell is redone.  Plain Python over the fields: ``fyexp report`` checks some 800 files."""
    import pandas as pd

    at = [records[0].index(n) if n in records[0] else len(records[0]) for n in ("value", "status", "label", "metric")]
    found: dict[str | None, tuple[str, str]] = {}
    for row in (r for r in records[1:] if r):
        text, status, label, metric = (row[i] if i < len(row) else "" for i in at)
        if (text := text.strip()) in NAN_TOKENS:
            kind = None if (status.strip() or "ok") != "ok" or label.strip() else VALUE_PROBLEMS[2]
        else:
            try:
                number = float("nan") if "_" in text else float(text)
            except ValueError:
                number = float("nan")
            kind = VALUE_PROBLEMS[0] if number != number else VALUE_PROBLEMS[1] if abs(number) == math.inf else None
        found.setdefault(kind, (text, metric))
    for kind in VALUE_PROBLEMS:
        if kind in found:
            return None, f"value {found[kind][0]!r} of metric '{found[kind][1]}' is {kind}"
    frame["value"] = pd.to_numeric(frame["value"], errors="coerce")  # checked above: only NaN tokens coerce
    return frame, None


def _ordered(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with every :data:`CORE_COLUMNS` (missing ones empty) first, in order, its other columns after."""
    import pandas as pd

    frame = frame.assign(**{c: pd.NA for c in CORE_COLUMNS if c not in frame})
    return frame[CORE_COLUMNS + [c for c in frame.columns if c not in CORE_COLUMNS]]
