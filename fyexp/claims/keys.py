"""The keys of ``claims.yaml``, each with its type and domain declared once, and the one reader that checks them.

A claim, a finding and a selector are each a :func:`fyexp.core.constraints.settings` class whose fields are the keys
the file may give them (the same declarations a spec's settings use, :mod:`fyexp.core.constraints`): the type of a
field (``str``, ``float | None``, ``dict``) is checked by :func:`read` as :func:`fyexp.spec.specs.build_config` checks a
spec's (:func:`fyexp.core.constraints.conforms`: ints are numbers, bools are not), the domain in its ``Annotated``
metadata (:class:`Among` the papers, an :class:`~fyexp.core.constraints.Interval`) by the class's construction, and
the relations between keys (``than`` in place of ``b``, the sides a direction needs) by its ``__post_init__``.  Every
failure is one line naming the file, the claim, the key and what was expected::

    claims.yaml: claim 'fyvi-t3-fy-nvdm': paper: expected one of fyvi, fyvl, vr, tvem, frac, got 'fyvx'

What the loader builds from the keys (:class:`fyexp.claims.model.Claim`, ``Selector``, ``Finding``) is in
:mod:`fyexp.claims.model`.
"""

from __future__ import annotations

import dataclasses
import functools
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from fyexp.core.constraints import Interval, NonNegativeFloat, OneOf, PositiveFloat, conforms, describe, settings
from fyexp.core.errors import ConfigValueError, FyexpError, require
from fyexp.reference import papers

PAPERS = tuple(papers())   # the ids of paper_meta.yaml's `papers:`, in its order

#: direction → (sides it needs, what it asserts)
DIRECTIONS = {
    "greater": ("a, b", "mean(a) > mean(b) (or > than)"),
    "less": ("a, b", "mean(a) < mean(b) (or < than)"),
    "approx": ("a, b, delta", "|mean(a) - mean(b)| <= delta (or - than)"),
    "best_of": ("a, others, better", "a better (greater/less) than every side in others (by the printed margin "
                                     "``magnitude`` where given)"),
    "monotone": ("series, trend", "the means of series (in order) increase / decrease"),
    "fraction": ("a, at_least", "share of runs (a 0/1 metric) above at_least, by its exact 95% interval"),
    "ratio_below": ("a, b, threshold", "mean(a) / mean(b) < threshold"),
    "ratio_above": ("a, b, threshold", "mean(a) / mean(b) > threshold"),
    "noninferior": ("a, b, margin, better", "a no worse than b by more than margin: the interval of (a - b), "
                                            "oriented by better, above -margin"),
    "group_best": ("group, others, better", "the best side of group better than the best side of others"),
    "coverage": ("a, nominal, side", "the coverage of a (a share over replicas) above (conservative) or below "
                                     "(overconfident) nominal, by its exact binomial interval"),
}
#: the directions in which ``than`` (a constant) may stand in for side b
AGAINST_CONSTANT = ("greater", "less", "approx", "noninferior")
#: claim: the paper's (tallied); check: ours (listed apart, never tallied); theorem_check: a check of a theorem the
#: paper states (tvem's), counted apart from both; table_reading: a claim read off a table or its caption, not a
#: sentence of the text (tallied as a claim, labelled so everywhere)
KINDS = ("claim", "check", "theorem_check", "table_reading")
#: the kinds that quote the paper (``quote`` and ``line`` required); a ``check`` says in ``note`` why it is ours
QUOTED_KINDS = ("claim", "theorem_check", "table_reading")
#: the kinds tallied as the paper's claims
TALLIED_KINDS = ("claim", "table_reading")


class Among(OneOf):
    """One of ``values``, named as the claims' messages name them (``one of fyvi, fyvl, vr, tvem, frac``)."""

    def describe(self, plural: bool = False) -> str:
        return f"one of {', '.join(map(str, self.values))}"


@dataclass(frozen=True)
class Says:
    """No constraint: what a key's message says was expected (``a mapping of selectors``) where its type's name
    would say less."""

    text: str

    def contains(self, value: Any) -> bool:
        return True

    def describe(self, plural: bool = False) -> str:
        return self.text


Mapping = Annotated[dict, Says("a mapping of selectors")]
Selectors = Annotated[list, Says("a list of selectors")]
Name = Annotated[str, Says("a string (here or in the claim's rows)")]
Text = str | float   # a selector's column value (a number or text), compared as text
#: the columns a selector names by its own keys (and the value it reads): never a key of ``columns``
OWN_COLUMNS = ("experiment", "metric", "method", "paper_row", "setting", "table", "profile", "params", "value",
               "status")


@settings
class SelectorKeys:
    """A side of a claim (or a finding's rows), after merging the claim's ``rows``: equality on columns of the tidy
    results, ``params`` on the params JSON's keys."""

    experiment: Name
    metric: Name
    method: Text | None = None
    paper_row: Text | None = None
    setting: Text | None = None
    table: Text | None = None
    profile: Text | None = None
    params: Annotated[dict, Says("a mapping of params keys to values")] | None = None
    columns: Annotated[dict[str, Text | list], Says("a mapping of result columns to a value or a list of values")] \
        | None = None

    def __post_init__(self) -> None:
        """``columns`` names other columns of the tidy results (``alpha``, ``K``, ``k``: a grid's axis a cell
        writes as a column, not a params key), each with a value or a non-empty list of values (any of them):
        never a column the selector's own keys name."""
        for column, value in (self.columns or {}).items():
            require(column not in OWN_COLUMNS, f"columns.{column}",
                    f"a result column other than {', '.join(OWN_COLUMNS)} (name those by their own key)", column)
            values = value if isinstance(value, list) else [value]
            require(bool(values) and all(isinstance(v, (str, int, float)) and not isinstance(v, bool)
                                         for v in values), f"columns.{column}",
                    "a value or a non-empty list of values (numbers or text)", value)


@settings
class ClaimKeys:
    """A claim (``fyexp.claims.model``'s docstring shows one)."""

    id: str
    paper: Annotated[str, Among(PAPERS)]
    direction: Annotated[str, Among(tuple(DIRECTIONS))]
    kind: Annotated[str, Among(KINDS)] = "claim"
    where: str = ""
    line: Annotated[int, Interval(int, 1, None)] | None = None
    quote: str | None = None
    claim: str = ""
    note: str | None = None
    paper_numbers: str | None = None
    rows: Mapping | None = None
    a: Mapping | None = None
    b: Mapping | None = None
    others: Selectors | None = None
    series: Selectors | None = None
    better: Annotated[str, Among(("greater", "less"))] | None = None
    trend: Annotated[str, Among(("increasing", "decreasing"))] | None = None
    magnitude: float | None = None
    magnitude_kind: Annotated[str, Among(("absolute", "relative"))] = "absolute"
    delta: float | None = None
    at_least: float | None = None
    threshold: float | None = None
    than: float | None = None
    margin: PositiveFloat | None = None
    group: Selectors | None = None
    nominal: Annotated[float, Interval(float, 0, 1, "neither")] | None = None
    side: Annotated[str, Among(("conservative", "overconfident"))] | None = None
    per_run: bool = False
    per: Annotated[list[str], Says("a list of result column names")] | None = None
    uncertainty: NonNegativeFloat | None = None
    spread: Annotated[dict, Says("a mapping {of: a metric, sd: the metric of its standard deviation, n: the column "
                                 "of its number of draws}")] | None = None

    def __post_init__(self) -> None:
        """The relations between keys: ``than`` stands in for ``b`` (never beside it) where a direction has a b;
        each key the direction needs is set; a series has an order; a claim quotes the paper, a check says why it
        is ours; a ``spread`` names the metric whose rows are means, the metric of their standard deviation and
        the column of their draw count, each a name."""
        if self.spread is not None:
            require(set(self.spread) == {"of", "sd", "n"} and all(isinstance(v, str) and v.strip()
                                                                   for v in self.spread.values()),
                    "spread", "exactly the keys of, sd and n, each a name (of: a metric, sd: the metric of its "
                    "standard deviation, n: the column of its number of draws)", self.spread)
        needs = [k.strip() for k in DIRECTIONS[self.direction][0].split(",")]
        if self.than is not None:
            require(self.direction in AGAINST_CONSTANT, "than", f"no constant for direction '{self.direction}' "
                    f"(than stands in for b in {', '.join(AGAINST_CONSTANT)} only)", self.than)
            require(self.b is None, "than", "either b or than (a constant in place of b), not both", self.than)
            needs.remove("b")
        for key in needs:
            require(getattr(self, key) is not None, key,
                    f"set for direction '{self.direction}' ({DIRECTIONS[self.direction][1]})")
        require(self.direction != "monotone" or len(self.series) >= 2, "series", "at least two selectors in order")
        require(self.direction != "group_best" or len(self.group) >= 1, "group", "at least one selector")
        require(self.direction not in ("group_best", "best_of") or len(self.others) >= 1, "others",
                "at least one selector")
        require(self.uncertainty is None or self.magnitude is not None, "uncertainty",
                "the paper's printed ± of magnitude (set magnitude too)", self.uncertainty)
        require(not self.per or self.per_run, "per", "per_run: true beside it (per names the columns whose "
                "values each make a run of their own)", self.per)
        require(not self.per_run or self.direction != "coverage", "per_run",
                "false for direction 'coverage' (a coverage is a share over replicas already)", self.per_run)
        require(self.kind not in QUOTED_KINDS or (bool((self.quote or "").strip()) and self.line is not None),
                "quote", f"the paper's words (quote) and their line (line) for a {self.kind}; a check of ours is "
                "kind: check")
        require(self.kind != "check" or bool((self.note or "").strip()), "note", "why this check is ours (kind: check)")


@settings
class FindingKeys:
    """Where the authors' code departs from the paper's text: the claim it touches (an id of this file) and the
    rows that show it."""

    id: str
    paper: Annotated[str, Among(PAPERS)]
    claim: str
    finding: str = ""
    where: str = ""
    rows: Selectors | None = None


def error(path: Path, where: str, expected: str, got: object = None) -> FyexpError:
    """The one line: ``<file>: <where>: expected <expected>[, got <got>]``."""
    return FyexpError(f"{path}: {where}: expected {expected}" + ("" if got is None else f", got {got!r}"))


@functools.lru_cache(maxsize=None)
def _fields(cls: type) -> tuple[tuple[str, Any, Any, bool], ...]:
    """(name, type without its domains, type with them, required) of each field of ``cls``, read once."""
    plain = typing.get_type_hints(cls)
    full = typing.get_type_hints(cls, include_extras=True)
    return tuple((f.name, plain[f.name], full[f.name], f.default is dataclasses.MISSING)
                 for f in dataclasses.fields(cls))


def read(cls: type, body: dict, path: Path, where: str, sep: str = ": "):
    """``body`` (a mapping of ``claims.yaml``) as ``cls``: an unknown key, a missing required one, a value of
    another type, outside its domain or against a relation of ``cls`` raise :func:`error` naming ``where`` and the
    key (``<where><sep><key>``; an unknown key ``<where>: key '<key>'``, the first in order)."""
    fields = _fields(cls)
    unknown = sorted(set(body) - {name for name, *_ in fields})
    if unknown:
        raise error(path, f"{where}: key '{unknown[0]}'", f"one of {', '.join(sorted(n for n, *_ in fields))}")
    for name, hint, declared, required in fields:
        if (required and name not in body) or (name in body and not conforms(body[name], hint)):
            raise error(path, f"{where}{sep}{name}", describe(declared), body.get(name))
    try:
        return cls(**body)
    except ConfigValueError as exc:
        raise error(path, f"{where}{sep}{exc.key}", exc.expected, exc.got) from None
