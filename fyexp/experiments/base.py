"""What every experiment provides to the framework.

An experiment module in :mod:`fyexp.experiments` defines a ``Config`` dataclass (every hyperparameter of its
spec, type-annotated, validated in ``__post_init__`` with :func:`fyexp.errors.require`) and an
:class:`Experiment` subclass registered with :func:`fyexp.experiments.register`.  The framework

1. resolves the spec's profile into a ``Config`` (:mod:`fyexp.specs`),
2. asks :meth:`Experiment.cells` for the grid (method × parameters × seed),
3. calls :meth:`Experiment.run_cell` for each cell not yet finished and stores its rows atomically
   (:mod:`fyexp.results`).

``fyexp report`` draws the figure functions the spec names in ``plots:`` (:mod:`fyexp.report.figures`) from
the stored rows alone, without importing the runner.  A runner whose cells are a declared ``grid:`` and whose
cells return metrics only derives from :class:`fyexp.experiments.grid.GridExperiment`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, ClassVar, Iterable

from fyexp.results import Cell


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

        from fyexp.io import atomic_write_bytes

        buffer = io.BytesIO()
        np.savez_compressed(buffer, **arrays)
        path = Path(self.artifact_dir) / f"{name}.npz"
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(path, buffer.getvalue())
        return path

    def save_text(self, name: str, text: str) -> Path:
        """Write ``text`` as ``<artifact_dir>/<name>`` atomically; returns the path."""
        from fyexp.io import atomic_write_text

        path = Path(self.artifact_dir) / name
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, text)
        return path

    def subtask(self, description: str, total: float | None, unit: str = "steps") -> Callable[..., None]:
        """Nested progress of ``total`` ``unit`` (steps, EM iterations, fits); returns ``advance(n=1, **fields)``.

        ``progress`` is a :class:`fyexp.progress.RunProgress`; without one this is a no-op.  The display is
        guarded there, so nothing a cell reports can stop the cell.
        """
        if self.progress is None:
            return lambda *args, **kwargs: None
        return self.progress.subtask(description, total, unit)


class Experiment:
    """Base class of a runnable experiment; subclasses set ``name`` and ``Config`` and implement the hooks."""

    name: ClassVar[str]
    Config: ClassVar[type]

    def cells(self, config: Any, seeds: tuple[int, ...]) -> list[Cell]:
        """The grid of cells for this configuration and these seeds, in run order."""
        raise NotImplementedError

    def run_cell(self, config: Any, cell: Cell, ctx: RunContext) -> Iterable[dict]:
        """Run one cell and return its tidy rows (``metric``, ``value`` and optional paper keys)."""
        raise NotImplementedError

    def tune(self, config: Any, ctx: RunContext, **options: Any) -> None:
        """Hyperparameter search (only experiments that have one override this)."""
        from fyexp.errors import FyexpError

        raise FyexpError(f"experiment '{self.name}' has no tuning study (see `fyexp list`)")
