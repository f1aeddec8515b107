"""The plan of a run, printed before its first cell: what it will run and how long that took before.

For one experiment at one profile (with ``--only`` and ``--force``), :func:`run_plan` counts the grid's cells, those
finished, those to run and, of these, those finished at old settings (:func:`fyexp.run.runner.classify_cells`, the
runner's own classification), and estimates the cells to run (:mod:`fyexp.run.estimate`, the one estimator: from the
nearest recorded cells, scaled by epochs; the cells without any on their data set apart, scaled from another
profile's cells by :func:`fyexp.run.estimate.with_scaled`, which the run and reproduce commands apply to the plan).

:func:`long_plan_reason` says why a plan needs confirmation: an estimate over :data:`LONG_S` (two hours), or an
unknown one at a ``paper*`` profile; :func:`confirm` asks for it (or ``--yes``).

Before any of this, :func:`check_start` refuses a run that cannot or should not start: a grid of no cell (refused
like an empty grid axis: the ``--set`` override or the spec key that emptied it), more than
:data:`fyexp.core.domains.MAX_CELLS` cells or a cell estimated past the available memory (unless ``--yes``), and the
``paper`` profile on a source tree with uncommitted changes (unless ``--allow-dirty``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from fyexp.core.errors import FyexpError, SpecError
from fyexp.core.words import counted, duration
from fyexp.experiments.grid import EMPTY_GRID
from fyexp.run.estimate import (estimate_cells, extrapolated_text, per_cell, recorded_inputs, recorded_times,
                                scaled_text, source_text, unknown_text)

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
    todo: tuple = ()         # the cells to run (:class:`fyexp.store.results.Cell`), in order
    unestimated: int = 0     # cells to run without a recorded cell on their data: not in estimate_s
    extrapolated: int = 0    # cells to run estimated from recorded cells that all differ in a setting
    extrapolated_keys: tuple[str, ...] = ()  # those settings
    unestimated_cells: tuple = ()  # those cells (:class:`fyexp.store.results.Cell`)
    scaled_s: float | None = None  # of the unestimated cells: the time scaled from another profile's (with_scaled)
    scaled: int = 0          # how many of them have one
    scaled_from: tuple[str, ...] = ()  # the profiles scaled from
    pending: Any = field(default=None, compare=False, repr=False)  # runner.Pending: handed to the run, not redone

    @property
    def seconds_per_cell(self) -> float | None:
        return per_cell(self.estimate_s, self.to_run, self.unestimated)

    @property
    def todo_keys(self) -> tuple[str, ...]:
        return tuple(c.key for c in self.todo)


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


def describe_plan(plan: RunPlan) -> str:
    """One line: ``plan: NAME [PROFILE]: N cells: k to run (j at old settings), m finished; estimate …``."""
    old = f" ({plan.old_settings} at old settings)" if plan.old_settings else ""
    if not plan.to_run:
        when = "nothing to run"
    elif plan.estimate_s is None:
        when = unknown_text(plan.recorded)
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
    cells (:func:`fyexp.run.estimate.with_scaled`, ``scaled_s``), the reason states that figure, as the plan did,
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
    """What a plan is derived from (:func:`fyexp.run.estimate.recorded_inputs`: fyexp's files, the git commit, the
    versions, the specs, every file of the results folder and of the committed ``results/``, whose finished cells'
    recorded times it scales) and this machine's speed factor.  ``None`` (do not cache) where a spec's runner is a
    module outside fyexp."""
    from fyexp.run.speed import machine_speed

    key = recorded_inputs(results_dir, experiments_dir)
    return None if key is None else (*key, machine_speed().factor)
