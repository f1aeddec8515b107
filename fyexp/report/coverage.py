"""Coverage of the published tables: for every paper and table of ``paper_tables.csv``, what fyexp has.

One line per table (a paper's in-text numbers are split by the table they belong to, see
:mod:`fyexp.reference.rows`), built from data only — the published cells, the tables the specs declare and the
result rows present — so that a new experiment appears here by declaring its tables:

* published cells; cells with a result at the ``paper`` profile; at any profile; within tolerance at ``paper``
  (:mod:`fyexp.report.tolerance`, a cell within only by the authors' convention column counted and said);
* a status from a fixed vocabulary: ``reproduced`` (every numeric published cell has a ``paper``-profile result
  within tolerance), ``partly reproduced (k of n cells)``, ``deviates`` (``paper`` results, none within),
  ``reduced profile only``, ``not run`` (declared by a spec, no result), ``not implemented`` (no spec declares it);
  a text table the code states (VR Table 4's architectures) is ``architectures read from the code, not run (k of n
  cells as printed)``: no run stands behind it, so it counts in no total of results and is never ``reproduced``.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from fyexp.reference.rows import home_of, joined_cells, papers, table_title
from fyexp.report.tables import AUTHORS_ONLY, score_cells, table_status, tally
from fyexp.report.architectures import TEXT_TABLES, rendered, score_text, text_status
from fyexp.report.tolerance import EXACT, NOT_SCORED, WITHIN

SCORED_ROLES = ("result", "ratio")  # roles of fyexp.reference.rows.joined_cells that count for or against a table



@dataclass(frozen=True)
class CoverageLine:
    paper: str
    part: str
    published: int
    numeric: int
    reference: int  # other methods' published cells, shown for reference, never scored
    at_paper: int
    at_any: int
    within: int  # our metric within tolerance (exact included)
    exact: int  # our metric exact at the printed precision
    by_convention: int  # within only by the authors' convention column ("matches the authors' code only")
    status: str
    experiments: tuple[str, ...]
    same_as: str = ""  # the table whose cells these are (fyvl Tables 1-3 print FYVI's): not counted again in totals
    inputs: int = 0  # settings the authors used (hyperparameters), shown, never scored
    restated: int = 0  # in-text numbers restating a table cell, scored once, as that cell
    stale: int = 0  # stale rows behind the paper-profile results of the line
    from_code: int = 0  # cells of a text table read from the code (VR Table 4's architectures): no run, no score
    from_code_as_printed: int = 0  # of those, the cells whose text is the paper's, character for character


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


def coverage(specs, summaries: pd.DataFrame, manifest=None) -> list[CoverageLine]:
    """``summaries``: the :func:`fyexp.report.tables.summarize` frames of every experiment with a column
    ``experiment``.  Returns one line per part of ``paper_tables.csv``, in the order of that file.

    Only cells of the :data:`SCORED_ROLES` (:func:`fyexp.reference.rows.joined_cells`) are scored: other methods'
    rows (``reference``), the settings the authors used (``input``), in-text numbers that restate a table cell
    (``restates``, scored once, as that cell) and the second number of a ratio (``ratio part``) are shown and never
    count for or against a table.  A text table the code states (:mod:`fyexp.report.architectures`) is compared as
    text (its rendering kept in the report's ``manifest``, :func:`fyexp.report.architectures.rendered`)."""
    cells = joined_cells()
    declared = declared_tables(specs)
    lines = []
    for part, pub in cells.groupby("part", sort=False):
        paper, table = pub["paper"].iloc[0], pub["table"].iloc[0]
        home = (pub["home_paper"].iloc[0], pub["home_table"].iloc[0])
        # a table's experiments are its home's (declared_tables files a twin's under its home too); an in-text
        # number's are those of the table it belongs to
        owners = declared.get(home, [])
        same = table_title(*home) if home != (paper, table) and table != "text" else ""
        result = pub["role"].isin(SCORED_ROLES).to_numpy()
        numeric = int((pub["value_num"].notna() & pub["role"].isin(SCORED_ROLES)).sum())
        ours = summaries[summaries["experiment"].isin(owners)]
        at_paper = within = convention = exact = stale = 0
        at_any = set()   # cells with a result at some profile, the union over profiles
        for profile, rows in ours.groupby("profile"):
            scored = score_cells(pub, rows)
            scored.loc[~result, "status"] = NOT_SCORED
            has = (scored["n"] > 0) & result
            at_any |= set(scored.index[has])
            if profile == "paper":
                c = tally(scored)
                at_paper, within, exact = int(has.sum()), c[EXACT] + c[WITHIN], c[EXACT]
                convention, stale = c[AUTHORS_ONLY], int(scored.loc[result, "stale"].sum())
        from_code = as_printed = 0
        text = ""
        if (paper, table) in TEXT_TABLES and owners:  # text the code states (VR Table 4): read, not run, not scored
            statuses = score_text(pub, rendered(paper, table, manifest))
            from_code, as_printed, text = len(pub), statuses.count(EXACT), text_status(statuses)
            numeric = at_paper = within = exact = 0
            at_any = set()
        if text:
            status = text
        elif not owners:
            status = "not implemented"
        elif not at_any:
            status = "not run"
        elif not at_paper:
            status = "reduced profile only"
        else:
            status = table_status(numeric, at_paper, within, True, authors_only=convention, stale_rows=stale)
        kinds = pub["role"].value_counts()
        lines.append(CoverageLine(paper=paper, part=part, published=len(pub), numeric=numeric,
                                  reference=int(kinds.get("reference", 0)), at_paper=at_paper,
                                  at_any=len(at_any), within=within, exact=exact, by_convention=convention, status=status,
                                  experiments=tuple(owners), same_as=same, inputs=int(kinds.get("input", 0)),
                                  restated=int(kinds.get("restates", 0)), stale=stale, from_code=from_code,
                                  from_code_as_printed=as_printed))
    return lines


def totals_line(lines: list[CoverageLine]) -> str:
    """The totals over the coverage lines, each published cell counted once: a twin table's cells (fyvl Tables 1-3,
    which print FYVI's numbers) and in-text numbers that restate a table cell are left out of every count; of the
    rest, "within tolerance" and "exact" count our metric, and cells matching the authors' code only are apart."""
    once = [line for line in lines if not line.same_as]
    twins = sum(line.published for line in lines if line.same_as)
    restated = sum(line.restated for line in once)
    total = sum(line.published for line in once) - restated

    def add(attr: str) -> int:
        return sum(getattr(line, attr) for line in once)

    printed = sum(line.published for line in lines)
    text = (f"**Totals:** {printed} published cells printed, {total} distinct in {len(once)} tables (each counted "
            f"once: {twins} cells of twin tables and {restated} in-text restatements of table cells left out), "
            f"{add('numeric')} of them results to reproduce ({add('reference')} other methods' for reference, "
            f"{add('inputs')} settings used); {add('at_paper')} with a `paper`-profile result, {add('at_any')} with a "
            f"result at some profile, {add('within')} within tolerance by our metric at the `paper` profile "
            f"({add('exact')} of them exact at the printed precision)")
    if add("by_convention"):
        text += f"; {add('by_convention')} more match the authors' code only (its convention column)"
    if add("stale"):
        text += f"; {add('stale')} stale rows behind the `paper`-profile results"
    if add("from_code"):
        read = [line.part for line in once if line.from_code]
        text += (f"; {add('from_code')} cells of {', '.join(read)} are architectures read from the code, not run "
                 f"({add('from_code_as_printed')} of them as printed), counted in none of these")
    return text + "."


def coverage_markdown(lines: list[CoverageLine], links: dict[str, str] | None = None, specs=()) -> list[str]:
    """The coverage table and its totals as Markdown lines (``links``: experiment → relative link; ``specs`` name
    the experiments that cite a paper without published numbers)."""
    links = links or {}
    out = ["| paper | table | published cells | with a `paper`-profile result | with a result at any profile | "
           "within tolerance (`paper`) | status | experiments |", "|---|---|---|---|---|---|---|---|"]
    for line in lines:
        notes = ([f"{line.exact} exact"] if line.within else []) + \
            ([f"+{line.by_convention} matching the authors' code only"] if line.by_convention else [])
        within = str(line.within) + (f" ({', '.join(notes)})" if notes else "")
        at_paper, at_any = str(line.at_paper), str(line.at_any)
        if line.from_code:  # read from the code, not run: no result at any profile, nothing within tolerance
            at_paper, at_any = "— (not run)", "— (not run)"
            within = f"— ({line.from_code_as_printed} of {line.from_code} as printed, read from the code)"
        table = line.part.split(" ", 1)[1] if " " in line.part else line.part
        if line.same_as:
            table += f" (= {line.same_as})"
        kinds = []
        other = line.published - line.numeric - line.reference - line.inputs - line.restated - line.from_code
        if other:
            kinds.append(f"{other} not numeric")
        if line.from_code:
            kinds.append(f"{line.from_code} architectures read from the code")
        if line.reference:
            kinds.append(f"{line.reference} of other methods, for reference")
        if line.inputs:
            kinds.append(f"{line.inputs} settings used, not scored")
        if line.restated:
            kinds.append(f"{line.restated} restating a table cell, scored there")
        published = f"{line.published} ({', '.join(kinds)})" if kinds else str(line.published)
        experiments = ", ".join(f"[`{e}`]({links[e]})" if e in links else f"`{e}`" for e in line.experiments) or "—"
        out.append(f"| {line.paper} | {table} | {published} | {at_paper} | {at_any} | {within} | "
                   f"{line.status} | {experiments} |")
    out += ["", totals_line(lines)]
    counts: dict[str, int] = {}
    for line in lines:
        if line.same_as:  # a twin table's status is its original's
            continue
        key = line.status.split(" (")[0]
        counts[key] = counts.get(key, 0) + 1
    out += ["Tables by status (each published table once): " + ", ".join(f"{k} {v}" for k, v in counts.items()) + "."]
    known = papers()   # the titles are reference data (paper_meta.yaml); tvem prints no table and no number
    for paper in [p for p in known if p not in {line.paper for line in lines}]:
        meta = known[paper]
        citing = [s.name for s in specs if s.paper == paper or meta.cited_as in s.description]
        out += [f"*{paper}* ({meta.cited_as}, *{meta.title}*) prints no table and no number, so `paper_tables.csv` "
                f"has no cell of it"
                + (f"; experiments on its method: {', '.join(f'`{n}`' for n in citing)}." if citing else ".")]
    return out
