"""Which table a published cell (keyed ``(paper, table, setting, row, column)``) belongs to, which result scores it,
and what its paper says about the number of runs and the meaning of its ±.  The joins of ``paper_meta.yaml``:

* ``same_as``: fyvl Tables 1–3 print FYVI Tables 1–3 under other row labels: scored by the FYVI twin's result.
* ``text``: an in-text number belongs to the table whose experiment produces it (``home``); one that restates a
  table cell (FYVI's "best reconstruction error of 1.484 reported in Table 3") is scored by that cell's result;
  coverage counts it under its home table (``part``: "text → Table 3").

A cell's ``role``: ``result`` (scored), ``restates`` (quotes a table cell, a misprint included: scored once, as the
cell quoted), ``input`` (a setting the authors used: shown, never scored), ``reference`` (another method's row: shown,
never scored or counted missing), or, for a declared ``ratios`` pair (VR's VR-max and IWAE training times),
``ratio`` (the numerator's cell, scored as ``<numerator>/<denominator>`` of metric ``<column>_ratio``) and
``ratio part`` (the denominator's, never scored on its own).
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass

import pandas as pd

from fyexp.reference import _meta, _to_float, load_paper_tables, papers, printed_unit  # noqa: F401 (papers: read here)

KEY = ["paper", "table", "setting", "row", "column"]


@dataclass(frozen=True)
class TableMeta:
    """What a paper says about one table's numbers (its entry in ``paper_meta.yaml``): runs averaged and the meaning
    of the printed ±."""

    ref: str
    n_runs: int | None
    spread: str  # std | std_err | 3std | none
    source: str
    spread_stated: bool = True
    assumed: str = ""
    settings: tuple[tuple[str, int], ...] = ()
    reference_rows: tuple[str, ...] = ()  # other methods' rows, shown for reference, never scored

    def runs(self, setting: str) -> int | None:
        return dict(self.settings).get(setting, self.n_runs)

    def standard_error(self, spread: float, setting: str) -> float:
        """The standard error of the printed mean implied by its printed ± (NaN when there is none).

        ``std`` and ``3std`` (divided by three) are one standard deviation s over n runs: s / sqrt(n);
        ``std_err`` is the standard error itself.  A ± over an unstated number of runs is read as n = 1.
        """
        if spread is None or not math.isfinite(spread) or self.spread == "none":
            return float("nan")
        if self.spread == "std_err":
            return float(spread)
        s = spread / 3.0 if self.spread == "3std" else float(spread)
        return s / math.sqrt(self.runs(setting) or 1)


def table_title(paper: str, table: str) -> str:
    """``("fyvi", "1")`` → ``"fyvi Table 1"``; ``("frac", "text")`` → ``"frac text"`` (numbers quoted in prose)."""
    return f"{paper} text" if table == "text" else f"{paper} Table {table}"


@functools.lru_cache(maxsize=None)
def table_meta(paper: str, table: str) -> TableMeta:
    if (entry := _meta()["tables"].get(ref := f"{paper} {table}")) is None:
        return TableMeta(ref, None, "none", "not described in paper_meta.yaml", spread_stated=False)
    return TableMeta(ref, **{"spread": "none", **entry,
                             "settings": tuple((str(k), int(v)) for k, v in (entry.get("settings") or {}).items()),
                             "reference_rows": tuple(entry.get("reference_rows") or ())})


def _same_as() -> dict[str, dict]:
    return {entry["table"]: entry for entry in _meta()["same_as"]}


def joined_cells() -> pd.DataFrame:
    """Every published cell with its joins: ``home_paper``/``home_table`` (the table whose experiments produce it),
    ``part`` (the coverage line it is counted in), ``role`` (see the module's docstring) and ``res_*`` (the key of
    the result that scores it)."""
    return _joined().copy()


@functools.lru_cache(maxsize=1)
def _joined() -> pd.DataFrame:
    cells, same, joins = load_paper_tables().copy(), _same_as(), []
    for c in cells.itertuples(index=False):
        hp, ht, part, role = c.paper, c.table, table_title(c.paper, c.table), "result"
        target = [c.paper, c.table, c.setting, c.row, c.column]
        rule = next((r for r in _meta()["text"] if r["paper"] == c.paper and r.get("column", c.column) == c.column
                     and c.setting.startswith(r.get("setting_prefix", ""))), None) if c.table == "text" else None
        if rule is not None:
            hp, ht = rule["home"].split(" ", 1)
            part = f"{c.paper} text → {table_title(hp, ht)}" if hp != c.paper else f"{c.paper} text → {hp} Table {ht}"
            role = "input" if c.column in (rule.get("inputs") or ()) else role
            if (quotes := rule.get("quotes")) is not None:
                role, target = "restates", [hp, ht, c.setting, quotes.get("row", c.row), quotes.get("column", c.column)]
        if (entry := same.get(f"{hp} {ht}")) is not None:  # the table (or a text number's) is another's twin
            ap, at = entry["as"].split(" ", 1)
            if target[:2] == [hp, ht]:
                target = [ap, at, target[2], (entry.get("rows") or {}).get(target[3], target[3]), target[4]]
            hp, ht = ap, at
        if c.table != "text" and c.row in table_meta(hp, ht).reference_rows:
            role = "reference"
        joins.append((hp, ht, part, role, *target))
    for column, values in zip(["home_paper", "home_table", "part", "role", *(f"res_{k}" for k in KEY)], zip(*joins)):
        cells[column] = list(values)
    for rule in ratio_rules():   # a declared pair of printed numbers as one ratio result (the module's docstring)
        at = (cells["paper"] == rule["paper"]) & (cells["table"] == str(rule["table"])) & \
            (cells["setting"] == rule["setting"]) & (cells["column"] == rule["column"])
        num, den = at & (cells["row"] == rule["numerator"]), at & (cells["row"] == rule["denominator"])
        if num.sum() != 1 or den.sum() != 1:
            raise ValueError(f"paper_meta.yaml ratios: {rule} does not name two published cells")
        value = _minutes(cells.loc[num, "value"].iloc[0]) / _minutes(cells.loc[den, "value"].iloc[0])
        printed = f"{value:.{rule.get('digits', 2)}f}"
        cells.loc[num, ["value", "value_num", "unit"]] = [printed, value, printed_unit(printed)]
        cells.loc[num, "role"], cells.loc[den, "role"] = "ratio", "ratio part"
        cells.loc[num, "res_row"], cells.loc[num, "res_column"] = ratio_row(rule), f"{rule['column']}_ratio"
    return cells


def ratio_row(rule: dict) -> str:
    return f"{rule['numerator']}/{rule['denominator']}"


def _minutes(text: str) -> float:
    """``25hr29min`` → 1529.0 (a printed duration in minutes)."""
    match = re.fullmatch(r"\s*(?:(\d+)\s*hr)?\s*(?:(\d+)\s*min)?\s*", str(text))
    if match is None or not any(match.groups()):
        return _to_float(text)
    return 60.0 * float(match.group(1) or 0) + float(match.group(2) or 0)


def ratio_rules() -> list[dict]:
    """The declared ratios of ``paper_meta.yaml``."""
    return list(_meta().get("ratios") or ())


def home_of(paper: str, table: str) -> tuple[str, str]:
    """The table whose experiments produce ``paper`` Table ``table`` (itself unless it is another's twin)."""
    entry = _same_as().get(f"{paper} {table}")
    return tuple(entry["as"].split(" ", 1)) if entry else (paper, table)


def number_label(value: float, powers: bool = False) -> str:
    """A number as the papers' row names print it: ``1.0``, ``0.9``; with ``powers`` an integer power of ten other
    than 1 as ``10^-3`` (frac Table 9's γ and β rows)."""
    exponent = math.log10(value)
    if powers and value != 1.0 and abs(exponent - round(exponent)) < 1e-9:
        return f"10^{int(round(exponent))}"
    return f"{value:.1f}"
