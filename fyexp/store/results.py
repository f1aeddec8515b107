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

**Loading never writes** (:meth:`ResultStore.load`): ``results.csv`` is rebuilt by :meth:`ResultStore.consolidate`,
which the commands that mean to write call (``fyexp run`` after its cells, ``fyexp report``); ``fyexp claims`` and
every other reader read a read-only folder as well as any.

**Damaged records, one rule.**  A record is read only from inside the results folder (and the package), checked
against what fyexp writes, and anything that fails is skipped with one warning line naming the file and what is
wrong (:func:`fyexp.store.damaged.warn_damaged`), never a crash and never silence: a cell file (:func:`read_cell_file`),
``results.csv`` (:func:`read_table`), a file under ``superseded/`` (:meth:`ResultStore.superseded_problems`), the
temporary file of a write that was killed (:meth:`ResultStore.leftover_temp_files`; ``fyexp run`` removes them), and
a cell's run record (``<cell>.record.json``, :func:`fyexp.store.provenance.record.load_record`), whose rows then have
*unknown provenance* (:data:`fyexp.store.provenance.freshness.UNKNOWN_PROVENANCE`).
"""

from __future__ import annotations

import csv
import functools
import io
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

from fyexp.store.io import atomic_write_text
from fyexp.store.user_cache import file_signature, remembered

if TYPE_CHECKING:  # pandas is imported where a frame is made: naming a cell (`fyexp show`) stays light
    import pandas as pd

CORE_COLUMNS = [
    "experiment", "profile", "method", "params", "seed", "metric", "value",
    "paper", "table", "setting", "paper_row", "label", "status",
    "git_commit", "fyexp_version", "device", "wall_time_s", "timestamp", "cell", "cell_rows",
]
# identifiers that are text even when they look like numbers: a hex hash such as "34e404522701" reads as a float
# (34·10^404522701 = inf) and "1234567890ab"-like commits or labels as other numbers
TEXT_COLUMNS = {"git_commit", "settings_hash", "fyexp_version", "cell", "label", "device", "params"}
# the metric of a run whose training diverged and was measured at its last finite epoch (Trainer keep_last_finite):
# the epoch whose loss or gradient turned non-finite; the report names such rows in their table's caption
DIVERGED_IN_EPOCH = "diverged_in_epoch"
# a row's settings_hash (fyexp.store.provenance.record.settings_hash: 12 hex digits): a superseded file's name is built
# from it, so a file whose column holds anything else ("x/../../y") is damaged, never a path part
SETTINGS_HASH = re.compile(r"[0-9a-f]{12}")
from fyexp.store.damaged import MAX_TABLE_BYTES  # noqa: E402 - a consolidated results.csv's limit, beside the others


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

    @property
    def superseded_folder(self) -> Path:
        return self.folder / "superseded"

    # cells -------------------------------------------------------------------------------------------
    def is_finished(self, profile: str, cell: Cell, settings: Any = None) -> bool:
        """Whether ``cell`` is finished: its file complete (:func:`read_cell_file`) and recording no failure
        (damaged and failed files are redone); given ``settings`` (a :class:`fyexp.store.provenance.freshness.Expected`,
        :func:`fyexp.spec.settings.expectation`), also its run record sound and made at those settings
        (:meth:`freshness`)."""
        if settings is None:
            return self._finished_frame(profile, cell) is not None
        found = self.freshness(profile, cell, settings)
        return found is not None and found.finished

    def _finished_frame(self, profile: str, cell: Cell) -> pd.DataFrame | None:
        """``cell``'s rows when its file is complete and records no failure, else ``None``."""
        path = self.cell_path(profile, cell)
        if not path.is_file():
            return None
        frame, problem = read_cell_file(path, expected_key=cell.key)
        return frame if problem is None and not (frame["status"] == "failed").any() else None

    def freshness(self, profile: str, cell: Cell, settings: Any = None) -> Any:
        """The :class:`fyexp.store.provenance.freshness.Freshness` of ``cell``'s finished file against ``settings`` (an
        ``Expected``): the one judgement of a cell, :func:`fyexp.store.provenance.freshness.cell_freshness` (its run
        record
        read and checked, then judged); ``None`` when there is no finished file."""
        from fyexp.store.provenance.freshness import cell_freshness
        from fyexp.store.provenance.record import rows_identity

        frame = self._finished_frame(profile, cell)
        if frame is None:
            return None
        return cell_freshness(self.cell_path(profile, cell), *rows_identity(frame), settings)

    def supersede(self, profile: str, cell: Cell) -> Path | None:
        """Move ``cell``'s finished file (and its run record) out of the current cells, to
        ``superseded/<profile>/<key>.<its settings hash>.csv`` (``unknown`` where its rows name none); return where it
        went (``None`` if none).
        ``fyexp run`` does this before it writes the cell again at other settings."""
        from fyexp.store.provenance.record import record_path, rows_identity

        path = self.cell_path(profile, cell)
        if not path.is_file():
            return None
        frame, _ = read_cell_file(path)
        tag = (rows_identity(frame)[0] if frame is not None else None) or "unknown"
        if not SETTINGS_HASH.fullmatch(tag):  # read_cell_file refuses such a file; a path part is never file text
            tag = "unknown"
        target = self.superseded_folder / profile / f"{cell.key}.{tag}.csv"
        target.parent.mkdir(parents=True, exist_ok=True)
        path.replace(target)
        if record_path(path).is_file():  # its run record goes with it
            record_path(path).replace(record_path(target))
        return target

    def write_cell(self, profile: str, cell: Cell, rows: Iterable[dict], provenance: dict) -> pd.DataFrame:
        """Write one finished cell's rows atomically, with the cell's identity and provenance on each row."""
        import pandas as pd

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
        frame["cell_rows"] = len(frame)
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

    def damaged_cells(self) -> list[tuple[Path, str]]:
        """Cell files that are not complete, each with the reason (they are skipped and redone)."""
        return self.read_cells()[1]

    def read_cells(self) -> tuple[pd.DataFrame | None, list[tuple[Path, str]]]:
        """Every cell file of this experiment read (:func:`read_cell_file`): the rows of the complete ones in one
        frame, ordered (``None`` when there is no cell file), and the damaged ones, each with what is wrong.

        What this gives depends only on the files' bytes and on this module, so it is kept between processes
        (:mod:`fyexp.store.user_cache`) under every file's stat signature (inode, size, modification and change times)
        and this module's :func:`fyexp.store.user_cache.code_key`: ``fyexp report`` parses the ~450 cell files again
        only when one of them was written, added or removed.  A copy of the frame is returned each time."""
        files = self.cell_files()
        if not files:
            return None, []
        signature = (_cells_code_key(), tuple((p.relative_to(self.folder).as_posix(), *file_signature(p))
                                              for p in files))
        rows, damaged = _read_cells_once(os.path.abspath(self.folder), signature)
        return rows.copy(), [(self.folder / rel, problem) for rel, problem in damaged]

    def consolidate(self) -> pd.DataFrame:
        """Rebuild ``results.csv`` from the complete cell files and return the rows (:meth:`load`).

        Written only when there are complete cell files and the text differs from the file's (an unchanged table
        keeps its file and modification time).  Damaged cell files are left out (see :meth:`damaged_cells`); they
        are redone by the next run.  For the commands that mean to write (``run``, ``report``)."""
        frame = self.load()
        if frame.empty or not self.cell_files():
            return frame
        text = frame.to_csv(index=False)
        if not (self.table_path.is_file() and self.table_path.read_bytes() == text.encode("utf-8")):
            atomic_write_text(self.table_path, text)
        return frame

    def load(self) -> pd.DataFrame:
        """All rows of this experiment: from the complete cell files when there are any, else from ``results.csv``
        (:func:`read_table`).  Reads only, never writes in the results folder (what parsing the cell files gave is
        kept in the user's cache, :meth:`read_cells`); each file skipped is one warning line (:func:`warn_damaged`),
        and so is each damaged file under ``superseded/`` and each leftover temporary file."""
        import pandas as pd

        from fyexp.store.damaged import warn_damaged

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
        """Symbolic links under this experiment's folder (the folder itself included) that lead out of the results
        folder, each with where it leads: fyexp never makes one, and a write or a delete through it (a symlinked
        ``work/<profile>`` emptied for other settings, a symlinked ``cells/<profile>``) would land outside."""
        root = self.root.resolve()
        found = []
        if self.folder.is_symlink():
            target = self.folder.resolve()
            return [] if target.is_relative_to(root) and target != root else [(self.folder, target)]
        for dirpath, dirnames, filenames in os.walk(self.folder):  # links are listed, never followed
            for name in dirnames + filenames:
                path = Path(dirpath) / name
                if path.is_symlink():
                    target = path.resolve()
                    if not target.is_relative_to(root):
                        found.append((path, target))
        return found

    def refuse_links_leaving(self) -> None:
        """:class:`fyexp.core.errors.FyexpError` (one line, exit 2) naming the first of :meth:`links_leaving`, before
        a command writes or deletes anything under this experiment's folder."""
        from fyexp.core.errors import FyexpError

        found = self.links_leaving()
        if found:
            (path, target), more = found[0], len(found) - 1
            also = f" (and {more} more)" if more else ""
            raise FyexpError(f"{path}: a symbolic link leading out of the results folder {self.root.resolve()} (to "
                             f"{target}){also}; fyexp writes and deletes only inside it: replace the link by the "
                             f"folder or file itself")

    def superseded_problems(self) -> list[tuple[Path, str]]:
        """Files under ``superseded/`` that are not what :meth:`supersede` puts there (a cell file
        ``<profile>/<key>.<hash>.csv`` of the right shape, :func:`cell_file_shape_problem`, or its run
        record), each with what is wrong."""
        from fyexp.store.damaged import TEMP_NAME

        found = []
        root = self.superseded_folder
        for path in sorted(p for p in root.rglob("*") if p.is_file()) if root.is_dir() else ():
            if path.parent.parent != root:
                found.append((path, "not in a profile's folder"))
            elif path.name.endswith(".record.json") or TEMP_NAME.match(path.name):
                continue  # a run record (read by nobody) or a temporary file (see leftover_temp_files)
            elif path.suffix != ".csv" or "." not in path.stem:
                found.append((path, "not a superseded cell file (<cell>.<settings hash>.csv)"))
            else:
                problem = cell_file_shape_problem(path)
                if problem is not None:
                    found.append((path, problem))
        return found

    def leftover_temp_files(self) -> list[Path]:
        """Temporary files of atomic writes under this experiment's folder whose write was killed
        (:func:`fyexp.store.damaged.is_leftover`: untouched for ten minutes)."""
        import time

        from fyexp.store.damaged import is_leftover

        now = time.time()
        return [p for p in sorted(self.folder.rglob(".*.tmp")) if is_leftover(p, now)] if self.folder.is_dir() else []

    def remove_leftovers(self) -> list[Path]:
        """Remove :meth:`leftover_temp_files`; return those removed (``fyexp run`` cleans up after killed writes)."""
        removed = []
        for path in self.leftover_temp_files():
            try:
                path.unlink()
            except FileNotFoundError:
                continue
            removed.append(path)
        return removed


def superseded_rows(store: ResultStore) -> pd.DataFrame:
    """The rows of every superseded cell file of ``store``'s experiment, each profile relabelled
    ``<profile>~superseded-<settings hash>`` (:data:`fyexp.store.provenance.record.SUPERSEDED_MARK`) so that
    rows of different settings are never pooled with the current ones or with each other
    (``fyexp report --superseded``); a damaged file is one warning line and not read."""
    import pandas as pd

    from fyexp.store.damaged import warn_damaged
    from fyexp.store.provenance.record import SUPERSEDED_MARK

    frames = []
    for path in sorted((store.folder / "superseded").glob("*/*.csv")):
        frame, problem = read_cell_file(path)
        if problem is not None:
            warn_damaged(path, "skipped damaged superseded file", problem, "it is not read")
        if frame is None or frame.empty:
            continue
        tag = path.stem.rsplit(".", 1)[-1]
        frame = frame.copy()
        frame["profile"] = f"{path.parent.name}{SUPERSEDED_MARK}{tag}"
        frames.append(frame)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def read_table(path: Path) -> tuple[pd.DataFrame | None, str | None]:
    """Read a consolidated ``results.csv``; ``(frame, None)`` when it is UTF-8 CSV with the columns every reader
    indexes (``experiment``, ``profile``, ``method``, ``seed``, ``metric``, ``value``, ``status``, ``cell``,
    ``git_commit``) and values that obey :func:`value_problem`, else ``(None, what is wrong)``.  Core columns
    it lacks beyond those are added empty."""
    import pandas as pd

    from fyexp.store.damaged import read_record_text

    text, problem = read_record_text(path, MAX_TABLE_BYTES)  # a regular file, never a FIFO, a device or a link
    if problem is not None:
        return None, problem
    if not text.strip():
        return None, "empty"
    try:
        frame = pd.read_csv(io.StringIO(text), keep_default_na=True, dtype=dict.fromkeys(TEXT_COLUMNS, str))
    except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError) as exc:
        return None, f"not a readable CSV ({type(exc).__name__})"
    required = ("experiment", "profile", "method", "seed", "metric", "value", "status", "cell", "git_commit")
    missing = [c for c in required if c not in frame.columns]
    if missing:
        return None, f"missing column(s) {', '.join(missing)}"
    problem = value_problem(frame) if not frame.empty else None
    if problem is not None:
        return None, problem
    frame["value"] = pd.to_numeric(frame["value"], errors="coerce")  # checked above: only NaN tokens coerce
    return _ordered(frame), None


@functools.cache
def _cells_code_key() -> str:
    """:func:`fyexp.store.user_cache.code_key` of this module (the rules that read a cell file), once per process."""
    from fyexp.store.user_cache import code_key

    return code_key(__file__)


@functools.lru_cache(maxsize=64)
def _read_cells_once(folder: str, signature: tuple) -> tuple[pd.DataFrame, list[tuple[str, str]]]:
    """:meth:`ResultStore.read_cells` of the folder ``folder`` (absolute) at these file signatures, not copied: once
    per process and once across processes (:func:`fyexp.store.user_cache.remembered`)."""
    return remembered("cells", folder, signature, lambda: _parse_cells(Path(folder), signature[1]))


def _parse_cells(folder: Path, files: tuple) -> tuple[pd.DataFrame, list[tuple[str, str]]]:
    """:meth:`ResultStore.read_cells` without the caches: the complete files' rows, ordered, and the damaged ones
    (path relative to ``folder``, problem); ``files``: the relative paths, each first of its signature."""
    import pandas as pd

    frames, damaged = [], []
    for rel, *_ in files:
        frame, problem = read_cell_file(folder / rel)
        if problem is not None:
            damaged.append((rel, problem))
        elif not frame.empty:
            frames.append(frame)
    return (_ordered(pd.concat(frames, ignore_index=True)) if frames else pd.DataFrame(columns=CORE_COLUMNS),
            damaged)


def read_cell_file(path: Path, expected_key: str | None = None) -> tuple[pd.DataFrame | None, str | None]:
    """Read one cell file; return ``(frame, None)`` when it is complete (its rows naming cell ``expected_key``,
    where given), else ``(None, reason)``.

    A file is parsed once per process while it is unchanged (same inode, size and modification and change times):
    ``fyexp run`` judges each finished cell and then rebuilds ``results.csv`` from the same files, ``fyexp report``
    reads each of its ~400 cell files for the rows and again for the damaged-file facts.  A copy of the frame is
    returned each time.
    """
    try:
        signature = file_signature(path)
    except OSError:
        return _read_cell_file(path, expected_key)
    frame, problem = _read_once(os.path.abspath(path), signature)
    if frame is not None and expected_key is not None and set(frame["cell"].astype(str)) != {expected_key}:
        return None, f"rows name cell(s) {sorted(set(frame['cell'].astype(str)))}, expected {expected_key}"
    return (None if frame is None else frame.copy()), problem


@functools.lru_cache(maxsize=8192)
def _read_once(path: str, signature: tuple) -> tuple[pd.DataFrame | None, str | None]:
    """:func:`_read_cell_file` of the file at ``path`` (absolute) with this stat signature, once per process."""
    return _read_cell_file(Path(path))


def _read_cell_file(path: Path, expected_key: str | None = None) -> tuple[pd.DataFrame | None, str | None]:
    """Read one cell file; return ``(frame, None)`` when it is complete, else ``(None, reason)``.

    Complete means: it parses as CSV with every core column; every row names the same cell (``expected_key``
    when given), an experiment and a metric; and, for files written since fyexp records it, the number of rows
    equals ``cell_rows``.  Atomic writes make a partial file impossible for fyexp itself, so a file that fails
    these checks was damaged by something else (a copy cut short, a bad merge, a full disk elsewhere).
    """
    import pandas as pd

    text, records, problem = _cell_text(path)
    if problem is not None:
        return None, problem
    try:
        frame = pd.read_csv(io.StringIO(text), keep_default_na=True, dtype=dict.fromkeys(TEXT_COLUMNS, str))
    except (pd.errors.ParserError, pd.errors.EmptyDataError, ValueError) as exc:
        return None, f"not a readable CSV ({type(exc).__name__})"
    missing = [c for c in ("experiment", "metric", "value", "status", "cell") if c not in frame.columns]
    if missing:
        return None, f"missing column(s) {', '.join(missing)}"
    if frame.empty:
        return None, "no rows"
    if frame[["experiment", "metric", "cell", "status"]].isna().any(axis=None):
        return None, "a row is incomplete (cut short?)"
    keys = set(frame["cell"].astype(str))
    if len(keys) != 1 or (expected_key is not None and keys != {expected_key}):
        return None, f"rows name cell(s) {sorted(keys)}, expected {expected_key or 'one cell'}"
    if "settings_hash" in frame.columns and frame["settings_hash"].astype("string").nunique(dropna=False) > 1:
        return None, "rows name different settings hashes"
    if "settings_hash" in frame.columns:
        bad = [h for h in frame["settings_hash"].dropna().astype(str) if not SETTINGS_HASH.fullmatch(h)]
        if bad:
            return None, f"settings_hash {bad[0][:40]!r} is not a settings hash (12 hex digits)"
    if "cell_rows" in frame.columns and frame["cell_rows"].notna().any():
        declared = pd.to_numeric(frame["cell_rows"], errors="coerce")
        if declared.isna().any() or (declared != len(frame)).any():
            return None, f"{len(frame)} rows, but the cell wrote {frame['cell_rows'].iloc[0]}"
    header = records[0]
    column = {name: header.index(name) for name in ("value", "status", "label", "metric") if name in header}

    def fields(name: str) -> list[str]:
        return [r[column[name]] for r in records[1:] if r] if name in column else [""] * len(frame)

    problem = values_problem(fields("value"), fields("status"), fields("label"), fields("metric"))
    if problem is not None:
        return None, problem
    frame["value"] = pd.to_numeric(frame["value"], errors="coerce")  # checked above: only NaN tokens coerce
    return frame, None


def _cell_text(path: Path) -> tuple[str, list[list[str]], str | None]:
    """A cell file's text and CSV records, or what makes it unreadable as one (not UTF-8, cut short, rows of
    different lengths): the first checks of :func:`read_cell_file`."""
    from fyexp.store.damaged import read_record_text

    text, problem = read_record_text(path)  # a regular file of at most 16 MiB, never a FIFO, a device or a link
    if problem is not None:
        return "", [], problem
    if not text.endswith("\n"):
        return text, [], "cut short (no final newline)"
    records = list(csv.reader(io.StringIO(text)))
    widths = {len(r) for r in records if r}
    if len(widths) != 1:
        return text, records, "rows of different lengths (cut short or garbage)"
    return text, records, None


def cell_file_shape_problem(path: Path) -> str | None:
    """What is wrong with the shape of a cell file that is kept but not read (``superseded/``): not UTF-8, cut
    short, rows of different lengths, no rows, or without the columns every cell file has; ``None`` when it has the
    shape of one.  Its values are checked when its rows are read (``fyexp report --superseded``,
    :func:`superseded_rows`), by :func:`read_cell_file`: checking them here would parse some 350 files on every
    load for rows nobody reads."""
    _, records, problem = _cell_text(path)
    if problem is not None:
        return problem
    rows = [r for r in records if r]
    missing = [c for c in ("experiment", "metric", "value", "status", "cell") if c not in rows[0]]
    if missing:
        return f"missing column(s) {', '.join(missing)}"
    return "no rows" if len(rows) < 2 else None


NAN_TOKENS = frozenset({"", "nan", "NaN", "NAN"})


def value_problem(frame: pd.DataFrame) -> str | None:
    """:func:`values_problem` of a frame's ``value``, ``status``, ``label`` and ``metric`` columns (missing
    entries read as empty text)."""
    def texts(column: str) -> list[str]:
        if column not in frame:
            return [""] * len(frame)
        return ["" if v is None or v != v else str(v) for v in frame[column].tolist()]  # v != v: NaN, pd.NA

    return values_problem(texts("value"), texts("status"), texts("label"), texts("metric"))


def values_problem(values: list[str], statuses: list[str], labels: list[str], metrics: list[str]) -> str | None:
    """The finished-cell rule for values, on a cell's text fields: ``None`` when every value is a finite number,
    or an explicit NaN with a reason, else what is wrong with the first bad value (the kinds in this order: not a
    number, not finite, NaN without a reason), quoting the file's text.

    An explicit NaN is an empty field or ``nan`` / ``NaN`` / ``NAN``; its reason is the row's status (anything but
    ``ok``, an empty status reading as ``ok``: ``failed``, ``missing`` ...) or its label.  Anything else
    (``inf``, ``banana``, ``1e999``, ``1_000``, ``nAn``) is damage: the cell is redone.  Plain Python over the
    fields: ``fyexp report`` checks some 800 files."""
    found: dict[str, int] = {}
    for row, raw in enumerate(values):
        text = raw.strip()
        if text in NAN_TOKENS:
            reason = (statuses[row].strip() or "ok") != "ok" or labels[row].strip() != ""
            kind = None if reason else "NaN without a reason"
        else:
            try:
                number = float(text) if "_" not in text else float("nan")
            except ValueError:
                number = float("nan")
            kind = ("not a number" if number != number else
                    "not finite" if number in (float("inf"), float("-inf")) else None)
        if kind is not None and kind not in found:
            found[kind] = row
    for kind in ("not a number", "not finite", "NaN without a reason"):
        if kind in found:
            row = found[kind]
            return f"value {values[row].strip()!r} of metric '{metrics[row]}' is {kind}"
    return None


def _ordered(frame: pd.DataFrame) -> pd.DataFrame:
    import pandas as pd

    for column in CORE_COLUMNS:
        if column not in frame:
            frame[column] = pd.NA
    extra = [c for c in frame.columns if c not in CORE_COLUMNS]
    return frame[CORE_COLUMNS + extra]
