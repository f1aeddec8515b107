"""Grids declared, not hand-written: a spec's ``grid:`` block becomes cells, a cell's metrics become tidy rows.

A spec declares its axes in a profile (or ``defaults``)::

    grid:
      dataset: [MNIST, FashionMNIST]
      latent_rho: [1.0, 1.5, 2.0]

and :class:`GridExperiment` expands them into cells, the Cartesian product of the axes in the order written with
the seed innermost (a runner may declare partial cells it never runs, ``exclude``).  A cell's ``params`` are its
axis values plus the run's **identity** (``identity``: parameter name → dotted config path, fixed for the whole
run, e.g. the learning rate of a tuned run), so a cell's key names everything that makes its numbers differ.

The runner's :meth:`GridExperiment.measure` returns :class:`Metric` values only; the framework turns them into
rows, attaching on every row the ``columns`` it declares (row column → cell parameter) and, on the published
metrics, the paper keys ``paper, table, setting, paper_row`` of a declared :class:`PaperKeys` (one row per
published table, e.g. FYVI and FYVL Table 3).  Runners thus never build row dictionaries by hand.
"""

from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Iterable, Mapping

from fyexp.errors import ConfigValueError
from fyexp.experiments.base import Experiment, RunContext
from fyexp.results import Cell

__all__ = ["Metric", "metric", "PaperKeys", "GridExperiment", "axes_of", "expand", "check_axes"]


@dataclass(frozen=True)
class Metric:
    """One measured number of a cell: its name, value, optional tolerance and distinguishing columns (``k``,
    ``split``, a ``label``) when a cell reports the same metric more than once."""

    name: str
    value: float
    tolerance: float | None = None
    columns: Mapping[str, Any] = field(default_factory=dict)


def metric(name: str, value: float, tolerance: float | None = None, **columns: Any) -> Metric:
    """Shorthand for :class:`Metric` with the extra columns as keywords."""
    return Metric(name, float(value), None if tolerance is None else float(tolerance), columns)


@dataclass(frozen=True)
class PaperKeys:
    """Which metrics of a cell reproduce published cells, and where they sit in ``paper_tables.csv``.

    Every metric in ``metrics`` gets one row per ``(paper, table)`` of ``tables`` with ``paper_row =
    row(cell)``; an empty ``paper_row`` marks a variant the paper does not print, named by ``label(cell)``.
    ``setting`` is a constant, a function of the cell, or ``None`` when ``setting`` is already one of the
    declared ``columns``.
    """

    tables: tuple[tuple[str, str], ...]
    metrics: tuple[str, ...]
    row: Callable[[Cell], str]
    setting: str | Callable[[Cell], str] | None = None
    label: Callable[[Cell], str | None] | None = None

    def keys(self, cell: Cell) -> list[dict]:
        """The paper keys of a published metric of ``cell``: one mapping per table."""
        base = {"paper_row": self.row(cell)}
        if self.setting is not None:
            base["setting"] = self.setting(cell) if callable(self.setting) else self.setting
        label = self.label(cell) if self.label is not None else None
        if label is not None:
            base["label"] = label
        return [{"paper": paper, "table": table, **base} for paper, table in self.tables]


def axes_of(grid: Any) -> dict[str, list]:
    """The axes of a grid given as a mapping or as a dataclass instance whose fields are the axes."""
    if grid is None:
        return {}
    if dataclasses.is_dataclass(grid) and not isinstance(grid, type):
        return {f.name: list(getattr(grid, f.name)) for f in dataclasses.fields(grid)}
    return {name: list(values) for name, values in dict(grid).items()}


def check_axes(grid: Any) -> None:
    """Raise :class:`ConfigValueError` (→ a one-line spec error) for an axis that is not a non-empty list of
    distinct values."""
    raw = dataclasses.asdict(grid) if dataclasses.is_dataclass(grid) else dict(grid)
    for name, values in raw.items():
        if not isinstance(values, (list, tuple)) or not values or len(set(map(repr, values))) != len(values):
            raise ConfigValueError(name, "a non-empty list of distinct values", values)


def _matches(params: dict, partial: Mapping[str, Any]) -> bool:
    return all(name in params and params[name] == value for name, value in partial.items())


def expand(grid: Any, exclude: Iterable[Mapping[str, Any]] = ()) -> list[dict]:
    """Every combination of the axes (the last axis varying fastest), less those matching an ``exclude`` entry."""
    axes = axes_of(grid)
    combos = [dict(zip(axes, values)) for values in itertools.product(*axes.values())]
    exclude = list(exclude)
    return [c for c in combos if not any(_matches(c, partial) for partial in exclude)]


class GridExperiment(Experiment):
    """An experiment whose cells are ``config.grid`` × seeds and whose :meth:`measure` returns metrics only.

    Subclasses declare (all optional) ``exclude`` (partial cells never run), ``identity`` (cell parameter →
    config path, the same for every cell of a run), ``columns`` (row column → cell parameter, on every row) and
    ``paper_keys``; they implement :meth:`measure` and may override :meth:`method` (the cell's method name).
    """

    grid_field: ClassVar[str] = "grid"
    exclude: ClassVar[tuple[Mapping[str, Any], ...]] = ()
    identity: ClassVar[Mapping[str, str]] = {}
    columns: ClassVar[Mapping[str, str]] = {}
    paper_keys: ClassVar[PaperKeys | None] = None

    # -- the hooks a runner implements ---------------------------------------------------------------------
    def method(self, config: Any, params: dict) -> str:
        """The name of the cell's method (default: the experiment's name)."""
        return self.name

    def measure(self, config: Any, cell: Cell, ctx: RunContext) -> Iterable[Metric]:
        """Run one cell and return its metrics (no paper keys, no identity columns)."""
        raise NotImplementedError

    # -- what the framework does with them -----------------------------------------------------------------
    def run_identity(self, config: Any) -> dict:
        """The parameters that name every cell of this run (``identity`` read from the config)."""
        from fyexp.tuning import get_path

        return {name: get_path(config, path) for name, path in self.identity.items()}

    def cells(self, config: Any, seeds: tuple[int, ...]) -> list[Cell]:
        fixed = self.run_identity(config)
        combos = expand(getattr(config, self.grid_field, None), self.exclude)
        return [Cell(self.method(config, params), seed, {**params, **fixed}) for params in combos for seed in seeds]

    def rows(self, cell: Cell, metrics: Iterable[Metric]) -> list[dict]:
        """Tidy rows of ``metrics``: declared columns on every row, paper keys on the published metrics."""
        common = {column: cell.params[name] for column, name in self.columns.items()}
        published = self.paper_keys.metrics if self.paper_keys is not None else ()
        rows = []
        for m in metrics:
            value = {"metric": m.name, "value": m.value, **({} if m.tolerance is None else {"tolerance": m.tolerance})}
            keys = self.paper_keys.keys(cell) if m.name in published else [{}]
            rows += [{**common, **paper, **m.columns, **value} for paper in keys]
        return rows

    def run_cell(self, config: Any, cell: Cell, ctx: RunContext) -> list[dict]:
        return self.rows(cell, self.measure(config, cell, ctx))
