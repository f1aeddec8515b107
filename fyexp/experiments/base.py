"""What every experiment provides to the framework.

An experiment module in :mod:`fyexp.experiments` defines a ``Config`` dataclass (every hyperparameter of its
spec, type-annotated, validated in ``__post_init__`` with :func:`fyexp.core.errors.require`) and an
:class:`Experiment` subclass registered with :func:`fyexp.experiments.register`.  The framework

1. resolves the spec's profile into a ``Config`` (:mod:`fyexp.spec.specs`),
2. asks :meth:`Experiment.cells` for the grid (method × parameters × seed),
3. calls :meth:`Experiment.run_cell` for each cell not yet finished and stores its rows atomically
   (:mod:`fyexp.store.results`).

``fyexp report`` draws the figure functions the spec names in ``plots:`` (:mod:`fyexp.report.figures`) from
the stored rows alone, without importing the runner.  A runner whose cells are a declared ``grid:`` and whose
cells return metrics only derives from :class:`fyexp.experiments.grid.GridExperiment`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, ClassVar, Iterable, Mapping, NamedTuple

from fyexp.store.plain import jsonable
from fyexp.store.results import Cell


class CellWork(NamedTuple):
    """What one cell's time grows with (:meth:`Experiment.work`): the training examples of one epoch and the units
    of its evaluation (test points × samples per point)."""

    train_examples: float
    eval_units: float

    @classmethod
    def of(cls, pair: tuple[float, float] | None) -> "CellWork | None":
        """A light config module's ``(train_examples, eval_units)`` (or ``None``) as a :class:`CellWork`."""
        return None if pair is None else cls(*pair)


@dataclass
class RunContext:
    """What a cell may use besides its config: device, data root, scratch and artifact folders, progress."""

    experiment: str
    profile: str
    device: str
    data_dir: Path | None
    work_dir: Path
    artifact_dir: Path
    progress: Any = None
    force: bool = False
    extra: dict = field(default_factory=dict)

    def save_artifact(self, name: str, **arrays: Any) -> Path:
        """Write ``arrays`` as ``<artifact_dir>/<name>.npz`` (compressed) atomically: a reader never sees half a
        file, and an interrupted cell leaves the previous file whole.  Returns the path."""
        import io

        import numpy as np

        from fyexp.store.io import atomic_write_bytes

        buffer = io.BytesIO()
        np.savez_compressed(buffer, **arrays)
        path = Path(self.artifact_dir) / f"{name}.npz"
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(path, buffer.getvalue())
        return path

    def save_text(self, name: str, text: str) -> Path:
        """Write ``text`` as ``<artifact_dir>/<name>`` atomically; returns the path."""
        from fyexp.store.io import atomic_write_text

        path = Path(self.artifact_dir) / name
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, text)
        return path

    def note(self, text: str) -> None:
        """One line for the user (a metric left out and why): through the run's progress, else on stderr."""
        if self.progress is not None:
            self.progress.note(text)
        else:
            import sys

            print(text, file=sys.stderr, flush=True)

    def subtask(self, description: str, total: float | None, unit: str = "steps") -> Callable[..., None]:
        """Nested progress of ``total`` ``unit`` (steps, EM iterations, fits); returns ``advance(n=1, **fields)``.

        ``progress`` is a :class:`fyexp.run.progress.RunProgress`; without one this is a no-op.  The display is
        guarded there, so nothing a cell reports can stop the cell.
        """
        if self.progress is None:
            return lambda *args, **kwargs: None
        return self.progress.subtask(description, total, unit)


class Experiment:
    """Base class of a runnable experiment: the whole protocol between a runner and the framework.

    A subclass sets ``name`` and ``Config`` and implements :meth:`cells` and :meth:`run_cell`; every other hook
    below has a default, so the framework calls each of them on every experiment and never asks whether a runner
    defines one.  The optional hooks, and who calls them:

    - ``grid_field`` / :meth:`cell_config`: the part of the config a cell's settings hash covers
      (:func:`fyexp.spec.settings.scoped_config`);
    - :meth:`data_identity`: a cheap identity of the data, part of a cell's settings (:mod:`fyexp.spec.settings`);
    - :meth:`memory_estimate`: checked before a run starts (:func:`fyexp.core.constraints.check_cell_memory`);
    - :meth:`work`: a plan's estimate for cells no recorded cell of their profile can time, scaled from another
      profile's cells (:mod:`fyexp.run.estimate`);
    - :meth:`prefit` / :attr:`trains_ensembles`: ``train.ensemble: true`` (:func:`fyexp.run.runner.prefit_ensembles`);
    - :meth:`trial`, ``TRIAL_OBJECTIVE`` and ``PARAM_ALIASES``: ``fyexp tune``
      (:func:`fyexp.spec.tuning.tune_experiment`) and ``run --best``
      (:func:`fyexp.spec.tuning.with_best`).

    tests/experiments/test_experiment_contract.py runs every registered runner through this protocol.
    """

    name: ClassVar[str]
    Config: ClassVar[type]
    grid_field: ClassVar[str | None] = None
    """The config field that lists the grid, left out of a cell's settings (its values are the cell's params)."""
    PARAM_ALIASES: ClassVar[Mapping[str, str]] = {}
    """``--best``: older flat names in ``best_params.yaml`` (``learning_rate``) → config paths."""
    work_across_datasets: ClassVar[bool] = False
    """Whether :meth:`work` counts all that differs between data sets, so that a cell on a data set no recorded cell
    used may be scaled from another data set's (:func:`fyexp.run.estimate.scaled_cell_estimate`)."""
    TRIAL_OBJECTIVE: ClassVar[str] = "the value of each trial"
    """What :meth:`trial` returns, as ``fyexp tune`` names the objective in its plan and trial lines."""

    def cells(self, config: Any, seeds: tuple[int, ...]) -> list[Cell]:
        """The grid of cells for this configuration and these seeds, in run order."""
        raise NotImplementedError

    def run_cell(self, config: Any, cell: Cell, ctx: RunContext) -> Iterable[dict]:
        """Run one cell and return its tidy rows (``metric``, ``value`` and optional paper keys)."""
        raise NotImplementedError

    def cell_config(self, config: Any, cell: Cell) -> Any:
        """The part of ``config`` that decides ``cell``'s numbers, as JSON (default: all of it less ``grid_field``;
        fyexp's runners use the function of their light ``<runner>_config`` module)."""
        data = jsonable(config)
        if isinstance(data, dict) and self.grid_field:
            data.pop(self.grid_field, None)
        return data

    def data_identity(self, config: Any, data_dir: Path | None) -> Any:
        """A cheap identity of the data a cell reads (e.g. file sizes), part of its settings; ``None``: none."""
        return None

    def memory_estimate(self, config: Any, cell: Cell) -> tuple[int, str] | None:
        """``(bytes, what)``: the memory ``cell`` needs at most and the settings behind it; ``None``: not
        estimated (the run is not checked)."""
        return None

    def work(self, stated: dict, params: dict) -> CellWork | None:
        """What a cell of ``params`` whose scoped config (:func:`fyexp.spec.settings.scoped_config`, as a run record
        states it) is ``stated`` processes per training epoch and in its evaluation; ``None``: not declared (its
        time is never scaled from another profile's)."""
        return None

    def prefit(self, config: Any, cells: list[Cell], ctxs: list[RunContext]) -> None:
        """Train the seeds ``cells`` of one grid point together (``train.ensemble: true``), leaving each member's
        checkpoint in its ``ctxs`` work folder for :meth:`run_cell`.  Only runners that train ensembles override it."""
        raise NotImplementedError(f"experiment '{self.name}' trains no ensembles")

    @property
    def trains_ensembles(self) -> bool:
        """Whether this runner overrides :meth:`prefit` (else ``train.ensemble`` trains every cell alone)."""
        return type(self).prefit is not Experiment.prefit

    def trial(self, config: Any, ctx: RunContext, report: Callable[[int, float], None], work_dir: Path) -> float:
        """One trial of the tuning study: train at ``config`` in ``work_dir``, ``report(epoch, value)`` after each
        epoch, return the validation value (only experiments with a ``search`` space override it)."""
        from fyexp.core.errors import FyexpError

        raise FyexpError(f"experiment '{self.name}' has no tuning study (see `fyexp list`)")
