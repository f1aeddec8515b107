"""The domain of every command-line setting, declared once, and the generic domain rules of spec values.

Like scikit-learn's ``_parameter_constraints``, each option maps to a constraint (:class:`Interval`); one function,
:func:`check_options`, checks every given value against the table and raises a one-line
:class:`~fyexp.core.errors.FyexpError` (exit 2) naming the option and its domain.  Spec values get the rules that hold
for every setting (:func:`spec_value_problem`: a number is finite, a list is not empty); a setting's own range is
the ``require`` call in its ``Config.__post_init__``.  A grid's size is bounded by :data:`MAX_CELLS`
(:func:`check_grid_size`), past which a run needs ``--yes``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from fyexp.core.errors import FyexpError

MAX_SEED = 2**32 - 1          # NumPy's and scikit-learn's largest seed
MAX_CELLS = 10_000            # cells one run may start without --yes


@dataclass(frozen=True)
class Interval:
    """Finite numbers of ``kind`` (``int`` or ``float``) between ``low`` and ``high`` (None: unbounded): the one
    domain of a number, a command-line option's (:data:`OPTION_DOMAINS`) and a spec setting's
    (:mod:`fyexp.core.constraints`) alike.

    ``closed`` is ``"both"``, ``"left"``, ``"right"`` or ``"neither"``: which ends belong to the interval.
    """

    kind: type
    low: float | None
    high: float | None
    closed: str = "both"

    def contains(self, value: Any) -> bool:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return False
        if self.kind is int and not isinstance(value, int):
            return False
        if not math.isfinite(value):
            return False
        left_ok = self.low is None or value > self.low or (value == self.low and self.closed in ("both", "left"))
        right_ok = self.high is None or value < self.high or (value == self.high and self.closed in ("both", "right"))
        return left_ok and right_ok

    def describe(self, plural: bool = False) -> str:
        """``an integer >= 1``, ``a positive number``, ``a number in [0, 1)``; ``plural``: as the items of a list
        are described (``integers >= 2``, ``positive numbers``)."""
        what = "an integer" if self.kind is int else "a number"
        left_closed, right_closed = self.closed in ("both", "left"), self.closed in ("both", "right")
        if self.kind is float and self.low == 0 and self.high is None:
            text = "a number >= 0" if left_closed else "a positive number"
        elif self.low is not None and self.high is not None:
            text = f"{what} in {'[' if left_closed else '('}{self.low}, {self.high}{']' if right_closed else ')'}"
        elif self.low is not None:
            text = f"{what} {'>=' if left_closed else '>'} {self.low}"
        elif self.high is not None:
            text = f"{what} {'<=' if right_closed else '<'} {self.high}"
        else:
            text = what
        if plural:
            text = text.replace("a positive number", "positive numbers").replace("an integer", "integers")
            text = text.replace("a number", "numbers")
        return text


OPTION_DOMAINS: dict[str, Interval] = {
    "--n-trials": Interval(int, 1, None),
    "--timeout": Interval(float, 0, None, closed="neither"),
    "--jobs": Interval(int, 1, None),
    "--threads-per-job": Interval(int, 1, None),
    "--slurm-gpus-per-job": Interval(int, 0, None),
    "--slurm-cpus-per-job": Interval(int, 1, None),
    "--slurm-mem-gb": Interval(float, 0, None, closed="neither"),
    "--slurm-time": Interval(int, 1, None),
    "--seeds": Interval(int, 0, MAX_SEED),
    # the GPU kit's (scripts/gpu_lease.py pack / run / merge)
    "--speedup": Interval(float, 0, None, closed="neither"),
    "--ensemble-cost": Interval(float, 0, None),
    "--concurrency-gain": Interval(float, 0, None, closed="neither"),
    "--jobs-per-allocation": Interval(int, 1, None),
    "--budget-s": Interval(float, 0, None, closed="neither"),
    "--max-mib": Interval(float, 0, None, closed="neither"),
    "--reserve-mib": Interval(float, 0, None),
    "--min-start-s": Interval(float, 0, None),
}


def check_options(values: dict[str, Any]) -> None:
    """Check each given (not None) option value against :data:`OPTION_DOMAINS`; one line naming the first bad one."""
    for option, value in values.items():
        if value is None:
            continue
        domain = OPTION_DOMAINS[option]
        if not domain.contains(value):
            raise FyexpError(f"{option}: expected {domain.describe()}, got {value!r}")


def spec_value_problem(value: Any, default: Any = None) -> str | None:
    """What every spec value must be, whatever its setting: numbers finite (inside lists and mappings too), and
    lists (grid axes) not empty unless the setting's ``default`` is itself empty."""
    if isinstance(value, float) and not math.isfinite(value):
        return "a finite number (not .nan or .inf)"
    if isinstance(value, list) and not value and default != []:
        return "a non-empty list (an empty grid axis would drop every cell)"
    inner = value if isinstance(value, list) else list(value.values()) if isinstance(value, dict) else []
    for item in inner:
        problem = spec_value_problem(item, default=[])
        if problem is not None:
            return problem
    return None


def check_grid_size(n_cells: int, yes: bool) -> None:
    """Refuse a run of more than :data:`MAX_CELLS` cells unless the user said ``--yes``."""
    if n_cells > MAX_CELLS and not yes:
        raise FyexpError(f"the grid has {n_cells:,} cells, more than the limit of {MAX_CELLS:,}; "
                         f"narrow --seeds / --only or pass --yes to start it anyway")


# ---- a cell's memory, before it starts ------------------------------------------------------------------------
def available_memory() -> int | None:
    """Bytes of memory available to a new allocation (``MemAvailable`` of /proc/meminfo; ``None`` where unknown)."""
    try:
        with open("/proc/meminfo", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def check_cell_memory(experiment, config, cells, yes: bool, available: int | None = None) -> None:
    """Refuse a run one of whose cells an experiment estimates to need more memory than is available, unless
    ``--yes``: the experiment's ``memory_estimate(config, cell) -> (bytes, what)`` (its largest arrays, e.g.
    gmm-calibration's n_replicas × n data and responsibilities); one line naming the cell, the estimate and the
    settings behind it.  Cells without an estimate (``None``, the default) are not checked here (a MemoryError
    during a cell is still one line, :func:`fyexp.cli.main`)."""
    if yes:
        return
    estimates = [(*e, c) for c in cells if (e := experiment.memory_estimate(config, c)) is not None]
    available = available_memory() if available is None and estimates else available
    if not estimates or available is None:
        return
    need, what, cell = max(estimates, key=lambda item: item[0])
    if need > available:
        raise FyexpError(f"cell {cell.key} would need about {need / 2**30:,.1f} GiB ({what}), more than the "
                         f"{available / 2**30:,.1f} GiB available; lower those settings or pass --yes to start it "
                         f"anyway")
