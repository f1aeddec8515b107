"""Whether a result row is still current: ``fresh``, ``stale``, ``unknown`` or "behaviour unchanged", per row.

By the code the row's cell executed where the cell recorded it (:mod:`fyexp.executed`), else by the files of its
runner's import tree (:func:`fyexp.provenance.row_freshness`); a row stale by code whose experiment's committed
fingerprint (:mod:`fyexp.fingerprints`) is the same at its commit and at HEAD is "behaviour unchanged".  The report
(:mod:`fyexp.report.runs`) and the claims (:mod:`fyexp.claims.verdicts`) both read these states, and whether a row's
cell ran at settings other than the spec now asks (:func:`settings_changed`); they live here, below both, so that
neither imports the other for them.
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


def executed_freshness(frame: pd.DataFrame, folder: Path | None, root: Path | None = None) -> pd.Series:
    """``fresh``/``stale`` per row whose cell recorded the functions it executed (``<cell>.code.json`` beside its
    file, :mod:`fyexp.executed`): stale when one of them is normalised differently at HEAD (``root``: the tree
    holding ``fyexp/`` to compare with; default HEAD's, or the working tree outside git) or gone; ``None`` for rows
    without a record."""
    from fyexp.executed import ROOT, changed_functions, read_record
    from fyexp.provenance import _head_checkout, in_git_checkout

    out = pd.Series(None, index=frame.index, dtype=object)
    if folder is None or frame.empty:
        return out
    if root is None:
        head = _head_checkout(ROOT) if in_git_checkout(ROOT) else None
        root = head if head is not None else ROOT
    verdicts: dict[tuple[str, str], str | None] = {}
    for key in set(zip(frame["profile"].astype(str), frame["cell"].astype(str))):
        record = read_record(Path(folder) / "cells" / key[0] / f"{key[1]}.csv")
        verdicts[key] = None if record is None else ("stale" if changed_functions(record, root) else "fresh")
    return pd.Series([verdicts[k] for k in zip(frame["profile"].astype(str), frame["cell"].astype(str))],
                     index=frame.index, dtype=object)


BEHAVIOUR_UNCHANGED = "behaviour unchanged"   # code changed, behaviour unchanged (fingerprint): not stale


def row_states(spec: ExperimentSpec, frame: pd.DataFrame, folder: Path | None = None) -> pd.Series:
    """Per row: ``fresh``, ``stale``, ``unknown`` or :data:`BEHAVIOUR_UNCHANGED`: by the code its cell executed
    where the cell recorded it (:func:`executed_freshness`, given the experiment's results ``folder``), else by the
    files of its runner's import tree (:func:`file_freshness`); then a row stale by code whose experiment's
    committed fingerprint is the same at its commit and at HEAD is not stale (:func:`fingerprint_states`)."""
    executed = executed_freshness(frame, folder)
    freshness = executed.where(executed.notna(), None)
    legacy = freshness.isna()
    if legacy.any():
        freshness[legacy] = file_freshness(frame[legacy], runner_module(spec.runner))
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

    A row with a settings sidecar (``<cell>.settings.json``, :mod:`fyexp.settings`) compares the config recorded
    there with its profile resolved now (its ``--set`` overrides applied again); the device and package versions
    are not compared here (they are the machine's, not the spec's).  A legacy row uses
    :func:`fyexp.settings.legacy_settings_changed` (the spec at its commit)."""
    import json

    from fyexp.errors import FyexpError
    from fyexp.results import Cell
    from fyexp.settings import legacy_settings_changed, scoped_config, sidecar_path
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
    keys = list(zip(frame["profile"].astype(str), frame["cell"].astype(str), frame["git_commit"].astype(str)))
    for profile, cell, commit in set(keys):
        base = profile.split("+", 1)[0]
        cell_obj = cells.get((profile, cell))
        try:
            recorded = json.loads(sidecar_path(Path(folder) / "cells" / profile / f"{cell}.csv").read_text())
        except (OSError, ValueError):
            recorded = None
        if recorded is None:
            verdicts[profile, cell, commit] = (legacy_settings_changed(spec, base, commit, config_cls, cell_obj,
                                                                       experiment)
                                               if "+" not in profile else None)
        else:
            config_now = current(base, recorded.get("overrides", {}))
            verdicts[profile, cell, commit] = (config_now is None or recorded.get("config")
                                               != scoped_config(experiment, config_now, cell_obj))
    return pd.Series([verdicts[k] for k in keys], index=frame.index, dtype=object)
