"""Readings as data: where the authors' code departs from the paper's text, declared once per departure
(``fyexp/reference/readings.yaml``) and applied to every claim whose sides it touches.

A *reading* is a way of running or scoring an experiment: ``text`` (the method as the paper defines it, what fyexp
runs by default and what the claims' own selectors name) and ``authors`` (the method as the authors' code ran it,
which produced the published numbers).  A :class:`Departure` matches a side of a claim (a
:class:`~fyexp.claims.model.Selector`) on the side's own keys — ``experiment`` and each of ``metric``, ``method``,
``paper_row`` it gives, a value or a list — and rewrites it under each reading: ``metric`` (``{metric}`` standing
for the side's own) and ``params`` (merged into the side's).  ``authors: none`` declares that the reading has no
rows of ours (VR's VI column was quoted from Graves 2011, never run).  A side touched by several departures takes
each one's rewrite in the file's order (fy-vae's regularizer and its evaluation sampling).

:func:`claim_under` gives the claim as a reading sees it; :func:`touching` the departures behind the difference.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass
from pathlib import Path


from fyexp.claims.model import Claim, Selector
from fyexp.core.errors import FyexpError
from fyexp.store.plain import read_yaml_file

READINGS_FILE = Path(__file__).resolve().parent.parent / "reference" / "readings.yaml"
TEXT, AUTHORS = "text", "authors"
READINGS = (TEXT, AUTHORS)
#: a claim no departure touches: both readings name the same rows
BOTH = "both"
MATCH_KEYS = ("experiment", "metric", "method", "paper_row")
REWRITE_KEYS = ("metric", "params")


@dataclass(frozen=True)
class Rewrite:
    """How one reading names a touched side: a metric (``{metric}``: the side's own) and params merged in;
    ``none``: the reading has no rows of ours."""

    metric: str | None = None
    params: tuple[tuple[str, object], ...] = ()
    none: bool = False

    def apply(self, selector: Selector) -> Selector:
        metric = selector.metric if self.metric is None else self.metric.format(metric=selector.metric)
        params = tuple(sorted({**dict(selector.params), **dict(self.params)}.items()))
        return dataclasses.replace(selector, metric=metric, params=params)


@dataclass(frozen=True)
class Departure:
    finding: str          # the id of the finding (claims.yaml) that explains it
    paper: str
    match: tuple[tuple[str, tuple[str, ...]], ...]
    rewrites: tuple[tuple[str, Rewrite], ...]   # reading → rewrite (a reading absent: the side as written)
    tables: tuple[str, ...] = ()

    def matches(self, selector: Selector) -> bool:
        return all(getattr(selector, key) is not None and str(getattr(selector, key)) in values
                   for key, values in self.match)

    def rewrite(self, reading: str) -> Rewrite:
        return dict(self.rewrites).get(reading, Rewrite())


@dataclass(frozen=True)
class Readings:
    names: tuple[tuple[str, str], ...]   # reading → what it is (the file's words)
    departures: tuple[Departure, ...] = ()


def _error(path: Path, where: str, expected: str, got: object = None) -> FyexpError:
    return FyexpError(f"{path}: {where}: expected {expected}" + ("" if got is None else f", got {got!r}"))


def _values(path: Path, where: str, value: object) -> tuple[str, ...]:
    items = value if isinstance(value, list) else [value]
    if not items or not all(isinstance(v, (str, int, float)) and not isinstance(v, bool) for v in items):
        raise _error(path, where, "a value or a non-empty list of values", value)
    return tuple(str(v) for v in items)


def _rewrite(path: Path, where: str, body: object) -> Rewrite:
    if body == "none":
        return Rewrite(none=True)
    if not isinstance(body, dict) or set(body) - set(REWRITE_KEYS):
        raise _error(path, where, f"'none' or a mapping of {', '.join(REWRITE_KEYS)}", body)
    metric, params = body.get("metric"), body.get("params") or {}
    if metric is not None and not isinstance(metric, str):
        raise _error(path, f"{where}.metric", "a metric name (`{metric}`: the side's own)", metric)
    if not isinstance(params, dict):
        raise _error(path, f"{where}.params", "a mapping of params keys to values", params)
    return Rewrite(metric, tuple(sorted(params.items())))


def _departure(path: Path, i: int, body: object, readings: tuple[str, ...], findings: set[str] | None) -> Departure:
    where = f"departures[{i}]"
    if not isinstance(body, dict):
        raise _error(path, where, "a mapping", body)
    allowed = {"finding", "paper", "match", "tables", *readings}
    unknown = sorted(set(body) - allowed)
    if unknown:
        raise _error(path, f"{where}: key '{unknown[0]}'", f"one of {', '.join(sorted(allowed))}")
    finding = body.get("finding")
    if not isinstance(finding, str) or (findings is not None and finding not in findings):
        raise _error(path, f"{where}.finding", "the id of a finding of claims.yaml", finding)
    where = f"departure '{finding}'"
    match = body.get("match")
    if not isinstance(match, dict) or "experiment" not in match or set(match) - set(MATCH_KEYS):
        raise _error(path, f"{where}: match", f"a mapping with experiment and any of {', '.join(MATCH_KEYS[1:])}",
                     match)
    rewrites = tuple((r, _rewrite(path, f"{where}: {r}", body[r])) for r in readings if r in body)
    if not rewrites:
        raise _error(path, where, f"a rewrite for at least one reading ({', '.join(readings)})")
    tables = body.get("tables") or []
    if not isinstance(tables, list):
        raise _error(path, f"{where}: tables", "a list of published tables", tables)
    return Departure(finding, str(body.get("paper", "")),
                     tuple((k, _values(path, f"{where}: match.{k}", v)) for k, v in match.items()), rewrites,
                     tuple(str(t) for t in tables))


@functools.lru_cache(maxsize=None)
def _load_cached(path: Path, findings: frozenset | None) -> Readings:
    data = read_yaml_file(path, "readings file")
    names = data.get("readings") if isinstance(data, dict) else None
    if not isinstance(names, dict) or tuple(names) != READINGS:
        raise _error(path, "readings", f"a mapping of the readings {', '.join(READINGS)} (in that order) to what "
                     "each is", names)
    departures = data.get("departures") or []
    if not isinstance(departures, list):
        raise _error(path, "departures", "a list", departures)
    return Readings(tuple((k, str(v)) for k, v in names.items()),
                    tuple(_departure(path, i, d, READINGS, None if findings is None else set(findings))
                          for i, d in enumerate(departures)))


def load_readings(path: Path | None = None, findings=None) -> Readings:
    """The readings file, checked (one line naming the departure and key on a problem, exit 2); ``findings``: the
    finding ids a departure may name (none checked when ``None``)."""
    return _load_cached(Path(path or READINGS_FILE), None if findings is None else frozenset(findings))


def touching(claim: Claim, readings: Readings) -> tuple[Departure, ...]:
    """The departures that match a side of ``claim``, in the file's order."""
    sides = claim.selectors()
    return tuple(d for d in readings.departures if any(d.matches(s) for s in sides))


def claim_under(claim: Claim, reading: str, readings: Readings) -> Claim | None:
    """``claim`` with every side a departure touches rewritten as ``reading`` names it; ``None`` where a touched
    side has no rows of ours under ``reading`` (``none``)."""

    def one(selector: Selector) -> Selector | None:
        for departure in readings.departures:
            if departure.matches(selector):
                rewrite = departure.rewrite(reading)
                if rewrite.none:
                    return None
                selector = rewrite.apply(selector)
        return selector

    def many(selectors) -> tuple | None:
        out = tuple(one(s) for s in selectors)
        return None if any(s is None for s in out) else out

    sides = {k: one(s) for k, s in claim.sides.items()}
    lists = {k: many(getattr(claim, k)) for k in ("others", "series", "group")}
    if any(s is None for s in sides.values()) or any(v is None for v in lists.values()):
        return None
    return dataclasses.replace(claim, sides=sides, **lists)
