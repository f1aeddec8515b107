"""Grids whose methods have axes of their own: the spec's ``grid:`` maps each method to its axes (``{}`` for none,
``null`` or ``false`` to leave the method out — ``--set grid.<method>=false``), a ragged grid by method::

    grid:
      standard: {}
      sparse: {rho: [1.0, 2.0]}          # cells standard, sparse__rho=1, sparse__rho=2 (× seeds)
      figure: {seed: [0]}                # an axis named seed: the method runs at those seeds only

A runner declares which methods exist and their axes — ``{method: {axis: kind}}``, a kind being ``float``, ``int``
or a tuple of the allowed values — and :func:`check_method_grid` validates a spec's block against it (one-line
errors naming ``grid.<method>.<axis>``), reading ints as floats for a ``float`` axis so that cell keys and settings
do not depend on how a number was written.  :func:`method_cells` expands it: each method's Cartesian product
(:func:`fyexp.experiments.grid.expand`) × seeds, in the order written, the seed innermost (or, ``by_seed``, all of
a method's values for one seed before the next seed).
"""

from __future__ import annotations

from typing import Any, Mapping

from fyexp.errors import ConfigValueError, require
from fyexp.experiments.grid import expand, pinned_seeds
from fyexp.results import Cell

__all__ = ["check_method_grid", "method_cells"]


def _value(kind: Any, value: Any) -> Any:
    """``value`` read as an axis value of ``kind``, or ``None`` when it is not one."""
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind is float:
        return float(value) if number else None
    if kind is int:
        return value if number and isinstance(value, int) else None
    return value if value in kind else None


def _describe(kind: Any) -> str:
    return f"a list of {kind.__name__}s" if isinstance(kind, type) else f"a list of values among {list(kind)}"


def check_method_grid(grid: Mapping[str, Any], declared: Mapping[str, Mapping[str, Any]]) -> dict[str, dict]:
    """``grid`` (method → its axes, or ``None`` / ``False``) checked against ``declared`` (method → axis → kind): the
    methods not left out, each with exactly its declared axes as lists of distinct values of their kinds."""
    out = {}
    for method, axes in grid.items():
        require(method in declared, "grid", f"methods among {list(declared)}", method)
        if axes is None or axes is False:
            continue
        kinds = declared[method]
        require(isinstance(axes, Mapping) and set(axes) == set(kinds), f"grid.{method}", f"the axes {sorted(kinds)}",
                axes)
        out[method] = {}
        for name, values in axes.items():
            where = f"grid.{method}.{name}"
            require(isinstance(values, list) and len(values) > 0, where, "a non-empty list of distinct values", values)
            read = [_value(kinds[name], v) for v in values]
            if any(v is None for v in read):
                raise ConfigValueError(where, _describe(kinds[name]), values)
            require(len(set(read)) == len(read), where, "a non-empty list of distinct values", values)
            out[method][name] = read
    return out


def method_cells(grid: Mapping[str, Mapping[str, list]], seeds: tuple[int, ...], by_seed: bool = False) -> list[Cell]:
    """Each method's own grid × ``seeds``: ``Cell(method, seed, params)``, the seed innermost (``by_seed``: the
    seed outermost within a method); a method with a ``seed`` axis runs at its own seeds instead of the run's."""
    cells = []
    for method, axes in grid.items():
        block = []
        for params in expand(axes):
            params, at = pinned_seeds(params, seeds)
            block += [Cell(method, seed, dict(params)) for seed in at]
        cells += sorted(block, key=lambda c: c.seed) if by_seed else block   # sorted is stable: values keep order
    return cells
