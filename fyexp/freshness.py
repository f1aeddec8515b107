"""Whether a result row is still current: ``fresh``, ``stale``, ``unknown``, "behaviour unchanged" or "unknown
provenance", per row.

By the code the row's cell executed where the cell recorded it (:mod:`fyexp.executed`), else by the files of its
runner's import tree (:func:`fyexp.provenance.row_freshness`); a row stale by code whose experiment's committed
fingerprint (:mod:`fyexp.fingerprints`) is the same at its commit and at HEAD is "behaviour unchanged".  The report
(:mod:`fyexp.report.runs`) and the claims (:mod:`fyexp.claims.verdicts`) both read these states, and whether a row's
cell ran at settings other than the spec now asks (:func:`settings_changed`); they live here, below both, so that
neither imports the other for them.

A row whose cell's records fail their check (a settings sidecar missing, damaged or of other settings than the
rows name, :func:`fyexp.settings.read_sidecar`; an executed-code record that is damaged or names anything but a
function of the package, :func:`fyexp.executed.read_record`) has :data:`UNKNOWN_PROVENANCE`: never current and
never a claim's evidence (:func:`evidence`); each such record is one warning line.
"""

from __future__ import annotations

from pathlib import Path

from typing import TYPE_CHECKING

import pandas as pd

from fyexp.provenance import row_freshness, runner_module

if TYPE_CHECKING:
    from fyexp.specs import ExperimentSpec


def file_freshness(frame: pd.DataFrame, module: str) -> pd.Series:
    """``fresh``/``stale``/``unknown`` per row by the files of the runner's import tree
    (:func:`fyexp.provenance.row_freshness`): the rule for rows without an executed-code record."""
    hashes = frame["code_hash"] if "code_hash" in frame else pd.Series(None, index=frame.index, dtype=object)
    commits = frame["git_commit"].astype(str)
    keys = list(zip(commits, hashes.where(hashes.notna(), None)))
    fresh = {key: row_freshness(key[0], key[1], module) for key in set(keys)}
    return pd.Series([fresh[key] for key in keys], index=frame.index)


UNKNOWN_PROVENANCE = "unknown provenance"   # a record of the row's cell failed its check: never current


def _cell_keys(frame: pd.DataFrame) -> list[tuple[str, str]]:
    return list(zip(frame["profile"].astype(str), frame["cell"].astype(str)))


def executed_freshness(frame: pd.DataFrame, folder: Path | None, root: Path | None = None) -> pd.Series:
    """``fresh``/``stale`` per row whose cell recorded the functions it executed (``<cell>.code.json`` beside its
    file, :mod:`fyexp.executed`): stale when one of them is normalised differently at HEAD (``root``: the tree
    holding ``fyexp/`` to compare with; default HEAD's, or the working tree outside git) or gone; ``None`` for rows
    without a record; :data:`UNKNOWN_PROVENANCE` for rows whose record is damaged (one warning line names it)."""
    from fyexp.executed import ROOT, changed_functions, read_record
    from fyexp.provenance import _head_checkout, in_git_checkout

    out = pd.Series(None, index=frame.index, dtype=object)
    if folder is None or frame.empty:
        return out
    if root is None:
        head = _head_checkout(ROOT) if in_git_checkout(ROOT) else None
        root = head if head is not None else ROOT
    verdicts: dict[tuple[str, str], str | None] = {}
    keys = _cell_keys(frame)
    for key in sorted(set(keys)):
        record, problem = read_record(Path(folder) / "cells" / key[0] / f"{key[1]}.csv")
        verdicts[key] = (UNKNOWN_PROVENANCE if problem is not None else None if record is None
                         else "stale" if changed_functions(record, root) else "fresh")
    return pd.Series([verdicts[k] for k in keys], index=frame.index, dtype=object)


def damaged_settings(frame: pd.DataFrame, folder: Path | None) -> pd.Series:
    """Per row: whether it names a settings hash whose record beside its cell file is missing, damaged or of other
    settings (:func:`fyexp.settings.read_sidecar`, one warning line each).  Rows without a hash (legacy) and rows of
    superseded files (their records are not beside a current cell) are not checked."""
    from fyexp.settings import SUPERSEDED_MARK, read_sidecar

    out = pd.Series(False, index=frame.index, dtype=bool)
    if folder is None or frame.empty or "settings_hash" not in frame:
        return out
    hashes = frame["settings_hash"].astype("string")
    keys = [(*key, None if pd.isna(h) else str(h)) for key, h in zip(_cell_keys(frame), hashes)]
    bad = {key: key[2] is not None and SUPERSEDED_MARK not in key[0]
           and read_sidecar(Path(folder) / "cells" / key[0] / f"{key[1]}.csv", key[2])[1] is not None
           for key in sorted(set(keys), key=str)}
    return pd.Series([bad[k] for k in keys], index=frame.index, dtype=bool)


def evidence(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows that may be a verdict's evidence: all but those of :data:`UNKNOWN_PROVENANCE` (by the ``freshness``
    column of :func:`row_states`, where the frame has one)."""
    if "freshness" not in frame or frame.empty:
        return frame
    return frame[frame["freshness"] != UNKNOWN_PROVENANCE]


BEHAVIOUR_UNCHANGED = "behaviour unchanged"   # code changed, behaviour unchanged (fingerprint): not stale


def row_states(spec: ExperimentSpec, frame: pd.DataFrame, folder: Path | None = None) -> pd.Series:
    """Per row: ``fresh``, ``stale``, ``unknown``, :data:`BEHAVIOUR_UNCHANGED` or :data:`UNKNOWN_PROVENANCE` (a
    record of its cell failed its check: :func:`executed_freshness`, :func:`damaged_settings`): by the code its cell
    executed where the cell recorded it (:func:`executed_freshness`, given the experiment's results ``folder``),
    else by the files of its runner's import tree (:func:`file_freshness`); then a row stale by code whose experiment's
    committed fingerprint is the same at its commit and at HEAD is not stale (:func:`fingerprint_states`)."""
    executed = executed_freshness(frame, folder)
    unknown = (executed == UNKNOWN_PROVENANCE) | damaged_settings(frame, folder)
    freshness = executed.where(executed.notna() & ~unknown, None)
    legacy = freshness.isna() & ~unknown
    if legacy.any():
        freshness[legacy] = file_freshness(frame[legacy], runner_module(spec.runner))
    freshness[unknown] = UNKNOWN_PROVENANCE
    name = getattr(spec, "name", None)
    return freshness if name is None else fingerprint_states(name, frame, freshness)


def fingerprint_states(name: str, frame: pd.DataFrame, freshness: pd.Series, root: Path | None = None) -> pd.Series:
    """``freshness`` with each ``stale`` row whose (clean) commit committed the same fingerprint of experiment
    ``name`` as HEAD (:func:`fyexp.fingerprints.behaviour_unchanged`, in the checkout ``root``) turned into
    :data:`BEHAVIOUR_UNCHANGED`: its code changed, but not the behaviour the fingerprint measures.  Rows whose
    commit has no fingerprint (committed before fingerprints existed), or another one, stay stale."""
    from fyexp.fingerprints import behaviour_unchanged

    stale = freshness == "stale"
    if not stale.any() or "git_commit" not in frame:
        return freshness
    commits = frame.loc[stale, "git_commit"].astype(str)
    verdict = {c: behaviour_unchanged(name, c, root) for c in set(commits)}
    out = freshness.copy()
    out[commits.index[[verdict[c] for c in commits]]] = BEHAVIOUR_UNCHANGED
    return out


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
        from fyexp.experiments import get_settings_scope

        experiment = get_settings_scope(spec.runner)  # Config and cell_config, no runner import
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
