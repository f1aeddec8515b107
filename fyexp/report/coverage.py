"""Coverage of the published tables: for every paper and table of ``paper_tables.csv``, what fyexp has.

One line per table (a paper's in-text numbers are split by the table they belong to, see
:mod:`fyexp.reference.rows`), built from data only — the published cells, the tables the specs declare and the
result rows present — so that a new experiment appears here by declaring its tables:

* published cells; cells with a result at the ``paper`` profile; at any profile; within tolerance at ``paper``
  (:mod:`fyexp.report.tolerance`, a cell within only by the authors' convention column counted and said);
* a status from a fixed vocabulary: ``reproduced`` (every numeric published cell has a ``paper``-profile result
  within tolerance), ``partly reproduced (k of n cells)``, ``deviates`` (``paper`` results, none within),
  ``reduced profile only``, ``not run`` (declared by a spec, no result), ``not implemented`` (no spec declares it).
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from fyexp.reference.rows import home_of, joined_cells, table_meta, table_title
from fyexp.report.tables import CONVENTION, score_cells, table_status
from fyexp.report.tolerance import EXACT, NOT_SCORED, WITHIN

PAPERS = {  # the five papers of the project, in the order of the README; tvem prints no table and no number
    "fyvi": "Fenchel-Young Variational Inference",
    "fyvl": "Fenchel-Young Variational Learning",
    "tvem": "Truncated Variational EM (Lücke)",
    "frac": "Variational Learning of Fractional Posteriors",
    "vr": "Rényi Divergence Variational Inference",
}


@dataclass(frozen=True)
class CoverageLine:
    paper: str
    part: str
    published: int
    numeric: int
    reference: int  # other methods' published cells, shown for reference, never scored
    at_paper: int
    at_any: int
    within: int
    exact: int
    by_convention: int
    status: str
    experiments: tuple[str, ...]
    same_as: str = ""


def parse_table_ref(text: str) -> tuple[str, str]:
    """``"fyvi Table 1"`` → ``("fyvi", "1")``; ``"frac Table text"`` → ``("frac", "text")``."""
    words = text.split()
    if len(words) != 3 or words[1] != "Table":
        raise ValueError(f"table reference '{text}' is not of the form '<paper> Table <id>'")
    return words[0], words[2]


def declared_tables(specs) -> dict[tuple[str, str], list[str]]:
    """(paper, table) → the experiments whose spec declares it (fyvl Tables 1–3 count for their FYVI twins)."""
    out: dict[tuple[str, str], list[str]] = {}
    for spec in specs:
        for ref in spec.tables:
            paper, table = parse_table_ref(ref)
            for key in {(paper, table), home_of(paper, table)}:
                out.setdefault(key, [])
                if spec.name not in out[key]:
                    out[key].append(spec.name)
    return out


def coverage(specs, summaries: pd.DataFrame) -> list[CoverageLine]:
    """``summaries``: the :func:`fyexp.report.tables.summarize` frames of every experiment with a column
    ``experiment``.  Returns one line per part of ``paper_tables.csv``, in the order of that file."""
    cells = joined_cells()
    declared = declared_tables(specs)
    lines = []
    for part, pub in cells.groupby("part", sort=False):
        paper, table = pub["paper"].iloc[0], pub["table"].iloc[0]
        home = (pub["home_paper"].iloc[0], pub["home_table"].iloc[0])
        owners = declared.get(home, []) + [e for e in declared.get((paper, table), []) if e not in declared.get(home, [])]
        if table == "text":
            owners = declared.get(home, [])
        same = table_title(*home) if home != (paper, table) and table != "text" else ""
        reference = pub["row"].isin(table_meta(home[0], home[1]).reference_rows) if table != "text" else \
            pd.Series(False, index=pub.index)
        numeric = int((pub["value_num"].notna() & ~reference).sum())
        n_reference = int(reference.sum())
        ours = summaries[summaries["experiment"].isin(owners)] if owners else summaries.iloc[0:0]
        at_paper = within = convention = exact = 0
        at_any = set()
        for profile, rows in ours.groupby("profile", sort=False):
            scored = score_cells(pub, rows)
            has = scored["n"] > 0
            at_any |= set(scored.index[has])
            if profile == "paper":
                at_paper = int(has.sum())
                agrees = scored["status"].isin([EXACT, WITHIN])
                by_conv = ~agrees & scored["convention_agrees"]
                within, convention = int((agrees | by_conv).sum()), int(by_conv.sum())
                exact = int(((scored["status"] == EXACT) | (by_conv & (scored["convention_status"] == EXACT))).sum())
        if not owners:
            status = "not implemented"
        elif not at_any:
            status = "not run"
        elif not at_paper:
            status = "reduced profile only"
        else:
            status = table_status(numeric, at_paper, within, True)
        lines.append(CoverageLine(paper=paper, part=part, published=len(pub), numeric=numeric, reference=n_reference,
                                  at_paper=at_paper,
                                  at_any=len(at_any), within=within, exact=exact, by_convention=convention, status=status,
                                  experiments=tuple(owners), same_as=same))
    return lines


def coverage_markdown(lines: list[CoverageLine], links: dict[str, str] | None = None, specs=()) -> list[str]:
    """The coverage table and its totals as Markdown lines (``links``: experiment → relative link; ``specs`` name
    the experiments that cite a paper without published numbers)."""
    links = links or {}
    out = ["| paper | table | published cells | with a `paper`-profile result | with a result at any profile | "
           "within tolerance (`paper`) | status | experiments |", "|---|---|---|---|---|---|---|---|"]
    for line in lines:
        notes = ([f"{line.exact} exact"] if line.within else []) + \
            ([f"{line.by_convention} by the authors' convention"] if line.by_convention else [])
        within = str(line.within) + (f" ({', '.join(notes)})" if notes else "")
        table = line.part.split(" ", 1)[1] if " " in line.part else line.part
        if line.same_as:
            table += f" (= {line.same_as})"
        kinds = []
        if line.published - line.numeric - line.reference:
            kinds.append(f"{line.published - line.numeric - line.reference} not numeric")
        if line.reference:
            kinds.append(f"{line.reference} of other methods, for reference")
        published = f"{line.published} ({', '.join(kinds)})" if kinds else str(line.published)
        experiments = ", ".join(f"[`{e}`]({links[e]})" if e in links else f"`{e}`" for e in line.experiments) or "—"
        out.append(f"| {line.paper} | {table} | {published} | {line.at_paper} | {line.at_any} | {within} | "
                   f"{line.status} | {experiments} |")
    total = sum(line.published for line in lines)
    at_paper = sum(line.at_paper for line in lines)
    at_any = sum(line.at_any for line in lines)
    within = sum(line.within for line in lines)
    exact = sum(line.exact for line in lines)
    out += ["", f"**Totals:** {total} published cells in {len(lines)} tables; {at_paper} with a `paper`-profile result, "
                f"{at_any} with a result at some profile, {within} within tolerance at the `paper` profile "
                f"({exact} of them exact at the printed precision)."]
    counts: dict[str, int] = {}
    for line in lines:
        key = line.status.split(" (")[0]
        counts[key] = counts.get(key, 0) + 1
    out += ["Tables by status: " + ", ".join(f"{k} {v}" for k, v in counts.items()) + "."]
    missing = [p for p in PAPERS if p not in {line.paper for line in lines}]
    for paper in missing:
        citing = [s.name for s in specs if s.paper == paper or PAPERS[paper].split(" (")[-1].rstrip(")") in s.description]
        out += [f"*{paper}* ({PAPERS[paper]}) prints no table and no number, so `paper_tables.csv` has no cell of it"
                + (f"; experiments on its method: {', '.join(f'`{n}`' for n in citing)}." if citing else ".")]
    return out
