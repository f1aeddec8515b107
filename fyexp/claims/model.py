"""The claims file: every claim names the rows it reads, and a claim naming rows no experiment writes fails at load.

A claim (one entry of ``claims:`` in ``fyexp/reference/claims.yaml``)::

    - id: fyvi-t3-fy-nvdm          # unique
      paper: fyvi                  # fyvi, fyvl, vr, tvem or frac
      kind: claim                  # claim (the paper's; the default) or check (ours: printed apart, never tallied)
      where: App. D, Table 3       # the paper's section, table or figure
      line: 490                    # the line of the paper's text where the quote starts
      quote: "Our sparse support observation model FYVAE outperforms the NVDM baseline method [40] by 10.68%"
      claim: FY-NVDM reconstructs better than NVDM   # what is judged, in our words
      direction: less              # see DIRECTIONS
      paper_numbers: "1.3384 vs 1.4984 (-10.7%)"     # as printed, or omitted
      magnitude: -10.68            # the paper's a - b (``magnitude_kind: relative``: 100 (a - b) / b)
      rows: {experiment: nvdm, metric: avg_reconstruction_error}   # shared by every side below
      a: {experiment: fy-nvdm, paper_row: FY VAE}
      b: {paper_row: NVDM}

Sides are selectors (:class:`Selector`) on the tidy results: ``experiment`` and ``metric`` (required after merging
``rows``), and any of ``method``, ``paper_row``, ``setting``, ``table``, ``profile``, ``params`` (a mapping of
params keys to values).  A ``claim`` must carry its ``quote`` (verbatim and short: the sentence, or the table's
caption and cells, it rests on) and ``line``; a ``check`` says in ``note`` why it is ours.  A ``finding`` records where the authors' code departs from the paper's text, with the
claim it touches and the rows that show it.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from fyexp.errors import FyexpError
from fyexp.reference.rows import papers

CLAIMS_FILE = Path(__file__).resolve().parent.parent / "reference" / "claims.yaml"
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
}
#: the directions in which ``than`` (a constant) may stand in for side b
AGAINST_CONSTANT = ("greater", "less", "approx")
SELECTOR_KEYS = ("experiment", "metric", "method", "paper_row", "setting", "table", "profile", "params")
KINDS = ("claim", "check")
CLAIM_KEYS = {"id", "paper", "kind", "where", "line", "quote", "claim", "direction", "paper_numbers", "magnitude", "magnitude_kind", "rows", "than",
              "a", "b", "others", "series", "better", "trend", "delta", "at_least", "threshold", "note"}


@dataclass(frozen=True)
class Selector:
    """The rows of one side of a claim: equality on columns of the tidy results (``params`` on its JSON keys)."""

    experiment: str
    metric: str
    method: str | None = None
    paper_row: str | None = None
    setting: str | None = None
    table: str | None = None
    profile: str | None = None
    params: tuple[tuple[str, Any], ...] = ()

    def describe(self) -> str:
        parts = [f"{k}={getattr(self, k)}" for k in ("method", "paper_row", "setting", "table") if getattr(self, k)]
        parts += [f"{k}={v}" for k, v in self.params]
        return f"{self.experiment}:{self.metric}" + (f"[{', '.join(parts)}]" if parts else "")


@dataclass(frozen=True)
class Claim:
    id: str
    paper: str
    where: str
    text: str
    direction: str
    sides: dict[str, Selector]  # a, b
    others: tuple[Selector, ...] = ()
    series: tuple[Selector, ...] = ()
    paper_numbers: str = ""
    magnitude: float | None = None
    magnitude_kind: str = "absolute"
    better: str = "greater"
    trend: str = "increasing"
    delta: float | None = None
    at_least: float | None = None
    threshold: float | None = None
    than: float | None = None  # greater/less against a constant instead of a side b
    note: str = ""
    kind: str = "claim"  # "claim" (the paper's) or "check" (ours)
    quote: str = ""
    line: int | None = None

    @property
    def place(self) -> str:
        """Where the paper says it: ``fyvi App. D, Table 3, line 490``."""
        return f"{self.paper} {self.where}" + (f", line {self.line}" if self.line is not None else "")

    def selectors(self) -> list[Selector]:
        return list(self.sides.values()) + list(self.others) + list(self.series)

    @property
    def experiments(self) -> list[str]:
        return list(dict.fromkeys(s.experiment for s in self.selectors()))


@dataclass(frozen=True)
class Finding:
    id: str
    paper: str
    text: str
    claim: str
    rows: tuple[Selector, ...] = ()
    where: str = ""


@dataclass
class ClaimsFile:
    claims: list[Claim] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)

    def for_paper(self, paper: str | None) -> "ClaimsFile":
        if paper is None:
            return self
        if paper not in PAPERS:
            raise FyexpError(f"claims: unknown paper '{paper}'; expected one of {', '.join(PAPERS)}")
        return ClaimsFile([c for c in self.claims if c.paper == paper],
                          [f for f in self.findings if f.paper == paper])


def _err(path: Path, where: str, expected: str, got: object = None) -> FyexpError:
    return FyexpError(f"{path}: {where}: expected {expected}" + ("" if got is None else f", got {got!r}"))


def _selector(path: Path, where: str, base: dict, body: object) -> Selector:
    if not isinstance(body, dict):
        raise _err(path, where, "a mapping of selectors", body)
    merged = {**base, **body}
    unknown = sorted(set(merged) - set(SELECTOR_KEYS))
    if unknown:
        raise _err(path, f"{where}.{unknown[0]}", f"one of {', '.join(SELECTOR_KEYS)}")
    for key in ("experiment", "metric"):
        if not isinstance(merged.get(key), str):
            raise _err(path, f"{where}.{key}", "a string (here or in the claim's rows)", merged.get(key))
    params = merged.pop("params", None) or {}
    if not isinstance(params, dict):
        raise _err(path, f"{where}.params", "a mapping of params keys to values", params)
    return Selector(**{k: (None if v is None else str(v)) for k, v in merged.items()},
                    params=tuple(sorted(params.items())))


def _claim(path: Path, body: dict) -> Claim:
    cid = body.get("id")
    if not isinstance(cid, str):
        raise _err(path, "claims[].id", "a string", cid)
    where = f"claim '{cid}'"
    unknown = sorted(set(body) - CLAIM_KEYS)
    if unknown:
        raise _err(path, f"{where}: key '{unknown[0]}'", f"one of {', '.join(sorted(CLAIM_KEYS))}")
    if body.get("paper") not in PAPERS:
        raise _err(path, f"{where}: paper", f"one of {', '.join(PAPERS)}", body.get("paper"))
    direction = body.get("direction")
    if direction not in DIRECTIONS:
        raise _err(path, f"{where}: direction", f"one of {', '.join(DIRECTIONS)}", direction)
    base = body.get("rows") or {}
    needs = [k.strip() for k in DIRECTIONS[direction][0].split(",")]
    if body.get("than") is not None:  # a constant in place of side b, never beside it
        if direction not in AGAINST_CONSTANT:
            raise _err(path, f"{where}: than", f"no constant for direction '{direction}' (than stands in for b in "
                       f"{', '.join(AGAINST_CONSTANT)} only)", body["than"])
        if body.get("b") is not None:
            raise _err(path, f"{where}: than", "either b or than (a constant in place of b), not both",
                       body["than"])
        needs = [k for k in needs if k != "b"]
    for key in needs:
        if body.get(key) is None:
            raise _err(path, f"{where}: {key}", f"set for direction '{direction}' ({DIRECTIONS[direction][1]})")
    sides = {k: _selector(path, f"{where}: {k}", base, body[k]) for k in ("a", "b") if k in body}
    lists = {}
    for key in ("others", "series"):
        items = body.get(key) or []
        if not isinstance(items, list):
            raise _err(path, f"{where}: {key}", "a list of selectors", items)
        lists[key] = tuple(_selector(path, f"{where}: {key}[{i}]", base, s) for i, s in enumerate(items))
    if direction == "monotone" and len(lists["series"]) < 2:
        raise _err(path, f"{where}: series", "at least two selectors in order")
    if body.get("better", "greater") not in ("greater", "less") or body.get("trend", "increasing") not in (
            "increasing", "decreasing"):
        raise _err(path, f"{where}: better/trend", "greater|less and increasing|decreasing")
    kind = body.get("kind", "claim")
    if kind not in KINDS:
        raise _err(path, f"{where}: kind", "claim or check", kind)
    line = body.get("line")
    if line is not None and (isinstance(line, bool) or not isinstance(line, int) or line < 1):
        raise _err(path, f"{where}: line", "a line number of the paper's text (a positive integer)", line)
    if kind == "claim" and (not isinstance(body.get("quote"), str) or not body["quote"].strip() or line is None):
        raise _err(path, f"{where}: quote", "the paper's words (quote) and their line (line) for a claim; "
                   "a check of ours is kind: check")
    if kind == "check" and not str(body.get("note") or "").strip():
        raise _err(path, f"{where}: note", "why this check is ours (kind: check)")
    if body.get("magnitude_kind", "absolute") not in ("absolute", "relative"):
        raise _err(path, f"{where}: magnitude_kind", "absolute or relative", body.get("magnitude_kind"))
    num = {k: (None if body.get(k) is None else float(body[k])) for k in
           ("magnitude", "delta", "at_least", "threshold", "than")}
    return Claim(id=cid, paper=body["paper"], where=str(body.get("where", "")), text=str(body.get("claim", "")),
                 direction=direction, sides=sides, others=lists["others"], series=lists["series"],
                 paper_numbers=str(body.get("paper_numbers", "") or ""), magnitude_kind=body.get("magnitude_kind",
                                                                                                 "absolute"),
                 better=body.get("better", "greater"), trend=body.get("trend", "increasing"),
                 note=str(body.get("note", "") or ""), kind=kind, quote=" ".join(str(body.get("quote") or "").split()),
                 line=line, **num)


def _finding(path: Path, body: dict, claim_ids: set[str]) -> Finding:
    fid = body.get("id") if isinstance(body, dict) else None
    if not isinstance(fid, str):
        raise _err(path, "findings[].id", "a string", fid)
    if body.get("claim") not in claim_ids:
        raise _err(path, f"finding '{fid}': claim", "the id of a claim in this file", body.get("claim"))
    if body.get("paper") not in PAPERS:
        raise _err(path, f"finding '{fid}': paper", f"one of {', '.join(PAPERS)}", body.get("paper"))
    rows = tuple(_selector(path, f"finding '{fid}': rows[{i}]", {}, s) for i, s in enumerate(body.get("rows") or []))
    return Finding(id=fid, paper=body["paper"], text=str(body.get("finding", "")), claim=body["claim"], rows=rows,
                   where=str(body.get("where", "")))


# ---- what the experiments write ------------------------------------------------------------------------------
@functools.lru_cache(maxsize=None)
def experiment_names(experiments_dir: Path | None) -> tuple[str, ...]:
    """The experiments with a spec (listed once per process)."""
    from fyexp.specs import available_specs

    return tuple(available_specs(experiments_dir))


@functools.lru_cache(maxsize=None)
def experiment_spec(name: str, experiments_dir: Path | None):
    """The spec of ``name``, read once per process (the vocabulary and the verdicts' freshness both need it)."""
    from fyexp.specs import load_spec

    return load_spec(name, experiments_dir)


@functools.lru_cache(maxsize=None)
def _experiment_vocabulary(name: str, experiments_dir: Path | None) -> str:
    """The text in which a metric experiment ``name`` writes must appear: the source of its runner's module tree
    (metric names written literally), the columns of its paper's published tables (names built from parts,
    e.g. ``test_elbo_data``, ``kappa_mu1``) and the metrics the claims derive from its artifacts
    (:mod:`fyexp.claims.derived`).  Built once per experiment and process, for the experiments that
    claims name."""
    from fyexp.provenance.source import SOURCE_ROOT, module_tree, runner_module

    spec = experiment_spec(name, experiments_dir)
    text = "".join((SOURCE_ROOT / p).read_text(encoding="utf-8") for p in module_tree(runner_module(spec.runner)))
    columns = _published()
    columns = columns[columns["paper"] == spec.paper]["column"].dropna()
    from fyexp.claims.derived import DERIVED

    return text + "\n" + "\n".join(sorted(set(columns)) + list(DERIVED.get(name, ())))


@functools.lru_cache(maxsize=None)
def _published():
    """``paper_tables.csv`` as text, read once per process."""
    import pandas as pd

    return pd.read_csv(CLAIMS_FILE.parent / "paper_tables.csv", dtype=str)


@functools.lru_cache(maxsize=None)
def _published_rows() -> dict[str, set[str]]:
    return {paper: set(g["row"]) for paper, g in _published().groupby("paper")}


def check_selector(selector: Selector, owner: str, path: Path, experiments_dir: Path | None = None) -> None:
    """One line naming ``owner`` when the selector names an experiment, metric or published row nobody writes."""
    names = experiment_names(experiments_dir)
    if selector.experiment not in names:
        raise FyexpError(f"{path}: {owner}: experiment '{selector.experiment}' does not exist; expected one of "
                         f"{', '.join(sorted(names))}")
    if selector.metric not in _experiment_vocabulary(selector.experiment, experiments_dir):
        raise FyexpError(f"{path}: {owner}: experiment '{selector.experiment}' writes no metric "
                         f"'{selector.metric}'")
    if selector.paper_row is not None:
        rows = set().union(*_published_rows().values())
        if selector.paper_row not in rows:
            raise FyexpError(f"{path}: {owner}: paper_row '{selector.paper_row}' is no row of paper_tables.csv")


def load_claims(path: Path | None = None, experiments_dir: Path | None = None, check: bool = True) -> ClaimsFile:
    """Read and check the claims file; every problem is one line naming the claim (exit 2)."""
    path = Path(path or CLAIMS_FILE)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except FileNotFoundError:
        raise FyexpError(f"{path}: no such claims file") from None
    except yaml.YAMLError as exc:
        raise FyexpError(f"{path}: not valid YAML ({' '.join(str(exc).split())})") from None
    if not isinstance(data, dict) or not isinstance(data.get("claims"), list):
        raise _err(path, "top level", "a mapping with a list 'claims' (and optionally 'findings')")
    claims = [_claim(path, c if isinstance(c, dict) else {}) for c in data["claims"]]
    seen: set[str] = set()
    for c in claims:
        if c.id in seen:
            raise _err(path, f"claim '{c.id}'", "a unique id (it appears twice)")
        seen.add(c.id)
    findings = [_finding(path, f, seen) for f in data.get("findings") or []]
    if check:
        for c in claims:
            for s in c.selectors():
                check_selector(s, f"claim '{c.id}'", path, experiments_dir)
        for f in findings:
            for s in f.rows:
                check_selector(s, f"finding '{f.id}'", path, experiments_dir)
    return ClaimsFile(claims, findings)
