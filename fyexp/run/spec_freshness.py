"""What each row's cell would run at now, from its spec: the expectation that
:func:`fyexp.store.provenance.freshness.judge` compares the rows' run records with, for the report and the claims (the
spec layer's half of the one freshness rule; the store cannot import the specs)."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from fyexp.store.provenance.freshness import Expected, frame_freshness
from fyexp.store.provenance.record import RunRecord

if TYPE_CHECKING:
    import pandas as pd

    from fyexp.spec.specs import ExperimentSpec

_EXPECTATIONS: dict[tuple, Callable] = {}   # (id(spec), results folder) → its expectation (which holds the spec)


def spec_expectation(spec: ExperimentSpec, results_dir: Path | None = None
                     ) -> Callable[[RunRecord, dict], Expected | None] | None:
    """``(record, row) -> Expected`` for the rows of ``spec``'s experiment, ``None`` when its runner cannot be loaded;
    ``results_dir``: the folder whose tuning studies say what ``run --best`` runs at (``None``: the spec only).  One
    per spec object and folder for the process (it holds its spec, so the id is not reused), caching what it
    resolves: the report's counts and the claims' current rows compare each row's settings once."""
    if (key := (id(spec), None if results_dir is None else str(results_dir))) in _EXPECTATIONS:
        return _EXPECTATIONS[key]
    from fyexp.core.errors import FyexpError
    from fyexp.spec.settings import scoped_config
    from fyexp.spec.specs import Override, resolve
    from fyexp.spec.tuning import with_best
    from fyexp.store.results import Cell

    try:
        from fyexp.experiments import get_settings_scope

        experiment = get_settings_scope(spec.runner)  # Config and cell_config, no runner import
        config_cls = experiment.Config
    except (FyexpError, ImportError):
        return None

    @functools.cache
    def config_now(base: str, overrides: str, best: bool):
        """The profile's config now with the ``overrides`` (JSON; ``best``: with its tuning study's best parameters),
        ``None`` where it is gone, no longer validates or has no study yet."""
        try:
            sets = [Override(k, v, str(v)) for k, v in json.loads(overrides).items()]
            now = resolve(spec, base, config_cls, None, sets)
            if not best or (results_dir is not None and getattr(now.config, "search", None)):
                return (with_best(now, results_dir) if best else now).config
        except FyexpError:
            pass
        return None

    @functools.cache
    def scoped_now(base: str, overrides: str, method, seed, params, best: bool = False) -> dict | None:
        try:
            cell = Cell(str(method), int(seed), json.loads(params) if isinstance(params, str) else {})
        except (TypeError, ValueError):
            cell = None
        config = config_now(base, overrides, best)
        return None if config is None else scoped_config(experiment, config, cell)

    def expect(record: RunRecord, row: dict) -> Expected | None:
        if row["superseded"]:
            return None
        if record.settings is None:
            return Expected()
        base = row["profile"].split("+", 1)[0]
        asked = (base, json.dumps(record.settings.get("overrides", {}), sort_keys=True), row["method"], row["seed"],
                 row["params"])
        if (config := scoped_now(*asked)) is None:
            return Expected(gone=f"its profile {base} is gone or no longer validates")
        tuned = scoped_now(*asked, best=True)
        return Expected(settings={"config": config}, tuned=None if tuned is None else {"config": tuned})

    _EXPECTATIONS[key] = expect
    return expect


def row_freshness(spec: ExperimentSpec, frame: pd.DataFrame, folder: Path | None = None, *, code: bool = True,
                  settings: bool = True) -> pd.Series:
    """Per row of ``spec``'s experiment, its :class:`Freshness` (:func:`frame_freshness`; ``folder``: the
    experiment's results folder, whose parent holds its tuning studies); ``code``/``settings`` false leave that axis
    unjudged (:func:`code_column` and :func:`settings_column` read one axis)."""
    expectation = spec_expectation(spec, Path(folder).parent) if settings and folder is not None else None
    return frame_freshness(frame, folder, getattr(spec, "name", None), expectation, code=code)
