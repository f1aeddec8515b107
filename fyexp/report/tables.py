"""Tables of ours beside the paper's: summary over seeds, comparison, Markdown and LaTeX rendering.

For every published cell (paper, table, setting, row, metric) with rows of ours we report
mean ± std over seeds (population std, ``ddof=0``, the convention of the papers' ±), the paper's
value ± spread, and the deviation in units of the paper's spread, ``z = (ours − paper) / spread``
(a ``3std`` spread is first divided by three).  A cell *agrees* when ``|ours − paper| ≤ tol``, where ``tol``
is the row's own ``tolerance`` column when the experiment supplies one (e.g. a Monte Carlo standard error),
else two of the paper's standard deviations, else one unit of the last printed digit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from fyexp.reference import load_paper_tables

GROUP = ["profile", "paper", "table", "setting", "paper_row", "label", "metric"]


def summarize(frame: pd.DataFrame) -> pd.DataFrame:
    """Mean, std (ddof=0) and number of seeds per (profile, paper, table, setting, row, metric)."""
    ok = frame[(frame["status"].fillna("ok") == "ok") & frame["table"].notna() & frame["paper"].notna()].copy()
    if ok.empty:
        return pd.DataFrame(columns=GROUP + ["mean", "std", "n", "tolerance"])
    ok["table"] = ok["table"].astype(str).str.replace(r"\.0$", "", regex=True)
    ok["paper_row"] = ok["paper_row"].fillna("")
    ok["label"] = ok["label"].fillna(ok["paper_row"]).where(ok["label"].notna(), ok["paper_row"])
    ok["label"] = np.where(ok["label"].astype(str) == "", ok["method"], ok["label"])
    ok["value"] = pd.to_numeric(ok["value"], errors="coerce")
    if "tolerance" not in ok:
        ok["tolerance"] = np.nan
    grouped = ok.groupby(GROUP, dropna=False, sort=False)
    summary = grouped["value"].agg(mean="mean", std=lambda v: float(np.std(v, ddof=0)), n="count").reset_index()
    summary["tolerance"] = grouped["tolerance"].max().to_numpy()
    return summary


@dataclass
class ComparedTable:
    paper: str
    table: str
    profile: str
    cells: pd.DataFrame  # one row per (setting, row, metric) with ours and the paper's numbers

    @property
    def status(self) -> str:
        compared = self.cells.dropna(subset=["mean", "paper_value"])
        if compared.empty:
            return "not yet run"
        missing = self.cells["mean"].isna() & self.cells["paper_value"].notna()
        off = compared[~compared["agrees"].astype(bool)]
        if len(off):
            by_metric = ", ".join(f"{metric} ×{count}" for metric, count in off["metric"].value_counts(sort=False).items())
            return f"deviates ({len(off)} of {len(compared)} cells: {by_metric})"
        return "reproduced" + (f" (partial: {int(missing.sum())} cells not run)" if missing.any() else "")


def compare(summary: pd.DataFrame, paper: str, table: str, profile: str) -> ComparedTable:
    """Join ours (one profile) to the published cells of ``paper`` Table ``table`` (outer join)."""
    ref = load_paper_tables()
    ref = ref[(ref["paper"] == paper) & (ref["table"] == str(table))]
    ours = summary[(summary["paper"] == paper) & (summary["table"] == str(table)) & (summary["profile"] == profile)]
    if not (ours["metric"] == "gamma").any():  # caption γ's are compared only where an experiment reports γ rows
        ref = ref[ref["column"] != "gamma"]
    ref = ref.rename(columns={"row": "paper_row", "column": "metric"})
    ref_cols = ref[["setting", "paper_row", "metric", "value", "value_num", "spread", "spread_std", "unit"]]
    merged = ours.merge(ref_cols, on=["setting", "paper_row", "metric"], how="outer")
    merged["label"] = merged["label"].fillna(merged["paper_row"])
    merged = merged.rename(columns={"value": "paper_text", "value_num": "paper_value"})
    merged["deviation_sd"] = (merged["mean"] - merged["paper_value"]) / merged["spread_std"].where(merged["spread_std"] > 0)
    tol = merged["tolerance"].where(merged["tolerance"].notna(), 2 * merged["spread_std"])
    tol = tol.where(tol.notna() & (tol > 0), merged["unit"])
    merged["tol"] = tol
    merged["agrees"] = (merged["mean"] - merged["paper_value"]).abs() <= tol + 1e-12
    # keep the paper's row order, ours-only rows after
    order = {key: i for i, key in enumerate(zip(ref["setting"], ref["paper_row"]))}
    merged["_order"] = [order.get((s, r), len(ref) + i) for i, (s, r) in enumerate(zip(merged["setting"], merged["paper_row"]))]
    merged = merged.sort_values("_order", kind="stable").drop(columns="_order").reset_index(drop=True)
    return ComparedTable(paper=paper, table=str(table), profile=profile, cells=merged)


def _num(x: float, digits: int) -> str:
    return "" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"


def _digits(unit: float) -> int:
    if unit is None or not np.isfinite(unit) or unit <= 0:
        return 3
    return max(0, min(6, int(round(-math.log10(unit))) + 1))


def format_cells(table: ComparedTable) -> tuple[list[str], list[list[str]]]:
    """Header and body rows: Setting, Row, then per metric 'ours' and 'paper [Δ]' columns."""
    cells = table.cells
    metrics = list(dict.fromkeys(cells["metric"]))
    header = ["Setting", "Row"]
    for metric in metrics:
        header += [f"{metric} (ours)", f"{metric} (paper)"]
    body = []
    for (setting, label), group in cells.groupby(["setting", "label"], sort=False, dropna=False):
        line = [str(setting), str(label)]
        by_metric = {m: g.iloc[0] for m, g in group.groupby("metric", sort=False)}
        for metric in metrics:
            cell = by_metric.get(metric)
            if cell is None:
                line += ["", ""]
                continue
            digits = _digits(cell["unit"])
            if np.isnan(cell["mean"]):
                ours = "not run" if isinstance(cell["paper_text"], str) else ""
            else:
                ours = _num(cell["mean"], digits)
                if cell["n"] and cell["n"] > 1:
                    ours += f" ± {_num(cell['std'], digits)}"
                if isinstance(cell["paper_text"], str) and not np.isnan(cell["paper_value"]):
                    ours += " ✓" if cell["agrees"] else " ✗"
            if isinstance(cell["paper_text"], str):
                paper = cell["paper_text"] + (f" ± {cell['spread']}" if cell["spread"] else "")
                if not np.isnan(cell["deviation_sd"]):
                    paper += f" [{cell['deviation_sd']:+.1f}σ]"
            else:
                paper = "—"
            line += [ours, paper]
        body.append(line)
    return header, body


def to_markdown(table: ComparedTable, title: str) -> str:
    header, body = format_cells(table)
    lines = [f"### {title}", "", f"Profile `{table.profile}` · status: **{table.status}**", "",
             "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in body]
    lines += ["", "ours = mean ± std over seeds (ddof=0); ✓ within tolerance of the paper, ✗ outside; "
              "[zσ] = (ours − paper) / paper's std.", ""]
    return "\n".join(lines)


def _latex_escape(text: str) -> str:
    for a, b in [("\\", r"\textbackslash{}"), ("&", r"\&"), ("%", r"\%"), ("$", r"\$"), ("#", r"\#"),
                 ("_", r"\_"), ("{", r"\{"), ("}", r"\}"), ("±", r"$\pm$"), ("σ", r"$\sigma$"),
                 ("✓", r"\checkmark"), ("✗", r"$\times$"), ("—", "--"), ("ρ", r"$\rho$"), ("γ", r"$\gamma$"),
                 ("′", "'")]:
        text = text.replace(a, b)
    return text


def to_latex(table: ComparedTable, title: str) -> str:
    header, body = format_cells(table)
    lines = [r"% generated by `fyexp report`; needs \usepackage{amssymb} for \checkmark", r"\begin{table}[ht]",
             r"\centering", r"\small", rf"\caption{{{_latex_escape(title)} (profile {_latex_escape(table.profile)})}}",
             r"\begin{tabular}{ll" + "r" * (len(header) - 2) + "}", r"\hline",
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
