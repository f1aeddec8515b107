"""Tables of ours beside the paper's: summary over seeds, the comparison cell by cell, Markdown and LaTeX.

For every published cell ``(paper, table, setting, row, column)`` we report our mean ± std over seeds
(population std, ``ddof=0``, the convention of the papers' ±), the paper's value ± spread and a row-level status
from :mod:`fyexp.report.tolerance` (✓ exact / ✓ within / ✗ / — not run), judged with the spreads and numbers of
runs that each side has (:mod:`fyexp.reference.rows` says what each paper's ± and run count are).

A metric named ``<column>_authors`` (e.g. gmm-calibration's ``bound_authors``, the bound as the authors' code
computes it) is an experiment's *convention column*: it is scored against the published ``<column>`` in a
column of its own, labelled as the authors' convention, beside our ``<column>``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from fyexp.reference import load_paper_tables
from fyexp.reference.rows import TableMeta, joined_cells, table_meta, table_title
from fyexp.report.tolerance import EXACT, NOT_RUN, NOT_SCORED, OUTSIDE, WITHIN, Verdict, judge

GROUP = ["profile", "paper", "table", "setting", "paper_row", "label", "metric"]
CONVENTION = "_authors"
SUMMARY_COLUMNS = GROUP + ["mean", "std", "sd", "n", "own_tol", "failed", "seeds"]


def _norm_table(series: pd.Series) -> pd.Series:
    return series.astype(str).str.replace(r"\.0$", "", regex=True)


def summarize(frame: pd.DataFrame) -> pd.DataFrame:
    """Per (profile, paper, table, setting, row, label, metric): mean, std (``ddof=0``), sd (``ddof=1``), the number
    of seeds ``n``, the largest declared within-run ``tolerance`` (``own_tol``), and ``failed``: seeds of the same
    method and parameters whose cell failed (read from the failed cells' rows)."""
    status = frame["status"].fillna("ok") if "status" in frame else pd.Series("ok", index=frame.index)
    ok = frame[(status == "ok") & frame["table"].notna() & frame["paper"].notna()].copy()
    if ok.empty:
        return pd.DataFrame(columns=SUMMARY_COLUMNS)
    ok["table"] = _norm_table(ok["table"])
    ok["paper_row"] = ok["paper_row"].fillna("").astype(str)
    ok["setting"] = ok["setting"].fillna("").astype(str)
    label = ok["label"] if "label" in ok else pd.Series(np.nan, index=ok.index)
    label = label.where(label.notna() & (label.astype(str) != ""), ok["paper_row"])
    ok["label"] = np.where(label.astype(str) == "", ok["method"].astype(str), label.astype(str))
    ok["value"] = pd.to_numeric(ok["value"], errors="coerce")
    ok["own_tol"] = pd.to_numeric(ok["tolerance"], errors="coerce") if "tolerance" in ok else np.nan
    failed_by_group = _failed_seeds(frame, status)
    ok["_group"] = list(zip(ok["profile"], ok["method"].astype(str), ok["params"].astype(str)))
    records = []
    for key, rows in ok.groupby(GROUP, dropna=False, sort=False):
        values = rows["value"].to_numpy(dtype=float)
        failed = set().union(*(failed_by_group.get(g, set()) for g in set(rows["_group"])))
        records.append(dict(zip(GROUP, key), mean=float(np.mean(values)), std=float(np.std(values, ddof=0)),
                            sd=float(np.std(values, ddof=1)) if len(values) > 1 else float("nan"),
                            n=int(len(values)), own_tol=float(rows["own_tol"].max()), failed=len(failed),
                            seeds=tuple(sorted(int(s) for s in rows["seed"].dropna()))))
    return pd.DataFrame.from_records(records, columns=SUMMARY_COLUMNS)


def _failed_seeds(frame: pd.DataFrame, status: pd.Series) -> dict[tuple, set]:
    failed = frame[status == "failed"]
    out: dict[tuple, set] = {}
    for (profile, method, params), rows in failed.groupby(["profile", "method", "params"], dropna=False):
        out[(profile, str(method), str(params))] = {int(s) for s in rows["seed"].dropna()}
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

    @property
    def published(self) -> pd.DataFrame:
        return self.cells[self.cells["kind"] == "paper"]

    def counts(self) -> dict[str, int]:
        """Counts over the published cells: exact, within, outside, not run, not scored, and ``convention``: cells
        outside by our number but within by the authors' convention column."""
        pub = self.published
        c = {s: int((pub["status"] == s).sum()) for s in (EXACT, WITHIN, OUTSIDE, NOT_RUN, NOT_SCORED)}
        c["published"] = len(pub)
        c["reference"] = int(pub["reference"].fillna(False).astype(bool).sum()) if "reference" in pub else 0
        c["convention"] = int((pub["status"].isin([OUTSIDE, NOT_RUN]) & pub["convention_agrees"]).sum())
        c["own_error_only"] = int(pub["own_error_only"].sum())
        return c

    @property
    def status(self) -> str:
        c = self.counts()
        return table_status(c["published"] - c[NOT_SCORED], c["published"] - c[NOT_SCORED] - c[NOT_RUN],
                            c[EXACT] + c[WITHIN] + c["convention"], self.profile == "paper")

    def count_line(self) -> str:
        c = self.counts()
        parts = [f"✓ exact {c[EXACT]}", f"✓ within {c[WITHIN]}", f"✗ {c[OUTSIDE]}", f"— not run {c[NOT_RUN]}"]
        line = " · ".join(parts) + f" (of {c['published']} published cells"
        if c[NOT_SCORED] - c["reference"]:
            line += f"; {c[NOT_SCORED] - c['reference']} not numeric"
        if c["reference"]:
            line += f"; {c['reference']} of other methods, shown for reference"
        line += ")"
        if c["convention"]:
            line += f"; of the ✗, {c['convention']} are within tolerance by the authors' convention column"
        return line


def table_status(scorable: int, with_result: int, agreeing: int, paper_profile: bool) -> str:
    """The fixed vocabulary of a table's status (``not implemented`` is decided by the coverage, which knows the
    specs): every scorable published cell within tolerance at the ``paper`` profile → ``reproduced``."""
    if with_result == 0:
        return "not run"
    if not paper_profile:  # a table of another profile (reduced, or e.g. `paper-text`) never claims the paper's
        return f"not the paper profile ({agreeing} of {scorable} cells within tolerance)"
    if agreeing >= scorable:
        return "reproduced"
    if agreeing == 0:
        return "deviates"
    return f"partly reproduced ({agreeing} of {scorable} cells)"


def _published(paper: str, table: str) -> pd.DataFrame:
    cells = joined_cells()
    return cells[(cells["paper"] == paper) & (cells["table"] == str(table))].reset_index(drop=True)


def score_cells(published: pd.DataFrame, ours: pd.DataFrame) -> pd.DataFrame:
    """Join ours (one profile) to published cells (rows of :func:`fyexp.reference.rows.joined_cells`) and judge each.

    A published cell takes our row with its own key, else the row of the cell it restates (``res_*``); its
    convention column ``<column>_authors`` is looked up the same way.  Returns the published cells with ``mean``,
    ``std``, ``sd``, ``n``, ``failed``, ``own_tol``, ``label``, the verdict (``status``, ``band``, ``spreads``,
    ``own_error_only``) and the convention's (``convention_mean``, ``convention_status``, ``convention_agrees``).
    """
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
        meta = table_meta(cell.paper, cell.table)
        paper_se = meta.standard_error(cell.spread_num, cell.setting)
        rec = {"setting": cell.setting, "paper_row": cell.row, "metric": cell.column, "kind": "paper",
               "label": cell.row, "paper_text": cell.value, "spread_text": cell.spread, "paper_value": cell.value_num,
               "unit": cell.unit, "paper_se": paper_se, "mean": np.nan, "std": np.nan, "sd": np.nan, "n": 0,
               "failed": 0, "own_tol": np.nan, "seeds": ()}
        if hit is not None:
            rec.update(mean=hit.mean, std=hit.std, sd=hit.sd, n=int(hit.n), failed=int(hit.failed),
                       own_tol=hit.own_tol, seeds=hit.seeds)
        verdict = judge(rec["mean"], rec["paper_value"], unit=rec["unit"], paper_se=paper_se, ours_std=rec["sd"],
                        n_ours=rec["n"], own_tolerance=rec["own_tol"])
        rec.update(status=verdict.status, band=verdict.band, spreads=verdict.spreads,
                   own_error_only=verdict.own_error_only, mark=verdict.mark)
        cv = Verdict(NOT_RUN)
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
    own = ours[(ours["paper"] == paper) & (ours["table"] == table)]
    published_keys = set(zip(pub["setting"], pub["row"], pub["column"]))
    published_keys |= {(s, r, c + CONVENTION) for s, r, c in published_keys}
    extra = own[[(s, r, m) not in published_keys for s, r, m in zip(own["setting"], own["paper_row"], own["metric"])]]
    extra = extra[~(extra["paper_row"].isin(excluded) & (extra["paper_row"] != ""))]
    extra_records = [{"setting": r.setting, "paper_row": r.paper_row, "metric": r.metric, "kind": "ours",
                      "label": r.label, "paper_text": None, "spread_text": "", "paper_value": np.nan,
                      "unit": np.nan, "mean": r.mean, "std": r.std, "sd": r.sd, "n": int(r.n), "failed": int(r.failed),
                      "own_tol": r.own_tol, "seeds": r.seeds, "status": NOT_SCORED, "mark": "",
                      "own_error_only": False, "convention_agrees": False, "convention_status": NOT_RUN}
                     for r in extra.itertuples(index=False)]
    cells = pd.concat([scored, pd.DataFrame.from_records(extra_records)], ignore_index=True) if extra_records else scored
    return ComparedTable(paper=paper, table=table, profile=profile, cells=cells, meta=table_meta(paper, table),
                         planned_seeds=planned_seeds, other_rows={k: v for k, v in (exclude_rows or {}).items() if v})


# ---- rendering -----------------------------------------------------------------------------------------------
def _num(x: float, digits: int) -> str:
    return "" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"


def _digits(unit: float) -> int:
    if unit is None or not np.isfinite(unit) or unit <= 0:
        return 3
    return max(0, min(6, int(round(-math.log10(unit))) + 1))


def _seeds_text(n: int, failed: int, planned: int | None) -> str:
    text = str(n) if planned is None or n >= planned else f"{n} of {planned}"
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
    header = ["Setting", "Row", "seeds"]
    for metric in metrics:
        header += [f"{metric} (ours)", f"{metric} (paper)"]
        if metric in conventions:
            header.append(f"{metric}: authors' convention (ours)")
    header += [f"{m} (ours)" for m in extras]
    body = []
    for (setting, label), group in cells.groupby(["setting", "label"], sort=False, dropna=False):
        by_metric = {m: g.iloc[0] for m, g in group.groupby("metric", sort=False)}
        ran = group[group["n"] > 0]
        seeds = _seeds_text(int(ran["n"].max()), int(ran["failed"].max()), table.planned_seeds) if len(ran) else "0"
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
        seeds = ran["n"].astype(int)
        failed = int(ran["failed"].max())
        text = f"**Seeds.** Each mean rests on {seeds.min()}" + (f"–{seeds.max()}" if seeds.max() != seeds.min() else "")
        text += " finished seed" + ("s" if seeds.max() > 1 else "")
        if planned:
            text += f" of {planned} planned"
        text += "; " + (f"{failed} seed(s) of some rows failed" if failed else "no seed failed") + "."
        if planned and (seeds < planned).any():
            short = ran[seeds < planned]
            rows = ", ".join(dict.fromkeys(f"{s} / {r}" if s else str(r) for s, r in zip(short["setting"], short["label"])))
            text += f" **The mean of {len(dict.fromkeys(zip(short['setting'], short['label'])))} row(s) rests on fewer " \
                    f"seeds than planned**: {rows}."
        lines.append(text)
    if "convention_n" in pub and pub["convention_n"].fillna(0).gt(0).any():
        cols = ", ".join(f"`{m}{CONVENTION}`" for m in dict.fromkeys(pub.loc[pub["convention_n"] > 0, "metric"]))
        lines.append(f"**Authors' convention.** {cols}: the experiment's value under the authors' code convention "
                     "(see the experiment's NOTES.md), scored against the same published column in a column of its own.")
    if pub["own_error_only"].any():
        lines.append("✗† = outside the band, but within the experiment's own within-run error (twice a test-set or "
                     "Monte-Carlo standard error of one run), which a single run cannot vouch for.")
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


def _latex_escape(text: str) -> str:
    for a, b in [("\\", r"\textbackslash{}"), ("&", r"\&"), ("%", r"\%"), ("$", r"\$"), ("#", r"\#"),
                 ("_", r"\_"), ("{", r"\{"), ("}", r"\}"), ("±", r"$\pm$"), ("σ", r"$\sigma$"),
                 ("✓", r"\checkmark"), ("✗", r"$\times$"), ("†", r"\dag{}"), ("—", "--"), ("ρ", r"$\rho$"),
                 ("γ", r"$\gamma$"), ("′", "'"), ("→", r"$\to$")]:
        text = text.replace(a, b)
    return text


def to_latex(table: ComparedTable, title: str) -> str:
    header, body = format_cells(table)
    lines = [r"% generated by `fyexp report`; needs \usepackage{amssymb} for \checkmark", r"\begin{table}[ht]",
             r"\centering", r"\small",
             rf"\caption{{{_latex_escape(title)} (profile {_latex_escape(table.profile)}; {_latex_escape(table.status)})}}",
             r"\begin{tabular}{lll" + "r" * (len(header) - 3) + "}", r"\hline",
             " & ".join(_latex_escape(h) for h in header) + r" \\", r"\hline"]
    lines += [" & ".join(_latex_escape(c) for c in row) + r" \\" for row in body]
    lines += [r"\hline", r"\end{tabular}", r"\end{table}", ""]
    return "\n".join(lines)


def write_table(table: ComparedTable, title: str, folder: Path) -> list[Path]:
    from fyexp.results import atomic_write_text

    stem = f"{table.paper}-table{table.table}-{table.profile}"
    md, tex = folder / f"{stem}.md", folder / f"{stem}.tex"
    atomic_write_text(md, to_markdown(table, title))
    atomic_write_text(tex, to_latex(table, title))
    return [md, tex]


__all__ = ["summarize", "compare", "score_cells", "table_status", "ComparedTable", "write_table", "to_markdown",
           "to_latex", "failed_cells", "table_title", "load_paper_tables"]
