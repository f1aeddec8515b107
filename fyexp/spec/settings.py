"""A cell's settings, part of its identity (a cell is finished only where a finished file exists for the same
settings): everything besides the code that decides its numbers — the runner's ``Config`` after profile merging and
``--set`` overrides, scoped to the cell; the overrides themselves; ``method``, ``params`` and ``seed``; the
experiment's cheap ``data_identity`` (sizes of the files it reads); the device kind and the torch and numpy versions.

Every row carries their :func:`settings_hash` and its run record states them in full; whether they changed is one
rule, :func:`fyexp.store.provenance.freshness.settings_state`, for ``run``, the report and the claims alike.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from fyexp.store.plain import jsonable  # noqa: F401  (runners import it from here too)
from fyexp.store.provenance.freshness import Expected
from fyexp.store.provenance.record import settings_hash

__all__ = ["cell_settings", "data_identity", "environment", "expectation", "expected_settings", "jsonable",
           "scoped_config", "settings_hash"]


@functools.lru_cache(maxsize=None)
def _versions() -> dict:
    import numpy
    import torch

    return {"torch": torch.__version__, "numpy": numpy.__version__}


def environment(device: str) -> dict:
    """The part of the machine that decides numerics: device kind, torch and numpy versions."""
    return {"device_kind": str(device).split(":", 1)[0], **_versions()}


def scoped_config(experiment: Any, config: Any, cell: Any) -> Any:
    """The part of ``config`` that decides ``cell``'s numbers, as JSON: the experiment's (or its light config
    module's) ``cell_config(config, cell)`` (by default the config less the grid listing, whose values the cell
    carries in its ``params``), so adding a value to an axis changes no other cell's settings.  Without an experiment
    (or a cell): the whole config."""
    return jsonable(config if experiment is None or cell is None else experiment.cell_config(config, cell))


def training_epochs(config: Any, params: Any = None) -> int | None:
    """The training epochs a cell's scoped config (JSON) states: with an ``epochs_by_dataset`` mapping beside a
    top-level ``epochs`` (vr-bnn), the entry of ``params['dataset']``, else that ``epochs``; otherwise the ``epochs``
    of its first ``train*`` block that has one, else a top-level ``epochs``; ``None`` where it states none."""
    if not isinstance(config, dict):
        return None
    by_dataset = config.get("epochs_by_dataset")
    if isinstance(by_dataset, dict) and _whole(config.get("epochs")):
        dataset = params.get("dataset") if isinstance(params, dict) else None
        value = by_dataset.get(dataset) if isinstance(dataset, str) else None
        return value if _whole(value) else config["epochs"]
    for key, value in config.items():
        if key.startswith("train") and isinstance(value, dict) and _whole(value.get("epochs")):
            return value["epochs"]
    epochs = config.get("epochs")
    return epochs if _whole(epochs) else None


def cells_training_epochs(scope: Any, config: Any, cells) -> list[int | None]:
    """:func:`training_epochs` of each of ``cells``' config scoped through ``scope`` (the experiment or its light
    config module), derived once per method and parameters (the epochs do not depend on the seed)."""
    first = {(cell.method, cell.params_json): cell for cell in reversed(cells)}   # the first cell of each
    derived = {key: training_epochs(scoped_config(scope, config, cell), cell.params) for key, cell in first.items()}
    return [derived[(cell.method, cell.params_json)] for cell in cells]


def _whole(value: Any) -> bool:
    """An integer that is not a bool (YAML's ``true`` is no epoch count)."""
    return isinstance(value, int) and not isinstance(value, bool)


def cell_settings(resolved: Any, cell: Any, device: str, data: Any = None, experiment: Any = None) -> dict:
    """The settings of ``cell`` of ``resolved`` (a :class:`fyexp.spec.specs.ResolvedSpec`) on ``device``."""
    return {
        "experiment": resolved.name,
        "profile": getattr(resolved, "base_profile", resolved.profile),
        "overrides": {k: jsonable(v) for k, v in getattr(resolved, "overrides", ())},
        "config": scoped_config(experiment, resolved.config, cell),
        "method": cell.method,
        "params": jsonable(cell.params),
        "seed": int(cell.seed),
        "data": jsonable(data),
        "environment": environment(device),
    }


def data_identity(experiment: Any, config: Any, data_dir: Path | None) -> Any:
    """The experiment's cheap identity of its data (``experiment.data_identity``), ``None`` where it has none."""
    return None if experiment is None else experiment.data_identity(config, data_dir)


# ---- what run compares a finished cell with ----------------------------------------------------------------------
def expected_settings(resolved: Any, experiment: Any, cell: Any, device: str, data_dir: Path | None) -> dict:
    """The settings ``cell`` would run at now (:func:`cell_settings` with the experiment's data identity)."""
    return cell_settings(resolved, cell, device, data_identity(experiment, resolved.config, data_dir), experiment)


def expectation(resolved: Any, experiment: Any, cell: Any, device: str, data_dir: Path | None, *,
                settings: dict | None = None, compare_environment: bool = True) -> Expected:
    """What a finished file of ``cell`` is compared with: its :func:`expected_settings` (``settings`` if computed),
    without the environment unless ``compare_environment`` (the device queue: finished elsewhere is finished)."""
    settings = expected_settings(resolved, experiment, cell, device, data_dir) if settings is None else settings
    return Expected(settings={k: v for k, v in settings.items() if compare_environment or k != "environment"})
