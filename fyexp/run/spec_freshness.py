"""What each row's cell would run at now, from its spec: the expectation :func:`fyexp.store.provenance.freshness.judge`
compares the rows' run records with, for the report and the claims.

A row's cell runs now at its profile resolved again with the ``--set`` overrides of its settings record, scoped to
the cell (:func:`fyexp.spec.settings.scoped_config`) and compared by config (the machine that will run is not known
here); for a tuned profile, the config with its study's best parameters (what ``run --best`` runs at) is current too.
Settings cannot be told without the experiment's runner, without the results folder, or for superseded rows.
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
    """``(record, row) -> Expected`` for the rows of ``spec``'s experiment, ``None`` when its runner cannot be loaded;
    ``results_dir``: the folder whose tuning studies say what ``run --best`` runs at (``None``: the spec only).  One
    per spec object and folder for the process (it holds its spec, so the id is not reused), caching what it
    resolves: the report's counts and the claims' current rows compare each row's settings once."""
    key = (id(spec), None if results_dir is None else str(results_dir))
    if key not in _EXPECTATIONS and (found := _expectation(spec, results_dir)) is not None:
        _EXPECTATIONS[key] = found
    return _EXPECTATIONS.get(key)


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
    scoped: dict = {}

    def config_now(base: str, overrides: dict, best: bool):
        """The profile's config now with the ``overrides`` (``best``: with its tuning study's best parameters),
        ``None`` where it is gone, no longer validates or has no study yet."""
        key = (base, json.dumps(overrides, sort_keys=True), best)
        if key not in resolved:
            resolved[key] = None
            try:
                now = resolve(spec, base, config_cls, None, [Override(k, v, str(v)) for k, v in overrides.items()])
                if not best or (results_dir is not None and getattr(now.config, "search", None)):
                    resolved[key] = (with_best(now, results_dir) if best else now).config
            except FyexpError:
                pass
        return resolved[key]

    def scoped_now(base: str, overrides: dict, row: dict, best: bool = False) -> dict | None:
        try:
            params = row["params"]
            cell = Cell(str(row["method"]), int(row["seed"]), json.loads(params) if isinstance(params, str) else {})
        except (TypeError, ValueError):
            cell = None
        key = (base, json.dumps(overrides, sort_keys=True), None if cell is None else cell.key, best)
        if key not in scoped:
            config = config_now(base, overrides, best)
            scoped[key] = None if config is None else scoped_config(experiment, config, cell)
        return scoped[key]

    def expect(record: RunRecord, row: dict) -> Expected | None:
        if row["superseded"]:
            return None
        if record.settings is None:
            return Expected()
        base, overrides = row["profile"].split("+", 1)[0], record.settings.get("overrides", {})
        config = scoped_now(base, overrides, row)
        if config is None:
            return Expected(gone=f"its profile {base} is gone or no longer validates")
        tuned = scoped_now(base, overrides, row, best=True)
        return Expected(settings={"config": config}, tuned=None if tuned is None else {"config": tuned})

    return expect


def row_freshness(spec: ExperimentSpec, frame: pd.DataFrame, folder: Path | None = None, *, code: bool = True,
                  settings: bool = True) -> pd.Series:
    """Per row, its :class:`~fyexp.store.provenance.freshness.Freshness` (``folder``: the experiment's results
    folder); ``code``/``settings`` false leave that axis unjudged."""
    expectation = spec_expectation(spec, Path(folder).parent) if settings and folder is not None else None
    return frame_freshness(frame, folder, getattr(spec, "name", None), expectation, code=code)


def row_states(spec: ExperimentSpec, frame: pd.DataFrame, folder: Path | None = None) -> pd.Series:
    """Per row, the code axis of :func:`row_freshness`: the ``freshness`` column of the report's and claims' frames."""
    return code_column(row_freshness(spec, frame, folder, settings=False))


def settings_changed(spec: ExperimentSpec, frame: pd.DataFrame, folder: Path | None) -> pd.Series:
    """Per row, the settings axis of :func:`row_freshness`: ``True`` (other settings than the spec now asks),
    ``False`` or ``None`` (cannot tell)."""
    if folder is None or frame.empty:
        return pd.Series([None] * len(frame), index=frame.index, dtype=object)
    return settings_column(row_freshness(spec, frame, folder, code=False))
