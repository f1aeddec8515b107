"""The run record of a cell, ``cells/<profile>/<key>.record.json`` beside its cell file, written atomically by
:func:`write_record` before the cell file (whose atomic rename marks the cell finished)::

    {"settings": {...},          # fyexp.spec.settings.cell_settings (config scoped to the cell, --set overrides,
                                 # method, grid values, seed, data, environment): hashes to every row's settings_hash
     "code": {"fyexp/train/loop.py:fit": "0123456789ab", ...} | null,
                                 # the fyexp functions the cell executed and their normalised hashes
                                 # (fyexp.store.provenance.executed); null when FYEXP_RECORD_CODE=0
     "commit": "0210247abcde",   # the source tree's commit (+dirty when uncommitted): the rows' git_commit
     "fingerprint": {...} | null} # the experiment's behaviour fingerprint in the tree at write time (or none)

:func:`load_record`, the one reader, checks a record against this schema (:func:`record_problem`); a missing or
failing record is one warning line, and its rows have *unknown provenance* (``run`` redoes the cell).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path

RECORD_SUFFIX = ".record.json"     # the run record
SUPERSEDED_MARK = "~superseded-"   # a superseded file's rows get profile ``<profile>~superseded-<hash>``

# the schemas: each key and its JSON type(s) (None: any value)
SETTINGS_FIELDS: dict[str, type | None] = {
    "experiment": str, "profile": str, "overrides": dict, "config": None, "method": str, "params": dict,
    "seed": int, "data": None, "environment": dict,
}
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


def record_path(cell_file: Path) -> Path:   # beside the cell file
    return Path(cell_file).with_suffix(RECORD_SUFFIX)


@dataclass(frozen=True)
class RunRecord:
    """What :func:`load_record` found: the rows' identity, the validated ``settings`` and ``code`` (``None``: not
    read, not recorded or damaged), the stored ``fingerprint`` and the ``problem`` (``None``: none)."""

    cell_file: Path
    settings_hash: str | None = None
    git_commit: str | None = None
    settings: dict | None = None
    code: dict | None = None
    problem: str | None = None
    fingerprint: dict | None = None


def write_record(cell_file: Path, settings: dict, functions: dict[str, str | None] | None) -> None:
    """Write the run record beside ``cell_file`` in one atomic write (``functions``:
    :func:`fyexp.store.provenance.executed.function_hashes`, ``None``: not recorded)."""
    from fyexp.store.io import atomic_write_text
    from fyexp.store.provenance.source import current_fingerprint, git_commit

    Path(cell_file).parent.mkdir(parents=True, exist_ok=True)
    record = {"settings": settings, "code": functions, "commit": git_commit(),
              "fingerprint": current_fingerprint(str(settings.get("experiment", "")))}
    atomic_write_text(record_path(cell_file), json.dumps(record, indent=1, sort_keys=True, default=str) + "\n")


def _object_problem(value: object, fields: dict, what: str) -> str | None:
    """``value`` must be a JSON object with exactly the keys of ``fields``, each of its JSON type (``None``: any; a
    bool is no int): what is wrong, else ``None``."""
    if not isinstance(value, dict):
        return f"not a JSON object of {what} (a JSON {type(value).__name__})"
    missing, extra = sorted(set(fields) - set(value)), sorted(set(value) - set(fields))
    if missing or extra:
        return "; ".join(([f"missing key(s) {', '.join(missing)}"] if missing else [])
                         + ([f"unexpected key(s) {', '.join(extra)}"] if extra else []))
    for key, kinds in fields.items():
        if kinds is not None and (not isinstance(value[key], kinds) or isinstance(value[key], bool)):
            return f"'{key}' is a JSON {type(value[key]).__name__}, not of the {what} schema"
    return None


def record_problem(record: object, expected_hash: str | None, commit: str | None, *,
                   settings: bool = True) -> str | None:
    """What is wrong with a parsed ``<cell>.record.json`` of a cell whose rows name ``expected_hash`` and ``commit``
    (``None``: nothing), against the schema of the module's docstring; ``settings=False`` leaves the settings
    unchecked.  The settings must hash to the rows' hash, else the rows were not made at the settings it states."""
    if (problem := _object_problem(record, RECORD_FIELDS, "run record")) is not None:
        return problem
    if settings and expected_hash is None:
        return "the cell's rows name no settings hash"
    if settings and (problem := _object_problem(record["settings"], SETTINGS_FIELDS, "settings")) is not None:
        return f"settings: {problem}"
    if settings and (found := settings_hash(record["settings"])) != expected_hash:
        return f"settings: its settings hash {found}, but the cell's rows name {expected_hash}"
    for key, value in (record["code"] or {}).items():
        if not CODE_KEY.fullmatch(key):
            return f"code: entry {key[:80]!r} does not name a function of a Python file of the fyexp package"
        if value is not None and not (isinstance(value, str) and CODE_HASH.fullmatch(value)):
            return f"code: entry {key!r}: {str(value)[:40]!r} is not a function hash"
    if commit is not None and record["commit"] != commit:
        return f"made at commit {record['commit'][:40]!r}, but the cell's rows name {commit!r}"
    for key, value in (record["fingerprint"] or {}).items():
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return f"fingerprint entry {key[:80]!r}: {str(value)[:40]!r} is not a number"
    return None


def load_record(cell_file: Path, settings_hash: str | None, git_commit: str | None = None, *,
                settings: bool = True) -> RunRecord:
    """The run record beside ``cell_file``, whose rows name ``settings_hash`` and ``git_commit``, checked by
    :func:`record_problem`; ``settings=False`` (a superseded file's rows): settings unread, a missing record fine."""
    from fyexp.store.damaged import UNKNOWN_PROVENANCE_NOTE, read_json, warn_damaged

    cell_file = Path(cell_file)
    path = record_path(cell_file)
    if not path.exists():
        if not settings:
            return RunRecord(cell_file, settings_hash, git_commit)
        what, problem = "missing run record", f"the rows of {cell_file.name} name " + (
            f"settings {settings_hash}" if settings_hash else "no settings hash")
    else:
        record, problem = read_json(path)
        what, problem = "damaged run record", problem or record_problem(record, settings_hash, git_commit,
                                                                        settings=settings)
    if problem is not None:
        warn_damaged(path, what, problem, UNKNOWN_PROVENANCE_NOTE)
        return RunRecord(cell_file, settings_hash, git_commit, problem=problem)
    return RunRecord(cell_file, settings_hash, git_commit, record["settings"] if settings else None, record["code"],
                     None, record["fingerprint"])


def stated_settings(cell_file: Path) -> dict | None:
    """The settings the record beside ``cell_file`` states, unchecked (for an estimate, never a judgement), or
    ``None``; the mapping is :func:`fyexp.store.damaged.read_json`'s shared one: never change it."""
    from fyexp.store.damaged import read_json

    path = record_path(cell_file)
    found = read_json(path, member="settings", shared=True)[0] if path.is_file() else None
    return found if isinstance(found, dict) else None


def rows_identity(frame) -> tuple[str | None, str | None]:
    """``(settings_hash, git_commit)`` the rows of one cell file name (``None`` where absent)."""
    return tuple(next(iter(frame[c].dropna().astype(str)), None) if frame is not None and c in frame.columns
                 else None for c in ("settings_hash", "git_commit"))
