"""A time for the cells a plan cannot estimate: scaled from another profile's cells by the work each does.

:func:`fyexp.run.plan.run_plan` estimates a cell from the recorded cells of its own profile on its data set; a cell with
none (VR Table 1's MNIST cells and every frac-vae cell at ``paper``: GPU-sized runs that never ran here) is left
unknown there.  Its cost can still be stated, as an extrapolation: the same experiment's cells at another profile
(``cpu``, ``claims``) ran the same code on the same data set, only on less of it, for fewer epochs, with fewer
evaluation samples.  Splitting a recorded cell r's wall time into training, T_train(r) (its ``train_time_s`` row,
else ``epoch_time_s`` × its epochs), and the rest (evaluation, data loading, figures), a cell c is estimated at

    T(c) = T_train(r) · E(c) N(c) / (E(r) N(r))  +  (wall(r) − T_train(r)) · V(c) / V(r),

E the training epochs (:func:`fyexp.spec.settings.training_epochs`), N the training examples per epoch and V the units
of evaluation (test points × samples), N and V from the experiment's :meth:`~fyexp.experiments.base.Experiment.work`
at the scoped config each cell's settings state (its run record for r, the spec now for c).  The recorded cells
used are those :func:`fyexp.run.plan.nearest` to c (its data set, the most of its method and parameters), of the one
profile among them that trained the most (E·N): the closest in scale.  Everything else is assumed equal — the
device, the per-example cost (batch size, samples per example, network width) — and the plan says that this is
an extrapolation, from which profile.  Where an experiment's work counts all that differs between data sets (vr-bnn:
rows, features, width, samples, splits), a cell on a data set no record used (UCI Year, whose data no machine of the
project has) is scaled from the records nearest in work on another (:func:`nearest_in_work`).
``scripts/check_scaled_estimates.py`` compares such estimates with the
cells of a profile that did run (Caltech and Frey Face at ``paper`` from their ``cpu`` cells).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from fyexp.experiments.base import CellWork
from fyexp.run.plan import _csv_rows, committed_results, nearest, nearest_once, recorded_factor


@dataclass(frozen=True)
class ScaledRecord:
    """A finished cell of another profile, split for scaling: training and other seconds, epochs and work."""

    profile: str
    method: str
    params: dict
    train_s: float
    rest_s: float
    epochs: int
    train_examples: float
    eval_units: float

    @property
    def trained(self) -> float:
        """E·N: the training examples it processed."""
        return self.epochs * self.train_examples


def _cell_times(rows: list[dict]) -> tuple[str, dict, float, float | None, float | None] | None:
    """``(method, params, wall seconds, train_time_s, epoch_time_s)`` of one finished cell's rows (either time
    ``None`` where the rows state none); ``None`` where no row is finished or none states a wall time."""
    from fyexp.run.plan import _params

    ok = [r for r in rows if (r.get("status") or "ok") == "ok"]
    if not ok:
        return None

    def number(text: str | None) -> float | None:
        try:
            value = float(text or "nan")
        except ValueError:
            return None
        return value if value == value else None

    values = {r.get("metric"): number(r.get("value")) for r in ok}
    wall = number(ok[0].get("wall_time_s"))
    if wall is None:
        return None
    return ok[0].get("method") or "", _params(ok[0].get("params")), wall, values.get("train_time_s"), \
        values.get("epoch_time_s")


def scaled_records(results_dir: Path, name: str, experiment: Any, skip_profiles: list[str]) -> list[ScaledRecord]:
    """:func:`records_as_recorded`, their seconds × :func:`fyexp.run.plan.recorded_factor` of the folder they were read
    from (this machine's speed, for the committed times)."""
    found, folder = records_as_recorded(results_dir, name, experiment, skip_profiles)
    factor = recorded_factor(folder)
    return [replace(r, train_s=r.train_s * factor, rest_s=r.rest_s * factor) for r in found]


def records_as_recorded(results_dir: Path, name: str, experiment: Any, skip_profiles: list[str]
                        ) -> tuple[list[ScaledRecord], Path | None]:
    """The finished cells of experiment ``name`` at every profile but ``skip_profiles``, from the cell files and
    run records under ``cells/`` of the results folder, else of the committed ``results/`` (the first with any),
    each with the work :meth:`experiment.work` gives its stated config and its seconds as recorded; and the folder
    read (``None`` where none has any).  Cells without a run record, a training time or a declared work are left
    out."""
    from fyexp.store.provenance.record import stated_settings
    from fyexp.spec.settings import training_epochs

    folders = [Path(results_dir)]
    if committed_results() != Path(results_dir).resolve():
        folders.append(committed_results())
    for folder in folders:
        found = []
        cell_root = folder / name / "cells"
        for profile_dir in sorted(p for p in cell_root.glob("*") if p.is_dir() and p.name not in skip_profiles):
            for cell_file in sorted(profile_dir.glob("*.csv")):
                times = _cell_times(_csv_rows(cell_file))
                stated = stated_settings(cell_file)
                if times is None or stated is None:
                    continue
                method, params, wall, train_time, epoch_time = times
                config = stated.get("config")
                epochs = training_epochs(config, params)
                work = experiment.work(config, params) if isinstance(config, dict) else None
                train_s = training_seconds(train_time, epoch_time, epochs)
                if not epochs or work is None or min(work) <= 0 or train_s is None:
                    continue
                found.append(ScaledRecord(profile_dir.name, method, params, train_s, max(wall - train_s, 0.0),
                                          epochs, *work))
        if found:
            return found, folder
    return [], None


def training_seconds(train_time: float | None, epoch_time: float | None, epochs: int | None) -> float | None:
    """A recorded cell's training seconds: its ``train_time_s``, else ``epoch_time_s`` × its epochs; ``None`` where
    neither can be had.  (The GPU kit's estimate splits a recorded time the same way.)"""
    if train_time is not None:
        return train_time
    return epoch_time * epochs if epoch_time is not None and epochs else None


def scaled_time(train_s: float, rest_s: float, epochs: int, work, target_epochs: int, target_work) -> float:
    """The module's T(c): a recorded cell's training seconds ``train_s`` over ``epochs`` epochs of ``work``
    (:class:`~fyexp.experiments.base.CellWork`) scaled to ``target_epochs`` of ``target_work``, plus its other
    seconds ``rest_s`` scaled by the evaluation units."""
    return (train_s * (target_epochs * target_work.train_examples) / (epochs * work.train_examples)
            + rest_s * target_work.eval_units / work.eval_units)


def scaled_cell_estimate(method: str, params: dict, epochs: int | None, work, records: list[ScaledRecord],
                         find=None, across: bool = False) -> tuple[float, str] | None:
    """``(seconds, profile)``: the module's T(c) for a cell of ``method``, ``params``, ``epochs`` and ``work``
    (:class:`~fyexp.experiments.base.CellWork`), the mean over its nearest records of the profile that trained the
    most; ``None`` without epochs, work or a nearest record.  ``find``: :func:`fyexp.run.plan.nearest_once` of
    ``records`` (the same nearest records, found once for a profile's cells).  ``across`` (an experiment whose work
    counts all that differs between data sets, :attr:`~fyexp.experiments.base.Experiment.work_across_datasets`):
    a cell on a data set no record used is scaled from :func:`nearest_in_work` instead."""
    if not epochs or work is None:
        return None
    pool = find(method, params) if find is not None else nearest(method, params, records)
    if not pool and across:
        pool = nearest_in_work(method, work, records)
    if not pool:
        return None
    profile = max(pool, key=lambda r: (r.trained, r.profile)).profile
    pool = [r for r in pool if r.profile == profile]
    seconds = [scaled_time(r.train_s, r.rest_s, r.epochs, CellWork(r.train_examples, r.eval_units), epochs, work)
               for r in pool]
    return sum(seconds) / len(seconds), profile


def nearest_in_work(method: str, work, records: list[ScaledRecord]) -> list[ScaledRecord]:
    r"""The records of ``method`` (all, where none is) whose training work per epoch is nearest to ``work``'s
    (the least \|log N(r) / N(c)\|): the closest in scale, on whichever data set (UCI Year's cells from Protein's,
    not from Yacht's, whose epochs of 277 rows are mostly overhead)."""
    import math

    pool = [r for r in records if r.method == method] or list(records)
    if not pool or work.train_examples <= 0:
        return []
    distance = {id(r): abs(math.log(r.train_examples / work.train_examples)) for r in pool}
    best = min(distance.values())
    return [r for r in pool if distance[id(r)] == best]


def scaled_estimate(cells: list[tuple[str, dict, int | None, Any]], records: list[ScaledRecord],
                    across: bool = False) -> tuple[float | None, int, tuple[str, ...]]:
    """``(seconds, count, profiles)``: the sum of :func:`scaled_cell_estimate` over ``cells`` (``(method, params,
    epochs, work)`` each) that have one (``None`` when none has), how many have, and the profiles they were scaled
    from (sorted); ``across``: :func:`scaled_cell_estimate`'s."""
    total, count, profiles = 0.0, 0, set()
    find = nearest_once(records)
    for method, params, epochs, work in cells:
        found = scaled_cell_estimate(method, params, epochs, work, records, find, across)
        if found is not None:
            total, count = total + found[0], count + 1
            profiles.add(found[1])
    return (total if count else None), count, tuple(sorted(profiles))


def scaled_cells(cells, resolved, experiment, results_dir: Path) -> tuple[float | None, int, tuple[str, ...]]:
    """:func:`scaled_cells_as_recorded`, its seconds × :func:`fyexp.run.plan.recorded_factor` of the folder its records
    were read from (this machine's speed, for the committed times): the figure of the plan, ``fyexp show`` and
    ``fyexp list`` alike."""
    seconds, count, profiles, folder = scaled_cells_as_recorded(cells, resolved, experiment, results_dir)
    return (seconds * recorded_factor(folder) if seconds is not None else None), count, profiles


def scaled_cells_as_recorded(cells, resolved, experiment, results_dir: Path
                             ) -> tuple[float | None, int, tuple[str, ...], Path | None]:
    """:func:`scaled_estimate` of ``cells`` (:class:`fyexp.store.results.Cell`) of the resolved profile ``resolved``,
    each at the scoped config the spec gives it now, from the experiment's recorded cells at every profile but
    ``resolved``'s own and its base profile, in the seconds of the machine that recorded them (T(c) is linear in them);
    and the folder they were read from.  ``experiment`` needs only ``cell_config``, ``work`` and
    ``work_across_datasets``: the runner's experiment (the plan) or :class:`LightWork` (``fyexp show``, no runner
    import); both give the same figure."""
    from fyexp.spec.settings import scoped_config, training_epochs

    if not cells:
        return None, 0, (), None
    todo, derived = [], {}
    for cell in cells:   # a cell's epochs and work do not depend on its seed: derived once per method and params
        key = (cell.method, cell.params_json)
        if key not in derived:
            config = scoped_config(experiment, resolved.config, cell)
            derived[key] = (training_epochs(config, cell.params), experiment.work(config, cell.params))
        todo.append((cell.method, cell.params, *derived[key]))
    skip = list(dict.fromkeys([resolved.profile, getattr(resolved, "base_profile", resolved.profile)]))
    records, folder = records_as_recorded(results_dir, resolved.name, experiment, skip)
    return (*scaled_estimate(todo, records, experiment.work_across_datasets), folder)


def with_scaled(plan, resolved, experiment, results_dir: Path):
    """``plan`` (a :class:`fyexp.run.plan.RunPlan`) with the scaled time of its unestimated cells (unchanged when it has
    none): :func:`scaled_cells` of them."""
    if not plan.unestimated_cells:
        return plan
    seconds, count, profiles = scaled_cells(plan.unestimated_cells, resolved, experiment, results_dir)
    return replace(plan, scaled_s=seconds, scaled=count, scaled_from=profiles)


class LightWork:
    """A runner's ``cell_config`` and :meth:`~fyexp.experiments.base.Experiment.work` read from its light
    ``<runner>_config`` module (its ``cell_config`` and ``cell_work``, which the runner's experiment wraps), so that
    ``fyexp show`` scales a profile's unestimated cells as the plan does without importing the runner (torch)."""

    def __init__(self, module: Any):
        self.cell_config = module.cell_config
        self._cell_work = module.cell_work
        self.work_across_datasets = bool(getattr(module, "WORK_ACROSS_DATASETS", False))

    def work(self, stated: dict, params: dict) -> CellWork | None:
        """The config module's ``cell_work`` as a :class:`~fyexp.experiments.base.CellWork`."""
        return CellWork.of(self._cell_work(stated, params))

    @classmethod
    def of(cls, runner: str) -> "LightWork | None":
        """The :class:`LightWork` of ``runner``; ``None`` where it has no light module or its module's ``cell_work``
        is None (its cells' times are never scaled: the plan's experiment declares no work either)."""
        from fyexp.experiments import get_config_module

        module = get_config_module(runner)
        if module is None or module.cell_work is None:
            return None
        return cls(module)


__all__ = ["LightWork", "ScaledRecord", "nearest_in_work", "records_as_recorded", "scaled_cell_estimate",
           "scaled_cells", "scaled_cells_as_recorded", "scaled_estimate", "scaled_records", "scaled_time",
           "training_seconds", "with_scaled"]
