"""Grids declared, not hand-written: a spec's ``grid:`` block becomes cells, a cell's metrics become tidy rows.

A spec declares its axes in a profile (or ``defaults``)::

    grid:
      dataset: [MNIST, FashionMNIST]
      latent_rho: [1.0, 1.5, 2.0]
      exclude: [{dataset: FashionMNIST, latent_rho: 2.0}]     # partial cells never run
      include: [{dataset: MNIST, latent_rho: [0.5, 0.7]}]      # sub-grids added (a ragged grid)

and :class:`GridExperiment` expands them into cells: the Cartesian product of the axes in the order written with
the seed innermost, less the cells matching an ``exclude`` entry, plus each ``include`` entry's own product (its
values a scalar or a list; an entry with ``seed`` runs at that seed only).  An axis named ``method`` is the cell's
method; the others are its ``params``, together with the run's **identity** (``identity``: parameter name →
dotted config path, fixed for the whole run, e.g. the learning rate of a tuned run), so a cell's key names
everything that makes its numbers differ.

The runner's :meth:`GridExperiment.measure` returns :class:`Metric` values only; the framework turns them into
rows, attaching on every row the ``columns`` it declares (row column → cell parameter) and, on the published
metrics, the paper keys ``paper, table, setting, paper_row`` of each declared :class:`PaperKeys` that applies
(one row per published table, e.g. FYVI and FYVL Table 3).  Runners thus never build row dictionaries by hand.

A cell's random streams are declared once, as offsets from its seed (``seed_streams``: ``{"init": 0, "mc":
12345}``), and drawn with :meth:`GridExperiment.seed_stream`, never offset by hand.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import itertools
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Iterable, Mapping, Sequence

from fyexp.errors import ConfigValueError
from fyexp.experiments.base import Experiment, RunContext
from fyexp.results import Cell

__all__ = ["Metric", "metric", "PaperKeys", "GridExperiment", "axes_of", "expand", "pinned_seeds", "check_axes",
           "RAGGED"]

RAGGED = ("include", "exclude")   # keys of a grid block that are not axes


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

    Every metric in ``metrics`` (names or shell patterns, ``test_*``) gets one row per ``(paper, table)`` of
    ``tables`` with ``paper_row = row(cell)``; an empty ``paper_row`` marks a variant the paper does not print,
    named by ``label(cell)``.  ``setting`` is a constant, a function of the cell, or ``None`` when ``setting`` is
    already one of the declared ``columns``.  ``when(cell)`` restricts the declaration to some cells (a runner
    whose cells feed several tables declares one :class:`PaperKeys` per table).
    """

    tables: tuple[tuple[str, str], ...]
    metrics: tuple[str, ...]
    row: Callable[[Cell], str]
    setting: str | Callable[[Cell], str] | None = None
    label: Callable[[Cell], str | None] | None = None
    when: Callable[[Cell], bool] | None = None

    def publishes(self, cell: Cell, name: str) -> bool:
        """Whether metric ``name`` of ``cell`` is one of this declaration's published cells."""
        return (self.when is None or self.when(cell)) and any(fnmatch.fnmatchcase(name, m) for m in self.metrics)

    def keys(self, cell: Cell) -> list[dict]:
        """The paper keys of a published metric of ``cell``: one mapping per table."""
        base = {"paper_row": self.row(cell)}
        if self.setting is not None:
            base["setting"] = self.setting(cell) if callable(self.setting) else self.setting
        label = self.label(cell) if self.label is not None else None
        if label is not None:
            base["label"] = label
        return [{"paper": paper, "table": table, **base} for paper, table in self.tables]


def _raw(grid: Any) -> dict:
    if grid is None:
        return {}
    if dataclasses.is_dataclass(grid) and not isinstance(grid, type):
        return {f.name: getattr(grid, f.name) for f in dataclasses.fields(grid)}
    return dict(grid)


def axes_of(grid: Any) -> dict[str, list]:
    """The axes of a grid given as a mapping or as a dataclass instance whose fields are the axes (``include`` and
    ``exclude`` are not axes)."""
    return {name: list(values) for name, values in _raw(grid).items() if name not in RAGGED}


def ragged_of(grid: Any) -> tuple[list[dict], list[dict]]:
    """The grid's ``include`` and ``exclude`` entries (empty lists where it declares none)."""
    raw = _raw(grid)
    return [dict(e) for e in raw.get("include") or ()], [dict(e) for e in raw.get("exclude") or ()]


def check_axes(grid: Any) -> None:
    """Raise :class:`ConfigValueError` (→ a one-line spec error) for an axis that is not a non-empty list of
    distinct values, or an ``include`` / ``exclude`` entry that is not a mapping of the grid's axes (``include``:
    of all of them, plus an optional ``seed``)."""
    axes = axes_of(grid)
    for name, values in axes.items():
        if not isinstance(values, (list, tuple)) or not values or len(set(map(repr, values))) != len(values):
            raise ConfigValueError(name, "a non-empty list of distinct values", values)
    raw = _raw(grid)
    for key in RAGGED:
        entries = raw.get(key) or []
        if not isinstance(entries, (list, tuple)) or not all(isinstance(e, Mapping) and e for e in entries):
            raise ConfigValueError(key, "a list of non-empty mappings of axis values", entries)
    include, exclude = ragged_of(grid)
    for entry in exclude:
        if not set(entry) <= set(axes):
            raise ConfigValueError("exclude", f"entries naming axes among {sorted(axes)}", entry)
    names = set(axes) or (set(include[0]) - {"seed"} if include else set())
    for entry in include:
        if set(entry) - {"seed"} != names:
            raise ConfigValueError("include", f"entries naming every axis {sorted(names)} (and optionally seed)",
                                   entry)


def _matches(params: dict, partial: Mapping[str, Any]) -> bool:
    return all(name in params and params[name] == value for name, value in partial.items())


def _product(axes: Mapping[str, Any]) -> list[dict]:
    lists = {k: list(v) if isinstance(v, (list, tuple)) else [v] for k, v in axes.items()}
    return [dict(zip(lists, values)) for values in itertools.product(*lists.values())]


def expand(grid: Any, exclude: Iterable[Mapping[str, Any]] = ()) -> list[dict]:
    """Every combination of the axes (the last axis varying fastest), less those matching an ``exclude`` entry (the
    grid's and the argument's), then each ``include`` entry's product not already there.  No axes: one empty cell,
    or only the ``include`` entries' cells where there are some."""
    include, declared = ragged_of(grid)
    exclude = declared + [dict(e) for e in exclude]
    axes = axes_of(grid)
    product = _product(axes) if axes or not include else []     # a grid of include entries only: just those
    combos = [c for c in product if not any(_matches(c, partial) for partial in exclude)]
    for entry in include:
        combos += [c for c in _product(entry) if c not in combos]
    return combos


def pinned_seeds(params: Mapping[str, Any], seeds: Sequence[int]) -> tuple[dict, tuple[int, ...]]:
    """A grid point's parameters without ``seed``, and the seeds it runs at: the run's ``seeds``, or only the point's
    own ``seed`` where it pins one (an ``include`` entry's or a per-method ``seed`` axis's value)."""
    own = dict(params)
    pinned = own.pop("seed", None)
    return own, ((pinned,) if pinned is not None else tuple(seeds))


class GridExperiment(Experiment):
    """An experiment whose cells are ``config.grid`` × seeds and whose :meth:`measure` returns metrics only.

    Subclasses declare (all optional) ``identity`` (cell parameter → config path, the same for every cell of a
    run), ``columns`` (row column → cell parameter, on every row), ``paper_keys`` (one :class:`PaperKeys` or a
    tuple of them) and ``seed_streams``; they implement :meth:`measure` and may override :meth:`method` (the
    cell's method name, where the grid has no ``method`` axis) and :meth:`metric_name` (the stored name of a
    metric, e.g. a convention suffix).  Ragged grids are declared in the spec (``include`` / ``exclude``).
    """

    grid_field: ClassVar[str] = "grid"
    identity: ClassVar[Mapping[str, str]] = {}
    columns: ClassVar[Mapping[str, str]] = {}
    paper_keys: ClassVar[PaperKeys | Sequence[PaperKeys] | None] = None
    seed_streams: ClassVar[Mapping[str, int]] = {"init": 0}

    # -- the hooks a runner implements ---------------------------------------------------------------------
    def method(self, config: Any, params: dict) -> str:
        """The name of the cell's method (default: the experiment's name)."""
        return self.name

    def measure(self, config: Any, cell: Cell, ctx: RunContext) -> Iterable[Metric]:
        """Run one cell and return its metrics (no paper keys, no identity columns)."""
        raise NotImplementedError

    def metric_name(self, cell: Cell, name: str) -> str:
        """The stored name of metric ``name`` of ``cell`` (default: unchanged); paper keys match the plain name."""
        return name

    def seed_stream(self, cell: Cell, stream: str) -> int:
        """The seed of ``cell``'s random stream ``stream``: its seed plus the offset ``seed_streams`` declares."""
        if stream not in self.seed_streams:
            raise KeyError(f"{self.name}: no seed stream {stream!r} declared (seed_streams: {dict(self.seed_streams)})")
        return cell.seed + self.seed_streams[stream]

    # -- what the framework does with them -----------------------------------------------------------------
    def run_identity(self, config: Any) -> dict:
        """The parameters that name every cell of this run (``identity`` read from the config)."""
        from fyexp.specs import get_path

        return {name: get_path(config, path) for name, path in self.identity.items()}

    def cells(self, config: Any, seeds: tuple[int, ...]) -> list[Cell]:
        fixed = self.run_identity(config)
        cells = []
        for params in expand(getattr(config, self.grid_field, None)):
            method = params.pop("method") if "method" in params else self.method(config, params)
            params, at = pinned_seeds(params, seeds)
            cells += [Cell(method, seed, {**params, **fixed}) for seed in at]
        return cells

    def paper_keys_for(self, config: Any) -> tuple[PaperKeys, ...]:
        """The run's paper-key declarations: ``paper_keys`` (override where they depend on the config, e.g. the
        figure seed that names a reference row)."""
        keys = self.paper_keys
        return () if keys is None else (keys,) if isinstance(keys, PaperKeys) else tuple(keys)

    def rows(self, cell: Cell, metrics: Iterable[Metric], config: Any = None) -> list[dict]:
        """Tidy rows of ``metrics``: declared columns on every row, paper keys on the published metrics."""
        common = {column: cell.params[name] for column, name in self.columns.items()}
        declared = self.paper_keys_for(config)
        rows = []
        for m in metrics:
            value = {"metric": self.metric_name(cell, m.name), "value": m.value,
                     **({} if m.tolerance is None else {"tolerance": m.tolerance})}
            keys = [k for d in declared if d.publishes(cell, m.name) for k in d.keys(cell)] or [{}]
            rows += [{**common, **paper, **m.columns, **value} for paper in keys]
        return rows

    def run_cell(self, config: Any, cell: Cell, ctx: RunContext) -> list[dict]:
        return self.rows(cell, self.measure(config, cell, ctx), config)
