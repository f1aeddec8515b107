"""The cells a resolved spec declares, read from its ``grid`` alone (no runner import: ``list`` and ``show`` use it).

The expansion is the runners' own, :func:`fyexp.experiments.grid.cells_of` (axes, ``include`` / ``exclude``,
per-method axes, pinned seeds), without a runner to name the methods that the grid does not name: those cells have
``method`` None.  The number of cells is the runner's, which tests/run/test_list_show.py checks against every runner's
own ``cells()`` at every profile of every spec.
"""

from __future__ import annotations

from typing import Any

from fyexp.experiments.grid import cells_of
from fyexp.store.results import Cell


def declared_cells(config: Any, seeds: tuple[int, ...]) -> list[Cell]:
    """The cells of ``config.grid`` × ``seeds`` (see the module docstring), in the runner's order per method."""
    return cells_of(getattr(config, "grid", None), seeds)
