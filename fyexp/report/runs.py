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

from fyexp.freshness import BEHAVIOUR_UNCHANGED, UNKNOWN_PROVENANCE, row_states
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
    settings_changed_rows: int = 0   # rows whose cell ran at other settings than the spec now asks (to rerun)
    behaviour_unchanged_rows: int = 0   # code changed since the row, its experiment's fingerprint did not: not stale


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
    other seeds (``--seeds``): then the seeds the rows name.  A ``--set`` variant (``paper+lr=1e-4``) plans what its
    profile plans.  ``None`` if neither says.  (A requested seed none of
    whose cells wrote a row, finished or failed, leaves no trace to read.)"""
    body = spec.profiles.get(profile) or spec.profiles.get(profile.split("+", 1)[0]) or {}  # a --set variant
    seeds = body.get("seeds", (spec.defaults or {}).get("seeds"))
    spec_seeds = {int(s) for s in seeds} if isinstance(seeds, list) else None
    seen: set[int] = set()
    if frame is not None and not frame.empty and "seed" in frame:
        rows = frame[frame["profile"].astype(str) == profile]
        seen = {int(s) for s in pd.to_numeric(rows["seed"], errors="coerce").dropna()}
    if seen and (spec_seeds is None or not seen <= spec_seeds):
        return len(seen)
    return len(spec_seeds) if spec_seeds is not None else None


def settings_changed(spec: ExperimentSpec, frame: pd.DataFrame, folder: Path | None) -> pd.Series:
    """Per row: whether its cell ran at other settings than the spec now resolves to (``True``), the same
    (``False``) or cannot be told (``None``: no runner, no sidecar and no git).

    A row naming a settings hash compares the config recorded in its sidecar (``<cell>.settings.json``, read and
    checked by :func:`fyexp.settings.read_sidecar`: a missing or damaged one is ``None``, unknown provenance) with
    its profile resolved now (its ``--set`` overrides applied again); the device and package versions are not
    compared here (they are the machine's, not the spec's).  A legacy row uses
    :func:`fyexp.settings.legacy_settings_changed` (the spec at its commit)."""
    import json

    from fyexp.errors import FyexpError
    from fyexp.results import Cell
    from fyexp.settings import SUPERSEDED_MARK, legacy_settings_changed, read_sidecar, scoped_config
    from fyexp.specs import Override, resolve

    out = pd.Series(None, index=frame.index, dtype=object)
    if folder is None or frame.empty:
        return out
    try:
        from fyexp.experiments import get_experiment

        experiment = get_experiment(spec.runner)
        config_cls = experiment.Config
    except (FyexpError, ImportError):
        return out
    now: dict = {}

    def current(base: str, overrides: dict):
        key = (base, json.dumps(overrides, sort_keys=True))
        if key not in now:
            try:
                now[key] = resolve(spec, base, config_cls, None, [Override(k, v, str(v))
                                                                  for k, v in overrides.items()]).config
            except FyexpError:
                now[key] = None  # the profile is gone or no longer validates
        return now[key]

    def cell_of(method, seed, params) -> Cell | None:
        try:
            return Cell(str(method), int(seed), json.loads(params) if isinstance(params, str) else {})
        except (TypeError, ValueError):
            return None

    def column(name: str) -> pd.Series:
        return frame[name] if name in frame else pd.Series(None, index=frame.index, dtype=object)

    cells = {k: cell_of(*v) for k, v in zip(zip(frame["profile"].astype(str), frame["cell"].astype(str)),
                                             zip(column("method"), column("seed"), column("params")))}
    verdicts: dict = {}
    hashes = [None if pd.isna(h) else str(h) for h in column("settings_hash").astype("string")]
    keys = list(zip(frame["profile"].astype(str), frame["cell"].astype(str), frame["git_commit"].astype(str),
                    hashes))
    for profile, cell, commit, recorded_hash in set(keys):
        base = profile.split("+", 1)[0]
        cell_obj = cells.get((profile, cell))
        recorded = None
        if recorded_hash is not None and SUPERSEDED_MARK not in profile:
            recorded, problem = read_sidecar(Path(folder) / "cells" / profile / f"{cell}.csv", recorded_hash)
            if problem is not None:  # unknown provenance (the warning names the record): cannot be told
                verdicts[profile, cell, commit, recorded_hash] = None
                continue
        if recorded is None:
            verdicts[profile, cell, commit, recorded_hash] = (
                legacy_settings_changed(spec, base, commit, config_cls, cell_obj, experiment)
                if "+" not in profile else None)
        else:
            config_now = current(base, recorded.get("overrides", {}))
            verdicts[profile, cell, commit, recorded_hash] = (config_now is None or recorded.get("config")
                                                              != scoped_config(experiment, config_now, cell_obj))
    return pd.Series([verdicts[k] for k in keys], index=frame.index, dtype=object)


def profile_runs(spec: ExperimentSpec, frame: pd.DataFrame, folder: Path | None = None) -> dict[str, ProfileRun]:
    """Per profile present in ``frame``: cells and seeds finished or failed, dirty and stale rows, commits.

    A row is stale by the code its cell executed where the cell recorded it, else by the files of its runner's
    import tree (:func:`fyexp.freshness.row_states`)."""
    out = {}
    if frame.empty:
        return out
    status = frame["status"].fillna("ok")
    commits = frame["git_commit"].astype(str)
    freshness = frame["freshness"] if "freshness" in frame else row_states(spec, frame, folder)
    changed = settings_changed(spec, frame, folder)
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
            stale_rows=int((freshness[mask] == "stale").sum()),
            unknown_rows=int(freshness[mask].isin(["unknown", UNKNOWN_PROVENANCE]).sum()),
            commits=tuple(sorted(set(commits[mask]))),
            settings_changed_rows=int((changed[mask] == True).sum()),  # noqa: E712 (None is unknown)
            behaviour_unchanged_rows=int((freshness[mask] == BEHAVIOUR_UNCHANGED).sum()))
    return out


def studies(folder: Path) -> list[Study]:
    """Every Optuna study in the SQLite databases (``*.db``) of an experiment's results folder, with its trials
    counted by state (read straight from Optuna's ``studies`` and ``trials`` tables)."""
    found = []
    for path in sorted(folder.glob("*.db")):
        rows, _ = _study_rows(path)
        if rows is None:
            continue
        by_study: dict[str, list[tuple[str, int]]] = {}
        for name, state, count in rows:
            by_study.setdefault(name, [])
            if state is not None:
                by_study[name].append((str(state), int(count)))
        found += [Study(name, tuple(states)) for name, states in by_study.items()]
    return found


def _study_rows(path: Path) -> tuple[list | None, str | None]:
    """The (study, state, count) rows of one SQLite study file, or ``(None, what is wrong)``."""
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
            return conn.execute("SELECT s.study_name, t.state, COUNT(*) FROM studies s LEFT JOIN trials t "
                                "ON t.study_id = s.study_id GROUP BY s.study_name, t.state "
                                "ORDER BY s.study_name, t.state").fetchall(), None
    except sqlite3.Error as exc:
        return None, f"not a readable Optuna study ({exc})"


def damaged_studies(folder: Path) -> list[tuple[Path, str]]:
    """Study files (``*.db``) of an experiment's results folder that cannot be read, each with the reason."""
    return [(path, problem) for path in sorted(folder.glob("*.db")) for problem in [_study_rows(path)[1]] if problem]


def run_facts(spec: ExperimentSpec, frame: pd.DataFrame, folder: Path) -> RunFacts:
    return RunFacts(profiles=profile_runs(spec, frame, folder), studies=studies(folder))
