"""A cell's settings, part of its identity: a cell is finished only if a finished file exists **for the same
settings**.

The settings of a cell are everything besides the code that decides its numbers:

- ``config``: the spec after profile merging and ``--set`` overrides (the runner's validated ``Config``);
- ``overrides``: the ``--set`` overrides themselves (``{}`` for the plain profile);
- ``method``, ``params`` (the cell's grid values) and ``seed``;
- ``data``: the experiment's ``data_identity(config, data_dir)`` (cheap: sizes of the files
  it reads), else ``None``;
- ``environment``: the device kind (``cpu``/``cuda``) and the versions of torch and numpy.

:func:`settings_hash` (:mod:`fyexp.store.provenance.record`) is a 12-hex-digit SHA-256 of their canonical JSON; every
row carries it (column ``settings_hash``) and the cell's settings are written readably beside its file, in its run
record (``<cell-key>.record.json``, by :func:`fyexp.store.provenance.record.write_record`, read back only by its
:func:`~fyexp.store.provenance.record.load_record`).  Rows without a hash or without a run record have unknown
provenance:
``run`` redoes their cell.

Whether a cell's settings changed is decided by one rule, :func:`fyexp.store.provenance.freshness.settings_state`, for
``run`` (:func:`expectation`: every key, the machine's environment included), the report and the claims
(:mod:`fyexp.run.spec_freshness`: the config).  When a cell reruns because its settings changed, its old file (and
run record) moves to ``<experiment>/superseded/<profile>/<cell-key>.<old hash>.csv``
(:meth:`fyexp.store.results.ResultStore.supersede`): kept, never averaged with the new rows, and out of ``results.csv``
and the report.
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
def _versions() -> tuple[str, str]:
    import numpy
    import torch

    return torch.__version__, numpy.__version__


def environment(device: str) -> dict:
    """The part of the machine that decides numerics: device kind, torch and numpy versions."""
    torch_version, numpy_version = _versions()
    return {"device_kind": str(device).split(":", 1)[0], "torch": torch_version, "numpy": numpy_version}


def scoped_config(experiment: Any, config: Any, cell: Any) -> Any:
    """The part of ``config`` that decides ``cell``'s numbers, as JSON: the experiment's ``cell_config(config,
    cell)`` (:class:`fyexp.experiments.base.Experiment`, or the runner's light config module: vr-vae: only the
    cell's data set's training block; by default the whole config less the grid listing, whose values the cell
    carries in its ``params``).  So adding a value to an axis, or editing another data set's block, changes no other
    cell's settings.  Without an experiment (or a cell): the whole config."""
    if experiment is None or cell is None:
        return jsonable(config)
    return jsonable(experiment.cell_config(config, cell))


def training_epochs(config: Any, params: Any = None) -> int | None:
    """The training epochs a cell's (scoped) config as JSON states: where it gives them per data set (an
    ``epochs_by_dataset`` mapping beside a top-level ``epochs``, vr-bnn: its runner trains each data set for its own
    count and never reads ``train.epochs``), the entry of the cell's ``params['dataset']``, else that ``epochs``;
    otherwise the ``epochs`` of its first ``train*`` block that has an integer one, else a top-level integer
    ``epochs``; ``None`` where it states none."""
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
    """:func:`training_epochs` of each of ``cells``' scoped config (:func:`scoped_config` through ``scope``: the
    runner's experiment, or its light config module), derived once per method and parameters (a cell's epochs do
    not depend on its seed): the one count every estimate scales recorded times by (the plan's, ``list``'s and
    ``show``'s)."""
    derived: dict = {}
    for cell in cells:
        key = (cell.method, cell.params_json)
        if key not in derived:
            derived[key] = training_epochs(scoped_config(scope, config, cell), cell.params)
    return [derived[(cell.method, cell.params_json)] for cell in cells]

def _whole(value: Any) -> bool:
    """An integer that is not a bool (YAML's ``true`` is no epoch count)."""
    return isinstance(value, int) and not isinstance(value, bool)


def cell_settings(resolved: Any, cell: Any, device: str, data: Any = None, experiment: Any = None) -> dict:
    """The settings of ``cell`` of ``resolved`` (a :class:`fyexp.spec.specs.ResolvedSpec`) on ``device``; ``config`` is
    scoped to the cell by :func:`scoped_config` when the ``experiment`` is given."""
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
    """What a finished file of ``cell`` is compared with (:func:`fyexp.store.provenance.freshness.settings_state`):
    every key of its :func:`expected_settings` (``settings`` when already computed), without the environment where
    ``compare_environment`` is false (the device queue: a cell finished on another machine is finished)."""
    settings = expected_settings(resolved, experiment, cell, device, data_dir) if settings is None else settings
    if not compare_environment:
        settings = {k: v for k, v in settings.items() if k != "environment"}
    return Expected(settings=settings)
