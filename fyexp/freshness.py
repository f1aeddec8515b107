"""Whether a result row is still current: ``fresh``, ``stale``, ``unknown`` or "behaviour unchanged", per row.

By the code the row's cell executed where the cell recorded it (:mod:`fyexp.executed`), else by the files of its
runner's import tree (:func:`fyexp.provenance.row_freshness`); a row stale by code whose experiment's committed
fingerprint (:mod:`fyexp.fingerprints`) is the same at its commit and at HEAD is "behaviour unchanged".  The report
(:mod:`fyexp.report.runs`) and the claims (:mod:`fyexp.claims.verdicts`) both read these states; they live here,
below both, so that neither imports the other for them.
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
