"""Did a change move any number?  Compare two results folders row by row (the proof of a behaviour-preserving
refactor, issue 22).

    python scripts/compare_results.py BEFORE AFTER [EXPERIMENT ...]

Run the same profile into two folders, one before and one after the change (``fyexp run NAME --profile quick
--results-dir BEFORE``), then compare.  For each experiment the rows of ``results.csv`` are matched on every
column except the run's own (commit, version, device, wall time, timestamp) and the number
(``value``, ``tolerance``): so the ``settings_hash`` (the cell's settings, :mod:`fyexp.spec.settings`), the cell key
and the paper keys must match too.  A column that only one side records (``settings_hash`` beside rows written
before cells kept it, absent or empty in every compared row of the other side) cannot be compared: it is left out of the match and named in the summary.  ``--profile``
restricts the rows and artifacts to some profiles (a refresh of one profile beside the others).  Matched numbers must be equal exactly (NaN equals NaN; a float's text may
differ, ``1.0`` vs ``1``); wall-clock metrics are skipped.  Artifacts (``.npz``) are compared array by array,
other artifact files byte by byte.  Exit status 1 when anything differs, with the first differences printed.
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

RUN_COLUMNS = {"git_commit", "fyexp_version", "device", "wall_time_s", "timestamp"}
NUMBERS = ("value", "tolerance")
TIMING = re.compile(r"time|_s$|seconds|wall|ms_per|_ms$")   # the same rule as fyexp.run.fingerprints.TIMING


@dataclass
class Comparison:
    experiment: str
    rows_before: int = 0
    rows_after: int = 0
    unmatched: list[str] = field(default_factory=list)
    numbers: list[str] = field(default_factory=list)
    artifacts: list[str] = field(default_factory=list)
    one_sided: list[str] = field(default_factory=list)

    @property
    def identical(self) -> bool:
        return not (self.unmatched or self.numbers or self.artifacts)

    def summary(self) -> str:
        verdict = "IDENTICAL" if self.identical else "DIFFERENT"
        not_compared = f"; not compared (one side only): {', '.join(self.one_sided)}" if self.one_sided else ""
        return (f"{self.experiment}: {verdict}  rows {self.rows_before} / {self.rows_after}, unmatched "
                f"{len(self.unmatched)}, numbers differing {len(self.numbers)}, artifacts differing "
                f"{len(self.artifacts)}{not_compared}")


def _read(path: Path, profiles: list[str] | None = None) -> pd.DataFrame:
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    keep = ~frame["metric"].str.contains(TIMING)
    if profiles:
        keep &= frame["profile"].isin(profiles)
    return frame[keep].reset_index(drop=True)


def _recorded(frame: pd.DataFrame) -> set[str]:
    """The columns ``frame`` records: present with a value in some row.  A ``results.csv`` of several profiles has
    a ``settings_hash`` column as soon as one cell kept it, empty in the rows of older cells: refreshing such a
    profile (``--profile``) compares empty hashes with real ones, which is one side only, not a different key."""
    return {c for c in frame.columns if (frame[c] != "").any()}


def same_number(a: str, b: str) -> bool:
    """Equal as text, or as floats (NaN and an empty field both mean 'no number')."""
    if a == b:
        return True
    x, y = (float("nan") if s.strip().lower() in ("", "nan") else float(s) for s in (a, b))
    return x == y or (np.isnan(x) and np.isnan(y))


def compare_rows(before: pd.DataFrame, after: pd.DataFrame, experiment: str) -> Comparison:
    out = Comparison(experiment, len(before), len(after))
    recorded_before, recorded_after = _recorded(before), _recorded(after)
    out.one_sided = sorted((recorded_before ^ recorded_after) - RUN_COLUMNS - set(NUMBERS))
    keys = sorted((recorded_before & recorded_after) - RUN_COLUMNS - set(NUMBERS))
    before, after = (f.reindex(columns=keys + list(NUMBERS), fill_value="") for f in (before, after))
    merged = before.merge(after, on=keys, how="outer", suffixes=("_before", "_after"), indicator=True)
    for _, row in merged[merged["_merge"] != "both"].iterrows():
        side = "before only" if row["_merge"] == "left_only" else "after only"
        out.unmatched.append(f"{side}: {row['cell']} {row['metric']}")
    for _, row in merged[merged["_merge"] == "both"].iterrows():
        for column in NUMBERS:
            a, b = str(row[f"{column}_before"]), str(row[f"{column}_after"])
            if not same_number(a, b):
                out.numbers.append(f"{row['cell']} {row['metric']} {column}: {a} → {b}")
    return out


def compare_artifacts(before: Path, after: Path) -> list[str]:
    problems = []
    for path in sorted(p for p in before.rglob("*") if p.is_file()):
        other = after / path.relative_to(before)
        if not other.is_file():
            problems.append(f"missing after: {other.relative_to(after)}")
        elif path.suffix == ".npz":
            with np.load(path) as x, np.load(other) as y:
                if sorted(x.files) != sorted(y.files) or not all(
                        np.array_equal(x[k], y[k], equal_nan=x[k].dtype.kind in "fc") for k in x.files):
                    problems.append(f"arrays differ: {path.relative_to(before)}")
        elif path.read_bytes() != other.read_bytes():
            problems.append(f"bytes differ: {path.relative_to(before)}")
    return problems


def compare(before: Path, after: Path, experiment: str, profiles: list[str] | None = None) -> Comparison:
    result = compare_rows(_read(before / experiment / "results.csv", profiles),
                          _read(after / experiment / "results.csv", profiles), experiment)
    for folder in ([f"artifacts/{p}" for p in profiles] if profiles else ["artifacts"]):
        if (before / experiment / folder).is_dir():
            result.artifacts += compare_artifacts(before / experiment / folder, after / experiment / folder)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("experiments", nargs="*", help="default: every experiment with a results.csv in BEFORE")
    parser.add_argument("--profile", action="append", default=None,
                        help="compare only this profile's rows and artifacts (repeatable)")
    args = parser.parse_args(argv)
    names = args.experiments or sorted(p.name for p in args.before.iterdir() if (p / "results.csv").is_file())
    results = [compare(args.before, args.after, name, args.profile) for name in names]
    for result in results:
        print(result.summary())
        for line in (result.unmatched + result.numbers + result.artifacts)[:8]:
            print(f"    {line}")
    return 0 if all(r.identical for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
