"""The plan of a run, printed before its first cell: what it will run and how long that took before.

For one experiment at one profile (with ``--only`` and ``--force``), :func:`run_plan` counts the grid's cells, those
finished, those to run and, of these, those finished at old settings (:func:`fyexp.run.runner.classify_cells`, the
runner's own classification).  Its estimate is

    estimate = Σ_{cells c to run} mean over the nearest recorded cells r of c  of  wall_time_s(r) · E(c) / E(r).

The recorded cells are the finished (``ok``) cells of the same experiment and profile in the results folder —
else in the repository's committed ``results/``, else in :data:`PROFILE_TIMES` (the ``quick`` profiles' cells as
measured by ``scripts/measure_profiles.py``).  A time recorded on the project's machine (those two) is multiplied by
this machine's speed factor (:func:`recorded_factor`, :mod:`fyexp.run.speed`: a short calibration kept in the user
cache); a time of the user's own results folder was recorded here and is taken as it is.  The nearest of them to c (:func:`nearest`) are on c's data set
(its ``dataset`` parameter, where it has one) and, among those, have the most of c's method and parameters.
E is the training epochs a cell's settings state (:func:`fyexp.spec.settings.training_epochs`: E(c) from the spec now,
E(r) from the run record beside r's cell file), the ratio left out where either is unknown; so a cell rerun because
its epochs changed is estimated at its new length.  No other setting is scaled: a cell whose nearest recorded cells all
differ from it in a setting (other than a replicate's :data:`REPLICATE_KEYS` and the epochs) is estimated from another
setting's time, and the plan says so, naming the setting (:func:`extrapolated_keys`): a K = 50 cell estimated from the
K = 5 cells' times can be several times too short.  The estimate is unknown (``None``) when no cell is recorded, or
when a cell to run has no recorded cell on its data set: a time measured on other data is no estimate.  For such
cells the plan adds, apart and labelled as an extrapolation, a time scaled from another profile's cells on the same
data by the training examples and evaluation samples each cell processes (:func:`fyexp.run.plan_scaled.with_scaled`,
which the run and reproduce commands apply to the plan): what a GPU-sized ``paper`` set would cost on this device.
A variant profile (``paper+lr=…``) without times of its own reads its base profile's.

:func:`long_plan_reason` says why a plan needs confirmation: an estimate over :data:`LONG_S` (two hours), or an
unknown one at a ``paper*`` profile; :func:`confirm` asks for it (or ``--yes``).

Before any of this, :func:`check_start` refuses a run that cannot or should not start: a grid of no cell (refused
like an empty grid axis: the ``--set`` override or the spec key that emptied it), more than
:data:`fyexp.core.domains.MAX_CELLS` cells or a cell estimated past the available memory (unless ``--yes``), and the
``paper`` profile on a source tree with uncommitted changes (unless ``--allow-dirty``).
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, NamedTuple

from fyexp.core.errors import FyexpError, SpecError
from fyexp.experiments.grid import EMPTY_GRID
from fyexp.core.words import counted, duration

LONG_S = 2 * 3600.0
# parameters that only say which replicate a cell is (its split of the data): the cell's time does not depend on them
# (the seed is no parameter); ``epochs`` is scaled by the epochs ratio instead
REPLICATE_KEYS = frozenset({"fold", "epochs"})


@dataclass(frozen=True)
class RunPlan:
    experiment: str
    profile: str
    cells: int
    finished: int
    to_run: int
    old_settings: int
    estimate_s: float | None
    recorded: int = 0        # recorded cells the estimate rests on
    source: str = ""         # the folder they were read from
    todo: tuple = ()         # the cells to run (:class:`fyexp.store.results.Cell`), in order
    unestimated: int = 0     # cells to run without a recorded cell on their data: not in estimate_s
    extrapolated: int = 0    # cells to run estimated from recorded cells that all differ in a setting
    extrapolated_keys: tuple[str, ...] = ()  # those settings
    unestimated_cells: tuple = ()  # those cells (:class:`fyexp.store.results.Cell`)
    scaled_s: float | None = None  # of the unestimated cells: the time scaled from another profile's (plan_scaled)
    scaled: int = 0          # how many of them have one
    scaled_from: tuple[str, ...] = ()  # the profiles scaled from
    pending: Any = field(default=None, compare=False, repr=False)  # runner.Pending: handed to the run, not redone

    @property
    def seconds_per_cell(self) -> float | None:
        """The estimate per cell to run; ``None`` when it is unknown for any of them."""
        if self.estimate_s is None or not self.to_run or self.unestimated:
            return None
        return self.estimate_s / self.to_run

    @property
    def todo_keys(self) -> tuple[str, ...]:
        return tuple(c.key for c in self.todo)


def committed_results() -> Path:
    """The repository's own ``results/`` (beside the ``fyexp`` package of a checkout)."""
    return Path(__file__).resolve().parents[2] / "results"


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


def _finished_times(rows, profile: str, epochs: int | None = None) -> list[Recorded]:
    """One :class:`Recorded` per finished (``ok``) cell among csv ``rows`` at ``profile`` (``epochs`` given to each:
    the rows of one cell file)."""
    cells: dict[str, Recorded] = {}
    for row in rows:
        if row.get("profile") != profile or (row.get("status") or "ok") != "ok":
            continue
        try:
            seconds = float(row.get("wall_time_s") or "nan")
        except ValueError:
            continue
        key = row.get("cell") or str(len(cells))
        if seconds == seconds and key not in cells:  # not NaN
            cells[key] = Recorded(row.get("method") or "", seconds, epochs, _params(row.get("params")))
    return list(cells.values())


def stated_epochs(cell_file: Path) -> int | None:
    """The training epochs the run record beside ``cell_file`` states (``None`` without a readable one)."""
    from fyexp.store.provenance.record import stated_settings
    from fyexp.spec.settings import training_epochs

    stated = stated_settings(cell_file)
    return training_epochs(stated.get("config"), stated.get("params")) if stated is not None else None


def _csv_rows(path: Path) -> list[dict]:
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
    """:func:`times_as_recorded`, each time × :func:`recorded_factor` of the folder it was read from (this machine's
    speed for the project's times, 1 for a results folder of this machine)."""
    times, folder = times_as_recorded(results_dir, experiment, profiles, with_epochs=with_epochs)
    factor = recorded_factor(folder)
    return [t._replace(seconds=t.seconds * factor) for t in times], folder


def times_as_recorded(results_dir: Path, experiment: str, profiles: list[str], *,
                      with_epochs: bool = False) -> tuple[list[Recorded], Path | None]:
    """A :class:`Recorded` per finished (``ok``) cell at the first of ``profiles`` with any — read from its cell
    files (``cells/<profile>/``, written the moment a cell finishes), else from ``results.csv`` — in the results
    folder, else in :func:`committed_results`, else in :data:`PROFILE_TIMES`; and the folder read (None if none).
    The seconds are as recorded, on the machine that recorded them (:func:`recorded_times` scales them to this
    one).  ``with_epochs``: each cell file's epochs from its run record (``results.csv`` rows state none).

    Plain ``csv`` (no pandas): ``fyexp list`` and ``show`` read it too and stay light."""
    folders = [Path(results_dir)]
    if committed_results() != Path(results_dir).resolve():
        folders.append(committed_results())
    for folder in folders:
        table = None
        for profile in profiles:
            cell_dir = folder / experiment / "cells" / profile
            files = sorted(cell_dir.glob("*.csv")) if cell_dir.is_dir() else []
            times = [t for f in files
                     for t in _finished_times(_csv_rows(f), profile, stated_epochs(f) if with_epochs else None)]
            if not times:
                table = _csv_rows(folder / experiment / "results.csv") if table is None else table
                times = _finished_times(table, profile)
            if times:
                return times, folder
    profile_times = [t for p in profiles for t in measured_profile_times(experiment, p)]
    if profile_times:
        return profile_times, PROFILE_TIMES
    return [], None


#: the wall times of each experiment's ``quick`` profile measured on the project's machine (one run of each,
#: ``scripts/measure_profiles.py``): the estimate of a profile that no results folder holds cells of
PROFILE_TIMES = Path(__file__).resolve().parents[1] / "reference" / "profile_times.csv"


def measured_profile_times(experiment: str, profile: str) -> list[Recorded]:
    """The :class:`Recorded` cells of ``experiment`` at ``profile`` in :data:`PROFILE_TIMES` (none where it has
    none): columns experiment, profile, method, params (JSON), epochs and wall_time_s."""
    out = []
    for row in _csv_rows(PROFILE_TIMES):
        if row.get("experiment") != experiment or row.get("profile") != profile:
            continue
        try:
            seconds = float(row.get("wall_time_s") or "nan")
            epochs = int(row["epochs"]) if row.get("epochs") else None
        except ValueError:
            continue
        if seconds == seconds:
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
    """Where a plan's recorded times come from, in words: ``in DIR`` for a results folder of this machine, ``in
    results/, recorded on the project's machine, × 0.64 for this machine's speed (calibration)`` for the project's
    times (:func:`recorded_factor`)."""
    if not folder:
        return ""
    if not _project_times(folder):
        return f"in {folder}"
    from fyexp.run.speed import machine_speed, speed_text

    where = "fyexp's measured profile times" if Path(folder).resolve() == PROFILE_TIMES.resolve() else str(folder)
    return f"in {where}, recorded on the project's machine, {speed_text(machine_speed())}"


def nearest(method: str, params: dict | None, times: list[Recorded]) -> list[Recorded]:
    """The recorded cells nearest to a cell of ``method`` and ``params``: those on its data set (``dataset``; all,
    where the cell names none) with the most of its method and parameters equal; none when none is on its data set."""
    params = params or {}
    if "dataset" in params:
        times = [t for t in times if (t.params or {}).get("dataset") == params["dataset"]]
    if not times:
        return []

    def shared(t: Recorded) -> int:
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
    cells ``times``, each cell's :func:`nearest` recorded cells found once: Σ over the cells that have any of their
    mean time, each scaled by the epochs ratio E(cell) / E(recorded) where both are known; a cell whose nearest all
    differ from it in some parameter (:data:`REPLICATE_KEYS` aside) is counted extrapolated, with those parameters.
    The plan (:func:`run_plan`), ``fyexp list`` and ``show`` (:mod:`fyexp.run.overview`) read it."""
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


def estimate_parts(todo_methods: list[str], times: list[Recorded], todo_epochs: list[int | None] | None = None,
                   todo_params: list[dict] | None = None) -> tuple[float | None, int]:
    """``(seconds, unestimated)`` of :func:`estimate_cells`: the estimate of the cells that have nearest recorded
    cells, and how many have none."""
    found = estimate_cells(todo_methods, times, todo_epochs, todo_params)
    return found.seconds, len(found.unestimated)


def extrapolated_keys(todo_methods: list[str], times: list[Recorded],
                      todo_params: list[dict] | None = None) -> tuple[int, tuple[str, ...]]:
    """``(cells, keys)`` of :func:`estimate_cells`: how many cells are estimated from recorded cells that all differ
    from them in some parameter, and those parameters.  A cell without a nearest recorded cell is unestimated, not
    extrapolated."""
    found = estimate_cells(todo_methods, times, None, todo_params)
    return found.extrapolated, found.keys


def extrapolated_text(count: int, keys: tuple[str, ...]) -> str:
    """``3 of them at another K than any recorded cell`` (empty when ``count`` is 0): :func:`extrapolated_keys` in
    words, as the plan, ``fyexp show`` and ``reproduce --dry-run`` print it."""
    return f"{count} of them at another {', '.join(keys)} than any recorded cell" if count else ""


def estimate(todo_methods: list[str], times: list[Recorded], todo_epochs: list[int | None] | None = None,
             todo_params: list[dict] | None = None) -> float | None:
    """The whole estimate of :func:`estimate_parts`; ``None`` when a cell to run has no nearest recorded cell."""
    seconds, unestimated = estimate_parts(todo_methods, times, todo_epochs, todo_params)
    return None if unestimated else seconds


def run_plan(resolved, experiment, results_dir: Path, force: bool = False, only=None, *, device: str = "cpu",
             data_dir: Path | None = None) -> RunPlan:
    """The plan of ``fyexp run`` for ``resolved`` (see the module docstring)."""
    from fyexp.store.results import ResultStore
    from fyexp.run.runner import classify_cells

    pending = classify_cells(resolved, experiment, ResultStore(results_dir, resolved.name), force, only,
                             device=device, data_dir=data_dir)
    from fyexp.spec.settings import cells_training_epochs

    profiles = list(dict.fromkeys([resolved.profile, resolved.base_profile]))
    times, folder = recorded_times(results_dir, resolved.name, profiles, with_epochs=True)
    todo_epochs = cells_training_epochs(experiment, resolved.config, pending.todo)
    found = estimate_cells([c.method for c in pending.todo], times, todo_epochs, [c.params for c in pending.todo])
    return RunPlan(resolved.name, resolved.profile, len(pending.cells), len(pending.cells) - len(pending.todo),
                   len(pending.todo), len(pending.changed), found.seconds, len(times),
                   str(folder) if folder is not None else "", tuple(pending.todo), len(found.unestimated),
                   found.extrapolated, found.keys, tuple(pending.todo[i] for i in found.unestimated), pending=pending)


def scaled_text(seconds: float | None, count: int, profiles: tuple[str, ...]) -> str:
    """``about 706 h for 14 of them, scaled from the 'cpu' profile's cells by training examples and evaluation
    samples (an extrapolation)`` (``the 'claims' and 'cpu' profiles' cells``): a plan's
    :func:`fyexp.run.plan_scaled.with_scaled` figure in words; empty when ``count`` is 0."""
    if not count or seconds is None:
        return ""
    names = [f"'{p}'" for p in profiles]
    named = " and ".join([", ".join(names[:-1]), names[-1]] if len(names) > 1 else names)
    whose = "profiles'" if len(names) > 1 else "profile's"
    return (f"about {duration(seconds)} for {count} of them, scaled from the {named} {whose} cells by training "
            f"examples and evaluation samples (an extrapolation)")


def describe_plan(plan: RunPlan) -> str:
    """One line: ``plan: NAME [PROFILE]: N cells: k to run (j at old settings), m finished; estimate …``."""
    old = f" ({plan.old_settings} at old settings)" if plan.old_settings else ""
    if not plan.to_run:
        when = "nothing to run"
    elif plan.estimate_s is None:
        when = ("estimate unknown (no finished cell of this profile recorded"
                + (" on these data)" if plan.recorded else ")"))
        if plan.scaled:
            when += f"; {scaled_text(plan.scaled_s, plan.scaled, plan.scaled_from)}"
    else:
        where = (f"from {counted(plan.recorded, 'recorded cell')}"
                 + (f" {source_text(plan.source)}" if plan.source else ""))
        when = f"estimate {duration(plan.estimate_s)} ({where})"
        if plan.unestimated:
            when = (f"estimate {duration(plan.estimate_s)} for {plan.to_run - plan.unestimated} of them, unknown "
                    f"for {plan.unestimated} on data no finished cell of this profile used ({where})")
            if plan.scaled:
                when += f"; {scaled_text(plan.scaled_s, plan.scaled, plan.scaled_from)}"
        if plan.extrapolated:
            when += f"; {extrapolated_text(plan.extrapolated, plan.extrapolated_keys)}: their time may differ"
    return (f"plan: {plan.experiment} [{plan.profile}]: {counted(plan.cells)}: {plan.to_run} to run{old}, "
            f"{plan.finished} finished; {when}")


def is_paper_profile(profile: str) -> bool:
    return profile.startswith("paper")


def long_plan_reason(to_run: int, estimate_s: float | None, profile: str, unestimated: int = 0,
                     scaled_s: float | None = None, scaled: int = 0) -> str | None:
    """Why a plan must be confirmed (over :data:`LONG_S`, or unknown, wholly or for ``unestimated`` of its cells, at
    a ``paper*`` profile); None when not.  Where the plan printed a scaled time for ``scaled`` of its unestimated
    cells (:func:`fyexp.run.plan_scaled.with_scaled`, ``scaled_s``), the reason states that figure, as the plan did,
    rather than calling the time unknown."""
    if not to_run:
        return None
    if scaled and scaled_s is not None:
        total = (estimate_s or 0.0) + scaled_s
        what = (f"{duration(scaled_s)} of it for {counted(scaled)} scaled from other profiles' cells "
                "(an extrapolation)" if estimate_s
                else f"scaled from other profiles' cells (an extrapolation) for {counted(scaled)}")
        rest = f"; {counted(unestimated - scaled)} without any estimate" if unestimated > scaled else ""
        if total > LONG_S:
            return f"it is estimated at about {duration(total)}, {what} (over {LONG_S / 3600:g} h){rest}"
        if is_paper_profile(profile):
            return f"it is estimated at about {duration(total)}, {what}, at profile '{profile}'{rest}"
        return None
    if estimate_s is None:
        return f"its time is unknown at profile '{profile}'" if is_paper_profile(profile) else None
    if estimate_s > LONG_S:
        more = f" for {to_run - unestimated} of its cells" if unestimated else ""
        return f"it is estimated at {duration(estimate_s)}{more} (over {LONG_S / 3600:g} h)"
    if unestimated and is_paper_profile(profile):
        return f"the time of {unestimated} of its {to_run} cells is unknown at profile '{profile}'"
    return None


def confirm(reason: str | None, yes: bool, what: str, ask: Callable[[str], bool | None]) -> bool:
    """Whether a plan may start: at once when it is not long (``reason`` None) or with ``--yes``; else the answer to
    ``ask(question)`` at a terminal.  Off a terminal (``ask`` answers None) it is refused in one line (exit 2)."""
    if reason is None or yes:
        return True
    answer = ask(f"{what}: {reason}. Start it?")
    if answer is None:
        raise FyexpError(f"{what}: not started: {reason}; pass --yes to start it (--dry-run shows the plan)")
    return answer


# ---- whether a run may start -------------------------------------------------------------------------------------
def grid_cells(resolved, experiment) -> list:
    """The grid's cells at the first seed (a grid's size and memory do not depend on the seed).  A grid of no cell is
    refused like an empty grid axis: a :class:`~fyexp.core.errors.SpecError` naming the ``--set`` override that emptied
    it (when the profile without the overrides has cells), else the spec's key."""
    cells = experiment.cells(resolved.config, resolved.seeds[:1])
    if cells:
        return cells
    if resolved.overrides:
        from fyexp.spec.specs import resolve

        plain = resolve(resolved.spec, resolved.base_profile, experiment.Config)
        if experiment.cells(plain.config, resolved.seeds[:1]):
            blamed = dict([o for o in resolved.overrides if o[0].split(".")[0] == "grid"] or resolved.overrides)
            value = next(iter(blamed.values())) if len(blamed) == 1 else blamed
            raise SpecError("--set", ", ".join(blamed), EMPTY_GRID, value)
    grid = ".grid" if "grid" in resolved.raw else ""
    raise SpecError(resolved.spec.path, f"profiles.{resolved.base_profile}{grid}", EMPTY_GRID, resolved.raw.get("grid"))


def check_start(resolved, experiment, only, *, yes: bool, allow_dirty: bool, dry_run: bool) -> None:
    """Refuse a run before anything is written (see the module docstring); ``only`` is the ``--only``
    :class:`~fyexp.run.cell_filter.CellFilter`.  A dry run writes nothing, so it is never refused for a dirty tree."""
    from fyexp.core.domains import check_cell_memory, check_grid_size

    one_seed = grid_cells(resolved, experiment)
    check_grid_size(only.count(one_seed, resolved.seeds), yes)
    check_cell_memory(experiment, resolved.config, one_seed, yes)
    if resolved.base_profile == "paper" and not dry_run:
        from fyexp.store.provenance.source import require_clean_tree

        require_clean_tree(allow_dirty, type(experiment).__module__)


def plan_inputs(results_dir: Path, experiments_dir: Path | None) -> tuple | None:
    """What a plan is derived from (:func:`fyexp.run.derivation.derivation_inputs`: fyexp's files, the git commit, the
    versions, the specs, every file of the results folder and of the committed ``results/``, whose finished cells'
    recorded times it scales) and this machine's speed factor.  ``None`` (do not cache) where a spec's runner is a
    module outside fyexp."""
    from fyexp.run.speed import machine_speed

    key = recorded_inputs(results_dir, experiments_dir)
    return None if key is None else (*key, machine_speed().factor)


def recorded_inputs(results_dir: Path, experiments_dir: Path | None) -> tuple | None:
    """:func:`plan_inputs` without this machine's speed: the key of what is derived from the recorded times as
    recorded (``fyexp list`` and ``show`` keep their summaries so, and scale them when they print: a new
    calibration keeps them)."""
    from fyexp.run.derivation import derivation_inputs

    return derivation_inputs([results_dir, committed_results()], experiments_dir)
