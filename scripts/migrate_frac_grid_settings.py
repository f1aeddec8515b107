"""Upgrade frac-vae's committed cells once: their settings lose the grid fields of the pre-grid Config (run
2026-12-02 on ``results/``).

Until this upgrade a frac-vae cell's settings (:func:`fyexp.experiments.frac_vae_config.cell_config`) carried the
old Config's listing of the whole grid (``tables``, ``mnist_gammas``, ``bh_gammas``,
``table7_gammas``, ``fashion_gammas``, ``fashion_betas``, ``fashion_4d_gammas``, ``authors_rows``), kept so that
committed cells kept their hashes when the grid became declared.  So adding one value to the ``claims`` profile's
grid (frac Table 2's L^bh rows, issue 46) changed the settings of every other cell of the profile and would have
sent 28 finished cells back to the queue — against :func:`fyexp.spec.settings.scoped_config`'s rule that adding a value
to an axis changes no other cell's settings.  ``cell_config`` now drops them, as every other runner does; this
script brings the stored records to the same form:

- in each ``results/frac-vae/cells/<profile>/<cell>.record.json`` whose ``settings.config`` holds those fields,
  the fields are removed (nothing else changes: the rest of the config is what the cell ran with);
- the cell file's ``settings_hash`` column (every row: the old hash) becomes the hash of the new settings
  (:func:`fyexp.store.provenance.record.settings_hash`), and the record is written in the writer's format;
- superseded cells (``superseded/``) keep the settings they were superseded with: they are history, never judged.

Then ``results.csv`` is rebuilt from the cell files (:meth:`fyexp.store.results.ResultStore.consolidate`).  A record
without the fields is left alone, so running it again finds nothing to do; a cell file whose rows do not all carry
the record's old hash is named and left alone.  ``--dry-run`` only counts.
``python scripts/migrate_frac_grid_settings.py [RESULTS]``.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import sys
from pathlib import Path

from fyexp.store.io import atomic_write_text
from fyexp.store.provenance.record import RECORD_SUFFIX, settings_hash
from fyexp.store.results import ResultStore, read_cell_file

EXPERIMENT = "frac-vae"
#: the pre-grid Config's grid fields, as the old ``legacy_grid_fields`` wrote them
GRID_FIELDS = ("tables", "mnist_gammas", "bh_gammas", "table7_gammas", "fashion_gammas",
               "fashion_betas", "fashion_4d_gammas", "authors_rows")


def upgraded(record: dict) -> dict | None:
    """``record`` with its settings' grid fields removed; ``None`` where it has none (nothing to do)."""
    config = (record.get("settings") or {}).get("config")
    if not isinstance(config, dict) or not any(key in config for key in GRID_FIELDS):
        return None
    settings = {**record["settings"], "config": {k: v for k, v in config.items() if k not in GRID_FIELDS}}
    return {**record, "settings": settings}


def _csv_text(records: list[list[str]]) -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(records)
    return out.getvalue()


def upgrade_cell(cell_file: Path, dry_run: bool) -> str:
    """``upgraded``, ``current`` (nothing to do) or why the cell was left alone."""
    record_file = cell_file.with_suffix(RECORD_SUFFIX)
    record = json.loads(record_file.read_text(encoding="utf-8"))
    new = upgraded(record)
    if new is None:
        return "current"
    frame, problem = read_cell_file(cell_file)
    if frame is None:
        return f"left alone: {cell_file} ({problem})"
    old_hash, new_hash = settings_hash(record["settings"]), settings_hash(new["settings"])
    if set(frame["settings_hash"].astype(str)) != {old_hash}:
        return f"left alone: {cell_file} (its rows do not all carry its record's hash {old_hash})"
    text = cell_file.read_text(encoding="utf-8")
    records = list(csv.reader(io.StringIO(text)))
    if _csv_text(records) != text:   # every byte but the hash is kept: the file must be what csv writes back
        return f"left alone: {cell_file} (not in the CSV writer's form: rewrite by hand)"
    column = records[0].index("settings_hash")
    for row in records[1:]:
        row[column] = new_hash
    rewritten = _csv_text(records)
    if not dry_run:
        atomic_write_text(record_file, json.dumps(new, indent=1, sort_keys=True, default=str) + "\n")
        atomic_write_text(cell_file, rewritten)
        check, problem = read_cell_file(cell_file)
        assert check is not None and set(check["settings_hash"].astype(str)) == {new_hash}, problem
    return "upgraded"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", nargs="?", default="results", type=Path)
    parser.add_argument("--dry-run", action="store_true")
    args = parser.parse_args(argv)
    counts: dict[str, int] = {}
    for cell_file in sorted((args.results / EXPERIMENT / "cells").glob("*/*.csv")):
        if not cell_file.with_suffix(RECORD_SUFFIX).is_file():
            continue
        outcome = upgrade_cell(cell_file, args.dry_run)
        if outcome.startswith("left alone"):
            print(outcome)
            outcome = "left alone"
        counts[outcome] = counts.get(outcome, 0) + 1
    if counts.get("upgraded") and not args.dry_run:
        ResultStore(args.results, EXPERIMENT).consolidate()
    verb = "would upgrade" if args.dry_run else "upgraded"
    print(f"{verb} {counts.get('upgraded', 0)} cell(s); {counts.get('current', 0)} current; "
          f"left alone {counts.get('left alone', 0)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
