"""Facts about a run, read from the run itself: cells and seeds finished or failed per profile, the seeds the spec
planned, the trials of each Optuna study, and how many rows are dirty or stale against HEAD.

Nothing here trusts a spec's prose: a spec states the plan (its profile's ``seeds``), the CSVs and study
databases state what happened.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

import pandas as pd

from fyexp.store.provenance.freshness import (
    BEHAVIOUR_UNCHANGED, UNKNOWN, UNKNOWN_PROVENANCE, code_column, settings_column,
)
from fyexp.run.spec_freshness import row_freshness
from fyexp.spec.specs import ExperimentSpec


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
    stale_reasons: tuple[tuple[str, int], ...] = ()   # why the stale rows stay stale, with their counts


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


def profile_runs(spec: ExperimentSpec, frame: pd.DataFrame, folder: Path | None = None,
                 judged: pd.Series | None = None) -> dict[str, ProfileRun]:
    """Per profile present in ``frame``: cells and seeds finished or failed, dirty and stale rows, commits.

    A row's freshness is judged by one rule (:func:`fyexp.run.spec_freshness.row_freshness`,
    :func:`fyexp.store.provenance.freshness.judge`): stale by the code its cell executed (unknown where the cell
    recorded none); at old settings by its settings record against the spec now.
    ``judged``: that rule's verdict per row of ``frame``, both axes, where the caller has it (else judged here)."""
    out = {}
    if frame.empty:
        return out
    status = frame["status"].fillna("ok")
    commits = frame["git_commit"].astype(str)
    if judged is None:
        judged = row_freshness(spec, frame, folder, code="freshness" not in frame)
    freshness = frame["freshness"] if "freshness" in frame else code_column(judged)
    changed = settings_column(judged)
    because = _stale_because(spec, frame, folder, judged, freshness)
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
            unknown_rows=int(freshness[mask].isin([UNKNOWN, UNKNOWN_PROVENANCE]).sum()),
            commits=tuple(sorted(set(commits[mask]))),
            settings_changed_rows=int((changed[mask] == True).sum()),  # noqa: E712 (None is unknown)
            behaviour_unchanged_rows=int((freshness[mask] == BEHAVIOUR_UNCHANGED).sum()),
            stale_reasons=tuple(sorted(Counter(because[mask & (freshness == "stale")]).items())))
    return out


def _stale_because(spec: ExperimentSpec, frame: pd.DataFrame, folder: Path | None, judged: pd.Series,
                   freshness: pd.Series) -> pd.Series:
    """Per row, why a stale row stays stale (:attr:`fyexp.store.provenance.freshness.Freshness.stale_because`: its
    fingerprint changed, or none was kept at its commit); the code axis is judged again for the stale rows only
    where ``judged`` did not judge it (a frame that came with its ``freshness`` column)."""
    stale = freshness == "stale"
    found = pd.Series("", index=frame.index, dtype=object)
    if not stale.any():
        return found
    if any(f.code is None for f in judged[stale]):
        judged = row_freshness(spec, frame[stale], folder, settings=False)
    for index, verdict in judged[stale].items():
        found[index] = verdict.stale_because or "code changed (no fingerprint compared)"
    return found


def studies(folder: Path) -> list[Study]:
    """Every Optuna study in the SQLite databases (``*.db``) of an experiment's results folder, with its trials
    counted by state (by name, then state)."""
    found = []
    for path in sorted(folder.glob("*.db")):
        states, _ = _study_states(path)
        found += [Study(name, counts) for name, counts in (states or {}).items()]
    return found


_STATES: dict[str, tuple[tuple, tuple]] = {}   # path → (its stat signature, what reading it gave)


def _study_states(path: Path) -> tuple[dict[str, tuple[tuple[str, int], ...]] | None, str | None]:
    """:func:`_read_study_states`, once while the file is unchanged: per process (the report asks for the studies
    and for the damaged ones) and across processes (:mod:`fyexp.store.user_cache`, under the file's stat signature and
    this module's code: opening a study through Optuna costs about a second, most of it importing Optuna and
    SQLAlchemy)."""
    from fyexp.store.user_cache import code_key, file_signature, remembered

    try:
        signature = file_signature(path)
    except OSError:
        return _read_study_states(path)
    key = str(path.resolve())
    if key not in _STATES or _STATES[key][0] != signature:
        value = remembered("studies", key, (code_key(__file__), signature), lambda: _read_study_states(path))
        _STATES[key] = (signature, value)
    return _STATES[key][1]


def _read_study_states(path: Path) -> tuple[dict[str, tuple[tuple[str, int], ...]] | None, str | None]:
    """``({study: ((state, trials), ...)}, None)`` for one SQLite study file, through Optuna's public API with the
    file opened read-only (a damaged or foreign file is never written to, no table is created), or ``(None, what
    is wrong)``."""
    import optuna
    from optuna.exceptions import OptunaError
    from sqlalchemy.exc import SQLAlchemyError

    from fyexp.spec.tuning import study_file_problem

    problem = study_file_problem(path)   # a link, a FIFO (sqlite would wait on it), an empty or foreign file
    if problem is not None:
        return None, problem
    storage = None
    try:
        uri = f"file:{quote(str(path.resolve()))}?mode=ro"   # read-only; any character of the path quoted
        storage = optuna.storages.RDBStorage("sqlite://", {"creator": lambda: sqlite3.connect(uri, uri=True)},
                                             skip_compatibility_check=True, skip_table_creation=True)
        found = {}
        for summary in sorted(optuna.get_all_study_summaries(storage, include_best_trial=False),
                              key=lambda s: s.study_name):
            trials = optuna.load_study(study_name=summary.study_name, storage=storage).get_trials(deepcopy=False)
            found[summary.study_name] = tuple(sorted(Counter(t.state.name for t in trials).items()))
        return found, None
    except (OptunaError, SQLAlchemyError, sqlite3.Error, ValueError) as exc:
        return None, f"not a readable Optuna study ({_first_cause(exc)})"
    finally:
        if storage is not None:
            storage.engine.dispose()


def _first_cause(exc: BaseException) -> BaseException:
    """The error at the bottom of a chain (Optuna wraps SQLAlchemy's, which wraps sqlite3's)."""
    while exc.__cause__ is not None or getattr(exc, "orig", None) is not None:
        exc = exc.__cause__ if exc.__cause__ is not None else exc.orig
    return exc


def damaged_studies(folder: Path) -> list[tuple[Path, str]]:
    """Study files (``*.db``) of an experiment's results folder that cannot be read, each with the reason."""
    return [(path, problem) for path in sorted(folder.glob("*.db")) for problem in [_study_states(path)[1]] if problem]


def run_facts(spec: ExperimentSpec, frame: pd.DataFrame, folder: Path, judged: pd.Series | None = None) -> RunFacts:
    """The facts of an experiment's runs (:func:`profile_runs`, :func:`studies`); ``judged``: the rows' freshness
    when the caller has it (the report judges each row once)."""
    return RunFacts(profiles=profile_runs(spec, frame, folder, judged), studies=studies(folder))
