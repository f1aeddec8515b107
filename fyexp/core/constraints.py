"""Every setting's domain, declared once beside its field as :data:`typing.Annotated` metadata of its type, in the
spirit of scikit-learn's ``_parameter_constraints``, and the one walk that reads the declarations::

    @settings
    class Config:
        alpha: Annotated[float, Interval(float, 0, 1, "neither")] = 0.05    # a scalar
        n_iter: PositiveInt = 200                       # = Annotated[int, Interval(int, 1, None)]
        rho: list[PositiveFloat] = ...                  # every item of a list
        epochs_by_dataset: dict[str, PositiveInt] = ... # every value of a mapping
        methods: Annotated[list[Annotated[str, OneOf(METHODS)]], DISTINCT] = ...

:func:`fyexp.spec.specs.build_config` checks the type (:func:`conforms`); :func:`settings` makes the class a dataclass
whose construction checks each field's domain before its own ``__post_init__`` (the relations between fields); both
go through :func:`problem`.  A failure is one :class:`~fyexp.core.errors.ConfigValueError` (key, expected, value),
which the spec and claims readers turn into their one-line form (exit 2).

Why not pydantic: its models would move the type rules (``1`` is a float, ``true`` is not an int, no ``"1"`` → 1)
into a strict-mode configuration, its multi-line ``ValidationError`` would need translating into the one-line form,
and its ~17 settings classes cost ~13 ms each to build where this check costs ~1 ms a class.

The command-line options' domains live here too (:data:`OPTION_DOMAINS`, checked by :func:`check_options`), with the
rules every spec value obeys (:func:`spec_value_problem`: finite numbers, non-empty lists) and the limits a run needs
``--yes`` past (:data:`MAX_CELLS` cells, a cell over the available memory)."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import math
import re
import types
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Collection

from fyexp.core.errors import ConfigValueError, FyexpError


MAX_SEED = 2**32 - 1          # NumPy's and scikit-learn's largest seed
MAX_CELLS = 10_000            # cells one run may start without --yes


@dataclass(frozen=True)
class Interval:
    """Finite numbers of ``kind`` (``int`` or ``float``) between ``low`` and ``high`` (None: unbounded), whose ends
    ``closed`` names (``"both"``, ``"left"``, ``"right"``, ``"neither"``): the one domain of a number, a command-line
    option's and a spec setting's alike."""

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


def check_cell_memory(experiment, config, cells, yes: bool, available: int | None = None) -> None:
    """Refuse a run one of whose cells an experiment estimates to need more memory than is ``available`` (default:
    ``MemAvailable`` of /proc/meminfo), unless ``--yes``: the experiment's ``memory_estimate(config, cell) -> (bytes,
    what)`` (its largest arrays), one line naming the cell, the estimate and the settings behind it.  Cells without an
    estimate (``None``) pass, and all cells where the memory is unknown."""
    estimates = [] if yes else [(*e, c) for c in cells if (e := experiment.memory_estimate(config, c)) is not None]
    if available is None and estimates:
        with contextlib.suppress(OSError, ValueError, TypeError):
            available = int(re.search(r"^MemAvailable:\s+(\d+)", Path("/proc/meminfo").read_text("ascii"), re.M)[1])
            available *= 1024
    if not estimates or available is None:
        return
    need, what, cell = max(estimates, key=lambda item: item[0])
    if need > available:
        raise FyexpError(f"cell {cell.key} would need about {need / 2**30:,.1f} GiB ({what}), more than the "
                         f"{available / 2**30:,.1f} GiB available; lower those settings or pass --yes to start it "
                         f"anyway")


@dataclass(frozen=True)
class OneOf:
    """One of ``values`` (the keys of a table of methods or data sets, read when the check runs)."""

    values: Collection

    def contains(self, value: Any) -> bool:
        return value in self.values

    def describe(self, plural: bool = False) -> str:
        noun = ("names" if all(isinstance(v, str) for v in self.values) else "values") if plural else "one"
        return f"{noun} among {list(self.values)}"


@dataclass(frozen=True)
class Distinct:
    """A list whose items are distinct."""

    def contains(self, value: Any) -> bool:
        return len(set(value)) == len(value)

    def describe(self, plural: bool = False) -> str:
        return "distinct items"


DISTINCT = Distinct()
# the common domains as types, named as pydantic names them
PositiveInt = typing.Annotated[int, Interval(int, 1, None)]
NonNegativeInt = typing.Annotated[int, Interval(int, 0, None)]
PositiveFloat = typing.Annotated[float, Interval(float, 0, None, "neither")]
NonNegativeFloat = typing.Annotated[float, Interval(float, 0, None)]


def describe(hint: Any, plural: bool = False) -> str:
    """What a value of type ``hint`` must be, in words, for a spec's, a claim's and a grid axis's errors alike: a
    declared domain names itself (``PositiveInt`` → ``an integer >= 1``), ``X | None`` → ``... or null``;
    ``plural``: as the items of a list are named (``integers``, ``values among [...]``)."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Annotated:
        return hint.__metadata__[0].describe(plural)
    if origin is typing.Literal:
        return f"values among {list(args)}" if plural else "one of " + ", ".join(repr(a) for a in args)
    if origin in (typing.Union, types.UnionType):
        named = " or ".join(describe(a, plural) for a in args if a is not type(None))
        return named + (" or null" if type(None) in args else "")
    if origin in (list, tuple):
        return f"a list of {describe(args[0], True)}" if args else "a list"
    if origin is dict:
        return "a mapping"
    if dataclasses.is_dataclass(hint):
        return f"a mapping of {sorted(f.name for f in dataclasses.fields(hint))}"
    words = {type(None): ("null", "null"), float: ("a number", "numbers"), int: ("an integer", "integers"),
             bool: ("true or false", "true or false"), str: ("a string", "strings"), Any: ("any value", "any values")}
    if hint in words:
        return words[hint][plural]
    return getattr(hint, "__name__", str(hint))


def problem(value: Any, hint: Any, plural: bool = False, typed: bool = False) -> str | None:
    """What ``value`` should have been by ``hint`` (``None``: it is): the one walk over a type, through ``Annotated``
    (``T``, then each constraint), unions, list and tuple items and mapping keys and values, checking the domains it
    declares and, with ``typed``, the type itself (:func:`_of_kind`, described by :func:`describe`).  A nested
    settings class checks itself when it is built.  ``plural``: described as the items of a list are."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if typed and not _of_kind(value, hint, origin, args):
        return describe(hint, plural)
    if origin is typing.Annotated:
        inner = problem(value, args[0], plural, typed)
        return inner if inner is not None else next(
            (c.describe(plural) for c in hint.__metadata__ if not c.contains(value)), None)
    if origin in (typing.Union, types.UnionType):
        if value is None and (type(None) in args or not typed):
            return None
        found = [problem(value, a, plural, typed) for a in args if a is not type(None)]
        return None if None in found else found[0] + (" or null" if type(None) in args else "")
    if origin in (list, tuple) and isinstance(value, (list, tuple)):
        items = args if origin is tuple and args and args[-1] is not Ellipsis else args[:1] * len(value)
        return next((p for v, a in zip(value, items) if (p := problem(v, a, True, typed))), None)
    if origin is dict and isinstance(value, dict) and args:
        return next((f"a mapping with {p} as {what}" for k, v in value.items() for what, x, a in
                     (("keys", k, args[0]), ("values", v, args[1])) if (p := problem(x, a, True, typed))), None)
    return None


def _of_kind(value: Any, hint: Any, origin: Any, args: tuple) -> bool:
    """Whether ``value`` is of ``hint``'s own kind as YAML writes it (a list for a list or a tuple, of a fixed
    tuple's length; an int for a float; a bool never for an int); the items are :func:`problem`'s."""
    if origin in (list, tuple):
        fixed = origin is tuple and args and args[-1] is not Ellipsis
        return isinstance(value, list) and (not fixed or len(value) == len(args))
    if origin is dict:
        return isinstance(value, dict)
    if origin is typing.Literal:
        return value in args
    if hint is Any or origin is not None:       # Annotated, a union: the walk checks their parts
        return True
    if hint is float or hint is int:            # an int is a number; a bool is neither
        return isinstance(value, (int, float) if hint is float else int) and not isinstance(value, bool)
    return value is None if hint is type(None) else not isinstance(hint, type) or isinstance(value, hint)


def conforms(value: Any, hint: Any) -> bool:
    """Whether a YAML value is of type ``hint`` and in the domains it declares: :func:`problem` with ``typed``."""
    return problem(value, hint, typed=True) is None


@functools.lru_cache(maxsize=None)
def _declared(cls: type) -> tuple[tuple[str, Any], ...]:
    """The fields of ``cls`` with their types, constraints included (resolved once per class: about a millisecond)."""
    hints = typing.get_type_hints(cls, include_extras=True)
    return tuple((f.name, hints[f.name]) for f in dataclasses.fields(cls))


def settings(cls: type) -> type:
    """``@dataclass`` whose construction first checks every field's declared domain (a :class:`ConfigValueError`
    for the first field outside it), then runs the class's own ``__post_init__`` (the relations between fields)."""
    own = cls.__dict__.get("__post_init__")

    def __post_init__(self) -> None:
        for name, hint in _declared(type(self)):
            if (found := problem(value := getattr(self, name), hint)) is not None:
                raise ConfigValueError(name, found, list(value) if isinstance(value, tuple) else value)
        if own is not None:
            own(self)

    cls.__post_init__ = __post_init__
    return dataclass(cls)

