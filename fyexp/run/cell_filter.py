"""``fyexp run NAME --only KEY=PATTERN[,PATTERN...]``: run a part of a grid (one data set, one K, one method, ...).

A filter keeps the cells whose value of KEY — ``method``, ``seed`` or a parameter name — matches one of the
shell-style patterns (:func:`fnmatch.fnmatchcase`; floats written as in the cell keys, ``1.5``, ``2``); several
``--only`` options must all hold.  Cells outside the selection are left for a later run.
"""

from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Iterable, Sequence

from fyexp.core.errors import FyexpError
from fyexp.store.results import Cell, _fmt


@dataclass(frozen=True)
class CellFilter:
    """Conjunction of (key, patterns) conditions; a condition holds when any of its patterns matches."""

    conditions: tuple[tuple[str, tuple[str, ...]], ...] = ()

    @staticmethod
    def value(cell: Cell, key: str) -> str | None:
        return (str(getattr(cell, key)) if key in ("method", "seed")
                else _fmt(cell.params[key]) if key in cell.params else None)

    def matches(self, cell: Cell) -> bool:
        return all((value := self.value(cell, key)) is not None and any(fnmatchcase(value, p) for p in patterns)
                   for key, patterns in self.conditions)

    def select(self, cells: Sequence[Cell]) -> list[Cell]:
        """The matching cells; an error naming the choices when a key is unknown or nothing matches."""
        if not self.conditions:
            return list(cells)
        keys = {"method", "seed"} | {k for c in cells for k in c.params}
        for key, _ in self.conditions:
            if key not in keys:
                raise FyexpError(f"--only {key}=...: the cells have no key '{key}'; expected one of "
                                 f"{', '.join(sorted(keys))}")
        chosen = [c for c in cells if self.matches(c)]
        if not chosen:
            choices = "; ".join(f"{key}: {', '.join(sorted({self.value(c, key) or '-' for c in cells}))}"
                                for key, _ in self.conditions)
            raise FyexpError(f"--only {' '.join(self.describe())}: no cell of the grid matches (values in the grid: "
                             f"{choices})")
        return chosen

    def count(self, one_seed: Sequence[Cell], seeds: Sequence[int]) -> int:
        """How many cells of the grid ``one_seed`` × ``seeds`` it selects, without building that grid: (cells of one
        seed the non-seed conditions keep) × (seeds the ``seed`` conditions keep)."""
        on_seed = CellFilter(tuple(c for c in self.conditions if c[0] == "seed"))
        on_rest = CellFilter(tuple(c for c in self.conditions if c[0] != "seed"))
        kept_seeds = sum(on_seed.matches(Cell("", seed, {})) for seed in seeds)
        return sum(on_rest.matches(cell) for cell in one_seed) * kept_seeds

    def describe(self) -> list[str]:
        return [f"{key}={','.join(patterns)}" for key, patterns in self.conditions]


def parse_only(options: Iterable[str] | None) -> CellFilter:
    """``["dataset=caltech", "K=5,50"]`` → a :class:`CellFilter`; a malformed option is a one-line error."""
    conditions = []
    for option in options or ():
        key, sep, patterns = option.partition("=")
        values = tuple(p.strip() for p in patterns.split(",") if p.strip())
        if not sep or not key.strip() or not values:
            raise FyexpError(f"--only {option!r}: expected KEY=PATTERN[,PATTERN...], e.g. --only dataset=boston or "
                             f"--only K=5,50")
        conditions.append((key.strip(), values))
    return CellFilter(tuple(conditions))
