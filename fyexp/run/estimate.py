"""The one estimator of run time: a cell's seconds from the recorded cells, read by the plan, ``list``, ``show``,
``reproduce --dry-run``, ``tune`` and the GPU kit.

**Recorded times.**  The finished (``ok``) cells of the experiment at the profile (a variant ``paper+lr=…`` without
times of its own reads its base profile's) in the results folder — its cell files, else its ``results.csv`` — else in
the repository's committed ``results/`` (:func:`committed_results`), else in :data:`PROFILE_TIMES` (the ``quick``
profiles' cells as measured by ``scripts/measure_profiles.py``).  A time recorded on the project's machine (those two)
is multiplied by this machine's speed factor (:func:`recorded_factor`, :mod:`fyexp.run.speed`); a time of the user's
own results folder was recorded here and is taken as it is.  Every estimate is linear in the recorded seconds, so the
``…_as_recorded`` figures (kept in the user cache) are scaled after.

**A cell c** is estimated (:func:`estimate_cells`) from its nearest recorded cells r (:func:`nearest`: those on its
data set, its ``dataset`` parameter where it has one, with the most of its method and parameters):

    estimate = Σ_{cells c} mean over the nearest r of c  of  wall_time_s(r) · E(c) / E(r),

E the training epochs a cell's settings state (:func:`fyexp.spec.settings.training_epochs`: E(c) from the spec now,
E(r) from the run record beside r's cell file), the ratio left out where either is unknown.  No other setting is
scaled: a cell whose nearest recorded cells all differ from it in a setting (other than :data:`REPLICATE_KEYS`) is
estimated from another setting's time, and the estimate says so (*extrapolated*, :func:`extrapolated_text`).  A cell
with no recorded cell on its data set is *unestimated*: a time measured on other data is no estimate.

**Scaled, for the unestimated cells** (VR Table 1's MNIST cells, every frac-vae cell at ``paper``: GPU-sized runs that
never ran here), as an extrapolation: the same experiment's cells at another profile ran the same code on the same
data, only on less of it.  A recorded cell's wall time split into training, T_train(r) (its ``train_time_s`` row, else
``epoch_time_s`` × its epochs, :func:`training_seconds`), and the rest,

    T(c) = T_train(r) · E(c) N(c) / (E(r) N(r))  +  (wall(r) − T_train(r)) · V(c) / V(r)      (:func:`scaled_time`)

N the training examples per epoch and V the units of evaluation, from the experiment's
:meth:`~fyexp.experiments.base.Experiment.work` at the scoped config each cell's settings state; r among c's nearest
records of the one profile that trained the most (E·N).  Where an experiment's work counts all that differs between
data sets (vr-bnn), a cell on a data set no record used is scaled from the records nearest in work
(:func:`nearest_in_work`).  ``scripts/check_scaled_estimates.py`` compares such estimates with cells that did run.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, NamedTuple

from fyexp.core.words import duration
from fyexp.experiments.base import CellWork

# parameters that only say which replicate a cell is (its split of the data): the cell's time does not depend on them
# (the seed is no parameter); ``epochs`` is scaled by the epochs ratio instead
REPLICATE_KEYS = frozenset({"fold", "epochs"})
#: the wall times of each experiment's ``quick`` profile measured on the project's machine (one run of each,
#: ``scripts/measure_profiles.py``): the estimate of a profile that no results folder holds cells of
PROFILE_TIMES = Path(__file__).resolve().parents[1] / "reference" / "profile_times.csv"


def committed_results() -> Path:
    """The repository's own ``results/`` (beside the ``fyexp`` package of a checkout)."""
    return Path(__file__).resolve().parents[2] / "results"


def _folders(results_dir: Path) -> list[Path]:
    """The folders recorded times are read from, in order: the results folder, then the committed ``results/``."""
    return [Path(results_dir)] + ([committed_results()] if committed_results() != Path(results_dir).resolve() else [])


class Recorded(NamedTuple):
    """One finished cell's time: its method, ``wall_time_s``, the training epochs its run record states and its
    parameters."""
    method: str
    seconds: float
    epochs: int | None = None
    params: dict | None = None


def _params(text: str | None) -> dict:
    import json

    try:
        found = json.loads(text or "{}")
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}


def _number(text: str | None) -> float | None:
    """A csv field as a number; ``None`` where it is empty, not a number or NaN."""
    try:
        value = float(text or "nan")
    except ValueError:
        return None
    return value if value == value else None


def _finished_times(rows, profile: str, epochs: int | None = None) -> list[Recorded]:
    """One :class:`Recorded` per finished (``ok``) cell among csv ``rows`` at ``profile`` (``epochs`` given to each:
    the rows of one cell file)."""
    cells: dict[str, Recorded] = {}
    for row in rows:
        if row.get("profile") != profile or (row.get("status") or "ok") != "ok":
            continue
        seconds, key = _number(row.get("wall_time_s")), row.get("cell") or str(len(cells))
        if seconds is not None and key not in cells:
            cells[key] = Recorded(row.get("method") or "", seconds, epochs, _params(row.get("params")))
    return list(cells.values())


def stated_epochs(cell_file: Path) -> int | None:
    """The training epochs the run record beside ``cell_file`` states (``None`` without a readable one)."""
    from fyexp.store.provenance.record import stated_settings
    from fyexp.spec.settings import training_epochs

    stated = stated_settings(cell_file)
    return training_epochs(stated.get("config"), stated.get("params")) if stated is not None else None


def csv_rows(path: Path) -> list[dict]:
    """The rows of a cell file or ``results.csv`` for an estimate; none where it cannot be read as one (a FIFO, a
    device or a link is never opened: :func:`fyexp.store.damaged.read_record_text`).

    Read once per process while the file is unchanged (its :func:`fyexp.store.user_cache.file_signature`, a ``stat``;
    a :func:`functools.lru_cache`, as :func:`fyexp.store.damaged.read_json`): ``fyexp list`` estimates every profile of
    an experiment from the same cell files and ``results.csv``.  The rows (dicts) are shared between the calls:
    read them, never change them."""
    from fyexp.store.user_cache import file_signature

    try:
        signature = file_signature(path)
    except OSError:
        return []   # gone, or a link to nothing: nothing to read (read_record_text would say so)
    return list(_csv_rows_once(os.path.abspath(path), signature))


@functools.lru_cache(maxsize=8192)
def _csv_rows_once(path: str, signature: tuple) -> tuple[dict, ...]:
    import csv
    import io

    from fyexp.store.damaged import MAX_TABLE_BYTES, read_record_text

    text, problem = read_record_text(Path(path), MAX_TABLE_BYTES)
    if problem is not None:
        return ()
    try:
        return tuple(csv.DictReader(io.StringIO(text, newline="")))
    except csv.Error:
        return ()


def recorded_times(results_dir: Path, experiment: str, profiles: list[str], *,
                   with_epochs: bool = False) -> tuple[list[Recorded], Path | None]:
    """:func:`times_as_recorded`, each time × :func:`recorded_factor` of the folder it was read from."""
    times, folder = times_as_recorded(results_dir, experiment, profiles, with_epochs=with_epochs)
    factor = recorded_factor(folder)
    return [t._replace(seconds=t.seconds * factor) for t in times], folder


def times_as_recorded(results_dir: Path, experiment: str, profiles: list[str], *,
                      with_epochs: bool = False) -> tuple[list[Recorded], Path | None]:
    """A :class:`Recorded` per finished cell at the first of ``profiles`` with any, from the first folder with any
    (the module's recorded times; cell files, else ``results.csv``), and the folder read (None if none), the seconds
    as recorded.  ``with_epochs``: each cell file's epochs from its run record (``results.csv`` rows state none).

    Plain ``csv`` (no pandas): ``fyexp list`` and ``show`` read it too and stay light."""
    for folder in _folders(results_dir):
        table = None
        for profile in profiles:
            cell_dir = folder / experiment / "cells" / profile
            files = sorted(cell_dir.glob("*.csv")) if cell_dir.is_dir() else []
            times = [t for f in files
                     for t in _finished_times(csv_rows(f), profile, stated_epochs(f) if with_epochs else None)]
            if not times:
                table = csv_rows(folder / experiment / "results.csv") if table is None else table
                times = _finished_times(table, profile)
            if times:
                return times, folder
    profile_times = [t for p in profiles for t in measured_profile_times(experiment, p)]
    return (profile_times, PROFILE_TIMES) if profile_times else ([], None)


def measured_profile_times(experiment: str, profile: str) -> list[Recorded]:
    """The :class:`Recorded` cells of ``experiment`` at ``profile`` in :data:`PROFILE_TIMES` (none where it has
    none): columns experiment, profile, method, params (JSON), epochs and wall_time_s."""
    out = []
    for row in csv_rows(PROFILE_TIMES):
        if row.get("experiment") != experiment or row.get("profile") != profile:
            continue
        try:
            epochs = int(row["epochs"]) if row.get("epochs") else None
        except ValueError:
            continue
        if (seconds := _number(row.get("wall_time_s"))) is not None:
            out.append(Recorded(row.get("method") or "", seconds, epochs, _params(row.get("params"))))
    return out


def _project_times(folder: str | Path) -> bool:
    """Whether ``folder`` holds times recorded on the project's machine: the committed ``results/`` or
    :data:`PROFILE_TIMES`."""
    return Path(folder).resolve() in (committed_results().resolve(), PROFILE_TIMES.resolve())


def recorded_factor(folder: str | Path | None) -> float:
    """The factor on the wall times read from ``folder``: this machine's speed
    (:func:`fyexp.run.speed.machine_speed`) for the times recorded on the project's machine (:func:`_project_times`),
    1 for those of another results folder (recorded here)."""
    if folder is None or not _project_times(folder):
        return 1.0
    from fyexp.run.speed import machine_speed

    return machine_speed().factor


def source_text(folder: str | Path | None) -> str:
    """Where recorded times come from, in words: ``in DIR`` for a results folder of this machine, ``in results/,
    recorded on the project's machine, × 0.64 for this machine's speed (calibration)`` for the project's times."""
    if not folder:
        return ""
    if not _project_times(folder):
        return f"in {folder}"
    from fyexp.run.speed import machine_speed, speed_text

    where = "fyexp's measured profile times" if Path(folder).resolve() == PROFILE_TIMES.resolve() else str(folder)
    return f"in {where}, recorded on the project's machine, {speed_text(machine_speed())}"


def recorded_inputs(results_dir: Path, experiments_dir: Path | None) -> tuple | None:
    """The key of what is derived from the recorded times as recorded (:func:`fyexp.run.derivation.derivation_inputs`
    of the results folder and the committed ``results/``; not this machine's speed: ``fyexp list`` and ``show`` keep
    their summaries so, and scale them when they print, so a new calibration keeps them)."""
    from fyexp.run.derivation import derivation_inputs

    return derivation_inputs([results_dir, committed_results()], experiments_dir)


def nearest(method: str, params: dict | None, times: list) -> list:
    """The recorded cells nearest to a cell of ``method`` and ``params``: those on its data set (``dataset``; all,
    where the cell names none) with the most of its method and parameters equal; none when none is on its data set."""
    params = params or {}
    if "dataset" in params:
        times = [t for t in times if (t.params or {}).get("dataset") == params["dataset"]]
    if not times:
        return []

    def shared(t) -> int:
        return (t.method == method) + sum((t.params or {}).get(k) == v for k, v in params.items())

    scores = [shared(t) for t in times]
    best = max(scores)
    return [t for t, score in zip(times, scores) if score == best]


def nearest_once(times: list) -> Callable[[str, dict | None], list]:
    """:func:`nearest` over the same recorded cells ``times``, found once per distinct method and parameters (a
    profile's seeds repeat every cell's parameters: frac-vae's 528 paper cells are 53 distinct ones).  The lists
    it returns are shared: read them, never change them."""
    found: dict = {}

    def find(method: str, params: dict | None) -> list:
        try:
            key = (method, repr(sorted((params or {}).items())))
        except TypeError:   # parameters whose names do not sort: found every time
            return nearest(method, params, times)
        if key not in found:
            found[key] = nearest(method, params, times)
        return found[key]

    return find


class CellsEstimate(NamedTuple):
    """:func:`estimate_cells` of some cells: their estimated seconds (``None`` when none of them has a nearest
    recorded cell), the positions of those without (*unestimated*), how many are estimated from recorded cells that
    all differ from them in a setting (*extrapolated*) and those settings (sorted)."""
    seconds: float | None
    unestimated: tuple[int, ...]
    extrapolated: int
    keys: tuple[str, ...]


def estimate_cells(methods: list[str], times: list[Recorded], epochs: list[int | None] | None = None,
                   params: list[dict] | None = None) -> CellsEstimate:
    """The one estimate of the time of some cells (``methods[i]``, ``params[i]``, ``epochs[i]`` each), from recorded
    cells ``times`` (the module's formula): Σ over the cells that have nearest recorded cells of their mean time,
    each scaled by the epochs ratio where both are known; a cell whose nearest all differ from it in some parameter
    (:data:`REPLICATE_KEYS` aside) is counted extrapolated, with those parameters."""
    times = [Recorded(*t) for t in times]
    total, unestimated, extrapolated, keys = 0.0, [], 0, set()
    find = nearest_once(times)
    for i, method in enumerate(methods):
        cell_params = (params[i] if params is not None else None) or {}
        pool = find(method, cell_params)
        if not pool:
            unestimated.append(i)
            continue
        cell_epochs = epochs[i] if epochs is not None else None
        total += sum(t.seconds * cell_epochs / t.epochs if cell_epochs and t.epochs else t.seconds
                     for t in pool) / len(pool)
        missing = {k for k, v in cell_params.items()
                   if k not in REPLICATE_KEYS and all((t.params or {}).get(k) != v for t in pool)}
        if missing:
            extrapolated += 1
            keys |= missing
    seconds = 0.0 if not methods else (float(total) if len(unestimated) < len(methods) else None)
    return CellsEstimate(seconds, tuple(unestimated), extrapolated, tuple(sorted(keys)))


def per_cell(estimate_s: float | None, to_run: int, unestimated: int) -> float | None:
    """The estimate per cell to run; ``None`` when it is unknown for any of them."""
    return None if estimate_s is None or not to_run or unestimated else estimate_s / to_run


# ---- in words ----------------------------------------------------------------------------------------------------
def unknown_text(recorded: int) -> str:
    """``estimate unknown (no finished cell of this profile recorded[ on these data])``: the plan's and ``show``'s."""
    return "estimate unknown (no finished cell of this profile recorded" + (" on these data)" if recorded else ")")


def extrapolated_text(count: int, keys: tuple[str, ...]) -> str:
    """``3 of them at another K than any recorded cell`` (empty when ``count`` is 0): an estimate's extrapolated
    cells in words, as the plan, ``fyexp show`` and ``reproduce --dry-run`` print them."""
    return f"{count} of them at another {', '.join(keys)} than any recorded cell" if count else ""


def scaled_text(seconds: float | None, count: int, profiles: tuple[str, ...]) -> str:
    """``about 706 h for 14 of them, scaled from the 'cpu' profile's cells by training examples and evaluation
    samples (an extrapolation)`` (``the 'claims' and 'cpu' profiles' cells``): :func:`with_scaled`'s figure in words;
    empty when ``count`` is 0."""
    if not count or seconds is None:
        return ""
    names = [f"'{p}'" for p in profiles]
    named = " and ".join([", ".join(names[:-1]), names[-1]] if len(names) > 1 else names)
    whose = "profiles'" if len(names) > 1 else "profile's"
    return (f"about {duration(seconds)} for {count} of them, scaled from the {named} {whose} cells by training "
            f"examples and evaluation samples (an extrapolation)")


# ---- scaled from another profile's cells -------------------------------------------------------------------------
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
    wall = _number(ok[0].get("wall_time_s")) if ok else None
    if wall is None:
        return None
    values = {r.get("metric"): _number(r.get("value")) for r in ok}
    return CellTimes(ok[0].get("method") or "", _params(ok[0].get("params")), wall, values.get("train_time_s"),
                     values.get("epoch_time_s"), ok[0].get("device") or "")


def scaled_records(results_dir: Path, name: str, experiment: Any, skip_profiles: list[str]) -> list[ScaledRecord]:
    """:func:`records_as_recorded`, their seconds × :func:`recorded_factor` of the folder they were read from."""
    found, folder = records_as_recorded(results_dir, name, experiment, skip_profiles)
    factor = recorded_factor(folder)
    return [replace(r, train_s=r.train_s * factor, rest_s=r.rest_s * factor) for r in found]


def records_as_recorded(results_dir: Path, name: str, experiment: Any, skip_profiles: list[str]
                        ) -> tuple[list[ScaledRecord], Path | None]:
    """The finished cells of experiment ``name`` at every profile but ``skip_profiles``, from the cell files and
    run records under ``cells/`` of the first folder with any (:func:`_folders`), each with the work
    :meth:`experiment.work` gives its stated config and its seconds as recorded; and the folder read (``None`` where
    none has any).  Cells without a run record, a training time or a declared work are left out."""
    from fyexp.store.provenance.record import stated_settings
    from fyexp.spec.settings import training_epochs

    for folder in _folders(results_dir):
        found = []
        cell_root = folder / name / "cells"
        for profile_dir in sorted(p for p in cell_root.glob("*") if p.is_dir() and p.name not in skip_profiles):
            for cell_file in sorted(profile_dir.glob("*.csv")):
                times = cell_times(csv_rows(cell_file))
                stated = stated_settings(cell_file)
                if times is None or stated is None:
                    continue
                config = stated.get("config")
                epochs = training_epochs(config, times.params)
                work = experiment.work(config, times.params) if isinstance(config, dict) else None
                train_s = training_seconds(times.train_time, times.epoch_time, epochs)
                if not epochs or work is None or min(work) <= 0 or train_s is None:
                    continue
                found.append(ScaledRecord(profile_dir.name, times.method, times.params, train_s,
                                          max(times.wall - train_s, 0.0), epochs, *work))
        if found:
            return found, folder
    return [], None


def training_seconds(train_time: float | None, epoch_time: float | None, epochs: int | None) -> float | None:
    """A recorded cell's training seconds: its ``train_time_s``, else ``epoch_time_s`` × its epochs; ``None`` where
    neither can be had."""
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
    most; ``None`` without epochs, work or a nearest record.  ``find``: :func:`nearest_once` of ``records``.
    ``across`` (:attr:`~fyexp.experiments.base.Experiment.work_across_datasets`): a cell on a data set no record used
    is scaled from :func:`nearest_in_work` instead."""
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


def scaled_cells_as_recorded(cells, resolved, experiment, results_dir: Path
                             ) -> tuple[float | None, int, tuple[str, ...], Path | None]:
    """:func:`scaled_estimate` of ``cells`` (:class:`fyexp.store.results.Cell`) of the resolved profile ``resolved``,
    each at the scoped config the spec gives it now, from the experiment's recorded cells at every profile but
    ``resolved``'s own and its base profile, in the seconds of the machine that recorded them; and the folder they
    were read from.  ``experiment`` needs only ``cell_config``, ``work`` and ``work_across_datasets``: the runner's
    experiment (the plan) or :class:`LightWork` (``fyexp show``, no runner import); both give the same figure."""
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
    """``plan`` (a :class:`fyexp.run.plan.RunPlan`) with the scaled time of its unestimated cells on this machine
    (unchanged when it has none): :func:`scaled_cells_as_recorded` of them × :func:`recorded_factor`."""
    if not plan.unestimated_cells:
        return plan
    seconds, count, profiles, folder = scaled_cells_as_recorded(plan.unestimated_cells, resolved, experiment,
                                                                results_dir)
    seconds = seconds * recorded_factor(folder) if seconds is not None else None
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
