"""The cells a resolved spec declares, read from its ``grid`` alone (no runner import: ``list`` and ``show`` use it).

Two grid styles exist (:mod:`fyexp.experiments.grid`, :mod:`fyexp.experiments.method_grid`): a *method grid* maps
each method to its own axes (every value a mapping, or null / false for a method left out) and expands with
:func:`~fyexp.experiments.method_grid.method_cells`; any other grid (axes, ``include`` / ``exclude``, or none) is a
:class:`~fyexp.experiments.grid.GridExperiment` grid: :func:`~fyexp.experiments.grid.expand` × seeds, a ``seed``
axis pinning its cells' seeds, a ``method`` axis naming their method.  A runner that names methods in code (the
experiment's name, or from the parameters) gets ``None`` here; the number of cells is the same, which
tests/test_list_show.py checks against every runner's own ``cells()`` at every profile of every spec.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from fyexp.experiments.grid import expand, pinned_seeds
from fyexp.experiments.method_grid import method_cells


@dataclass(frozen=True)
class DeclaredCell:
    method: str | None
    params: dict
    seed: int


def _is_method_grid(grid: Any) -> bool:
    return (isinstance(grid, Mapping) and bool(grid)
            and all(isinstance(v, Mapping) or v is None or v is False for v in grid.values()))


def declared_cells(config: Any, seeds: tuple[int, ...]) -> list[DeclaredCell]:
    """The cells of ``config.grid`` × ``seeds`` (see the module docstring), in the runner's order per method."""
    grid = getattr(config, "grid", None)
    if _is_method_grid(grid):
        kept = {m: axes for m, axes in grid.items() if isinstance(axes, Mapping)}
        return [DeclaredCell(c.method, dict(c.params), c.seed) for c in method_cells(kept, seeds)]
    cells = []
    for params in expand(grid):
        method = params.pop("method", None)
        params, at = pinned_seeds(params, seeds)
        cells += [DeclaredCell(method, params, s) for s in at]
    return cells
