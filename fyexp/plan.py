"""The plan of a run, printed before its first cell: what it will run and how long that took before.

For one experiment at one profile (with ``--only`` and ``--force``), :func:`run_plan` counts the grid's cells, those
finished, those to run and, of these, those finished at old settings (:func:`fyexp.runner.classify_cells`, the
runner's own classification).  Its estimate is

    estimate = Σ_{cells to run} t̄(method),

t̄(method) the mean ``wall_time_s`` of the finished (``ok``) cells of the same experiment, profile and method
recorded in the results folder — else in the repository's committed ``results/`` — and the mean over all methods
where a method has none recorded.  Without any recorded cell the estimate is unknown (``None``).  A variant profile
(``paper+lr=…``) without times of its own reads its base profile's.

:func:`long_plan_reason` says why a plan needs confirmation: an estimate over :data:`LONG_S` (two hours), or an
unknown one at a ``paper*`` profile; :func:`confirm` asks for it (or ``--yes``).

Before any of this, :func:`check_start` refuses a run that cannot or should not start: a grid of no cell (refused
like an empty grid axis: the ``--set`` override or the spec key that emptied it), more than
:data:`fyexp.domains.MAX_CELLS` cells or a cell estimated past the available memory (unless ``--yes``), and the
``paper`` profile on a source tree with uncommitted changes (unless ``--allow-dirty``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from fyexp.errors import FyexpError, SpecError
from fyexp.experiments.grid import EMPTY_GRID

LONG_S = 2 * 3600.0


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
    todo: tuple = ()         # the cells to run (:class:`fyexp.results.Cell`), in order

    @property
    def seconds_per_cell(self) -> float | None:
        return None if self.estimate_s is None or not self.to_run else self.estimate_s / self.to_run

    @property
    def todo_keys(self) -> tuple[str, ...]:
        return tuple(c.key for c in self.todo)


def duration(seconds: float | None) -> str:
    """``42 s``, ``13 min``, ``30.7 h`` or ``unknown``."""
    if seconds is None:
        return "unknown"
    if seconds < 120:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.0f} min" if seconds < 7200 else f"{seconds / 3600:.1f} h"


def committed_results() -> Path:
    """The repository's own ``results/`` (beside the ``fyexp`` package of a checkout)."""
    return Path(__file__).resolve().parents[1] / "results"


def _finished_times(rows, profile: str) -> list[tuple[str, float]]:
    """``(method, wall_time_s)`` per finished (``ok``) cell among csv ``rows`` at ``profile``."""
    cells: dict[str, tuple[str, float]] = {}
    for row in rows:
        if row.get("profile") != profile or (row.get("status") or "ok") != "ok":
            continue
        try:
            seconds = float(row.get("wall_time_s") or "nan")
        except ValueError:
            continue
        if seconds == seconds:  # not NaN
            cells.setdefault(row.get("cell") or str(len(cells)), (row.get("method") or "", seconds))
    return list(cells.values())


def _csv_rows(path: Path) -> list[dict]:
    import csv

    try:
        with path.open(newline="", encoding="utf-8") as handle:
            return list(csv.DictReader(handle))
    except (OSError, UnicodeDecodeError, csv.Error):
        return []


def recorded_times(results_dir: Path, experiment: str, profiles: list[str]) -> tuple[list[tuple[str, float]], Path | None]:
    """``(method, wall_time_s)`` of each finished (``ok``) cell at the first of ``profiles`` with any — read from
    its cell files (``cells/<profile>/``, written the moment a cell finishes), else from ``results.csv`` — in the
    results folder, else in :func:`committed_results`; and the folder read (None if none).

    Plain ``csv`` (no pandas): ``fyexp list`` and ``show`` read it too and stay light."""
    folders = [Path(results_dir)]
    if committed_results() != Path(results_dir).resolve():
        folders.append(committed_results())
    for folder in folders:
        table = None
        for profile in profiles:
            cell_dir = folder / experiment / "cells" / profile
            rows = [r for f in sorted(cell_dir.glob("*.csv")) for r in _csv_rows(f)] if cell_dir.is_dir() else []
            if not rows:
                table = _csv_rows(folder / experiment / "results.csv") if table is None else table
                rows = table
            times = _finished_times(rows, profile)
            if times:
                return times, folder
    return [], None


def estimate(todo_methods: list[str], times: list[tuple[str, float]]) -> float | None:
    """Σ over the cells to run of their method's mean recorded time (the overall mean for a method without)."""
    if not todo_methods:
        return 0.0
    if not times:
        return None
    overall = sum(s for _, s in times) / len(times)
    by_method: dict[str, list[float]] = {}
    for method, seconds in times:
        by_method.setdefault(method, []).append(seconds)
    means = {m: sum(v) / len(v) for m, v in by_method.items()}
    return float(sum(means.get(m, overall) for m in todo_methods))


def run_plan(resolved, experiment, results_dir: Path, force: bool = False, only=None, *, device: str = "cpu",
             data_dir: Path | None = None) -> RunPlan:
    """The plan of ``fyexp run`` for ``resolved`` (see the module docstring)."""
    from fyexp.results import ResultStore
    from fyexp.runner import classify_cells

    pending = classify_cells(resolved, experiment, ResultStore(results_dir, resolved.name), force, only,
                             device=device, data_dir=data_dir)
    profiles = list(dict.fromkeys([resolved.profile, getattr(resolved, "base_profile", resolved.profile)]))
    times, folder = recorded_times(results_dir, resolved.name, profiles)
    return RunPlan(resolved.name, resolved.profile, len(pending.cells), len(pending.cells) - len(pending.todo),
                   len(pending.todo), len(pending.changed), estimate([c.method for c in pending.todo], times),
                   len(times), str(folder) if folder is not None else "", tuple(pending.todo))


def describe_plan(plan: RunPlan) -> str:
    """One line: ``plan: NAME [PROFILE]: N cells: k to run (j at old settings), m finished; estimate …``."""
    old = f" ({plan.old_settings} at old settings)" if plan.old_settings else ""
    if not plan.to_run:
        when = "nothing to run"
    elif plan.estimate_s is None:
        when = "estimate unknown (no finished cell of this profile recorded)"
    else:
        when = (f"estimate {duration(plan.estimate_s)} (from {plan.recorded} recorded cells in {plan.source}, "
                f"on the device that ran them)")
    return (f"plan: {plan.experiment} [{plan.profile}]: {plan.cells} cells: {plan.to_run} to run{old}, "
            f"{plan.finished} finished; {when}")


def is_paper_profile(profile: str) -> bool:
    return profile.startswith("paper")


def long_plan_reason(to_run: int, estimate_s: float | None, profile: str) -> str | None:
    """Why a plan must be confirmed (over :data:`LONG_S`, or unknown at a ``paper*`` profile); None when not."""
    if not to_run:
        return None
    if estimate_s is None:
        return f"its time is unknown at profile '{profile}'" if is_paper_profile(profile) else None
    if estimate_s > LONG_S:
        return f"it is estimated at {duration(estimate_s)} (over {LONG_S / 3600:g} h)"
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
    refused like an empty grid axis: a :class:`~fyexp.errors.SpecError` naming the ``--set`` override that emptied
    it (when the profile without the overrides has cells), else the spec's key."""
    cells = experiment.cells(resolved.config, resolved.seeds[:1])
    if cells:
        return cells
    if resolved.overrides:
        from fyexp.specs import resolve

        plain = resolve(resolved.spec, resolved.base_profile, experiment.Config)
        if experiment.cells(plain.config, resolved.seeds[:1]):
            blamed = dict([o for o in resolved.overrides if o[0].split(".")[0] == "grid"] or resolved.overrides)
            value = next(iter(blamed.values())) if len(blamed) == 1 else blamed
            raise SpecError("--set", ", ".join(blamed), EMPTY_GRID, value)
    grid = ".grid" if "grid" in resolved.raw else ""
    raise SpecError(resolved.spec.path, f"profiles.{resolved.base_profile}{grid}", EMPTY_GRID, resolved.raw.get("grid"))


def check_start(resolved, experiment, only, *, yes: bool, allow_dirty: bool, dry_run: bool) -> None:
    """Refuse a run before anything is written (see the module docstring); ``only`` is the ``--only``
    :class:`~fyexp.cell_filter.CellFilter`.  A dry run writes nothing, so it is never refused for a dirty tree."""
    from fyexp.domains import check_cell_memory, check_grid_size

    one_seed = grid_cells(resolved, experiment)
    check_grid_size(only.count(one_seed, resolved.seeds), yes)
    check_cell_memory(experiment, resolved.config, one_seed, yes)
    if resolved.base_profile == "paper" and not dry_run:
        from fyexp.provenance.source import require_clean_tree

        require_clean_tree(allow_dirty, type(experiment).__module__)
