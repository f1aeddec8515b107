"""Coverage of the published tables (fyexp/report/coverage.py): every cell of paper_tables.csv is counted once,
statuses come from the specs and the results, and twin tables (fyvl 1–3 = FYVI 1–3) are joined."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from importlib import resources

import pandas as pd

from fyexp.reference.rows import joined_cells
from fyexp.report.coverage import coverage, coverage_markdown
from fyexp.report.tables import SUMMARY_COLUMNS


@dataclass
class FakeSpec:
    name: str
    tables: tuple
    paper: str = "fyvi"
    description: str = ""


def _csv_cells():
    with resources.files("fyexp.reference").joinpath("paper_tables.csv").open() as handle:
        return list(csv.DictReader(handle))


def _empty():
    return pd.DataFrame(columns=SUMMARY_COLUMNS + ["experiment"])


def test_counts_match_paper_tables_csv():
    rows = _csv_cells()
    lines = coverage([], _empty())
    assert sum(line.published for line in lines) == len(rows) == 1075
    per_table: dict = {}
    for row in rows:
        per_table[(row["paper"], row["table"])] = per_table.get((row["paper"], row["table"]), 0) + 1
    by_table: dict = {}
    for line in lines:
        key = (line.paper, line.part.split()[1] if line.part.split()[1] == "text" else line.part.split()[-1])
        by_table[key] = by_table.get(key, 0) + line.published
    assert by_table == per_table  # every published table appears, the text numbers split by the table they belong to
    assert {line.status for line in lines} == {"not implemented"}
    assert len(joined_cells()) == len(rows)


def test_statuses_from_specs_and_results():
    specs = [FakeSpec("clustering", ("fyvi Table 1",)), FakeSpec("vae", ("fyvi Table 2",))]
    ref = joined_cells()
    t1 = ref[(ref["paper"] == "fyvi") & (ref["table"] == "1")]
    summary = pd.DataFrame.from_records([
        {"profile": "paper", "paper": "fyvi", "table": "1", "setting": c.setting, "paper_row": c.row, "label": c.row,
         "metric": c.column, "mean": c.value_num, "std": 0.01, "sd": 0.01, "n": 5, "own_tol": float("nan"),
         "failed": 0, "seeds": (0, 1, 2, 3, 4), "experiment": "clustering"} for c in t1.itertuples()])
    lines = {line.part: line for line in coverage(specs, summary)}
    assert lines["fyvi Table 1"].status == "reproduced" and lines["fyvi Table 1"].within == 9
    assert lines["fyvl Table 1"].status == "reproduced"  # joined: FYVI Table 1's results score fyvl Table 1
    assert lines["fyvl Table 1"].same_as == "fyvi Table 1"
    assert lines["fyvi Table 2"].status == "not run" and lines["fyvl Table 2"].status == "not run"
    assert lines["vr Table 2"].status == "not implemented"
    # drop one cell and move the rest to a reduced profile
    partial = summary.iloc[1:]
    assert {l.part: l for l in coverage(specs, partial)}["fyvi Table 1"].status == "partly reproduced (8 of 9 cells)"
    reduced = summary.assign(profile="quick")
    line = {l.part: l for l in coverage(specs, reduced)}["fyvi Table 1"]
    assert line.status == "reduced profile only" and line.at_any == 9 and line.at_paper == 0


def test_text_numbers_belong_to_their_experiments():
    specs = [FakeSpec("nvdm", ("fyvi Table 3", "fyvl Table 3")), FakeSpec("calib", ("frac Table 1",), paper="frac")]
    lines = {line.part: line for line in coverage(specs, _empty())}
    assert lines["fyvi text → fyvi Table 3"].experiments == ("nvdm",)
    assert lines["fyvl text → fyvi Table 3"].status == "not run"
    assert lines["frac text → frac Table 1"].experiments == ("calib",)
    assert lines["frac text → frac Table 9"].status == "not implemented"
    text = "\n".join(coverage_markdown(list(lines.values()), specs=[FakeSpec("t", (), paper="tvem")]))
    assert "1075 published cells" in text and "*tvem*" in text and "`t`" in text


def test_paper_titles_come_from_the_reference_data(monkeypatch):
    """The five papers and their titles are paper_meta.yaml's `papers:` (the claims know the same ids); a paper
    without a table is named by that title and finds its experiments by how the specs cite it."""
    from fyexp.claims.model import PAPERS
    from fyexp.reference import rows

    assert list(rows.papers()) == ["fyvi", "fyvl", "vr", "tvem", "frac"] == list(PAPERS)
    specs = [FakeSpec("tvem-bsc", (), paper="tvem"), FakeSpec("gmm", (), description="truncated EM (Lücke 2019)"),
             FakeSpec("other", (), description="nothing cited")]
    text = "\n".join(coverage_markdown(coverage(specs, _empty()), specs=specs))
    assert ("*tvem* (Lücke, *Truncated Variational Expectation Maximization*) prints no table and no number"
            in text and "`tvem-bsc`, `gmm`." in text and "`other`" not in text)
    meta = {**rows._meta(), "papers": {**rows._meta()["papers"], "tvem": {"title": "Another Title", "cited_as": "X"}}}
    monkeypatch.setattr(rows, "_meta", lambda: meta)
    monkeypatch.setattr("fyexp.reference._meta", lambda: meta)   # where papers() reads it
    assert "*tvem* (X, *Another Title*)" in "\n".join(coverage_markdown(coverage(specs, _empty()), specs=specs))
