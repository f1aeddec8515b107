"""The plan of a run, printed before its first cell: the grid's cells classified once
(:func:`fyexp.run.runner.classify_cells`, handed on to the run) and those to run estimated (:mod:`fyexp.run.estimate`);
why it needs confirmation (:func:`long_plan_reason`); and a run refused before it starts (:func:`check_start`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from fyexp.core.constraints import check_cell_memory, check_grid_size
from fyexp.core.errors import FyexpError, SpecError
from fyexp.core.words import counted, duration
from fyexp.experiments.grid import EMPTY_GRID
from fyexp.run.estimate import (at_speed, estimate_cells, extrapolated_text, per_cell, recorded_inputs, scaled_text,
                                source_text, times_as_recorded, unknown_text)
from fyexp.run.speed import machine_speed
from fyexp.spec.settings import cells_training_epochs
from fyexp.spec.specs import resolve
from fyexp.store.results import ResultStore

LONG_S = 2 * 3600.0
OVER_LONG = f" (over {LONG_S / 3600:g} h)"


@dataclass(frozen=True)
class RunPlan:
    experiment: str
    profile: str
    cells: int
    finished: int
    to_run: int
    old_settings: int
    estimate_s: float | None
    recorded: int = 0        # recorded cells the estimate rests on, read from the folder ``source``
    source: str = ""
    todo: tuple = ()         # the cells to run (:class:`fyexp.store.results.Cell`), in order
    unestimated: int = 0     # cells to run without a recorded cell on their data (not in estimate_s): their count
    extrapolated: int = 0    # and those estimated from recorded cells that all differ in a setting, and the settings
    extrapolated_keys: tuple[str, ...] = ()
    unestimated_cells: tuple = ()
    scaled_s: float | None = None  # the time of ``scaled`` unestimated cells from the profiles ``scaled_from``
    scaled: int = 0
    scaled_from: tuple[str, ...] = ()
    pending: Any = field(default=None, compare=False, repr=False)  # runner.Pending: handed to the run, not redone

    @property
    def seconds_per_cell(self) -> float | None:
        return per_cell(self.estimate_s, self.to_run, self.unestimated)


def run_plan(resolved, experiment, results_dir: Path, force: bool = False, only=None, *, device: str = "cpu",
             data_dir: Path | None = None) -> RunPlan:
    """The plan of ``fyexp run`` for ``resolved`` (see the module docstring)."""
    from fyexp.run.runner import classify_cells

    pending = classify_cells(resolved, experiment, ResultStore(results_dir, resolved.name), force, only,
                             device=device, data_dir=data_dir)
    times, folder = times_as_recorded(results_dir, resolved.name, list(dict.fromkeys([resolved.profile,
                                      resolved.base_profile])))
    found = estimate_cells([c.method for c in pending.todo], times,
                           cells_training_epochs(experiment, resolved.config, pending.todo),
                           [c.params for c in pending.todo])
    return RunPlan(resolved.name, resolved.profile, len(pending.cells), len(pending.cells) - len(pending.todo),
                   len(pending.todo), len(pending.changed), at_speed(found.seconds, folder), len(times),
                   str(folder or ""), tuple(pending.todo), len(found.unestimated), found.extrapolated,
                   found.keys, tuple(pending.todo[i] for i in found.unestimated), pending=pending)


def describe_plan(plan: RunPlan) -> str:
    """One line: ``plan: NAME [PROFILE]: N cells: k to run (j at old settings), m finished; estimate …``."""
    old = f" ({plan.old_settings} at old settings)" if plan.old_settings else ""
    if not plan.to_run:
        when = "nothing to run"
    elif plan.estimate_s is None:
        when = unknown_text(plan.recorded)
    else:
        where = f"from {counted(plan.recorded, 'recorded cell')}{' ' + source_text(plan.source) if plan.source else ''}"
        when = (f"estimate {duration(plan.estimate_s)} for {plan.to_run - plan.unestimated} of them, unknown for "
                f"{plan.unestimated} on data no finished cell of this profile used ({where})" if plan.unestimated
                else f"estimate {duration(plan.estimate_s)} ({where})")
    if plan.to_run and plan.scaled and (plan.estimate_s is None or plan.unestimated):
        when += f"; {scaled_text(plan.scaled_s, plan.scaled, plan.scaled_from)}"
    if plan.to_run and plan.estimate_s is not None and plan.extrapolated:
        when += f"; {extrapolated_text(plan.extrapolated, plan.extrapolated_keys)}: their time may differ"
    return (f"plan: {plan.experiment} [{plan.profile}]: {counted(plan.cells)}: {plan.to_run} to run{old}, "
            f"{plan.finished} finished; {when}")


def long_plan_reason(to_run: int, estimate_s: float | None, profile: str, unestimated: int = 0,
                     scaled_s: float | None = None, scaled: int = 0) -> str | None:
    """Why a plan must be confirmed (over :data:`LONG_S`, or unknown, wholly or for ``unestimated`` of its cells, at
    a ``paper*`` profile), a scaled time ``scaled_s`` of ``scaled`` cells stated as the plan printed it; else None."""
    if not to_run:
        return None
    paper = profile.startswith("paper")
    if scaled and scaled_s is not None:
        total = (estimate_s or 0.0) + scaled_s
        what = (f"{duration(scaled_s)} of it for {counted(scaled)} scaled from other profiles' cells "
                "(an extrapolation)" if estimate_s
                else f"scaled from other profiles' cells (an extrapolation) for {counted(scaled)}")
        rest = f"; {counted(unestimated - scaled)} without any estimate" if unestimated > scaled else ""
        why = OVER_LONG if total > LONG_S else f", at profile '{profile}'" if paper else None
        return f"it is estimated at about {duration(total)}, {what}{why}{rest}" if why else None
    if estimate_s is None:
        return f"its time is unknown at profile '{profile}'" if paper else None
    if estimate_s > LONG_S:
        more = f" for {to_run - unestimated} of its cells" if unestimated else ""
        return f"it is estimated at {duration(estimate_s)}{more}{OVER_LONG}"
    if unestimated and paper:
        return f"the time of {unestimated} of its {to_run} cells is unknown at profile '{profile}'"
    return None


def confirm(reason: str | None, yes: bool, what: str, ask: Callable[[str], bool | None]) -> bool:
    """Whether a plan may start: not long (``reason`` None), ``--yes``, or as ``ask(question)`` answers; off a
    terminal (``ask`` answers None) refused in one line (exit 2)."""
    if reason is None or yes:
        return True
    answer = ask(f"{what}: {reason}. Start it?")
    if answer is None:
        raise FyexpError(f"{what}: not started: {reason}; pass --yes to start it (--dry-run shows the plan)")
    return answer


# ---- whether a run may start -------------------------------------------------------------------------------------
def grid_cells(resolved, experiment) -> list:
    """The grid's cells at the first seed (size and memory do not depend on it).  A grid of no cell is a
    :class:`~fyexp.core.errors.SpecError` naming the ``--set`` override that emptied it, else the spec's key."""
    cells = experiment.cells(resolved.config, resolved.seeds[:1])
    if cells:
        return cells
    if resolved.overrides:
        plain = resolve(resolved.spec, resolved.base_profile, experiment.Config)
        if experiment.cells(plain.config, resolved.seeds[:1]):
            blamed = dict([o for o in resolved.overrides if o[0].split(".")[0] == "grid"] or resolved.overrides)
            value = next(iter(blamed.values())) if len(blamed) == 1 else blamed
            raise SpecError("--set", ", ".join(blamed), EMPTY_GRID, value)
    grid = ".grid" if "grid" in resolved.raw else ""
    raise SpecError(resolved.spec.path, f"profiles.{resolved.base_profile}{grid}", EMPTY_GRID, resolved.raw.get("grid"))


def check_start(resolved, experiment, only, *, yes: bool, allow_dirty: bool, dry_run: bool) -> None:
    """Refuse, before anything is written, a grid of no cell, too many cells or a cell past the memory (unless
    ``--yes``), ``paper`` on a dirty source tree (unless ``--allow-dirty`` or a dry run, which writes nothing)."""
    one_seed = grid_cells(resolved, experiment)
    check_grid_size(only.count(one_seed, resolved.seeds), yes)
    check_cell_memory(experiment, resolved.config, one_seed, yes)
    if resolved.base_profile == "paper" and not dry_run:
        from fyexp.store.provenance.source import require_clean_tree

        require_clean_tree(allow_dirty, type(experiment).__module__)


def plan_inputs(results_dir: Path, experiments_dir: Path | None) -> tuple | None:
    """:func:`fyexp.run.estimate.recorded_inputs` and the speed factor (``None``: a runner outside fyexp, not kept)."""
    key = recorded_inputs(results_dir, experiments_dir)
    return None if key is None else (*key, machine_speed().factor)
