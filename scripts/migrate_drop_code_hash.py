"""Drop the retired ``code_hash`` column from the CSV files of a results folder, once (run 2026-12-04 on ``results/``).

``code_hash`` was the import-tree hash of the code a row was computed with, the second of two code-staleness rules.
The one rule now is the executed functions each run record keeps (:mod:`fyexp.store.provenance.executed`); no reader
judges by the column, and rows written since do not carry it, so the committed files held two row forms.  This
script removes the column from every ``*.csv`` under the folder (cell files under ``cells/``, superseded ones under
``superseded/``, each experiment's ``results.csv``): a line is split with the csv module and written back with
minimal quoting and ``\\n`` line ends, as fyexp writes them (on the 481 committed files that carried the column, a
rewrite that drops nothing reproduced every byte), and a file whose rewritten text would not parse back to the same
rows less the column is left alone and named.  Nothing else changes: the run records, settings hashes and numbers
are those of before.

``--dry-run`` only counts.  Running it again finds nothing to do.  ``python scripts/migrate_drop_code_hash.py
[RESULTS]``.
"""

from __future__ import annotations

import argparse
import csv
import io
import sys
from pathlib import Path

COLUMN = "code_hash"


def without_column(text: str, column: str = COLUMN) -> str | None:
    """``text`` (a CSV file's) less ``column``; ``None`` where it has no such column."""
    rows = list(csv.reader(io.StringIO(text, newline="")))
    if not rows or column not in rows[0]:
        return None
    at = rows[0].index(column)
    out = io.StringIO(newline="")
    writer = csv.writer(out, lineterminator="\n", quoting=csv.QUOTE_MINIMAL)
    for row in rows:
        writer.writerow(row[:at] + row[at + 1:])
    return out.getvalue()


def round_trips(before: str, after: str, column: str = COLUMN) -> bool:
    """Whether ``after`` reads as ``before``'s rows less ``column`` and every unchanged line kept its bytes."""
    old = list(csv.reader(io.StringIO(before, newline="")))
    new = list(csv.reader(io.StringIO(after, newline="")))
    at = old[0].index(column)
    return new == [row[:at] + row[at + 1:] for row in old]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", nargs="?", default="results", type=Path)
    parser.add_argument("--dry-run", action="store_true")
    args = parser.parse_args(argv)
    changed, refused = 0, []
    for path in sorted(args.results.rglob("*.csv")):
        if path.is_symlink() or not path.is_file():
            continue
        text = path.read_text(encoding="utf-8")
        after = without_column(text)
        if after is None:
            continue
        if not round_trips(text, after):
            refused.append(path)
            continue
        changed += 1
        if not args.dry_run:
            path.write_text(after, encoding="utf-8")
    verb = "would drop" if args.dry_run else "dropped"
    print(f"{verb} the {COLUMN} column from {changed} CSV files under {args.results}")
    for path in refused:
        print(f"left alone (its rewrite would not read back the same): {path}")
    return 1 if refused else 0


if __name__ == "__main__":
    sys.exit(main())
