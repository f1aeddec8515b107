"""The run record of a cell: the settings it ran at, the fyexp code it executed, the environment, the commit and the
behaviour fingerprint it was made under, in one file.

A finished cell file ``cells/<profile>/<key>.csv`` has beside it ``<key>.record.json``, written atomically by
:func:`write_record` before the cell file itself (whose atomic rename is what marks the cell finished)::

    {"settings": {...},          # fyexp.spec.settings.cell_settings: the resolved config scoped to the cell, the --set
                                 # overrides, method, grid values, seed, data identity and the environment (device
                                 # kind, torch and numpy versions); its settings_hash is every row's settings_hash
     "code": {"fyexp/train/loop.py:fit": "0123456789ab", ...} | null,
                                 # the fyexp functions the cell executed, each with its normalised hash
                                 # (fyexp.store.provenance.executed); null when recording was off (FYEXP_RECORD_CODE=0)
     "commit": "0210247abcde",   # the source tree's commit (+dirty for an uncommitted tree): the rows' git_commit
     "fingerprint": {...} | null} # the experiment's behaviour fingerprint in the source tree at write time
                                 # (fyexp/reference/fingerprints.json, fyexp.run.fingerprints); null where it has none

The rows themselves carry the commit too, fyexp's version, the device and the wall time
(:func:`fyexp.store.provenance.source.provenance_columns`).

**One form.**  This is the only form read.  The committed cells of the earlier two-file form
(``<key>.settings.json`` + ``<key>.code.json``) were upgraded once by ``scripts/migrate_records.py``; a cell with any
other record beside it (or none) has *unknown provenance*, and ``run`` redoes it, as Snakemake's metadata of an
unknown version triggers its job again.

:func:`load_record` is the one reader: it checks each file against what the writer writes (the record an object of
exactly :data:`RECORD_FIELDS`; the settings of the schema :data:`SETTINGS_FIELDS`, hashing to the rows' hash; the code
mapping ``fyexp/<modules>.py:<qualname>`` names, never an absolute path or ``..``, to hashes; the commit the rows';
the fingerprint an object of numbers) and names each one that fails in one warning line
(:func:`fyexp.store.damaged.warn_damaged`); the record then has a ``problem`` and its rows *unknown provenance*
(:mod:`fyexp.store.provenance.freshness`).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path

RECORD_SUFFIX = ".record.json"     # the run record
SUPERSEDED_MARK = "~superseded-"   # a superseded file's rows get profile ``<profile>~superseded-<hash>``

# the settings record's schema: each key of :func:`fyexp.spec.settings.cell_settings` and its JSON type (None: any
# value)
SETTINGS_FIELDS: dict[str, type | None] = {
    "experiment": str, "profile": str, "overrides": dict, "config": None, "method": str, "params": dict,
    "seed": int, "data": None, "environment": dict,
}
# the one-file record's schema: each key and its JSON type (a tuple: either; type(None): null)
RECORD_FIELDS: dict[str, tuple[type, ...]] = {
    "settings": (dict,), "code": (dict, type(None)), "commit": (str,), "fingerprint": (dict, type(None)),
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


def record_path(cell_file: Path) -> Path:
    return Path(cell_file).with_suffix(RECORD_SUFFIX)


@dataclass(frozen=True)
class RunRecord:
    """What :func:`load_record` found beside a cell file.

    ``settings_hash`` and ``git_commit`` are the rows' (``None`` where they name none); ``settings``: the validated
    settings (``None``: not read, or a damaged record); ``code``: the validated executed-code record (``None``: not
    recorded, or damaged); ``problem``: what is wrong with the record (``None``: nothing), which makes the rows'
    provenance unknown; ``fingerprint``: the experiment's fingerprint stored at write time (``None``: none
    existed)."""

    cell_file: Path
    settings_hash: str | None = None
    git_commit: str | None = None
    settings: dict | None = None
    code: dict | None = None
    problem: str | None = None
    fingerprint: dict | None = None

    @property
    def environment(self) -> dict | None:
        return None if self.settings is None else self.settings.get("environment")


def write_record(cell_file: Path, settings: dict, functions: dict[str, str | None] | None) -> None:
    """Write the run record beside ``cell_file``, in one atomic write: the settings, the executed functions with
    their hashes (``functions``: :func:`fyexp.store.provenance.executed.function_hashes`; ``None``: not recorded), the
    source tree's commit (:func:`fyexp.store.provenance.source.git_commit`, what the rows record) and the fingerprint of
    the settings' experiment in the source tree (:func:`fyexp.store.provenance.source.current_fingerprint`)."""
    from fyexp.store.io import atomic_write_text
    from fyexp.store.provenance.source import current_fingerprint, git_commit

    cell_file = Path(cell_file)
    cell_file.parent.mkdir(parents=True, exist_ok=True)
    record = {"settings": settings, "code": functions, "commit": git_commit(),
              "fingerprint": current_fingerprint(str(settings.get("experiment", "")))}
    atomic_write_text(record_path(cell_file), json.dumps(record, indent=1, sort_keys=True, default=str) + "\n")


def _keys_problem(parsed: object, fields: dict, what: str) -> str | None:
    """``parsed`` must be a JSON object with exactly the keys of ``fields``: what is wrong, else ``None``."""
    if not isinstance(parsed, dict):
        return f"not a JSON object of {what} (a JSON {type(parsed).__name__})"
    missing, extra = sorted(set(fields) - set(parsed)), sorted(set(parsed) - set(fields))
    if not missing and not extra:
        return None
    return "; ".join(part for part in (f"missing key(s) {', '.join(missing)}" if missing else "",
                                       f"unexpected key(s) {', '.join(extra)}" if extra else "") if part)


def settings_problem(settings: object, expected_hash: str) -> str | None:
    """What is wrong with a parsed settings record of a cell whose rows name ``expected_hash`` (``None``: nothing):
    it must be a JSON object with exactly the keys of :data:`SETTINGS_FIELDS`, each of its type, whose
    :func:`settings_hash` is the rows' (else the rows were not made at the settings it states)."""
    if (problem := _keys_problem(settings, SETTINGS_FIELDS, "settings")) is not None:
        return problem
    for key, kind in SETTINGS_FIELDS.items():
        if kind is not None and (not isinstance(settings[key], kind) or isinstance(settings[key], bool)):
            return f"'{key}' is not a JSON {'integer' if kind is int else 'string' if kind is str else 'object'}"
    found = settings_hash(settings)
    if found != expected_hash:
        return f"its settings hash {found}, but the cell's rows name {expected_hash}"
    return None


def code_problem(record: object) -> str | None:
    """What is wrong with a parsed record's ``code`` (``None``: nothing): it must be a JSON object mapping
    :data:`CODE_KEY` names (``fyexp/train/loop.py:fit``) to a 12-hex-digit hash or ``null``."""
    if not isinstance(record, dict):
        return f"not a JSON object of functions (a JSON {type(record).__name__})"
    for key, value in record.items():
        if not CODE_KEY.fullmatch(key):
            return f"entry {key[:80]!r} does not name a function of a Python file of the fyexp package"
        if value is not None and not (isinstance(value, str) and CODE_HASH.fullmatch(value)):
            return f"entry {key!r}: {str(value)[:40]!r} is not a function hash"
    return None


def fingerprint_problem(fingerprint: object) -> str | None:
    """What is wrong with a stored fingerprint (``None``: nothing): ``null`` or an object of metric names to
    numbers (:func:`fyexp.run.fingerprints.compute`)."""
    if fingerprint is None:
        return None
    if not isinstance(fingerprint, dict):
        return f"its fingerprint is not a JSON object (a JSON {type(fingerprint).__name__})"
    for key, value in fingerprint.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return f"fingerprint entry {key[:80]!r}: {str(value)[:40]!r} is not a number"
    return None


def record_problem(record: object, expected_hash: str | None, commit: str | None, *,
                   settings: bool = True) -> str | None:
    """What is wrong with a parsed ``<cell>.record.json`` of a cell whose rows name ``expected_hash`` and
    ``commit`` (``None``: nothing): an object of exactly :data:`RECORD_FIELDS`, each of its type; its settings
    sound (:func:`settings_problem`; not checked with ``settings=False``), its code sound (:func:`code_problem`),
    its commit the rows', its fingerprint sound (:func:`fingerprint_problem`)."""
    if (problem := _keys_problem(record, RECORD_FIELDS, "a run record")) is not None:
        return problem
    for key, kinds in RECORD_FIELDS.items():
        if not isinstance(record[key], kinds):
            return f"'{key}' is a JSON {type(record[key]).__name__}, not of the record's schema"
    if settings:
        if expected_hash is None:
            return "the cell's rows name no settings hash"
        problem = settings_problem(record["settings"], expected_hash)
        if problem is not None:
            return f"settings: {problem}"
    if record["code"] is not None:
        problem = code_problem(record["code"])
        if problem is not None:
            return f"code: {problem}"
    if commit is not None and record["commit"] != commit:
        return f"made at commit {record['commit'][:40]!r}, but the cell's rows name {commit!r}"
    return fingerprint_problem(record["fingerprint"])


def load_record(cell_file: Path, settings_hash: str | None, git_commit: str | None = None, *,
                settings: bool = True) -> RunRecord:
    """The run record beside ``cell_file``, whose rows name ``settings_hash`` and ``git_commit``, checked by
    :func:`record_problem`.  ``settings=False`` leaves the settings unread (the rows of a superseded file: their
    record is not beside a current cell), and then a missing record is no problem.  A damaged or missing record is
    one warning line and the record's ``problem``."""
    from fyexp.store.damaged import UNKNOWN_PROVENANCE_NOTE, read_json, warn_damaged

    cell_file = Path(cell_file)
    path = record_path(cell_file)
    if not path.exists():
        if not settings:
            return RunRecord(cell_file, settings_hash, git_commit)
        problem = f"the rows of {cell_file.name} name settings {settings_hash}" if settings_hash else \
            f"the rows of {cell_file.name} name no settings hash"
        warn_damaged(path, "missing run record", problem, UNKNOWN_PROVENANCE_NOTE)
        return RunRecord(cell_file, settings_hash, git_commit, problem=problem)
    record, problem = read_json(path)
    if problem is None:
        problem = record_problem(record, settings_hash, git_commit, settings=settings)
    if problem is not None:
        warn_damaged(path, "damaged run record", problem, UNKNOWN_PROVENANCE_NOTE)
        return RunRecord(cell_file, settings_hash, git_commit, problem=problem)
    return RunRecord(cell_file, settings_hash, git_commit, record["settings"] if settings else None, record["code"],
                     None, record["fingerprint"])


def stated_settings(cell_file: Path) -> dict | None:
    """The settings the run record beside ``cell_file`` states, unchecked against the rows (for an estimate, never
    for a judgement: :func:`load_record` is the reader that checks); ``None`` where there is no readable record.
    The mapping is the one :func:`fyexp.store.damaged.read_json` keeps for the process (``shared``): read it, never
    change it."""
    from fyexp.store.damaged import read_json

    path = record_path(cell_file)
    found = read_json(path, member="settings", shared=True)[0] if path.is_file() else None
    return found if isinstance(found, dict) else None


def rows_identity(frame) -> tuple[str | None, str | None]:
    """``(settings_hash, git_commit)`` the rows of one cell file name (``None`` where absent)."""
    def first(column: str) -> str | None:
        if frame is None or column not in frame.columns:
            return None
        values = frame[column].dropna().astype(str)
        return values.iloc[0] if len(values) else None

    return first("settings_hash"), first("git_commit")
