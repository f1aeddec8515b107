"""The domain of every command-line setting, declared once, and the generic domain rules of spec values.

Like scikit-learn's ``_parameter_constraints``, each option maps to a constraint (:class:`Interval`), checked by
:func:`check_options` into a one-line :class:`~fyexp.core.errors.FyexpError` (exit 2).  Every spec value obeys
:func:`spec_value_problem` (a number is finite, a list is not empty); a grid past :data:`MAX_CELLS` cells, or a cell
past the available memory, needs ``--yes``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fyexp.core.errors import FyexpError

MAX_SEED = 2**32 - 1          # NumPy's and scikit-learn's largest seed
MAX_CELLS = 10_000            # cells one run may start without --yes


@dataclass(frozen=True)
class Interval:
    """Finite numbers of ``kind`` (``int`` or ``float``) between ``low`` and ``high`` (None: unbounded), whose ends
    ``closed`` names (``"both"``, ``"left"``, ``"right"``, ``"neither"``): the one domain of a number, a command-line
    option's and a spec setting's (:mod:`fyexp.core.constraints`) alike."""

    kind: type
    low: float | None
    high: float | None
    closed: str = "both"

    def contains(self, value: Any) -> bool:
        left, right = self.closed in ("both", "left"), self.closed in ("both", "right")
        return (isinstance(value, (int, self.kind)) and not isinstance(value, bool) and math.isfinite(value)
                and (self.low is None or value > self.low or left and value == self.low)
                and (self.high is None or value < self.high or right and value == self.high))

    def describe(self, plural: bool = False) -> str:
        """``an integer >= 1``, ``a positive number``, ``a number in [0, 1)``; ``plural``: as the items of a list
        are described (``integers >= 2``, ``positive numbers``)."""
        left, right = self.closed in ("both", "left"), self.closed in ("both", "right")
        what = ("integers" if plural else "an integer") if self.kind is int else "numbers" if plural else "a number"
        if self.kind is float and self.low == 0 and self.high is None and not left:
            return "positive numbers" if plural else "a positive number"
        if self.low is not None and self.high is not None:
            return f"{what} in {'[(' [not left]}{self.low}, {self.high}{')]'[right]}"
        if self.low is not None:
            return f"{what} {'>=' if left else '>'} {self.low}"
        return f"{what} {'<=' if right else '<'} {self.high}" if self.high is not None else what


_POSITIVE_INT, _POSITIVE = Interval(int, 1, None), Interval(float, 0, None, closed="neither")
OPTION_DOMAINS: dict[str, Interval] = {   # the GPU kit's (scripts/gpu_lease.py) from --speedup on
    **dict.fromkeys(("--n-trials", "--jobs", "--threads-per-job", "--slurm-cpus-per-job", "--slurm-time",
                     "--jobs-per-allocation"), _POSITIVE_INT),
    **dict.fromkeys(("--timeout", "--slurm-mem-gb", "--speedup", "--concurrency-gain", "--budget-s", "--max-mib"),
                    _POSITIVE),
    **dict.fromkeys(("--ensemble-cost", "--reserve-mib", "--min-start-s"), Interval(float, 0, None)),
    "--slurm-gpus-per-job": Interval(int, 0, None),
    "--seeds": Interval(int, 0, MAX_SEED),
}


def check_options(values: dict[str, Any]) -> None:
    """Check each given (not None) option value against :data:`OPTION_DOMAINS`; one line naming the first bad one."""
    for option, value in values.items():
        if value is not None and not OPTION_DOMAINS[option].contains(value):
            raise FyexpError(f"{option}: expected {OPTION_DOMAINS[option].describe()}, got {value!r}")


def spec_value_problem(value: Any, default: Any = None) -> str | None:
    """What every spec value must be, whatever its setting: numbers finite (inside lists and mappings too), and
    lists (grid axes) not empty unless the setting's ``default`` is itself empty."""
    if isinstance(value, float) and not math.isfinite(value):
        return "a finite number (not .nan or .inf)"
    if isinstance(value, list) and not value and default != []:
        return "a non-empty list (an empty grid axis would drop every cell)"
    inner = value if isinstance(value, list) else value.values() if isinstance(value, dict) else ()
    return next((p for item in inner if (p := spec_value_problem(item, default=[])) is not None), None)


def check_grid_size(n_cells: int, yes: bool) -> None:
    """Refuse a run of more than :data:`MAX_CELLS` cells unless the user said ``--yes``."""
    if n_cells > MAX_CELLS and not yes:
        raise FyexpError(f"the grid has {n_cells:,} cells, more than the limit of {MAX_CELLS:,}; "
                         f"narrow --seeds / --only or pass --yes to start it anyway")


def available_memory() -> int | None:
    """Bytes of memory available to a new allocation (``MemAvailable`` of /proc/meminfo; ``None`` where unknown)."""
    try:
        return int(re.search(r"^MemAvailable:\s+(\d+)", Path("/proc/meminfo").read_text("ascii"), re.M)[1]) * 1024
    except (OSError, ValueError, TypeError):
        return None


def check_cell_memory(experiment, config, cells, yes: bool, available: int | None = None) -> None:
    """Refuse a run one of whose cells an experiment estimates to need more memory than is available, unless
    ``--yes``: the experiment's ``memory_estimate(config, cell) -> (bytes, what)`` (its largest arrays), one line
    naming the cell, the estimate and the settings behind it.  Cells without an estimate (``None``) pass."""
    estimates = [] if yes else [(*e, c) for c in cells if (e := experiment.memory_estimate(config, c)) is not None]
    available = available_memory() if available is None and estimates else available
    if not estimates or available is None:
        return
    need, what, cell = max(estimates, key=lambda item: item[0])
    if need > available:
        raise FyexpError(f"cell {cell.key} would need about {need / 2**30:,.1f} GiB ({what}), more than the "
                         f"{available / 2**30:,.1f} GiB available; lower those settings or pass --yes to start it "
                         f"anyway")
