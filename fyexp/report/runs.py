"""Facts about a run, read from the run itself: cells and seeds finished or failed per profile, the seeds the spec
planned, the trials of each Optuna study, and how many rows are dirty or stale against HEAD.

Nothing here trusts a spec's prose: a spec states the plan (its profile's ``seeds``), the CSVs and study
databases state what happened.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from fyexp.provenance import row_freshness, runner_module
from fyexp.specs import ExperimentSpec


@dataclass(frozen=True)
class ProfileRun:
    profile: str
    planned_seeds: int | None
    cells_ok: int
    cells_failed: int
    failed_cells: tuple[str, ...]
    seeds_ok: tuple[int, ...]
    rows: int
    dirty_rows: int
    stale_rows: int
    unknown_rows: int
    commits: tuple[str, ...]


@dataclass(frozen=True)
class Study:
    name: str
    states: tuple[tuple[str, int], ...]  # (state, trials), e.g. (("COMPLETE", 3), ("FAIL", 1))

    @property
    def trials(self) -> int:
        return sum(n for _, n in self.states)

    def describe(self) -> str:
        parts = ", ".join(f"{n} {state.lower()}" for state, n in self.states)
        return f"`{self.name}`: {self.trials} trial{'s' if self.trials != 1 else ''} ({parts})"


@dataclass
class RunFacts:
    profiles: dict[str, ProfileRun] = field(default_factory=dict)
    studies: list[Study] = field(default_factory=list)


def planned_seeds(spec: ExperimentSpec, profile: str, frame: pd.DataFrame | None = None) -> int | None:
    """The number of seeds requested for ``profile``: the spec's ``seeds`` (its profile's, else the defaults'),
    unless the rows of ``frame`` (finished or failed) carry a seed outside that list, i.e. the run was asked for
    other seeds (``--seeds``): then the seeds the rows name.  ``None`` if neither says.  (A requested seed none of
    whose cells wrote a row, finished or failed, leaves no trace to read.)"""
    body = spec.profiles.get(profile) or {}
    seeds = body.get("seeds", (spec.defaults or {}).get("seeds"))
    spec_seeds = {int(s) for s in seeds} if isinstance(seeds, list) else None
    seen: set[int] = set()
    if frame is not None and not frame.empty and "seed" in frame:
        rows = frame[frame["profile"].astype(str) == profile]
        seen = {int(s) for s in pd.to_numeric(rows["seed"], errors="coerce").dropna()}
    if seen and (spec_seeds is None or not seen <= spec_seeds):
        return len(seen)
    return len(spec_seeds) if spec_seeds is not None else None


def row_freshness_of(spec: ExperimentSpec, frame: pd.DataFrame) -> pd.Series:
    """Per row of ``frame``: ``fresh``, ``stale`` or ``unknown`` against HEAD (:func:`fyexp.provenance.row_freshness`,
    asked once per distinct (commit, code hash))."""
    if frame.empty:
        return pd.Series([], index=frame.index, dtype=object)
    module = runner_module(spec.runner)
    hashes = frame["code_hash"] if "code_hash" in frame else pd.Series(None, index=frame.index, dtype=object)
    keys = list(zip(frame["git_commit"].astype(str), hashes.where(hashes.notna(), None)))
    fresh = {key: row_freshness(key[0], key[1], module) for key in set(keys)}
    return pd.Series([fresh[key] for key in keys], index=frame.index, dtype=object)


def profile_runs(spec: ExperimentSpec, frame: pd.DataFrame) -> dict[str, ProfileRun]:
    """Per profile present in ``frame``: cells and seeds finished or failed, dirty and stale rows, commits."""
    out = {}
    if frame.empty:
        return out
    status = frame["status"].fillna("ok")
    commits = frame["git_commit"].astype(str)
    freshness = frame["freshness"] if "freshness" in frame else row_freshness_of(spec, frame)
    for profile in dict.fromkeys(frame["profile"].astype(str)):
        mask = frame["profile"].astype(str) == profile
        rows = frame[mask]
        failed = sorted(set(rows.loc[status[mask] == "failed", "cell"].astype(str)))
        ok_cells = set(rows.loc[status[mask] == "ok", "cell"].astype(str))
        out[profile] = ProfileRun(
            profile=profile, planned_seeds=planned_seeds(spec, profile, frame), cells_ok=len(ok_cells),
            cells_failed=len(failed), failed_cells=tuple(failed),
            seeds_ok=tuple(sorted({int(s) for s in rows.loc[status[mask] == "ok", "seed"].dropna()})),
            rows=int(mask.sum()), dirty_rows=int(commits[mask].str.endswith("+dirty").sum()),
            stale_rows=int((freshness[mask] == "stale").sum()), unknown_rows=int((freshness[mask] == "unknown").sum()),
            commits=tuple(sorted(set(commits[mask]))))
    return out


def studies(folder: Path) -> list[Study]:
    """Every Optuna study in the SQLite databases (``*.db``) of an experiment's results folder, with its trials
    counted by state (read straight from Optuna's ``studies`` and ``trials`` tables)."""
    found = []
    for path in sorted(folder.glob("*.db")):
        try:
            with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
                rows = conn.execute("SELECT s.study_name, t.state, COUNT(*) FROM studies s LEFT JOIN trials t "
                                    "ON t.study_id = s.study_id GROUP BY s.study_name, t.state "
                                    "ORDER BY s.study_name, t.state").fetchall()
        except sqlite3.Error:
            continue
        by_study: dict[str, list[tuple[str, int]]] = {}
        for name, state, count in rows:
            by_study.setdefault(name, [])
            if state is not None:
                by_study[name].append((str(state), int(count)))
        found += [Study(name, tuple(states)) for name, states in by_study.items()]
    return found


def run_facts(spec: ExperimentSpec, frame: pd.DataFrame, folder: Path) -> RunFacts:
    return RunFacts(profiles=profile_runs(spec, frame), studies=studies(folder))
