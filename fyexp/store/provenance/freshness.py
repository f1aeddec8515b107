"""Whether a cell's rows are current: the one rule (:func:`judge`), used by ``run`` (is the cell finished?, through
:meth:`fyexp.store.results.ResultStore.freshness`), ``report`` and ``claims``
(:func:`fyexp.run.spec_freshness.row_freshness`).

A cell's rows get one :class:`Freshness` from their run record, on two axes:

- **settings** (:func:`settings_state`): the recorded settings against those the cell would run at now
  (:class:`Expected`), by the canonical JSON of each key stated (``run``: every key; the device queue: all but the
  environment; ``report`` and ``claims``: the config of :func:`fyexp.run.spec_freshness.spec_expectation`, the
  row's profile resolved again with its record's ``--set`` overrides, scoped to its cell, or for a tuned profile with
  its study's best parameters);
- **code** (:func:`code_state`, report and claims only): the fyexp functions the cell executed against HEAD's tree;
  a row stale by code whose fingerprint at its commit is HEAD's is *behaviour unchanged*, not stale.

The kinds, first match wins: :data:`UNKNOWN_PROVENANCE` (a record failed its check: ``run`` redoes the cell),
:data:`OLD_SETTINGS` (``run`` reruns and supersedes; ``claims`` skips them), then the code axis: :data:`STALE`,
:data:`UNKNOWN` (cannot tell), :data:`BEHAVIOUR_UNCHANGED`, :data:`CURRENT`; :class:`Freshness` keeps both axes.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from fyexp.store.provenance.record import SUPERSEDED_MARK, RunRecord, canonical, load_record

if TYPE_CHECKING:
    import pandas as pd


# the code axis (the ``freshness`` column of the report's frames)
FRESH = "fresh"
STALE = "stale"
UNKNOWN = "unknown"                            # git cannot tell (no checkout, unknown commit)
BEHAVIOUR_UNCHANGED = "behaviour unchanged"    # code changed, behaviour unchanged (fingerprint): not stale
UNKNOWN_PROVENANCE = "unknown provenance"      # a record of the row's cell failed its check: never current
# the kinds besides those
CURRENT = "current"
OLD_SETTINGS = "old settings"


@dataclass(frozen=True)
class Expected:
    """The settings a cell would run at now: ``settings`` the keys to compare (``None``: cannot be told); ``gone``:
    why its profile cannot be resolved now (its rows are at old settings); ``tuned``: for a tuned profile, the same
    keys with its study's best parameters (what ``run --best`` runs at): a cell at either is current."""

    settings: dict | None = None
    gone: str | None = None
    tuned: dict | None = None


@dataclass(frozen=True)
class Freshness:
    """``kind`` and ``reason`` (one phrase), with the axes it was judged from: ``code`` (``None``: not judged, as in
    ``run``), ``old_settings`` (``None``: cannot tell) and, when stale by code, why its fingerprint does not clear
    it (``stale_because``)."""

    kind: str
    reason: str
    code: str | None = None
    old_settings: bool | None = None
    stale_because: str | None = None

    @property
    def finished(self) -> bool:
        """Whether ``run`` counts the cell finished: its records sound and its settings not changed."""
        return self.kind not in (UNKNOWN_PROVENANCE, OLD_SETTINGS)


def settings_differences(recorded: dict, stated: dict) -> list[str]:
    """The keys of ``stated`` whose canonical JSON differs from ``recorded``'s; inside a mapping, the dotted path
    of its first differing entry (``config.train.lr``)."""
    def first(path: str, a: object, b: object) -> str:
        if isinstance(a, dict) and isinstance(b, dict):
            for key in sorted(set(a) | set(b), key=str):
                if canonical(a.get(key)) != canonical(b.get(key)) or (key in a) != (key in b):
                    return first(f"{path}.{key}", a.get(key), b.get(key))
        return path

    return [first(key, recorded.get(key), value) for key, value in sorted(stated.items())
            if key not in recorded or canonical(recorded[key]) != canonical(value)]


def settings_state(record: RunRecord, expected: Expected | None) -> tuple[bool | None, str]:
    """Whether the cell's settings changed: ``(True | False | None (cannot tell), why)``."""
    if expected is None:
        return None, "settings not compared"
    if record.settings is None:
        return None, "its settings record was not compared"   # not read (a superseded file)
    if expected.gone is not None:
        return True, expected.gone
    if expected.settings is None:
        return None, "the settings asked now cannot be told"
    if not (differ := settings_differences(record.settings, expected.settings)):
        return False, "same settings"
    if expected.tuned is None:
        return True, f"settings changed: {', '.join(differ)}"
    if not (best := settings_differences(record.settings, expected.tuned)):
        return False, "same settings as `run --best` (its profile's tuning study)"
    return True, f"settings changed: {', '.join(differ)} (and from `run --best`'s: {', '.join(best)})"


def code_state(record: RunRecord, name: str | None, *, head: Path | None = None,
               memo: dict | None = None) -> tuple[str, str] | tuple[str, str, str]:
    """The code axis of ``record``'s rows, ``(FRESH | STALE | UNKNOWN | BEHAVIOUR_UNCHANGED, why)``, for a stale row
    of a named experiment with a third item, why its fingerprint does not clear it; the executed functions compared
    in the tree ``head`` (HEAD's, unpacked); ``memo`` caches HEAD's hashes and the fingerprints over one frame."""
    from fyexp.store.provenance.executed import ROOT, changed_functions
    from fyexp.store.provenance.source import fingerprint_difference

    if record.code is None:
        return UNKNOWN, "its cell recorded no executed code"
    memo = {} if memo is None else memo
    files = memo.setdefault(("tree", str(head)), {}) if head is not None else None  # HEAD's unpacked tree
    changed = changed_functions(record.code, head if head is not None else ROOT, files)
    if not changed:
        return FRESH, "every executed function is as at HEAD"
    why = f"{len(changed)} executed function(s) differ at HEAD ({changed[0]})"
    if name is None:
        return STALE, why
    commit = str(record.git_commit) if record.git_commit is not None else ""
    key = ("fingerprint", name, commit, canonical(record.fingerprint))
    if key not in memo:
        memo[key] = fingerprint_difference(name, commit, recorded=record.fingerprint)
    if memo[key] is None:
        return BEHAVIOUR_UNCHANGED, f"{why}, but the fingerprint of {name} is as at its commit"
    return STALE, f"{why}; {memo[key]}", memo[key]


def judge(record: RunRecord, expected: Expected | None, code: tuple[str, ...] | None = None) -> Freshness:
    """The freshness of a cell's rows from its run record, the settings expected now and (report, claims) the code
    axis :func:`code_state`, in the order of the module's docstring."""
    if record.problem is not None:
        return Freshness(UNKNOWN_PROVENANCE, record.problem, UNKNOWN_PROVENANCE, None)
    changed, why = settings_state(record, expected)
    state, reason, because = (*code, None)[:3] if code is not None else (None, why, None)
    if changed:  # the code axis is kept: a row at old settings may be stale by its code as well, and says why
        return Freshness(OLD_SETTINGS, why, state, True, because)
    return Freshness(CURRENT if state in (None, FRESH) else state, reason, state, changed, because)


def cell_freshness(cell_file: Path, settings_hash: str | None, git_commit: str | None,
                   expected: Expected | None = None) -> Freshness:
    """``run``'s judgement of one finished cell: its run record (:func:`load_record` against the rows' hash and
    commit) judged on the settings axis against ``expected``."""
    return judge(load_record(cell_file, settings_hash, git_commit), expected)


# ---- a frame of rows ---------------------------------------------------------------------------------------------
def frame_freshness(frame: pd.DataFrame, folder: Path | None, name: str | None = None,
                    expectation: Callable[[RunRecord, dict], Expected | None] | None = None, *,
                    code: bool = True, head: Path | None = None) -> pd.Series:
    """The :func:`judge` of every row of one experiment's ``frame``, each cell's record read once from ``folder``
    (``None``: no records, the rows' identity only; a superseded file's settings unread).  ``name``: the experiment
    (its fingerprint); ``expectation(record, row)``: a row's :class:`Expected`, asked of sound records (``row``: its
    ``profile``, ``cell``, ``method``, ``seed``, ``params``, ``superseded``); ``code``: judge the code axis
    (:func:`code_state`) in the tree ``head`` (default HEAD's, or the working tree outside git)."""
    import pandas as pd

    if frame.empty:
        return pd.Series([], index=frame.index, dtype=object)
    if code and head is None:
        from fyexp.store.provenance.executed import ROOT
        from fyexp.store.provenance.source import head_tree

        head = head_tree(ROOT) or ROOT

    def column(label: str, text: bool = False) -> list:
        values = list(frame[label]) if label in frame else [None] * len(frame)
        return [None if pd.isna(v) else str(v) for v in values] if text else values

    memo: dict = {}
    judged: dict = {}
    out = []
    for profile, cell, commit, hash_, method, seed, params in zip(
            frame["profile"].astype(str), frame["cell"].astype(str), column("git_commit", True),
            column("settings_hash", True), column("method"), column("seed"), column("params")):
        if (key := (profile, cell, commit, hash_)) not in judged:
            row = {"profile": profile, "cell": cell, "method": method, "seed": seed, "params": params,
                   "superseded": SUPERSEDED_MARK in profile}
            record = (RunRecord(Path(cell), hash_, commit) if folder is None else load_record(
                Path(folder) / "cells" / profile / f"{cell}.csv", hash_, commit, settings=not row["superseded"]))
            expected = expectation(record, row) if expectation is not None and record.problem is None else None
            judged[key] = judge(record, expected, code_state(record, name, head=head, memo=memo) if code else None)
        out.append(judged[key])
    return pd.Series(out, index=frame.index, dtype=object)


def code_column(freshness: pd.Series) -> pd.Series:
    """The code axis of :func:`frame_freshness`: the ``freshness`` column of the report's and the claims' frames."""
    return _axis(freshness, "code")


def settings_column(freshness: pd.Series) -> pd.Series:
    """The settings axis of :func:`frame_freshness`: ``True`` (at old settings), ``False`` or ``None``."""
    return _axis(freshness, "old_settings")


def _axis(freshness: pd.Series, attribute: str) -> pd.Series:
    import pandas as pd

    return pd.Series([getattr(f, attribute) for f in freshness], index=freshness.index, dtype=object)


def evidence(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows that may be a verdict's evidence: all but those of :data:`UNKNOWN_PROVENANCE`."""
    if "freshness" not in frame or frame.empty:
        return frame
    return frame[frame["freshness"] != UNKNOWN_PROVENANCE]
