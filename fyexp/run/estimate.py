"""The one estimator of run time: a cell's seconds from the recorded cells, for the plan, ``list``, ``show``,
``reproduce --dry-run``, ``tune`` and the GPU kit.

**Recorded times** (:func:`times_as_recorded`): the finished cells of the experiment at the profile (else its base
profile) in the results folder (cell files, else ``results.csv``), else in the committed ``results/``, else in
:data:`PROFILE_TIMES`.  Every figure is derived as recorded (linear in the seconds: kept in the user cache) and put on
this machine at the edge by :func:`at_speed` (× this machine's speed for the project's times).  A cell c's estimate
(:func:`estimate_cells`) is the mean over its nearest recorded cells r (:func:`nearest`) of

    wall_time_s(r) · E(c) / E(r),

E the training epochs (c's from the spec, r's from its run record; no ratio where either is unknown).  No other setting
is scaled: a cell whose nearest all differ from it in a setting (but :data:`REPLICATE_KEYS`) is *extrapolated*; one
with no recorded cell on its data set is *unestimated* (a time on other data is no estimate).

**Scaled, for the unestimated cells** (GPU-sized runs that never ran here), as an extrapolation from the cells of
another profile (the same code on less of the same data), T_train(r) its training seconds (:func:`training_seconds`):

    T(c) = T_train(r) · E(c) N(c) / (E(r) N(r))  +  (wall(r) − T_train(r)) · V(c) / V(r)      (:func:`scaled_time`)

N the training examples per epoch and V the units of evaluation (:meth:`~fyexp.experiments.base.Experiment.work`),
r among c's nearest records of the one profile that trained the most (E·N); where work counts all that differs
between data sets (vr-bnn), a cell on a data set no record used is scaled from the records of its method (all,
where none is) of the least |log N(r) / N(c)|: the closest in scale (UCI Year's cells from Protein's, not Yacht's,
whose epochs of 277 rows are mostly overhead).
"""

from __future__ import annotations

import csv
import functools
import io
import json
import math
import os
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, NamedTuple

from fyexp.core.words import duration
from fyexp.experiments import get_config_module
from fyexp.experiments.base import CellWork
from fyexp.run.derivation import derivation_inputs
from fyexp.run.speed import machine_speed, speed_text
from fyexp.spec.settings import scoped_config, training_epochs
from fyexp.store import damaged
from fyexp.store.provenance.record import stated_settings
from fyexp.store.user_cache import file_signature

# parameters that only say which replicate a cell is (its split of the data; ``epochs`` is scaled instead)
REPLICATE_KEYS = frozenset({"fold", "epochs"})
#: the ``quick`` profiles' wall times measured on the project's machine (``scripts/measure_profiles.py``)
PROFILE_TIMES = Path(__file__).resolve().parents[1] / "reference" / "profile_times.csv"


def committed_results() -> Path:
    """The repository's own ``results/`` (beside the ``fyexp`` package of a checkout)."""
    return Path(__file__).resolve().parents[2] / "results"


def _folders(results_dir: Path) -> list[Path]:
    """The folders recorded times are read from, in order: the results folder, then the committed ``results/``."""
    return [Path(results_dir)] + ([committed_results()] if committed_results() != Path(results_dir).resolve() else [])


class Recorded(NamedTuple):
    """One finished cell: its method, ``wall_time_s``, training epochs (from its run record) and parameters."""
    method: str
    seconds: float
    epochs: int | None = None
    params: dict | None = None


def _params(text: str | None) -> dict:
    try:
        return found if isinstance(found := json.loads(text or "{}"), dict) else {}
    except ValueError:
        return {}


def _number(text: str | None) -> float | None:
    """A csv field as a number; ``None`` where it is empty, not a number or NaN."""
    try:
        return None if math.isnan(value := float(text or "nan")) else value
    except ValueError:
        return None


def _finished_times(rows, profile: str, epochs: int | None = None) -> list[Recorded]:
    """One :class:`Recorded` per finished (``ok``) cell among csv ``rows`` at ``profile``, each of ``epochs``."""
    cells: dict[str, Recorded] = {}
    for row in rows:
        seconds, key = _number(row.get("wall_time_s")), row.get("cell") or str(len(cells))
        if row.get("profile") == profile and (row.get("status") or "ok") == "ok" and seconds is not None:
            cells.setdefault(key, Recorded(row.get("method") or "", seconds, epochs, _params(row.get("params"))))
    return list(cells.values())


def _stated_epochs(cell_file: Path) -> int | None:
    stated = stated_settings(cell_file)
    return training_epochs(stated.get("config"), stated.get("params")) if stated is not None else None


def csv_rows(path: Path) -> list[dict]:
    """The rows of a csv file (none where :func:`fyexp.store.damaged.read_record_text` refuses it, or it is gone),
    read once while its ``stat`` signature is unchanged; the rows are shared: never change them."""
    try:
        return list(_csv_rows_once(os.path.abspath(path), file_signature(path)))
    except OSError:
        return []


@functools.lru_cache(maxsize=8192)
def _csv_rows_once(path: str, signature: tuple) -> tuple[dict, ...]:
    text, problem = damaged.read_record_text(Path(path), damaged.MAX_TABLE_BYTES)
    try:
        return () if problem is not None else tuple(csv.DictReader(io.StringIO(text, newline="")))
    except csv.Error:
        return ()


def times_as_recorded(results_dir: Path, experiment: str, profiles: list[str]) -> tuple[list[Recorded], Path | None]:
    """The module's recorded times at the first of ``profiles`` with any, and the folder read (``None`` if none);
    each cell file's epochs from its run record (``results.csv`` rows state none)."""
    for folder in _folders(results_dir):
        for profile in profiles:
            times = [t for f in sorted((folder / experiment / "cells" / profile).glob("*.csv"))
                     for t in _finished_times(csv_rows(f), profile, _stated_epochs(f))]
            if times or (times := _finished_times(csv_rows(folder / experiment / "results.csv"), profile)):
                return times, folder
    measured = [t for p in profiles for row in csv_rows(PROFILE_TIMES) if row.get("experiment") == experiment
                for t in _finished_times([row], p, int(row["epochs"]) if row.get("epochs") else None)]
    return (measured, PROFILE_TIMES) if measured else ([], None)


def _project_times(folder: str | Path | None) -> bool:
    """Whether ``folder`` holds times recorded on the project's machine (``results/``, :data:`PROFILE_TIMES`)."""
    return bool(folder) and Path(folder).resolve() in (committed_results().resolve(), PROFILE_TIMES.resolve())


def recorded_factor(folder: str | Path | None) -> float:
    """The factor on the times read from ``folder``: this machine's speed for the project's, else 1 (recorded here)."""
    return machine_speed().factor if _project_times(folder) else 1.0


def at_speed(seconds: float | None, folder: str | Path | None, factor_of=recorded_factor) -> float | None:
    """``seconds`` derived as recorded from ``folder``, on this machine (× ``factor_of(folder)``; ``None`` stays)."""
    return None if seconds is None else seconds * factor_of(folder or None)


def source_text(folder: str | Path | None) -> str:
    """Where recorded times come from, in words: ``in DIR``, or the project's times with :func:`speed_text`."""
    if not _project_times(folder):
        return f"in {folder}" if folder else ""
    where = "fyexp's measured profile times" if Path(folder).resolve() == PROFILE_TIMES.resolve() else str(folder)
    return f"in {where}, recorded on the project's machine, {speed_text(machine_speed())}"


def recorded_inputs(results_dir: Path, experiments_dir: Path | None) -> tuple | None:
    """The key of what is derived from the recorded times as recorded (not the machine's speed, applied after)."""
    return derivation_inputs([results_dir, committed_results()], experiments_dir)


def nearest(method: str, params: dict | None, times: list) -> list:
    """The recorded cells nearest to a cell of ``method`` and ``params``: those on its data set (``dataset``; all,
    where the cell names none) with the most of its method and parameters equal; none when none is on its data set."""
    params = params or {}
    if "dataset" in params:
        times = [t for t in times if (t.params or {}).get("dataset") == params["dataset"]]
    scores = [(t.method == method) + sum((t.params or {}).get(k) == v for k, v in params.items()) for t in times]
    best = max(scores, default=0)
    return [t for t, score in zip(times, scores) if score == best]


def nearest_once(times: list) -> Callable[[str, dict | None], list]:
    """:func:`nearest` over ``times``, once per distinct method and parameters (frac-vae's 528 paper cells are 53
    distinct ones); the lists it returns are shared: never change them."""
    found: dict = {}

    def find(method: str, params: dict | None) -> list:
        key = (method, repr(sorted((params or {}).items())))
        return found[key] if key in found else found.setdefault(key, nearest(method, params, times))

    return find


class CellsEstimate(NamedTuple):
    """Seconds (``None`` for no recorded cell), unestimated cells' positions, extrapolated count and settings."""
    seconds: float | None
    unestimated: tuple[int, ...]
    extrapolated: int
    keys: tuple[str, ...]


def estimate_cells(methods: list[str], times: list[Recorded], epochs: list[int | None] | None = None,
                   params: list[dict] | None = None) -> CellsEstimate:
    """The module's estimate of the cells ``methods[i]``, ``params[i]``, ``epochs[i]`` from ``times``."""
    total, unestimated, extrapolated, keys = 0.0, [], 0, set()
    find = nearest_once([Recorded(*t) for t in times])   # plain tuples too
    for i, method in enumerate(methods):
        cell_params, cell_epochs = (params and params[i]) or {}, epochs and epochs[i]
        if not (pool := find(method, cell_params)):
            unestimated.append(i)
            continue
        total += sum(t.seconds * cell_epochs / t.epochs if cell_epochs and t.epochs else t.seconds
                     for t in pool) / len(pool)
        missing = {k for k, v in cell_params.items()
                   if k not in REPLICATE_KEYS and all((t.params or {}).get(k) != v for t in pool)}
        extrapolated, keys = extrapolated + bool(missing), keys | missing
    seconds = 0.0 if not methods else (float(total) if len(unestimated) < len(methods) else None)
    return CellsEstimate(seconds, tuple(unestimated), extrapolated, tuple(sorted(keys)))


def per_cell(estimate_s: float | None, to_run: int, unestimated: int) -> float | None:
    """The estimate per cell to run; ``None`` when it is unknown for any of them."""
    return None if estimate_s is None or not to_run or unestimated else estimate_s / to_run


# ---- in words (the plan's, ``fyexp show``'s and ``reproduce --dry-run``'s) ---------------------------------------
def unknown_text(recorded: int) -> str:
    return "estimate unknown (no finished cell of this profile recorded" + (" on these data)" if recorded else ")")


def extrapolated_text(count: int, keys: tuple[str, ...]) -> str:
    """``3 of them at another K than any recorded cell``; empty when ``count`` is 0."""
    return f"{count} of them at another {', '.join(keys)} than any recorded cell" if count else ""


def scaled_text(seconds: float | None, count: int, profiles: tuple[str, ...]) -> str:
    """``about 706 h for 14 of them, scaled from the 'cpu' profile's cells by …``; empty when ``count`` is 0."""
    if not count or seconds is None:
        return ""
    names = [f"'{p}'" for p in profiles]
    named = f"{', '.join(names[:-1])} and {names[-1]} profiles'" if len(names) > 1 else f"{names[0]} profile's"
    return (f"about {duration(seconds)} for {count} of them, scaled from the {named} cells by training "
            f"examples and evaluation samples (an extrapolation)")


# ---- scaled from another profile's cells -------------------------------------------------------------------------
class ScaledRecord(NamedTuple):
    """A finished cell of another profile, split for scaling: training and other seconds, epochs and work."""
    profile: str
    method: str
    params: dict
    train_s: float
    rest_s: float
    epochs: int
    train_examples: float
    eval_units: float


class CellTimes(NamedTuple):
    """One finished cell's times as its rows state them (``None`` where they state none)."""
    method: str
    params: dict
    wall: float
    train_time: float | None
    epoch_time: float | None
    device: str


def cell_times(rows: list[dict]) -> CellTimes | None:
    """The :class:`CellTimes` of one cell's rows; ``None`` where no row is finished or none states a wall time."""
    ok = [r for r in rows if (r.get("status") or "ok") == "ok"]
    if not ok or (wall := _number(ok[0].get("wall_time_s"))) is None:
        return None
    values = {r.get("metric"): _number(r.get("value")) for r in ok}
    return CellTimes(ok[0].get("method") or "", _params(ok[0].get("params")), wall, values.get("train_time_s"),
                     values.get("epoch_time_s"), ok[0].get("device") or "")


def records_as_recorded(results_dir: Path, name: str, experiment: Any, skip_profiles: list[str]
                        ) -> tuple[list[ScaledRecord], Path | None]:
    """The cell files of ``name`` at every profile but ``skip_profiles`` that state a run record, a training time and
    a work, from the first folder with any, and that folder (``None`` where none has any)."""
    for folder in _folders(results_dir):
        found = []
        files = (folder / name / "cells").glob("*/*.csv")
        for cell_file in sorted(f for f in files if f.parent.name not in skip_profiles):
            times, stated = cell_times(csv_rows(cell_file)), stated_settings(cell_file)
            if times is None or stated is None:
                continue
            config = stated.get("config")
            epochs = training_epochs(config, times.params)
            work = experiment.work(config, times.params) if isinstance(config, dict) else None
            train_s = training_seconds(times.train_time, times.epoch_time, epochs)
            if epochs and work is not None and min(work) > 0 and train_s is not None:
                found.append(ScaledRecord(cell_file.parent.name, times.method, times.params, train_s,
                                          max(times.wall - train_s, 0.0), epochs, *work))
        if found:
            return found, folder
    return [], None


def training_seconds(train_time: float | None, epoch_time: float | None, epochs: int | None) -> float | None:
    """A recorded cell's training seconds: its ``train_time_s``, else ``epoch_time_s`` × its epochs, else ``None``."""
    return train_time if train_time is not None else epoch_time * epochs if epoch_time is not None and epochs else None


def scaled_time(train_s: float, rest_s: float, epochs: int, work, target_epochs: int, target_work) -> float:
    """The module's T(c) of a recorded cell of ``epochs`` and ``work`` for ``target_epochs`` of ``target_work``."""
    return (train_s * (target_epochs * target_work.train_examples) / (epochs * work.train_examples)
            + rest_s * target_work.eval_units / work.eval_units)


def scaled_cell_estimate(method: str, params: dict, epochs: int | None, work, records: list[ScaledRecord],
                         find=None, across: bool = False) -> tuple[float, str] | None:
    """``(seconds, profile)``: the module's T(c) (``find``: :func:`nearest_once` of ``records``; ``across``:
    ``work_across_datasets``); ``None`` without epochs, work or a nearest record."""
    if not epochs or work is None:
        return None
    if not (pool := (find or nearest_once(records))(method, params)) and across and work.train_examples > 0:
        mine = [r for r in records if r.method == method] or records     # the closest in scale (module text)
        distance = [abs(math.log(r.train_examples / work.train_examples)) for r in mine]
        pool = [r for r, d in zip(mine, distance) if d == min(distance)]
    if not pool:
        return None
    profile = max(pool, key=lambda r: (r.epochs * r.train_examples, r.profile)).profile
    seconds = [scaled_time(r.train_s, r.rest_s, r.epochs, CellWork(r.train_examples, r.eval_units), epochs, work)
               for r in pool if r.profile == profile]
    return sum(seconds) / len(seconds), profile


def scaled_estimate(cells: list[tuple[str, dict, int | None, Any]], records: list[ScaledRecord],
                    across: bool = False) -> tuple[float | None, int, tuple[str, ...]]:
    """``(seconds, count, profiles)``: :func:`scaled_cell_estimate` summed over the ``cells`` (``(method, params,
    epochs, work)``) that have one (``None`` when none has), how many, and the profiles scaled from."""
    find = nearest_once(records)
    found = [f for m, p, e, w in cells if (f := scaled_cell_estimate(m, p, e, w, records, find, across)) is not None]
    return (sum(s for s, _ in found) if found else None), len(found), tuple(sorted({p for _, p in found}))


def scaled_cells_as_recorded(cells, resolved, experiment, results_dir: Path
                             ) -> tuple[float | None, int, tuple[str, ...], Path | None]:
    """:func:`scaled_estimate` of ``cells`` at the config the spec gives them, from the profiles but theirs and its
    base, as recorded, and the folder; ``experiment``: the runner's (plan) or a :class:`LightWork` (``show``)."""
    if not cells:
        return None, 0, (), None

    derived: dict = {}   # a cell's epochs and work do not depend on its seed: derived once per method and params
    for c in cells:
        if (key := (c.method, c.params_json)) not in derived:
            config = scoped_config(experiment, resolved.config, c)
            derived[key] = training_epochs(config, c.params), experiment.work(config, c.params)
    todo = [(c.method, c.params, *derived[c.method, c.params_json]) for c in cells]
    skip = list(dict.fromkeys([resolved.profile, getattr(resolved, "base_profile", resolved.profile)]))
    records, folder = records_as_recorded(results_dir, resolved.name, experiment, skip)
    return (*scaled_estimate(todo, records, experiment.work_across_datasets), folder)


def with_scaled(plan, resolved, experiment, results_dir: Path):
    """``plan`` (a :class:`fyexp.run.plan.RunPlan`) with the scaled time of its unestimated cells on this machine."""
    if not plan.unestimated_cells:
        return plan
    seconds, count, profiles, folder = scaled_cells_as_recorded(plan.unestimated_cells, resolved, experiment,
                                                                results_dir)
    return replace(plan, scaled_s=at_speed(seconds, folder), scaled=count, scaled_from=profiles)


class LightWork:
    """A runner's ``cell_config`` and ``work`` from its light ``<runner>_config`` module: ``fyexp show`` scales cells
    as the plan does without importing the runner (torch)."""

    def __init__(self, module: Any):
        self.cell_config = module.cell_config
        self.work = lambda stated, params: CellWork.of(module.cell_work(stated, params))
        self.work_across_datasets = bool(getattr(module, "WORK_ACROSS_DATASETS", False))

    @classmethod
    def of(cls, runner: str) -> "LightWork | None":
        """The :class:`LightWork` of ``runner``; ``None`` without a light module or a ``cell_work``."""
        module = get_config_module(runner)
        return None if module is None or module.cell_work is None else cls(module)
