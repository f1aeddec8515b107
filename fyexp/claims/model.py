"""The claims file: every claim names the rows it reads, and a claim naming rows no experiment writes fails at load.

A claim (one entry of ``claims:`` in ``fyexp/reference/claims.yaml``)::

    - id: fyvi-t3-fy-nvdm          # unique
      paper: fyvi                  # fyvi, fyvl, vr, tvem or frac
      kind: claim                  # claim (the paper's; the default) or check (ours: printed apart, never tallied)
      where: App. D, Table 3       # the paper's section, table or figure
      line: 490                    # the line of the paper's text where the quote starts
      quote: "Our sparse support observation model FYVAE outperforms the NVDM baseline method [40] by 10.68%"
      claim: FY-NVDM reconstructs better than NVDM   # what is judged, in our words
      direction: less              # see fyexp.claims.keys.DIRECTIONS
      paper_numbers: "1.3384 vs 1.4984 (-10.7%)"     # as printed, or omitted
      magnitude: -10.68            # the paper's a - b (``magnitude_kind: relative``: 100 (a - b) / b)
      rows: {experiment: nvdm, metric: avg_reconstruction_error}   # shared by every side below
      a: {experiment: fy-nvdm, paper_row: FY VAE}
      b: {paper_row: NVDM}

Sides are selectors (:class:`Selector`) on the tidy results: ``experiment`` and ``metric`` (required after merging
``rows``), and any of ``method``, ``paper_row``, ``setting``, ``table``, ``profile``, ``params`` (a mapping of
params keys to values) and ``columns`` (a mapping of other result columns, such as ``alpha`` or ``K``, to a value
or a list of values: a grid's axis a cell writes as a column, VR Figure 2(b)'s alpha).  A ``claim`` must carry its ``quote`` (verbatim and short: the sentence, or the table's
caption and cells, it rests on) and ``line``; a ``check`` says in ``note`` why it is ours.  A ``finding`` records where the authors' code departs from the paper's text, with the
claim it touches and the rows that show it.

Each key's type and domain is declared once, in :mod:`fyexp.claims.keys` (read by :func:`~fyexp.claims.keys.read`);
this module builds the claims from the keys and checks that every selector names rows an experiment writes.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


from fyexp.claims.keys import PAPERS, ClaimKeys, FindingKeys, SelectorKeys, error, read
from fyexp.core.errors import FyexpError
from fyexp.store.plain import read_yaml_file

CLAIMS_FILE = Path(__file__).resolve().parent.parent / "reference" / "claims.yaml"


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
    columns: tuple[tuple[str, tuple[str, ...]], ...] = ()   # other result columns: (column, the values it may hold)

    def describe(self) -> str:
        parts = [f"{k}={getattr(self, k)}" for k in ("method", "paper_row", "setting", "table") if getattr(self, k)]
        parts += [f"{k}={v}" for k, v in self.params]
        parts += [f"{k}={'|'.join(v)}" for k, v in self.columns]
        return f"{self.experiment}:{self.metric}" + (f"[{', '.join(parts)}]" if parts else "")


@dataclass(frozen=True)
class Spread:
    """A claim's ``spread``: each row of metric ``of`` is the mean of the draws counted in its column ``n``, whose
    sample standard deviation is the row of metric ``sd`` of the same cell (and the same values of the claim's
    ``per`` columns); a side of one such row then has an interval (:func:`fyexp.claims.stats.summary_welch_interval`)
    where it would have a sign only."""

    of: str
    sd: str
    n: str


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
    group: tuple[Selector, ...] = ()  # group_best: the sides the paper credits together
    margin: float | None = None       # noninferior: how much worse than b still counts as "similar"
    nominal: float | None = None      # coverage: the nominal level of the credible intervals
    side: str = "conservative"        # coverage: conservative (above nominal) or overconfident (below)
    per_run: bool = False             # judged on each run; the verdict from the share of runs that satisfy it
    per: tuple[str, ...] = ()         # per_run: result columns whose values each make a run too (alpha, K)
    uncertainty: float | None = None  # the paper's printed ± of magnitude (a standard error)
    spread: Spread | None = None      # the rows of one metric are means of draws whose sd is recorded

    @property
    def place(self) -> str:
        """Where the paper says it: ``fyvi App. D, Table 3, line 490``."""
        return f"{self.paper} {self.where}" + (f", line {self.line}" if self.line is not None else "")

    @property
    def tallied(self) -> bool:
        """Counted in its paper's tally: the paper's claims (``claim``) and table readings (``table_reading``)."""
        from fyexp.claims.keys import TALLIED_KINDS

        return self.kind in TALLIED_KINDS

    def selectors(self) -> list[Selector]:
        return list(self.sides.values()) + list(self.group) + list(self.others) + list(self.series)

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


def _selector(path: Path, where: str, base: dict, body: object) -> Selector:
    """A side's keys (:class:`~fyexp.claims.keys.SelectorKeys`) over the claim's ``rows``; values as text."""
    if not isinstance(body, dict):
        raise error(path, where, "a mapping of selectors", body)
    keys = read(SelectorKeys, {**base, **body}, path, where, sep=".")
    text = {k: (None if v is None else str(v)) for k, v in dataclasses.asdict(keys).items()
            if k not in ("params", "columns")}
    columns = tuple(sorted((k, tuple(str(x) for x in (v if isinstance(v, list) else [v])))
                           for k, v in (keys.columns or {}).items()))
    return Selector(**text, params=tuple(sorted((keys.params or {}).items())), columns=columns)


def _claim(path: Path, body: dict, where: str) -> Claim:
    """A claim's keys (:class:`~fyexp.claims.keys.ClaimKeys`, ``where`` naming it until its id is known)."""
    keys = read(ClaimKeys, body, path, f"claim '{body['id']}'" if isinstance(body.get("id"), str) else where)
    where = f"claim '{keys.id}'"
    sides = {k: _selector(path, f"{where}: {k}", keys.rows or {}, getattr(keys, k)) for k in ("a", "b")
             if getattr(keys, k) is not None}
    lists = {k: tuple(_selector(path, f"{where}: {k}[{i}]", keys.rows or {}, s)
                      for i, s in enumerate(getattr(keys, k) or [])) for k in ("others", "series", "group")}
    num = {k: (None if getattr(keys, k) is None else float(getattr(keys, k))) for k in
           ("magnitude", "delta", "at_least", "threshold", "than", "margin", "nominal", "uncertainty")}
    return Claim(id=keys.id, paper=keys.paper, where=keys.where, text=keys.claim, direction=keys.direction,
                 sides=sides, others=lists["others"], series=lists["series"], group=lists["group"],
                 side=keys.side or "conservative", per_run=keys.per_run, per=tuple(keys.per or ()),
                 paper_numbers=keys.paper_numbers or "",
                 magnitude_kind=keys.magnitude_kind, better=keys.better or "greater",
                 trend=keys.trend or "increasing", note=keys.note or "", kind=keys.kind,
                 quote=" ".join((keys.quote or "").split()), line=keys.line,
                 spread=Spread(**keys.spread) if keys.spread else None, **num)


def _finding(path: Path, body: dict, claim_ids: set[str], where: str) -> Finding:
    """A finding's keys (:class:`~fyexp.claims.keys.FindingKeys`); its claim must be one of ``claim_ids``."""
    keys = read(FindingKeys, body, path, f"finding '{body['id']}'" if isinstance(body.get("id"), str) else where)
    if keys.claim not in claim_ids:
        raise error(path, f"finding '{keys.id}': claim", "the id of a claim in this file", keys.claim)
    rows = tuple(_selector(path, f"finding '{keys.id}': rows[{i}]", {}, s) for i, s in enumerate(keys.rows or []))
    return Finding(id=keys.id, paper=keys.paper, text=keys.finding, claim=keys.claim, rows=rows, where=keys.where)


# ---- what the experiments write ------------------------------------------------------------------------------
@functools.lru_cache(maxsize=None)
def experiment_names(experiments_dir: Path | None) -> tuple[str, ...]:
    """The experiments with a spec (listed once per process)."""
    from fyexp.spec.specs import available_specs

    return tuple(available_specs(experiments_dir))


@functools.lru_cache(maxsize=None)
def experiment_spec(name: str, experiments_dir: Path | None):
    """The spec of ``name``, read once per process (the vocabulary and the verdicts' freshness both need it)."""
    from fyexp.spec.specs import load_spec

    return load_spec(name, experiments_dir)


@functools.lru_cache(maxsize=None)
def _experiment_vocabulary(name: str, experiments_dir: Path | None) -> str:
    """The text in which a metric experiment ``name`` writes must appear: the source of its runner's module tree
    (metric names written literally), the columns of its paper's published tables (names built from parts,
    e.g. ``test_elbo_data``, ``kappa_mu1``) and the metrics the claims derive from its artifacts
    (:mod:`fyexp.claims.derived`).  Built once per experiment and process, for the experiments that
    claims name."""
    from fyexp.store.provenance.source import SOURCE_ROOT, module_tree, runner_module

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
    """One line naming ``owner`` when the selector names an experiment, metric, column (``columns``: the name must
    appear in what the experiment writes, as a metric's) or published row nobody writes."""
    names = experiment_names(experiments_dir)
    if selector.experiment not in names:
        raise FyexpError(f"{path}: {owner}: experiment '{selector.experiment}' does not exist; expected one of "
                         f"{', '.join(sorted(names))}")
    if selector.metric not in _experiment_vocabulary(selector.experiment, experiments_dir):
        raise FyexpError(f"{path}: {owner}: experiment '{selector.experiment}' writes no metric "
                         f"'{selector.metric}'")
    for column, _ in selector.columns:
        if column not in _experiment_vocabulary(selector.experiment, experiments_dir):
            raise FyexpError(f"{path}: {owner}: experiment '{selector.experiment}' writes no column '{column}'")
    if selector.paper_row is not None:
        rows = set().union(*_published_rows().values())
        if selector.paper_row not in rows:
            raise FyexpError(f"{path}: {owner}: paper_row '{selector.paper_row}' is no row of paper_tables.csv")


def load_claims(path: Path | None = None, experiments_dir: Path | None = None, check: bool = True) -> ClaimsFile:
    """Read and check the claims file; every problem is one line naming the claim (exit 2)."""
    path = Path(path or CLAIMS_FILE)
    data = read_yaml_file(path, "claims file")
    if not isinstance(data, dict) or not isinstance(data.get("claims"), list):
        raise error(path, "top level", "a mapping with a list 'claims' (and optionally 'findings')")
    claims = [_claim(path, c if isinstance(c, dict) else {}, f"claims[{i}]") for i, c in enumerate(data["claims"])]
    seen: set[str] = set()
    for c in claims:
        if c.id in seen:
            raise error(path, f"claim '{c.id}'", "a unique id (it appears twice)")
        seen.add(c.id)
    findings = [_finding(path, f if isinstance(f, dict) else {}, seen, f"findings[{i}]")
                for i, f in enumerate(data.get("findings") or [])]
    if check:
        for c in claims:
            for s in c.selectors():
                check_selector(s, f"claim '{c.id}'", path, experiments_dir)
        for f in findings:
            for s in f.rows:
                check_selector(s, f"finding '{f.id}'", path, experiments_dir)
    return ClaimsFile(claims, findings)
