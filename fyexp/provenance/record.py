"""The run record of a cell: the settings it ran at, the fyexp code it executed, and where it came from.

A finished cell file ``cells/<profile>/<key>.csv`` has beside it, written by :func:`write_record` before the cell
file itself (whose atomic rename is what marks the cell finished):

- ``<key>.settings.json``: the cell's settings (:func:`fyexp.settings.cell_settings`: the resolved config scoped to
  the cell, the ``--set`` overrides, method, grid values, seed, data identity, and the environment: device kind,
  torch and numpy versions); its :func:`settings_hash` is the ``settings_hash`` column of every row;
- ``<key>.code.json``: the fyexp functions the cell executed, each with its normalised hash
  (:mod:`fyexp.provenance.executed`); absent when recording was off (``FYEXP_RECORD_CODE=0``).

The rows themselves carry the commit (``git_commit``, ``+dirty`` for an uncommitted tree), fyexp's version, the
device, the wall time and, for rows before executed-code records, ``code_hash``
(:func:`fyexp.provenance.source.provenance_columns`).  The fingerprint a row was made under is the one committed at
its commit (:func:`fyexp.provenance.source.fingerprint_unchanged`); it is not copied into the record.

:func:`load_record` is the one reader: it checks each file against what :func:`write_record` writes (a settings
record present when the rows name a settings hash, of the schema :data:`SETTINGS_FIELDS`, hashing to the rows'
hash; a code record mapping ``fyexp/<modules>.py:<qualname>`` names, never an absolute path or ``..``, to hashes)
and names each one that fails in one warning line (:func:`fyexp.damaged.warn_damaged`); the record then has a
``problem`` and its rows *unknown provenance* (:mod:`fyexp.provenance.freshness`).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path

SETTINGS_SUFFIX = ".settings.json"
CODE_SUFFIX = ".code.json"
SUPERSEDED_MARK = "~superseded-"   # a superseded file's rows get profile ``<profile>~superseded-<hash>``

# the settings record's schema: each key of :func:`fyexp.settings.cell_settings` and its JSON type (None: any value)
SETTINGS_FIELDS: dict[str, type | None] = {
    "experiment": str, "profile": str, "overrides": dict, "config": None, "method": str, "params": dict,
    "seed": int, "data": None, "environment": dict,
}
_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_PART = rf"(?:{_NAME}|<{_NAME}>)"
CODE_KEY = re.compile(rf"fyexp/(?:{_NAME}/)*{_NAME}\.py:{_PART}(?:\.{_PART})*")   # a function of a package file
CODE_HASH = re.compile(r"[0-9a-f]{12}")                                           # a normalised function hash


def canonical(value: object) -> str:
    """The canonical JSON text of a settings value (sorted keys, no spaces; other objects as ``str``)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def settings_hash(settings: dict) -> str:
    """12 hex digits of the SHA-256 of the settings' :func:`canonical` text: the rows' ``settings_hash``."""
    return hashlib.sha256(canonical(settings).encode()).hexdigest()[:12]


def settings_path(cell_file: Path) -> Path:
    return Path(cell_file).with_suffix(SETTINGS_SUFFIX)


def code_path(cell_file: Path) -> Path:
    return Path(cell_file).with_suffix(CODE_SUFFIX)


@dataclass(frozen=True)
class RunRecord:
    """What :func:`load_record` found beside a cell file.

    ``settings_hash`` and ``git_commit`` are the rows' (``None``: a legacy row, recorded before settings were);
    ``settings``: the validated settings record (``None`` for legacy rows and damaged records); ``code``: the
    validated executed-code record (``None``: not recorded, or damaged); ``problem``: what is wrong with a record
    (``None``: nothing), which makes the rows' provenance unknown."""

    cell_file: Path
    settings_hash: str | None = None
    git_commit: str | None = None
    settings: dict | None = None
    code: dict | None = None
    problem: str | None = None

    @property
    def environment(self) -> dict | None:
        return None if self.settings is None else self.settings.get("environment")


def write_record(cell_file: Path, settings: dict, functions: dict[str, str | None] | None) -> None:
    """Write the run record beside ``cell_file``, each file atomically: the settings and, where recorded, the
    executed functions with their hashes (``functions``: :func:`fyexp.provenance.executed.function_hashes`); with
    ``functions=None`` an older cell's code record is removed, so the file rule judges the new rows."""
    from fyexp.io import atomic_write_text

    cell_file = Path(cell_file)
    cell_file.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(settings_path(cell_file), json.dumps(settings, indent=1, sort_keys=True, default=str) + "\n")
    if functions is None:
        code_path(cell_file).unlink(missing_ok=True)
    else:
        atomic_write_text(code_path(cell_file), json.dumps(functions, indent=1, sort_keys=True) + "\n")


def settings_problem(settings: object, expected_hash: str) -> str | None:
    """What is wrong with a parsed settings record of a cell whose rows name ``expected_hash`` (``None``: nothing):
    it must be a JSON object with exactly the keys of :data:`SETTINGS_FIELDS`, each of its type, whose
    :func:`settings_hash` is the rows' (else the rows were not made at the settings it states)."""
    if not isinstance(settings, dict):
        return f"not a JSON object of settings (a JSON {type(settings).__name__})"
    keys = set(settings)
    if keys != set(SETTINGS_FIELDS):
        missing, extra = sorted(set(SETTINGS_FIELDS) - keys), sorted(keys - set(SETTINGS_FIELDS))
        return "; ".join(part for part in (f"missing key(s) {', '.join(missing)}" if missing else "",
                                           f"unexpected key(s) {', '.join(extra)}" if extra else "") if part)
    for key, kind in SETTINGS_FIELDS.items():
        if kind is not None and (not isinstance(settings[key], kind) or isinstance(settings[key], bool)):
            return f"'{key}' is not a JSON {'integer' if kind is int else 'string' if kind is str else 'object'}"
    found = settings_hash(settings)
    if found != expected_hash:
        return f"its settings hash {found}, but the cell's rows name {expected_hash}"
    return None


def code_problem(record: object) -> str | None:
    """What is wrong with a parsed ``<cell>.code.json`` (``None``: nothing): it must be a JSON object mapping
    :data:`CODE_KEY` names (``fyexp/train/loop.py:fit``) to a 12-hex-digit hash or ``null``."""
    if not isinstance(record, dict):
        return f"not a JSON object of functions (a JSON {type(record).__name__})"
    for key, value in record.items():
        if not CODE_KEY.fullmatch(key):
            return f"entry {key[:80]!r} does not name a function of a Python file of the fyexp package"
        if value is not None and not (isinstance(value, str) and CODE_HASH.fullmatch(value)):
            return f"entry {key!r}: {str(value)[:40]!r} is not a function hash"
    return None


def _read_settings(cell_file: Path, expected_hash: str) -> tuple[dict | None, str | None]:
    from fyexp.damaged import UNKNOWN_PROVENANCE_NOTE, read_json, warn_damaged

    path = settings_path(cell_file)
    what = "damaged settings record"
    if not path.exists():
        what, problem = "missing settings record", f"the rows of {Path(cell_file).name} name settings {expected_hash}"
    else:
        settings, problem = read_json(path)
        if problem is None:
            problem = settings_problem(settings, expected_hash)
            if problem is None:
                return settings, None
    warn_damaged(path, what, problem, UNKNOWN_PROVENANCE_NOTE)
    return None, problem


def _read_code(cell_file: Path) -> tuple[dict | None, str | None]:
    from fyexp.damaged import UNKNOWN_PROVENANCE_NOTE, read_json, warn_damaged

    path = code_path(cell_file)
    if not path.exists():
        return None, None
    record, problem = read_json(path)
    if problem is None:
        problem = code_problem(record)
    if problem is None:
        return record, None
    warn_damaged(path, "damaged executed-code record", problem, UNKNOWN_PROVENANCE_NOTE)
    return None, problem


def load_record(cell_file: Path, settings_hash: str | None, git_commit: str | None = None, *,
                settings: bool = True) -> RunRecord:
    """The run record beside ``cell_file``, whose rows name ``settings_hash`` (``None``: legacy rows, no settings
    record expected) and ``git_commit``.  ``settings=False`` leaves the settings record unread (the rows of a
    superseded file: their record is not beside a current cell).  Each damaged record is one warning line and the
    record's ``problem`` (its code record's, else its settings record's)."""
    cell_file = Path(cell_file)
    found, settings_why = (_read_settings(cell_file, settings_hash) if settings and settings_hash is not None
                           else (None, None))
    code, code_why = _read_code(cell_file)
    return RunRecord(cell_file, settings_hash, git_commit, found, code, code_why or settings_why)


def rows_identity(frame) -> tuple[str | None, str | None]:
    """``(settings_hash, git_commit)`` the rows of one cell file name (``None`` where absent)."""
    def first(column: str) -> str | None:
        if frame is None or column not in frame.columns:
            return None
        values = frame[column].dropna().astype(str)
        return values.iloc[0] if len(values) else None

    return first("settings_hash"), first("git_commit")
