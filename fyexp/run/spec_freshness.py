"""The freshness of an experiment's rows against its spec now: what the report and the claims ask.

The rule is :func:`fyexp.store.provenance.freshness.judge`, applied to each cell's run record by
:func:`fyexp.store.provenance.freshness.frame_freshness`; this module only says what each row's cell would run at now,
from the spec: its profile resolved again (its ``--set`` overrides, read from its settings record, applied again)
and scoped to the cell (:func:`fyexp.spec.settings.scoped_config`), compared by its config (the machine that will run is
not known here: the device and package versions are not compared); for a tuned profile, the config with its tuning
study's best parameters (what ``run --best`` runs at, :func:`fyexp.spec.tuning.with_best`, read from the results folder)
is current too.  Settings cannot be told (``None``) without the experiment's runner, without the results folder, and
for superseded rows.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Callable

import pandas as pd

from fyexp.store.provenance.freshness import Expected, code_column, frame_freshness, settings_column
from fyexp.store.provenance.record import RunRecord

if TYPE_CHECKING:
    from fyexp.spec.specs import ExperimentSpec


_EXPECTATIONS: dict[tuple, Callable] = {}   # (id(spec), results folder) → its expectation (which holds the spec)


def spec_expectation(spec: ExperimentSpec, results_dir: Path | None = None
                     ) -> Callable[[RunRecord, dict], Expected | None] | None:
    """``(record, row) -> Expected`` for the rows of ``spec``'s experiment (see the module's docstring); ``None``
    when its runner cannot be loaded.  ``results_dir``: the results folder whose tuning studies say what
    ``run --best`` runs at (``None``: a tuned profile's rows are compared with the spec only).

    One per spec object and results folder, kept for the life of the process (the expectation holds its spec, so an
    id is never reused while its entry lives; a command reads each spec once), and what it computes is kept in it (the
    profile resolved per ``--set`` overrides, each cell's scoped config): these depend on the spec only, never on a record, so the report's provenance counts and
    the claims' current rows, which both ask, compare each row's settings once.  (Until 2026-11-29 an entry was to
    be dropped with its spec by a weak reference, which never fired: the expectation's closure keeps the spec.)"""
    key = (id(spec), None if results_dir is None else str(results_dir))
    if key not in _EXPECTATIONS:
        found = _expectation(spec, results_dir)
        if found is None:
            return None
        _EXPECTATIONS[key] = found
    return _EXPECTATIONS[key]


def _expectation(spec: ExperimentSpec, results_dir: Path | None
                 ) -> Callable[[RunRecord, dict], Expected | None] | None:
    from fyexp.core.errors import FyexpError
    from fyexp.store.results import Cell
    from fyexp.spec.settings import scoped_config
    from fyexp.spec.specs import Override, resolve
    from fyexp.spec.tuning import with_best

    try:
        from fyexp.experiments import get_settings_scope

        experiment = get_settings_scope(spec.runner)  # Config and cell_config, no runner import
        config_cls = experiment.Config
    except (FyexpError, ImportError):
        return None
    resolved: dict = {}

    def config_now(base: str, overrides: dict, best: bool):
        """The profile's config now (``best``: with its tuning study's best parameters; ``None`` where it has
        none)."""
        key = (base, json.dumps(overrides, sort_keys=True), best)
        if key not in resolved:
            try:
                now = resolve(spec, base, config_cls, None, [Override(k, v, str(v)) for k, v in overrides.items()])
                if best:
                    now = (with_best(now, results_dir)
                           if results_dir is not None and getattr(now.config, "search", None) else None)
                resolved[key] = None if now is None else now.config
            except FyexpError:
                resolved[key] = None  # the profile is gone or no longer validates; no study of it yet
        return resolved[key]

    def cell_of(row: dict) -> Cell | None:
        try:
            params = row["params"]
            return Cell(str(row["method"]), int(row["seed"]), json.loads(params) if isinstance(params, str) else {})
        except (TypeError, ValueError):
            return None

    scoped: dict = {}

    def scoped_now(base: str, overrides: dict, cell: Cell | None, best: bool = False) -> dict | None:
        key = (base, json.dumps(overrides, sort_keys=True), None if cell is None else cell.key, best)
        if key not in scoped:
            config = config_now(base, overrides, best)
            scoped[key] = None if config is None else scoped_config(experiment, config, cell)
        return scoped[key]

    def expect(record: RunRecord, row: dict) -> Expected | None:
        if row["superseded"]:
            return None
        base, cell = row["profile"].split("+", 1)[0], cell_of(row)
        if record.settings is None:
            return Expected()
        config = scoped_now(base, record.settings.get("overrides", {}), cell)
        if config is None:
            return Expected(gone=f"its profile {base} is gone or no longer validates")
        tuned = scoped_now(base, record.settings.get("overrides", {}), cell, best=True)
        return Expected(settings={"config": config}, tuned=None if tuned is None else {"config": tuned})

    return expect


def row_freshness(spec: ExperimentSpec, frame: pd.DataFrame, folder: Path | None = None, *, code: bool = True,
                  settings: bool = True) -> pd.Series:
    """Per row, its :class:`fyexp.store.provenance.freshness.Freshness` (``folder``: the experiment's results folder,
    where its cells' records lie); ``code``/``settings`` false leave that axis unjudged."""
    expectation = spec_expectation(spec, Path(folder).parent) if settings and folder is not None else None
    return frame_freshness(frame, folder, getattr(spec, "name", None), expectation, code=code)


def row_states(spec: ExperimentSpec, frame: pd.DataFrame, folder: Path | None = None) -> pd.Series:
    """Per row, its code axis: ``fresh``, ``stale``, ``unknown``, behaviour unchanged or unknown provenance
    (:func:`row_freshness`): the ``freshness`` column of the report's and the claims' frames."""
    return code_column(row_freshness(spec, frame, folder, settings=False))


def settings_changed(spec: ExperimentSpec, frame: pd.DataFrame, folder: Path | None) -> pd.Series:
    """Per row, its settings axis: at other settings than the spec now asks (``True``), the same (``False``) or
    cannot be told (``None``) (:func:`row_freshness`)."""
    if folder is None or frame.empty:
        return pd.Series([None] * len(frame), index=frame.index, dtype=object)
    return settings_column(row_freshness(spec, frame, folder, code=False))
