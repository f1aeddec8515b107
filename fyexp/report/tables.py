"""Tables of ours beside the paper's: summary over seeds, the comparison cell by cell, Markdown and LaTeX.

For every published cell ``(paper, table, setting, row, column)`` we report our mean ± std over seeds
(population std, ``ddof=0``, the convention of the papers' ±), the paper's value ± spread and a row-level status
from :mod:`fyexp.report.tolerance` (✓ exact / ✓ within / ✗ / — not run), judged with the spreads and numbers of
runs that each side has (:mod:`fyexp.reference.rows` says what each paper's ± and run count are).

A metric named ``<column>_authors`` (e.g. gmm-calibration's ``bound_authors``, the bound as the authors' code
computes it) is an experiment's *convention column*: it is scored against the published ``<column>`` in a
column of its own, labelled as the authors' convention, beside our ``<column>``.  Where the authors' code is a
run of its own rather than a column (fy-vae's ``regularizer=authors`` cells, scored by Gaussian sampling), the
departures of ``fyexp/reference/readings.yaml`` name it: :func:`reading_rows` copies those rows under the published
row their text counterpart fills, as ``<column>_authors``.

*Readings.* A published table whose numbers the authors' code produced (a departure's ``tables``) is scored against
the authors' reading: each cell with a row of the authors' code is judged on it (the table's status and counts),
and the paper's text reading — our own metric — is judged beside it; a cell without one (a Gaussian encoder,
which no departure touches) is judged on ours, as both readings are the same there.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from fyexp.core.latex import escape as tex_escape
from fyexp.reference import load_paper_tables
from fyexp.reference.rows import TableMeta, home_of, joined_cells, ratio_row, ratio_rules, table_meta, table_title
from fyexp.report.tolerance import EXACT, NOT_RUN, NOT_SCORED, OUTSIDE, WITHIN, CellJudgement, judge
from fyexp.store.results import DIVERGED_IN_EPOCH

GROUP = ["profile", "paper", "table", "setting", "paper_row", "label", "metric"]
CONVENTION = "_authors"
SUMMARY_COLUMNS = GROUP + ["mean", "std", "sd", "n", "own_tol", "failed", "seeds", "stale"]


def _norm_table(series: pd.Series) -> pd.Series:
    return series.astype(str).str.replace(r"\.0$", "", regex=True)


def authors_tables() -> set[tuple[str, str]]:
    """(paper, table) of each published table whose numbers came from the authors' code (the departures'
    ``tables``, :mod:`fyexp.claims.readings`); a twin printed in another paper (fyvl 1–3) is matched through its
    home (:func:`fyexp.reference.rows.home_of`)."""
    from fyexp.claims.readings import load_readings

    return {(d.paper, str(t)) for d in load_readings().departures for t in d.tables}


def reading_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows of the authors' code that realise a published row's authors reading, as ``<metric>_authors`` rows
    of that published row: for every row with a ``paper_row`` that a departure of its experiment matches, the rows
    of the same profile, method and seed whose params and metric are the authors' rewrite of its own
    (:func:`fyexp.claims.readings.claim_under`'s rewrite of one side) get its ``paper``, ``table``, ``setting``,
    ``paper_row`` and ``label``.  A rewrite that only renames the metric to ``<metric>_authors`` needs no copy (the
    experiment writes that convention column itself); none where no departure applies."""
    import dataclasses
    import json

    from fyexp.claims.model import Selector
    from fyexp.claims.readings import AUTHORS, load_readings

    if frame.empty or "paper_row" not in frame or "params" not in frame:
        return frame.iloc[:0]
    departures = load_readings().departures
    names = {d.match[0][1][0] if d.match[0][0] == "experiment" else "" for d in departures}
    mine = frame[frame["experiment"].isin(names) & frame["paper_row"].notna() & (frame["paper_row"].astype(str) != "")]
    if mine.empty:
        return frame.iloc[:0]
    parsed = frame["params"].map(lambda p: tuple(sorted(json.loads(p).items())) if isinstance(p, str) and p else ())
    index = {key: i for i, key in enumerate(zip(frame["experiment"], frame["profile"], frame["method"],
                                                frame["seed"].astype(str), frame["metric"], parsed))}
    published = {(p, t): set(g["column"]) for (p, t), g in joined_cells().groupby(["paper", "table"])}
    copies = []
    for i, row in mine.iterrows():
        if row["metric"] not in published.get((row["paper"], _norm_table(pd.Series([row["table"]])).iloc[0]), ()):
            continue   # a metric the table does not print: no published cell for its authors' reading
        side = Selector(row["experiment"], row["metric"], method=str(row["method"]), paper_row=str(row["paper_row"]),
                        params=parsed[i])
        seen = side
        for d in departures:
            if d.matches(side):
                rewrite = d.rewrite(AUTHORS)
                if rewrite.none:
                    seen = None
                    break
                seen = rewrite.apply(seen)
        if seen is None or (seen.params == side.params and seen.metric in (side.metric, side.metric + CONVENTION)):
            continue
        at = index.get((row["experiment"], row["profile"], row["method"], str(row["seed"]), seen.metric,
                        tuple(sorted(dict(seen.params).items()))))
        if at is None:
            continue
        source = frame.iloc[at]
        copies.append({**source.to_dict(), **{k: row[k] for k in ("paper", "table", "setting", "paper_row")
                                              if k in row}, "label": row.get("label", row["paper_row"]),
                       "metric": row["metric"] + CONVENTION})
    return pd.DataFrame(copies) if copies else frame.iloc[:0]


def summarize(frame: pd.DataFrame) -> pd.DataFrame:
    """Per (profile, paper, table, setting, row, label, metric): mean, std (``ddof=0``), sd (``ddof=1``), the number
    of values averaged ``n`` (seeds × data splits or folds), ``seeds`` (the distinct seeds, never the splits or
    folds that a row's ``split`` / ``fold`` column names), the largest declared within-run ``tolerance``
    (``own_tol``), ``failed``: seeds of the same method and parameters whose cell failed (read from the failed
    cells' rows), and ``stale``: how many of the rows averaged are stale (``frame``'s column ``freshness``,
    :func:`fyexp.run.spec_freshness.row_freshness`)."""
    extra = reading_rows(frame) if "experiment" in frame else frame.iloc[:0]
    if len(extra):  # the authors' code's rows under the published rows they realise (readings.yaml)
        frame = pd.concat([frame, extra], ignore_index=True)
    # object dtype before filling with text: a column read as all-NaN floats would not take it (pandas 3 warns)
    status = frame["status"].astype(object).fillna("ok") if "status" in frame else pd.Series("ok", index=frame.index)
    ok = frame[(status == "ok") & frame["table"].notna() & frame["paper"].notna()].copy()
    if ok.empty:
        return pd.DataFrame(columns=SUMMARY_COLUMNS)
    ok["table"] = _norm_table(ok["table"])
    ok["paper_row"] = ok["paper_row"].astype(object).fillna("").astype(str)
    ok["setting"] = ok["setting"].astype(object).fillna("").astype(str)
    label = ok["label"] if "label" in ok else pd.Series(np.nan, index=ok.index)
    label = label.where(label.notna() & (label.astype(str) != ""), ok["paper_row"])
    ok["label"] = np.where(label.astype(str) == "", ok["method"].astype(str), label.astype(str))
    ok["value"] = pd.to_numeric(ok["value"], errors="coerce")
    ok["own_tol"] = pd.to_numeric(ok["tolerance"], errors="coerce") if "tolerance" in ok else np.nan
    ok["_stale"] = (ok["freshness"] == "stale") if "freshness" in ok else False
    failed_by_group = _failed_seeds(frame, status)
    ok["_group"] = [_method_key(*key) for key in zip(ok["profile"], ok["method"], ok["params"])]
    records = []
    for key, rows in ok.groupby(GROUP, dropna=False, sort=False):
        values = rows["value"].to_numpy(dtype=float)
        failed = set().union(*(failed_by_group.get(g, set()) for g in set(rows["_group"])))
        records.append(dict(zip(GROUP, key), mean=float(np.mean(values)), std=float(np.std(values, ddof=0)),
                            sd=float(np.std(values, ddof=1)) if len(values) > 1 else float("nan"),
                            n=int(len(values)), own_tol=float(rows["own_tol"].max()), failed=len(failed),
                            seeds=tuple(sorted({int(s) for s in rows["seed"].dropna()})),
                            stale=int(rows["_stale"].sum())))
    records += ratio_summaries(frame[status == "ok"])
    return pd.DataFrame.from_records(records, columns=SUMMARY_COLUMNS)


def ratio_summaries(frame: pd.DataFrame) -> list[dict]:
    """Ours for each declared ratio of published numbers (``paper_meta.yaml`` ``ratios``, e.g. VR's VR-max / IWAE
    training time): per profile, the mean of the numerator rows' metric ``ours`` over the mean of the denominator
    rows' (rows named by ``label``, else ``paper_row``, at the rule's ``setting``).  One value (``n`` = 1): a ratio
    of two means carries no spread of its own here."""
    if frame.empty or "setting" not in frame:
        return []
    label = frame["label"] if "label" in frame else pd.Series(np.nan, index=frame.index)
    name = label.where(label.notna() & (label.astype(str) != ""), frame.get("paper_row", label)).astype(str)
    out = []
    for rule in ratio_rules():
        at = (frame["setting"] == rule["setting"]) & (frame["metric"] == rule["ours"])
        for profile in dict.fromkeys(frame.loc[at, "profile"].astype(str)):
            mine = at & (frame["profile"].astype(str) == profile)
            num = pd.to_numeric(frame.loc[mine & (name == rule["numerator"]), "value"], errors="coerce").dropna()
            den = pd.to_numeric(frame.loc[mine & (name == rule["denominator"]), "value"], errors="coerce").dropna()
            if num.empty or den.empty or den.mean() == 0:
                continue
            seeds = frame.loc[mine & name.isin([rule["numerator"], rule["denominator"]]), "seed"].dropna()
            out.append(dict(profile=profile, paper=rule["paper"], table=str(rule["table"]), setting=rule["setting"],
                            paper_row=ratio_row(rule), label=ratio_row(rule), metric=f"{rule['column']}_ratio",
                            mean=float(num.mean() / den.mean()), std=0.0, sd=float("nan"), n=1, own_tol=float("nan"),
                            failed=0, seeds=tuple(sorted({int(s) for s in seeds})), stale=0))
    return out


def _method_key(profile, method, params) -> tuple[str, str, str]:
    """The key that ties a failed cell's seeds to the rows of the same method and parameters: each part as ``str``
    gives it, a missing value as ``'nan'`` (pandas 3's ``astype(str)`` keeps it missing, which would match nothing)."""
    return str(profile), str(method), str(params)


def _failed_seeds(frame: pd.DataFrame, status: pd.Series) -> dict[tuple, set]:
    """:func:`_method_key` → the seeds of the failed cells of that method and parameters."""
    failed = frame[status == "failed"]
    out: dict[tuple, set] = {}
    for (profile, method, params), rows in failed.groupby(["profile", "method", "params"], dropna=False):
        out[_method_key(profile, method, params)] = {int(s) for s in rows["seed"].dropna()}
    return out


def failed_cells(frame: pd.DataFrame, profile: str) -> list[str]:
    """The keys of the cells of ``profile`` that failed (a failed cell has one row, status ``failed``)."""
    if "status" not in frame:
        return []
    rows = frame[(frame["status"] == "failed") & (frame["profile"] == profile)]
    return sorted(dict.fromkeys(rows["cell"].astype(str)))


# ---- the comparison ------------------------------------------------------------------------------------------
@dataclass
class ComparedTable:
    paper: str
    table: str
    profile: str
    cells: pd.DataFrame  # one row per published cell (kind 'paper'), convention cell or ours-only cell
    meta: TableMeta
    planned_seeds: int | None = None
    other_rows: dict[str, list[str]] = field(default_factory=dict)  # rows another experiment produces
    inputs: pd.DataFrame | None = None  # the settings the paper states for this table (in-text, never scored)

    @property
    def published(self) -> pd.DataFrame:
        return self.cells[self.cells["kind"] == "paper"]

    def counts(self) -> dict[str, int]:
        """Counts over the published cells (:func:`tally`), and ``stale``: the stale rows behind every cell shown."""
        c = tally(self.published)
        c["stale"] = int(self.cells["stale"].fillna(0).sum()) if "stale" in self.cells else 0
        return c

    @property
    def status(self) -> str:
        c = self.counts()
        return table_status(c["scorable"], c["with_result"], c[EXACT] + c[WITHIN], self.profile == "paper",
                            authors_only=c[AUTHORS_ONLY], stale_rows=c["stale"])

    def count_line(self) -> str:
        c = self.counts()
        parts = [f"✓ exact {c[EXACT]}", f"✓ within {c[WITHIN]}", f"✗ {c[OUTSIDE]}", f"— not run {c[NOT_RUN]}"]
        if c[AUTHORS_ONLY]:
            parts.append(f"matches the authors' code only {c[AUTHORS_ONLY]}")
        if c[TEXT_ONLY]:
            parts.append(f"matches the paper's text only {c[TEXT_ONLY]}")
        line = " · ".join(parts) + f" (of {c['published']} published cells"
        if c[NOT_SCORED] - c["reference"]:
            line += f"; {c[NOT_SCORED] - c['reference']} not numeric"
        if c["reference"]:
            line += f"; {c['reference']} of other methods, shown for reference"
        return line + ")"


AUTHORS_ONLY = "authors only"  # outside (or missing) by our metric, within by the authors' convention column
TEXT_ONLY = "text only"  # scored on the authors' code: outside (or missing) there, within by the text reading


def tally(pub: pd.DataFrame) -> dict[str, int]:
    """Counts over scored published cells (columns ``status``, ``convention_agrees``, ``reference``, ``n``).

    ``exact`` and ``within`` count the reading a cell is scored on (``reading``: ours, or in a table the authors'
    code produced the authors' reading).  A cell that agrees only through the other reading is counted once, under
    ``authors only`` ("matches the authors' code only") or ``text only`` ("matches the paper's text only"), and
    not under ✗ or not run; ``by_authors`` counts the cells scored on the authors' reading.  ``scorable`` = numeric cells that are not other methods' rows; ``with_result`` = those
    with a result of ours or of the authors' convention.
    """
    conv = pub["convention_agrees"].fillna(False).astype(bool) if "convention_agrees" in pub else \
        pd.Series(False, index=pub.index)
    by_authors = (pub["reading"] == "authors") if "reading" in pub else pd.Series(False, index=pub.index)
    other_only = pub["status"].isin([OUTSIDE, NOT_RUN]) & conv
    c = {s: int(((pub["status"] == s) & ~other_only).sum()) for s in (EXACT, WITHIN, OUTSIDE, NOT_RUN, NOT_SCORED)}
    c[AUTHORS_ONLY] = int((other_only & ~by_authors).sum())
    c[TEXT_ONLY] = int((other_only & by_authors).sum())
    c["by_authors"] = int(by_authors.sum())
    c["published"] = len(pub)
    c["reference"] = int(pub["reference"].fillna(False).astype(bool).sum()) if "reference" in pub else 0
    c["scorable"] = len(pub) - c[NOT_SCORED]
    c["with_result"] = c["scorable"] - c[NOT_RUN]
    c["own_error_only"] = int(pub["own_error_only"].fillna(False).astype(bool).sum()) if "own_error_only" in pub else 0
    return c


STALE_WHY = "code"  # the one reason fyexp.store.provenance.freshness knows today: the code of the row changed


def table_status(scorable: int, with_result: int, agreeing: int, paper_profile: bool, *, authors_only: int = 0,
                 stale_rows: int = 0) -> str:
    """The fixed vocabulary of a table's status (``not implemented`` is decided by the coverage, which knows the
    specs): every scorable published cell within tolerance by our metric at the ``paper`` profile → ``reproduced``.

    ``agreeing`` counts our metric only; cells that match only the authors' convention (``authors_only``) are named
    beside it, and stale rows behind the cells are never hidden: ``reproduced (3 rows stale: code)``.
    """
    notes = [f"{authors_only} cell{'s' if authors_only != 1 else ''} match{'es' if authors_only == 1 else ''} the "
             "authors' code only"] if authors_only else []
    notes += [f"{stale_rows} row{'s' if stale_rows != 1 else ''} stale: {STALE_WHY}"] if stale_rows else []
    if with_result == 0 and not authors_only:
        base, counted = "not run", False
    elif not paper_profile:  # a table of another profile (reduced, or e.g. `paper-text`) never claims the paper's
        base, counted = "not the paper profile", True
    elif agreeing >= scorable:
        base, counted = "reproduced", False
    elif agreeing == 0:
        base, counted = "deviates", False
    else:
        base, counted = "partly reproduced", True
    inner = ([f"{agreeing} of {scorable} cells" + (" within tolerance" if not paper_profile else "")] if counted
             else []) + notes
    return base + (f" ({'; '.join(inner)})" if inner else "")


def _published(paper: str, table: str) -> pd.DataFrame:
    cells = joined_cells()
    return cells[(cells["paper"] == paper) & (cells["table"] == str(table))].reset_index(drop=True)


def score_cells(published: pd.DataFrame, ours: pd.DataFrame) -> pd.DataFrame:
    """Join ours (one profile) to published cells (rows of :func:`fyexp.reference.rows.joined_cells`) and judge each.

    A published cell takes our row with its own key, else the row of the cell it restates (``res_*``); its
    convention column ``<column>_authors`` is looked up the same way.  In a table the authors' code produced
    (:func:`authors_tables`) a cell with both is scored on the convention column (the authors' reading) and ours
    stands beside it (``reading``: ``authors``; else ``text``).  Returns the published cells with ``mean``,
    ``std``, ``sd``, ``n``, ``failed``, ``own_tol``, ``label``, the verdict (``status``, ``band``, ``spreads``,
    ``own_error_only``) and the convention's (``convention_mean``, ``convention_status``, ``convention_agrees``).
    """
    authors = authors_tables()
    index = {}
    for row in ours.itertuples(index=False):
        if row.paper_row:
            index.setdefault((row.paper, str(row.table), row.setting, row.paper_row, row.metric), row)
    records = []
    for cell in published.itertuples(index=False):
        keys = [(cell.paper, cell.table, cell.setting, cell.row), (cell.res_paper, cell.res_table, cell.res_setting,
                                                                   cell.res_row)]
        columns = [cell.column, cell.res_column]
        hit = next((index[k + (c,)] for k, c in zip(keys, columns) if k + (c,) in index), None)
        conv = next((index[k + (c + CONVENTION,)] for k, c in zip(keys, columns) if k + (c + CONVENTION,) in index), None)
        theirs = bool({(cell.paper, str(cell.table)), home_of(cell.paper, str(cell.table))} & authors)
        if conv is not None and theirs:   # the authors' code made the number: scored on it, the text beside
            hit, conv = conv, hit
        reading = "authors" if theirs and hit is not None and conv is not None else "text"
        meta = table_meta(cell.paper, cell.table)
        paper_se = meta.standard_error(cell.spread_num, cell.setting)
        rec = {"setting": cell.setting, "paper_row": cell.row, "metric": cell.column, "kind": "paper",
               "label": cell.row, "paper_text": cell.value, "spread_text": cell.spread, "paper_value": cell.value_num,
               "unit": cell.unit, "paper_se": paper_se, "mean": np.nan, "std": np.nan, "sd": np.nan, "n": 0,
               "failed": 0, "own_tol": np.nan, "seeds": (), "stale": 0, "reading": reading}
        if hit is not None:
            rec.update(mean=hit.mean, std=hit.std, sd=hit.sd, n=int(hit.n), failed=int(hit.failed),
                       own_tol=hit.own_tol, seeds=hit.seeds, stale=int(getattr(hit, "stale", 0) or 0))
        verdict = judge(rec["mean"], rec["paper_value"], unit=rec["unit"], paper_se=paper_se, ours_std=rec["sd"],
                        n_ours=rec["n"], own_tolerance=rec["own_tol"])
        rec.update(status=verdict.status, band=verdict.band, spreads=verdict.spreads,
                   own_error_only=verdict.own_error_only, mark=verdict.mark)
        cv = CellJudgement(NOT_RUN)
        if conv is not None:
            cv = judge(conv.mean, rec["paper_value"], unit=rec["unit"], paper_se=paper_se, ours_std=conv.sd,
                       n_ours=int(conv.n), own_tolerance=conv.own_tol)
        rec.update(convention_mean=conv.mean if conv is not None else np.nan,
                   convention_std=conv.std if conv is not None else np.nan,
                   convention_n=int(conv.n) if conv is not None else 0,
                   convention_status=cv.status, convention_mark=cv.mark if conv is not None else "",
                   convention_agrees=cv.agrees)
        records.append(rec)
    return pd.DataFrame.from_records(records)


def compare(summary: pd.DataFrame, paper: str, table: str, profile: str, *, planned_seeds: int | None = None,
            exclude_rows: dict[str, list[str]] | None = None) -> ComparedTable:
    """Ours (one profile of one experiment) beside every published cell of ``paper`` Table ``table``.

    ``exclude_rows`` maps another experiment's name to the published rows it produces (they are left out here and
    named in the caption).  Caption γ's (column ``gamma``) are compared only where the experiment reports γ rows.
    """
    table = str(table)
    ours = summary[summary["profile"] == profile]
    pub = _published(paper, table)
    if not (ours["metric"] == "gamma").any():
        pub = pub[pub["column"] != "gamma"]
    excluded = {row for rows in (exclude_rows or {}).values() for row in rows}
    pub = pub[~pub["row"].isin(excluded)]
    scored = score_cells(pub, ours)
    reference = scored["paper_row"].isin(table_meta(paper, table).reference_rows)
    scored["reference"] = reference
    scored.loc[reference, "status"] = NOT_SCORED
    scored, own_of_reference = _split_reference(scored)
    own = ours[(ours["paper"] == paper) & (ours["table"] == table)]
    published_keys = set(zip(pub["setting"], pub["row"], pub["column"]))
    published_keys |= set(zip(pub["res_setting"], pub["res_row"], pub["res_column"]))  # e.g. a ratio's own key
    published_keys |= {(s, r, c + CONVENTION) for s, r, c in published_keys}
    unpublished = pd.Series([(s, r, m) not in published_keys for s, r, m in zip(own["setting"], own["paper_row"],
                                                                                own["metric"])], index=own.index,
                            dtype=bool)   # a mask, not a list: an empty list would select no columns
    extra = own[unpublished]
    extra = extra[~(extra["paper_row"].isin(excluded) & (extra["paper_row"] != ""))]
    extra_records = [{"setting": r.setting, "paper_row": r.paper_row, "metric": r.metric, "kind": "ours",
                      "label": r.label, "paper_text": None, "spread_text": "", "paper_value": np.nan,
                      "unit": np.nan, "mean": r.mean, "std": r.std, "sd": r.sd, "n": int(r.n), "failed": int(r.failed),
                      "own_tol": r.own_tol, "seeds": r.seeds, "stale": int(r.stale), "status": NOT_SCORED, "mark": "",
                      "own_error_only": False, "convention_agrees": False, "convention_status": NOT_RUN}
                     for r in extra.itertuples(index=False)]
    parts = [scored] + [frame for frame in (own_of_reference, pd.DataFrame.from_records(extra_records)) if len(frame)]
    cells = pd.concat(parts, ignore_index=True) if len(parts) > 1 else scored
    cells = _order_rows(cells)
    joined = joined_cells()
    inputs = joined[(joined["role"] == "input") & (joined["home_paper"] == home_of(paper, table)[0])
                    & (joined["home_table"] == home_of(paper, table)[1]) & ~joined["row"].isin(excluded)]
    return ComparedTable(paper=paper, table=table, profile=profile, cells=cells, meta=table_meta(paper, table),
                         planned_seeds=planned_seeds, other_rows={k: v for k, v in (exclude_rows or {}).items() if v},
                         inputs=inputs.reset_index(drop=True))


OWN_SUFFIX = " (ours)"


def _split_reference(scored: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A reference row (another method's published number, e.g. VR's VI quoted from Graves 2011) that our experiment
    also runs keeps the published number alone; our result becomes a row of ours beside it, labelled
    ``<row> (ours)``, shown and never scored.  Returns (the published cells, our rows of reference methods)."""
    hit = scored["reference"].astype(bool) & (scored["n"] > 0)
    own = scored[hit].copy()
    own["kind"], own["label"], own["paper_text"], own["spread_text"] = "ours", own["paper_row"] + OWN_SUFFIX, None, ""
    own["paper_value"], own["mark"], own["reference"] = np.nan, "", False
    scored = scored.copy()
    scored.loc[hit, ["mean", "std", "sd"]] = np.nan
    scored.loc[hit, ["n", "failed", "stale"]] = 0
    scored.loc[hit, "seeds"] = pd.Series([()] * int(hit.sum()), index=scored.index[hit], dtype=object)
    return scored, own


def _order_rows(cells: pd.DataFrame) -> pd.DataFrame:
    """Rows of ours of a reference method right after the published row they stand beside (stable otherwise)."""
    position: dict[tuple, int] = {}
    for i, key in enumerate(zip(cells["setting"], cells["label"])):
        position.setdefault(key, i)
    base = [position.get((s, str(r)[:-len(OWN_SUFFIX)]), i) + 0.5
            if k == "ours" and str(r).endswith(OWN_SUFFIX) else i
            for i, (s, r, k) in enumerate(zip(cells["setting"], cells["label"], cells["kind"]))]
    order = sorted(range(len(cells)), key=lambda i: (base[i], i))
    return cells.iloc[order].reset_index(drop=True)


# ---- rendering -----------------------------------------------------------------------------------------------
def _num(x: float, digits: int) -> str:
    return "" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"


def _digits(unit: float) -> int:
    if unit is None or not np.isfinite(unit) or unit <= 0:
        return 3
    return max(0, min(6, int(round(-math.log10(unit))) + 1))


def _seed_count(cell) -> int:
    """Distinct seeds behind a cell (a cell of rows without a seed column counts its values)."""
    seeds = cell["seeds"] if isinstance(cell["seeds"], tuple) else ()
    return len(seeds) or int(cell["n"])


def _seeds_text(seeds: int, n: int, failed: int, planned: int | None) -> str:
    """``3``, ``1 of 3``, ``1 × 20 splits/folds`` (a mean over data splits or folds is not a mean over seeds)."""
    text = str(seeds) if planned is None or seeds >= planned else f"{seeds} of {planned}"
    if n > seeds:
        text += f" × {n // seeds if n % seeds == 0 else n / seeds:g} splits/folds"
    return text + (f" ({failed} failed)" if failed else "")


def format_cells(table: ComparedTable) -> tuple[list[str], list[list[str]]]:
    """Header and body rows: Setting, Row, seeds, then per published metric 'ours' and 'paper' columns, a column
    for each convention metric, and 'ours' columns for metrics the paper does not print."""
    cells = table.cells
    pub = cells[cells["kind"] == "paper"]
    metrics = list(dict.fromkeys(pub["metric"]))
    conventions = [m for m in metrics if pub.loc[pub["metric"] == m, "convention_n"].fillna(0).gt(0).any()] \
        if "convention_n" in pub else []
    extras = [m for m in dict.fromkeys(cells.loc[cells["kind"] == "ours", "metric"])
              if m not in metrics and m.removesuffix(CONVENTION) not in conventions]
    by_authors = "reading" in pub and (pub["reading"] == "authors").any()   # scored on the authors' reading
    header = ["Setting", "Row", "seeds"]
    for metric in metrics:
        scored_on = by_authors and metric in conventions
        header += [f"{metric} (ours, authors' code)" if scored_on else f"{metric} (ours)", f"{metric} (paper)"]
        if metric in conventions:
            header.append(f"{metric}: paper's text (ours)" if scored_on else f"{metric}: authors' convention (ours)")
    header += [f"{m} (ours)" for m in extras]
    body = []
    for (setting, label), group in cells.groupby(["setting", "label"], sort=False, dropna=False):
        by_metric = {m: g.iloc[0] for m, g in group.groupby("metric", sort=False)}
        ran = group[group["n"] > 0]
        top = ran.iloc[int(np.argmax(ran["n"].to_numpy()))] if len(ran) else None
        seeds = _seeds_text(_seed_count(top), int(top["n"]), int(ran["failed"].max()), table.planned_seeds) \
            if top is not None else "0"
        line = [str(setting), str(label), seeds]
        for metric in metrics:
            cell = by_metric.get(metric)
            if cell is None:
                line += ["", ""] + ([""] if metric in conventions else [])
                continue
            digits = _digits(cell["unit"])
            if cell["n"] == 0 or np.isnan(cell["mean"]):
                ours = "— not run" if cell["kind"] == "paper" and cell["status"] != NOT_SCORED else ""
                if cell.get("reference") == True:  # noqa: E712 (NaN for our extra rows)
                    ours = "reference only"
            else:
                ours = _num(cell["mean"], digits)
                if cell["n"] > 1:
                    ours += f" ± {_num(cell['std'], digits)}"
                if cell["mark"]:
                    ours += f" {cell['mark']}"
            if cell["kind"] == "paper":
                paper = str(cell["paper_text"]) + (f" ± {cell['spread_text']}" if cell["spread_text"] else "")
            else:
                paper = "—"
            line += [ours, paper]
            if metric in conventions:
                conv = ""
                own = by_metric.get(metric + CONVENTION)  # a row the paper does not print: ours only, no mark
                if cell["kind"] != "paper" and own is not None and not np.isnan(own["mean"]):
                    conv = _num(own["mean"], digits) + (f" ± {_num(own['std'], digits)}" if own["n"] > 1 else "")
                elif cell.get("convention_n", 0):
                    conv = _num(cell["convention_mean"], digits)
                    if cell["convention_n"] > 1:
                        conv += f" ± {_num(cell['convention_std'], digits)}"
                    conv += f" {cell['convention_mark']}"
                line.append(conv)
        for metric in extras:
            cell = by_metric.get(metric)
            if cell is None or np.isnan(cell["mean"]):
                line.append("")
                continue
            text = _num(cell["mean"], 3)
            if cell["n"] > 1:
                text += f" ± {_num(cell['std'], 3)}"
            line.append(text)
        body.append(line)
    return header, body


_SPREAD_WORDS = {"std": "a standard deviation", "3std": "three standard deviations", "std_err": "a standard error"}


def caption(table: ComparedTable) -> list[str]:
    """The facts a reader needs to trust the marks: the tolerance and the spreads used, the seeds behind each mean,
    the convention columns, and the rows left to another experiment."""
    meta, cells = table.meta, table.cells
    pub = cells[cells["kind"] == "paper"]
    lines = []
    if meta.spread in _SPREAD_WORDS:
        runs = f"n_p = {meta.n_runs}" if meta.n_runs else "an unstated number of runs (read as n_p = 1)"
        if meta.settings:
            runs += " (" + ", ".join(f"{s}: {n}" for s, n in meta.settings) + ")"
        said = "as the paper states" if meta.spread_stated else f"our reading — {meta.assumed}"
        paper_side = f"the paper's ± is {_SPREAD_WORDS[meta.spread]} over {runs}, {said} ({meta.source})"
    else:
        paper_side = f"the paper prints no ± ({meta.source})"
    lines.append("**Tolerance.** |ours − paper| ≤ 2·sqrt(se_p² + se_o²), where " + paper_side +
                 "; se_o = our seed std (ddof=1) / sqrt(n_o), none for a single seed. Where neither side has a spread "
                 "the band is half a unit of the paper's last printed digit. ✓ exact = equal at the printed precision.")
    used = pub[pub["n"] > 0]["spreads"].value_counts()
    if len(used):
        words = {"paper+ours": "paper's and ours", "paper": "paper's only", "ours": "ours only",
                 "precision": "printed precision only"}
        lines.append("Spreads used: " + ", ".join(f"{words.get(k, k)} ({v} cells)" for k, v in used.items()) + ".")
    ran = pub[pub["n"] > 0]
    planned = table.planned_seeds
    if len(ran):
        seeds = pd.Series([_seed_count(c) for _, c in ran.iterrows()], index=ran.index)
        failed = int(ran["failed"].max())
        text = f"**Seeds.** Each mean rests on {seeds.min()}" + (f"–{seeds.max()}" if seeds.max() != seeds.min() else "")
        text += " finished seed" + ("s" if seeds.max() > 1 else "")
        if planned:
            text += f" of {planned} planned"
        text += "; " + (f"{failed} seed(s) of some rows failed" if failed else "no seed failed") + "."
        if (ran["n"].astype(int) > seeds).any():
            text += " Where a row reads `k × m splits/folds`, its mean and ± are over the k·m runs of its data " \
                    "splits or cross-validation folds (the paper's own unit), which are not seeds."
        if planned and (seeds < planned).any():
            short = ran[seeds < planned]
            rows = ", ".join(dict.fromkeys(f"{s} / {r}" if s else str(r) for s, r in zip(short["setting"], short["label"])))
            text += f" **The mean of {len(dict.fromkeys(zip(short['setting'], short['label'])))} row(s) rests on fewer " \
                    f"seeds than planned**: {rows}."
        lines.append(text)
    if "convention_n" in pub and pub["convention_n"].fillna(0).gt(0).any():
        cols = ", ".join(f"`{m}{CONVENTION}`" for m in dict.fromkeys(pub.loc[pub["convention_n"] > 0, "metric"]))
        if "reading" in pub and (pub["reading"] == "authors").any():
            lines.append(f"**Readings.** The published numbers came from the authors' code "
                         "(`fyexp/reference/readings.yaml`): each cell with a run of it is "
                         f"scored on the authors' reading ({cols}, ours under the authors' code), and the paper's "
                         "text reading (our own metric) is judged beside it; a cell no departure touches is scored "
                         "on ours, the same under both.")
        else:
            lines.append(f"**Authors' convention.** {cols}: the experiment's value under the authors' code "
                         "convention (see the experiment's NOTES.md), scored against the same published column in a "
                         "column of its own.")
    diverged = cells[(cells["metric"] == DIVERGED_IN_EPOCH) & (cells["n"] > 0)]
    if len(diverged):
        rows = "; ".join(f"{r.setting} / {r.label}: {int(r.n)} seed(s), in epoch "
                         f"{_num(r.mean, 0) if r.n == 1 or not r.std else f'{_num(r.mean, 1)} ± {_num(r.std, 1)}'}"
                         for r in diverged.itertuples(index=False))
        lines.append(f"**Diverged runs.** The training loss or gradient of these runs turned non-finite; each was "
                     f"measured at the end of the epoch before, not at the last epoch planned (column "
                     f"`{DIVERGED_IN_EPOCH}`; why: the experiment's NOTES.md): {rows}.")
    if pub["own_error_only"].any():
        lines.append("✗† = outside the band, but within the experiment's own within-run error (twice a test-set or "
                     "Monte-Carlo standard error of one run), which a single run cannot vouch for.")
    c = table.counts()
    if c[TEXT_ONLY]:
        lines.append(f"**Matches the paper's text only:** {c[TEXT_ONLY]} cell(s) are outside (or missing) under the "
                     "authors' reading and within tolerance under the text reading; counted apart, never as ✓.")
    if c[AUTHORS_ONLY]:
        lines.append(f"**Matches the authors' code only:** {c[AUTHORS_ONLY]} cell(s) are outside (or missing) by our "
                     "metric and within tolerance by the authors' convention column; they are counted apart, never as "
                     "✓ exact or ✓ within.")
    own_ref = cells[(cells["kind"] == "ours") & cells["label"].astype(str).str.endswith(OWN_SUFFIX)]
    if len(own_ref):
        rows = ", ".join(dict.fromkeys(own_ref["paper_row"].astype(str)))
        lines.append(f"**Reference rows.** {', '.join(table.meta.reference_rows)}: other methods' published numbers "
                     f"({table.meta.ref}), shown, never scored or counted missing; rows `{rows}{OWN_SUFFIX}` are our "
                     "own run of that method, shown beside them, not scored.")
    if c["stale"]:
        lines.append(f"**Stale.** {c['stale']} row(s) behind these cells are stale ({STALE_WHY}: the code that "
                     "produced them changed since; see the index's provenance).")
    if table.inputs is not None and len(table.inputs):
        stated: dict[tuple, list[str]] = {}
        for p, r, col, v in zip(table.inputs["paper"], table.inputs["row"], table.inputs["column"],
                                table.inputs["value"]):
            stated.setdefault((r, col, v), []).append(p)
        settings = "; ".join(f"{r}: {col} = {v} ({', '.join(papers)})" for (r, col, v), papers in stated.items())
        lines.append(f"**Settings the papers state** (inputs of the runs, never scored): {settings}.")
    for rule in ratio_rules():
        if rule["paper"] == table.paper and str(rule["table"]) == table.table:
            lines.append(f"**Ratio.** {rule['setting']}, {rule['column']}: the paper prints the "
                         f"{rule['numerator']} and {rule['denominator']} times of its own GPU; what is compared is "
                         "their ratio, "
                         f"{ratio_row(rule)}, against ours: the ratio of our mean `{rule['ours']}` of the same rows.")
    for other, rows in table.other_rows.items():
        lines.append(f"Rows {', '.join(rows)} are produced by `{other}` (see its table).")
    return lines


def to_markdown(table: ComparedTable, title: str) -> str:
    header, body = format_cells(table)
    lines = [f"### {title}", "", f"Profile `{table.profile}` · status: **{table.status}** · {table.count_line()}", "",
             "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in body]
    lines += ["", "ours = mean ± std over seeds (ddof=0, the papers' convention); ✓ exact / ✓ within tolerance / ✗ "
              "outside / — not run.", ""]
    lines += [line + "\n" for line in caption(table)]
    return "\n".join(lines)


def to_latex(table: ComparedTable, title: str) -> str:
    header, body = format_cells(table)
    lines = [r"% generated by `fyexp report`; needs \usepackage{amssymb} for \checkmark", r"\begin{table}[ht]",
             r"\centering", r"\small",
             rf"\caption{{{tex_escape(title)} (profile {tex_escape(table.profile)}; {tex_escape(table.status)})}}",
             r"\begin{tabular}{lll" + "r" * (len(header) - 3) + "}", r"\hline",
             " & ".join(tex_escape(h) for h in header) + r" \\", r"\hline"]
    lines += [" & ".join(tex_escape(c) for c in row) + r" \\" for row in body]
    lines += [r"\hline", r"\end{tabular}", r"\end{table}", ""]
    return "\n".join(lines)


def table_stem(table: ComparedTable) -> str:
    """The name of a compared table's files, without suffix: ``<paper>-table<table>-<profile>``."""
    return f"{table.paper}-table{table.table}-{table.profile}"


def write_table(table: ComparedTable, title: str, folder: Path) -> list[Path]:
    """Write the table's Markdown and LaTeX (each file left as it is when it already holds the same text)."""
    from fyexp.report.cache import write_text_if_changed

    md, tex = folder / f"{table_stem(table)}.md", folder / f"{table_stem(table)}.tex"
    write_text_if_changed(md, to_markdown(table, title))
    write_text_if_changed(tex, to_latex(table, title))
    return [md, tex]


__all__ = ["summarize", "compare", "score_cells", "table_status", "ComparedTable", "write_table", "to_markdown",
           "to_latex", "failed_cells", "table_title", "load_paper_tables", "table_stem"]
