"""Carry the run records' executed-code entries across a behaviour-preserving refactor (a module moved, an import
renamed), once, in the commit that makes it: the tool the package moves of issue 48 need.

Each run record keys the functions its cell executed as ``fyexp/<file>.py:<qualname>`` with a normalised hash
(:mod:`fyexp.store.provenance.executed`); a row is stale by code when one of them hashes differently at HEAD or is gone.
A module moved from ``fyexp/run/plan.py`` to ``fyexp/run/plan.py`` leaves every key of it gone, and every module whose
imports name it hashes differently (its ``<module>`` entry, a function with a lazy import): every cell would read
as changed code although no number can move.  This script rewrites each record's entries from the tree of the
commit ``BEFORE`` to the tree of ``HEAD``:

- a key's file is mapped through the moves given (``--move fyexp/run/plan.py=fyexp/run/plan.py``; a folder moves every
  file below it: ``--move fyexp/lease=gpu_kit``), its qualname kept; a function renamed moves alone
  (``--move fyexp/run/progress.py:plain_line=fyexp/run/progress.py:say``);
- a function the refactor folded into its callers (``--folded fyexp/run/progress.py:LineProgress._print``) loses
  its current entries: its body now hashes with the callers', which the record keys beside it and which are
  re-signed (a stale entry of it stays, and so does the record's staleness);
- an entry that was **current** at ``BEFORE`` (its recorded hash is the hash there) takes the hash of its mapped key
  at HEAD: the refactor's own change, which the proofs below show to change no number;
- an entry that was already stale at ``BEFORE`` keeps its recorded hash under the mapped key: stale it stays.

It refuses (exit 2, nothing written) unless every experiment's fingerprint (``fyexp/reference/fingerprints.json``,
the metrics of a tiny run of each code path) is the same at ``BEFORE`` and at HEAD, and unless every entry that was
current maps to a function HEAD has (a move left out of ``--move`` would otherwise turn into a silent re-sign of
a gone function).  The other proofs of a refactor stay the committer's: ``scripts/settings_hashes.py``,
``fyexp claims --json`` and ``fyexp report`` byte-identical, ``scripts/compare_results.py`` on the ``quick`` rows.
Records are written back in :func:`fyexp.store.provenance.record.write_record`'s format; their settings, commit and
fingerprint are not touched.

    python scripts/migrate_code_keys.py BEFORE [--move OLD=NEW ...] [--folded PATH:QUALNAME ...]
                                        [--results results] [--dry-run]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

FINGERPRINTS = "fyexp/reference/fingerprints.json"


def parse_moves(pairs: list[str]) -> dict[str, str]:
    """``OLD=NEW`` pairs (files or folders, relative to the repository root) as a mapping."""
    moves = {}
    for pair in pairs:
        old, sep, new = pair.partition("=")
        if not sep or not old or not new:
            raise SystemExit(f"--move {pair!r}: expected OLD=NEW (paths relative to the repository root)")
        moves[old.rstrip("/")] = new.rstrip("/")
    return moves


def mapped_key(key: str, moves: dict[str, str]) -> str:
    """``key`` (``path:qualname``) renamed: by a move of that very key (``OLD`` and ``NEW`` both ``path:qualname``,
    a function renamed), else with its path moved by the longest move that is the path or a folder above it."""
    if key in moves:
        return moves[key]
    path, sep, name = key.partition(":")
    for old in sorted((m for m in moves if ":" not in m), key=len, reverse=True):
        if path == old or path.startswith(old + "/"):
            return moves[old] + path[len(old):] + sep + name
    return key


def carried(code: dict[str, str | None], before: Callable[[list[str]], dict], after: Callable[[list[str]], dict],
            moves: dict[str, str], folded: frozenset[str] = frozenset()
            ) -> tuple[dict[str, str | None], dict[str, int], list[str]]:
    """``(new code, counts, problems)`` for one record's ``code``: each entry under its mapped key, with HEAD's hash
    where it was current at ``BEFORE`` (``before`` / ``after``: :func:`fyexp.store.provenance.executed.function_hashes`
    of the two trees), its own otherwise.  A current entry named in ``folded`` (a function the refactor folded into
    its callers, which the record keys beside it and which are re-signed with its body) is dropped; a stale one stays.
    Counts: ``renamed`` (key moved), ``current`` (current at ``BEFORE``), ``resigned`` (of those, the hash changed or
    the entry was folded), ``stale`` (kept as it was: stale at ``BEFORE``); problems: current entries HEAD does not
    have, or a folded one it still has."""
    was = before(sorted(code))
    now = after(sorted({mapped_key(k, moves) for k in code}))
    out: dict[str, str | None] = {}
    counts = {"renamed": 0, "current": 0, "resigned": 0, "stale": 0}
    problems = []
    for key, value in code.items():
        new_key = mapped_key(key, moves)
        counts["renamed"] += new_key != key
        if value is not None and was.get(key) == value:
            counts["current"] += 1
            if key in folded:
                counts["resigned"] += 1
                if now.get(new_key) is not None:
                    problems.append(f"{key}: named as folded, but HEAD still has it")
                continue
            if now.get(new_key) is None:
                problems.append(f"{key} (→ {new_key}): current before, gone at HEAD")
                out[new_key] = value
                continue
            counts["resigned"] += now[new_key] != value
            out[new_key] = now[new_key]
        else:
            counts["stale"] += 1
            out[new_key] = value
    return out, counts, problems


def unpacked(treeish: str, folder: Path) -> Path:
    """The ``fyexp`` package and its fingerprints as committed at ``treeish``, unpacked under ``folder``."""
    from fyexp.store.provenance.source import unpacked as unpack

    if unpack(ROOT, treeish, folder) is None:
        raise SystemExit(f"git archive {treeish} fyexp failed: not a commit of this repository?")
    return folder


def carry_records(results: Path, old_root: Path, new_root: Path, moves: dict[str, str], dry_run: bool = False,
                  folded: frozenset[str] = frozenset()) -> tuple[dict[str, int], list[str]]:
    """Carry every run record under ``results`` from the tree at ``old_root`` to the one at ``new_root``
    (:func:`carried`); nothing is written where any record has a problem, or with ``dry_run``.  The totals and the
    problems."""
    from fyexp.store.io import atomic_write_text
    from fyexp.store.provenance.executed import function_hashes

    old_files: dict = {}
    new_files: dict = {}
    before = lambda keys: function_hashes(keys, old_root, old_files)   # noqa: E731
    after = lambda keys: function_hashes(keys, new_root, new_files)    # noqa: E731
    totals = {"records": 0, "rewritten": 0, "renamed": 0, "current": 0, "resigned": 0, "stale": 0}
    writes, problems = [], []
    for path in sorted(Path(results).rglob("*.record.json")):
        record = json.loads(path.read_text(encoding="utf-8"))
        totals["records"] += 1
        if not isinstance(record, dict) or not isinstance(record.get("code"), dict):
            continue
        code, counts, found = carried(record["code"], before, after, moves, folded)
        problems += [f"{path}: {p}" for p in found]
        for name, n in counts.items():
            totals[name] += n
        if code != record["code"]:
            writes.append((path, {**record, "code": code}))
    totals["rewritten"] = len(writes)
    if not problems and not dry_run:
        for path, record in writes:
            atomic_write_text(path, json.dumps(record, indent=1, sort_keys=True, default=str) + "\n")
    return totals, problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", help="the commit the records were judged against before the refactor")
    parser.add_argument("--move", action="append", default=[], metavar="OLD=NEW",
                        help="a file or folder moved (paths), or a function renamed (path:qualname on both sides)")
    parser.add_argument("--folded", action="append", default=[], metavar="PATH:QUALNAME",
                        help="a function folded into its callers (its current entries are dropped)")
    parser.add_argument("--results", type=Path, default=ROOT / "results")
    parser.add_argument("--dry-run", action="store_true")
    args = parser.parse_args(argv)
    moves = parse_moves(args.move)
    with tempfile.TemporaryDirectory(prefix="fyexp-before-") as tmp_before, \
            tempfile.TemporaryDirectory(prefix="fyexp-head-") as tmp_head:
        old_root, new_root = unpacked(args.before, Path(tmp_before)), unpacked("HEAD", Path(tmp_head))
        if (old_root / FINGERPRINTS).read_bytes() != (new_root / FINGERPRINTS).read_bytes():
            print(f"error: {FINGERPRINTS} differs between {args.before} and HEAD: the refactor changes behaviour, "
                  "and its records are not carried over", file=sys.stderr)
            return 2
        totals, problems = carry_records(args.results, old_root, new_root, moves, args.dry_run,
                                         frozenset(args.folded))
    if problems:
        print("error: entries current before the refactor are gone at HEAD (a --move missing?); nothing written:",
              file=sys.stderr)
        for line in problems[:20]:
            print(f"  {line}", file=sys.stderr)
        return 2
    verb = "would rewrite" if args.dry_run else "rewrote"
    print(f"{verb} {totals['rewritten']} of {totals['records']} run records: {totals['renamed']} entries renamed; "
          f"{totals['current']} current before, {totals['resigned']} of them re-signed (changed by the refactor); "
          f"{totals['stale']} left as they were (stale before)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
