"""The one grid mechanism: a spec's ``grid:`` block becomes cells, a cell's metrics become tidy rows.

**Cells.**  A grid is written in one of two shapes, both expanded by :func:`cells_of`:

* *axes* (a runner's :func:`axes` class: each axis a list, declared with its domain in :mod:`fyexp.core.constraints`)::

      grid:
        dataset: [MNIST, FashionMNIST]
        latent_rho: [1.0, 1.5, 2.0]
        exclude: [{dataset: FashionMNIST, latent_rho: 2.0}]     # partial cells never run
        include: [{dataset: MNIST, latent_rho: [0.5, 0.7]}]      # sub-grids added (a ragged grid)

  the Cartesian product of the axes in the order written, less the cells matching an ``exclude`` entry, plus each
  ``include`` entry's own product (its values a scalar or a list) not already there;

* *per-method axes* (each method mapped to its own axes, ``{}`` for none, ``null`` / ``false`` to leave it out —
  ``--set grid.<method>=false``; the axes declared per method, :func:`check_method_grid`)::

      grid:
        standard: {}
        sparse: {rho: [1.0, 2.0]}          # cells standard, sparse__rho=1, sparse__rho=2 (× seeds)
        figure: {seed: [0]}                # a seed axis: the method runs at those seeds only

  which is the same as one ``include`` entry per method, ``{method: <name>, **its axes}``.

Each grid point runs at every seed of the run, the seed innermost (or, ``by_seed``, all of a method's points at
one seed before the next seed), unless it **pins** its seeds (a ``seed`` in an ``include`` entry or a per-method
``seed`` axis).  A ``method`` value is the cell's method (else the runner names it); a ``null`` value is no
parameter (vr-vae's ``fold`` of the sets that have none); the other values are the cell's ``params``, together
with the run's **identity** (``identity``: parameter name → dotted config path, fixed for the whole run, e.g. the
learning rate of a tuned run), so a cell's key names everything that makes its numbers differ.  No grid (a runner
without one): one cell per seed; a grid given as an empty mapping has no cell, which a run refuses
(:data:`EMPTY_GRID`, :func:`fyexp.run.plan.grid_cells`) wherever it was written, a spec file or ``--set``.

**Rows.**  The runner's :meth:`GridExperiment.measure` returns :class:`Metric` values only; the framework turns
them into rows (:meth:`GridExperiment.rows`), attaching on every row the ``columns`` it declares (row column →
cell parameter) and, on the published metrics, the paper keys ``paper, table, setting, paper_row`` of each
declared :class:`PaperKeys` that applies (one row per published table, e.g. FYVI and FYVL Table 3); a metric's
own columns (``k``, ``split``, a ``label``, or paper keys that vary metric by metric) go on its row.  Runners
thus never build row dictionaries by hand.

A cell's random streams are declared once, as offsets from its seed (``seed_streams``: ``{"init": 0, "mc":
12345}``), and drawn with :meth:`GridExperiment.seed_stream`, never offset by hand.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import functools
import itertools
import math
import typing
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Iterable, Mapping, Sequence

from fyexp.core.constraints import conforms, describe, settings
from fyexp.core.errors import ConfigValueError, FyexpError, require
from fyexp.experiments.base import Experiment, RunContext
from fyexp.store.results import Cell

__all__ = ["EMPTY_GRID", "GridExperiment", "Metric", "PaperKeys", "axes", "cells_of", "check_axes",
           "check_method_grid", "expand", "metric"]

RAGGED = ("include", "exclude")   # keys of an axes grid that are not axes
# points one grid may expand to: beyond it a grid is refused before any point is built (10⁹ cells written as three
# axes of 1,000 values would fill the memory while being listed); a run of more than domains.MAX_CELLS asks --yes
MAX_GRID_POINTS = 1_000_000
EMPTY_GRID = "a grid of at least one cell"   # a grid with no cell is refused (fyexp.run.plan.grid_cells)


# ---- declaring a grid ----------------------------------------------------------------------------------------------
def axes(cls: type) -> type:
    """Class decorator: a :func:`fyexp.core.constraints.settings` class whose fields are a grid's axes (each a list, its
    items' type and domain declared in its type) and optionally ``include`` / ``exclude``; construction checks the
    fields' domains, then :func:`check_axes`, then each ``include`` entry's values against the same declarations
    (:func:`_typed_entries`), then the class's own ``__post_init__`` (checks across axes).  A spec that gives it as
    an empty mapping is refused (:data:`EMPTY_GRID`, :func:`fyexp.spec.specs.build_config`) rather than read as the
    default grid."""
    own = cls.__dict__.get("__post_init__")

    def __post_init__(self) -> None:
        check_axes(self)
        if "include" in _item_hints(type(self)):
            self.include = _typed_entries(self.include, _item_hints(type(self)))
        if own is not None:
            own(self)

    cls.__post_init__ = __post_init__
    cls.__empty__ = EMPTY_GRID   # what fyexp.spec.specs.build_config expects instead of an empty mapping
    return settings(cls)


@functools.lru_cache(maxsize=None)
def _item_hints(cls: type) -> dict[str, Any]:
    """Field → the declared type of one of its items (``list[PositiveInt]`` → ``PositiveInt``)."""
    hints = typing.get_type_hints(cls, include_extras=True)
    return {f.name: (typing.get_args(hints[f.name]) or (Any,))[0] for f in dataclasses.fields(cls)}


def _typed_entries(entries: list[dict], items: Mapping[str, Any]) -> list[dict]:
    """``include`` entries whose values (a scalar or a list) are checked against their axis's declared item type and
    domain, ints read as floats on a float axis; errors name ``include[i].<axis>``."""
    typed = []
    for i, entry in enumerate(entries):
        out = {}
        for name, value in entry.items():
            if name in RAGGED or name not in items:
                out[name] = value
                continue
            listed = value if isinstance(value, list) else [value]
            read = _axis_values(f"include[{i}].{name}", listed, items[name], got=value)
            out[name] = read if isinstance(value, list) else read[0]
        typed.append(out)
    return typed


def _raw(grid: Any) -> dict:
    if dataclasses.is_dataclass(grid) and not isinstance(grid, type):
        return {f.name: getattr(grid, f.name) for f in dataclasses.fields(grid)}
    return dict(grid)


def _axes_of(raw: Mapping) -> dict[str, list]:
    return {name: list(values) for name, values in raw.items() if name not in RAGGED}


def _ragged_of(raw: Mapping) -> tuple[list[dict], list[dict]]:
    return [dict(e) for e in raw.get("include") or ()], [dict(e) for e in raw.get("exclude") or ()]


def check_axes(grid: Any) -> None:
    """Raise :class:`ConfigValueError` (→ a one-line spec error) for an axis that is not a non-empty list of
    distinct values, or an ``include`` / ``exclude`` entry that is not a mapping of the grid's axes (``include``:
    of all of them, plus an optional ``seed``)."""
    raw = _raw(grid)
    names = [name for name in raw if name not in RAGGED]
    for name, values in raw.items():
        if name not in RAGGED and (not isinstance(values, (list, tuple)) or not values
                                   or len(set(map(repr, values))) != len(values)):
            raise ConfigValueError(name, "a non-empty list of distinct values", values)
    for key in RAGGED:
        entries = raw.get(key) or []
        if not isinstance(entries, (list, tuple)) or not all(isinstance(e, Mapping) and e for e in entries):
            raise ConfigValueError(key, "a list of non-empty mappings of axis values", entries)
    include, exclude = _ragged_of(raw)
    for entry in exclude:
        if not set(entry) <= set(names):
            raise ConfigValueError("exclude", f"entries naming axes among {sorted(names)}", entry)
    every = set(names) or (set(include[0]) - {"seed"} if include else set())
    for entry in include:
        if set(entry) - {"seed"} != every:
            raise ConfigValueError("include", f"entries naming every axis {sorted(every)} (and optionally seed)",
                                   entry)


def _base(hint: Any) -> Any:
    return typing.get_args(hint)[0] if typing.get_origin(hint) is typing.Annotated else hint


def _axis_values(where: str, values: Any, hint: Any, got: Any = None) -> list:
    """An axis's values (of a method, or of an ``include`` entry) checked against its declared item type and domain
    (:func:`fyexp.core.constraints.conforms`): a non-empty list of distinct values, ints read as floats on a ``float``
    axis (so that cell keys and settings do not depend on how a number was written); ``got``: the value as written,
    in an error (default: ``values``)."""
    got = values if got is None else got
    require(isinstance(values, list) and len(values) > 0, where, "a non-empty list of distinct values", got)
    if not conforms(values, list[hint]):
        raise ConfigValueError(where, f"a list of {describe(hint, plural=True)}", got)
    read = [float(v) for v in values] if _base(hint) is float else list(values)
    require(len(set(read)) == len(read), where, "a non-empty list of distinct values", got)
    return read


def check_method_grid(grid: Mapping[str, Any], declared: Mapping[str, Mapping[str, Any]]) -> dict[str, dict]:
    """A per-method grid (method → its axes, or ``None`` / ``False`` to leave it out) checked against ``declared``
    (method → axis → its type, with its domain as :mod:`fyexp.core.constraints` declares a setting's: ``PositiveFloat``,
    ``Annotated[str, OneOf(...)]``): the methods not left out, each with exactly its declared axes.  Errors name
    ``grid``, ``grid.<method>`` or ``grid.<method>.<axis>``; an empty mapping is :data:`EMPTY_GRID`."""
    require(len(grid) > 0, "grid", EMPTY_GRID, grid)
    out = {}
    for method, given in grid.items():
        require(method in declared, "grid", f"methods among {list(declared)}", method)
        if given is None or given is False:
            continue
        hints = declared[method]
        require(isinstance(given, Mapping) and set(given) == set(hints), f"grid.{method}", f"the axes {sorted(hints)}",
                given)
        out[method] = {name: _axis_values(f"grid.{method}.{name}", values, hints[name])
                       for name, values in given.items()}
    return out


# ---- expanding a grid ----------------------------------------------------------------------------------------------
def _is_method_grid(grid: Any) -> bool:
    return (isinstance(grid, Mapping) and bool(grid)
            and all(isinstance(v, Mapping) or v is None or v is False for v in grid.values()))


def _matches(params: dict, partial: Mapping[str, Any]) -> bool:
    return all(name in params and params[name] == value for name, value in partial.items())


def _product(values: Mapping[str, Any]) -> list[dict]:
    lists = {k: list(v) if isinstance(v, (list, tuple)) else [v] for k, v in values.items()}
    return [dict(zip(lists, chosen)) for chosen in itertools.product(*lists.values())]


def _product_size(values: Mapping[str, Any]) -> int:
    return math.prod(len(v) if isinstance(v, (list, tuple)) else 1 for v in values.values())


def check_grid_points(names: Mapping[str, list], include: Sequence[Mapping], seeds: int = 1) -> None:
    """Refuse (one line, exit 2) a grid whose points, counted from its axes' lengths before any is built (the
    product of the axes plus each ``include`` entry's product, times ``seeds``), exceed :data:`MAX_GRID_POINTS`."""
    from fyexp.core.errors import FyexpError

    count = ((_product_size(names) if names else 0) + sum(_product_size(e) for e in include)) * max(seeds, 1)
    if count > MAX_GRID_POINTS:
        sizes = " × ".join(str(len(v)) for v in names.values()) or "its include entries"
        raise FyexpError(f"the grid has up to {count:,} cells ({sizes}{f' × {seeds} seeds' if seeds > 1 else ''}), "
                         f"more than the {MAX_GRID_POINTS:,} a run may list; narrow its axes (a spec's grid: or "
                         f"--set grid.<axis>=[...])")


def expand(grid: Any) -> list[dict]:
    """The grid's points (see the module docstring): every combination of the axes (the last axis varying fastest),
    less those matching an ``exclude`` entry, then each ``include`` entry's product not already there; a per-method
    grid as one ``include`` entry per method kept.  ``None`` (no grid): one empty point; an empty grid: none."""
    if grid is None:
        return [{}]
    if _is_method_grid(grid):
        grid = {"include": [{"method": m, **a} for m, a in grid.items() if isinstance(a, Mapping)]}
    raw = _raw(grid)
    include, exclude = _ragged_of(raw)
    names = _axes_of(raw)
    check_grid_points(names, include)
    points = [c for c in (_product(names) if names else []) if not any(_matches(c, e) for e in exclude)]
    for entry in include:
        points += [c for c in _product(entry) if c not in points]
    return points


def cells_of(grid: Any, seeds: Sequence[int], method: Callable[[dict], str | None] = lambda params: None,
             fixed: Mapping[str, Any] | None = None, by_seed: bool = False) -> list[Cell]:
    """The cells of ``grid`` × ``seeds``: each point's ``method`` value (else ``method(params)``), its other non-null
    values and ``fixed`` as params, at each seed of the run, the seed innermost, or at the seeds the point pins.
    ``by_seed``: all of a method's points at one seed before the next seed (the written order kept otherwise)."""
    cells = []
    points = expand(grid)
    if len(points) * max(len(seeds), 1) > MAX_GRID_POINTS:
        check_grid_points({"points": points}, (), len(seeds))
    for point in points:
        name = point.pop("method", None)
        pinned = point.pop("seed", None)
        params = {k: v for k, v in point.items() if v is not None}
        name = method(params) if name is None else name
        at = (pinned,) if pinned is not None else tuple(seeds)
        cells += [Cell(name, seed, {**params, **(fixed or {})}) for seed in at]
    if by_seed:
        first = {}
        for i, cell in enumerate(cells):
            first.setdefault(cell.method, i)
        cells.sort(key=lambda c: (first[c.method], c.seed))    # stable: a seed's points keep their order
    return cells


# ---- rows --------------------------------------------------------------------------------------------------------
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


class GridExperiment(Experiment):
    """An experiment whose cells are ``config.grid`` × seeds (:func:`cells_of`) and whose :meth:`measure` returns
    metrics only, which :meth:`rows` turns into rows.

    Subclasses declare (all optional) ``identity`` (cell parameter → config path, the same for every cell of a
    run), ``columns`` (row column → cell parameter, on every row), ``paper_keys`` (one :class:`PaperKeys` or a
    tuple of them), ``seed_streams``, ``by_seed`` (the run order) and ``records`` (metrics of the run, stored as
    measured); they implement :meth:`measure` and may override :meth:`method` (the cell's method name, where the
    grid has no ``method`` values), :meth:`metric_name` (the stored name of a metric, e.g. a convention suffix)
    and :meth:`row_defaults`.  Ragged grids are declared in the spec (``include`` / ``exclude``).
    """

    grid_field: ClassVar[str] = "grid"
    identity: ClassVar[Mapping[str, str]] = {}
    columns: ClassVar[Mapping[str, str]] = {}
    paper_keys: ClassVar[PaperKeys | Sequence[PaperKeys] | None] = None
    seed_streams: ClassVar[Mapping[str, int]] = {"init": 0}
    by_seed: ClassVar[bool] = False
    records: ClassVar[tuple[str, ...]] = ()

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

    def row_defaults(self, cell: Cell) -> dict:
        """Columns under every row of ``cell``, which a row's own columns override (default: none)."""
        return {}

    def seed_stream(self, cell: Cell, stream: str) -> int:
        """The seed of ``cell``'s random stream ``stream``: its seed plus the offset ``seed_streams`` declares."""
        if stream not in self.seed_streams:
            raise KeyError(f"{self.name}: no seed stream {stream!r} declared (seed_streams: {dict(self.seed_streams)})")
        return cell.seed + self.seed_streams[stream]

    # -- what the framework does with them -----------------------------------------------------------------
    def run_identity(self, config: Any) -> dict:
        """The parameters that name every cell of this run (``identity`` read from the config)."""
        from fyexp.spec.specs import get_path

        return {name: get_path(config, path) for name, path in self.identity.items()}

    def cells(self, config: Any, seeds: tuple[int, ...]) -> list[Cell]:
        return cells_of(getattr(config, self.grid_field, None), seeds, lambda params: self.method(config, params),
                        self.run_identity(config), self.by_seed)

    def paper_keys_for(self, config: Any) -> tuple[PaperKeys, ...]:
        """The run's paper-key declarations: ``paper_keys`` (override where they depend on the config, e.g. the
        figure seed that names a reference row)."""
        keys = self.paper_keys
        return () if keys is None else (keys,) if isinstance(keys, PaperKeys) else tuple(keys)

    def is_record(self, m: Metric) -> bool:
        """Whether ``m`` is stored as measured: a metric of the run (``records``: wall seconds, epochs) or one that
        could not be measured (a ``status`` column other than ``ok``)."""
        return m.name in self.records or m.columns.get("status", "ok") != "ok"

    def rows(self, cell: Cell, metrics: Iterable[Metric], config: Any = None) -> list[dict]:
        """Tidy rows of ``metrics``: :meth:`row_defaults` under every row; on a measured metric the declared columns,
        the paper keys where it is published, its own columns; records (:meth:`is_record`) after them, with their own
        columns only."""
        metrics = list(metrics)
        common = {column: cell.params[name] for column, name in self.columns.items()}
        declared, defaults = self.paper_keys_for(config), self.row_defaults(cell)
        rows, records = [], []
        for m in metrics:
            if self.is_record(m):
                records.append({**defaults, **m.columns, "metric": m.name, "value": m.value})
                continue
            value = {"metric": self.metric_name(cell, m.name), "value": m.value,
                     **({} if m.tolerance is None else {"tolerance": m.tolerance})}
            keys = [k for d in declared if d.publishes(cell, m.name) for k in d.keys(cell)] or [{}]
            rows += [{**defaults, **common, **paper, **m.columns, **value} for paper in keys]
        return rows + records

    def run_cell(self, config: Any, cell: Cell, ctx: RunContext) -> list[dict]:
        return self.rows(cell, self.measure(config, cell, ctx), config)
