"""A cell's settings, part of its identity: everything besides the code that decides its numbers (the scoped config,
the ``--set`` overrides, method, params, seed, the experiment's cheap ``data_identity``, device kind, torch and numpy
versions).  Rows carry their :func:`settings_hash`; whether they changed is
:func:`fyexp.store.provenance.freshness.settings_state`, for ``run``, the report and the claims alike."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from fyexp.store.plain import jsonable  # noqa: F401  (runners import it from here too)
from fyexp.store.provenance.freshness import Expected
from fyexp.store.provenance.record import settings_hash

__all__ = ["cell_settings", "environment", "expectation", "expected_settings", "jsonable",
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
    """The part of ``config`` that decides ``cell``'s numbers, as JSON: ``scope.cell_config(config, cell)`` (by default
    less the grid, whose values the cell's ``params`` carry); without an experiment or a cell, the whole config."""
    return jsonable(config if experiment is None or cell is None else experiment.cell_config(config, cell))


def training_epochs(config: Any, params: Any = None) -> int | None:
    """The training epochs a cell's scoped config (JSON) states: ``epochs_by_dataset[params['dataset']]`` beside a
    top-level ``epochs`` (vr-bnn), else the first ``train*`` block's ``epochs``, else the top-level one, else None."""
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
    """:func:`training_epochs` of each of ``cells`` (scoped through ``scope``), once per method and parameters."""
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


def expected_settings(resolved: Any, experiment: Any, cell: Any, device: str, data_dir: Path | None) -> dict:
    """The settings ``cell`` would run at now (:func:`cell_settings` with the experiment's data identity)."""
    data = None if experiment is None else experiment.data_identity(resolved.config, data_dir)
    return cell_settings(resolved, cell, device, data, experiment)


def expectation(resolved: Any, experiment: Any, cell: Any, device: str, data_dir: Path | None, *,
                settings: dict | None = None, compare_environment: bool = True) -> Expected:
    """What a finished file of ``cell`` is compared with: its (given) :func:`expected_settings`, without the
    environment unless ``compare_environment`` (the device queue: finished elsewhere is finished)."""
    settings = expected_settings(resolved, experiment, cell, device, data_dir) if settings is None else settings
    return Expected(settings={k: v for k, v in settings.items() if compare_environment or k != "environment"})
