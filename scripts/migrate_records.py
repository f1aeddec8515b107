"""Upgrade the legacy run records of a results folder to the one-file form, once (run 2026-12-01 on ``results/``).

Cells written before the one-file record (:mod:`fyexp.store.provenance.record`) have two files beside their cell file,
``<cell>.settings.json`` (the settings) and ``<cell>.code.json`` (the executed functions, optional), and no stored
fingerprint.  This script writes, for each such cell (current, under ``cells/``, or superseded, under
``superseded/``), the ``<cell>.record.json`` that :func:`fyexp.store.provenance.record.write_record` would have written:

- ``settings``: the settings file's object, as it is (its hash is the rows' ``settings_hash``: nothing is recomputed);
- ``code``: the executed-code file's object, ``null`` where there is none (recording was off);
- ``commit``: the rows' ``git_commit`` (the record's commit must be the rows');
- ``fingerprint``: the experiment's entry in ``fyexp/reference/fingerprints.json`` as committed at that commit
  (``git show``; for a ``+dirty`` commit, at its base commit), ``null`` where it had none — the fingerprint the
  legacy form was judged by (a ``+dirty`` row is never cleared by a fingerprint, whatever it stores);

in the writer's format (``json.dumps(indent=1, sort_keys=True)`` and a newline), then removes the two legacy files.
The files are read as JSON text and written back unvalidated: a damaged legacy record gives a record that fails
:func:`fyexp.store.provenance.record.load_record`'s check the same way, so its rows keep *unknown provenance*.  A cell
without a cell file beside its legacy files is left alone and named.

``--dry-run`` only counts.  Running it again finds nothing to do.  ``python scripts/migrate_records.py [RESULTS]``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from fyexp.store import gitinfo
from fyexp.store.io import atomic_write_text
from fyexp.store.provenance.record import RECORD_SUFFIX, rows_identity
from fyexp.store.results import read_cell_file

SOURCE_ROOT = Path(__file__).resolve().parents[1]
LEGACY_SUFFIXES = (".settings.json", ".code.json")
FINGERPRINTS = "fyexp/reference/fingerprints.json"


def legacy_cells(results: Path) -> list[Path]:
    """The cell files (current or superseded) of ``results`` with a legacy record beside them, sorted."""
    found = set()
    for suffix in LEGACY_SUFFIXES:
        for path in results.glob(f"*/*/*/*{suffix}"):
            if path.parts[-3] in ("cells", "superseded"):
                found.add(path.with_name(path.name[: -len(suffix)] + ".csv"))
    return sorted(found)


def _fingerprints_at(commit: str, memo: dict) -> dict:
    base = commit.split("+", 1)[0]
    if base not in memo:
        done = gitinfo.run_git(SOURCE_ROOT, "show", f"{base}:{FINGERPRINTS}") if base else None
        try:
            found = json.loads(done.stdout) if done is not None and done.returncode == 0 else {}
        except json.JSONDecodeError:
            found = {}
        memo[base] = found if isinstance(found, dict) else {}
    return memo[base]


def _read(path: Path) -> object:
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def migrate(cell_file: Path, memo: dict) -> dict:
    """The one-file record of ``cell_file``'s legacy files (not written)."""
    frame, problem = read_cell_file(cell_file)
    if frame is None:
        raise ValueError(f"{cell_file}: {problem}")
    commit = rows_identity(frame)[1] or "unknown"
    settings = _read(cell_file.with_suffix(".settings.json"))
    experiment = settings.get("experiment") if isinstance(settings, dict) else str(frame["experiment"].iloc[0])
    entry = _fingerprints_at(commit, memo).get(experiment)
    return {"settings": settings, "code": _read(cell_file.with_suffix(".code.json")), "commit": commit,
            "fingerprint": entry if isinstance(entry, dict) and entry else None}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", nargs="?", default="results", type=Path)
    parser.add_argument("--dry-run", action="store_true")
    args = parser.parse_args(argv)
    memo: dict = {}
    done = skipped = 0
    for cell_file in legacy_cells(args.results):
        if not cell_file.is_file() or cell_file.with_suffix(RECORD_SUFFIX).exists():
            print(f"left alone: {cell_file} ({'a one-file record lies there too' if cell_file.is_file() else 'no cell file'})")
            skipped += 1
            continue
        record = migrate(cell_file, memo)
        if not args.dry_run:
            text = json.dumps(record, indent=1, sort_keys=True, default=str) + "\n"
            atomic_write_text(cell_file.with_suffix(RECORD_SUFFIX), text)
            for suffix in LEGACY_SUFFIXES:
                cell_file.with_suffix(suffix).unlink(missing_ok=True)
        done += 1
    print(f"{'would upgrade' if args.dry_run else 'upgraded'} {done} cell(s); left alone {skipped}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
