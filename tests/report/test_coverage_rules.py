"""The coverage of the published tables (fyexp/report/coverage.py) at its edges: whose rows count for a table, the
union over profiles, stale rows and the authors' convention in a table's status, a table of one cell, the text table
kept in the report's manifest, and the rendered table and totals, line by line.

Written from the survivors of a mutation run (docs/contributing/mutation.md, "fyexp/report/coverage.py"); the hand-made
summaries hold our own values, set to sit inside or outside the published cells' bands on purpose.
"""

from __future__ import annotations

import importlib

import pandas as pd
import pytest

from fyexp.reference.rows import joined_cells
from fyexp.report.cache import Manifest
from fyexp.report.coverage import (CoverageLine, coverage, coverage_markdown, declared_tables, parse_table_ref,
                                   totals_line)
from tests.report.test_coverage import FakeSpec


def _fyvi_t1(experiment="clustering", profile="paper", offset=0.0, stale=0, cells=slice(None)):
    """Rows of ours for FYVI Table 1's nine cells: the published value + ``offset``, five seeds of sd 0.01."""
    ref = joined_cells()
    t1 = ref[(ref["paper"] == "fyvi") & (ref["table"] == "1")].iloc[cells]
    return pd.DataFrame.from_records([
        {"profile": profile, "paper": "fyvi", "table": "1", "setting": c.setting, "paper_row": c.row, "label": c.row,
         "metric": c.column, "mean": c.value_num + offset, "std": 0.01, "sd": 0.01, "n": 5, "own_tol": float("nan"),
         "failed": 0, "seeds": (0, 1, 2, 3, 4), "stale": stale, "experiment": experiment} for c in t1.itertuples()])


def _lines(specs, summary, **kwargs):
    return {line.part: line for line in coverage(specs, summary, **kwargs)}


@pytest.mark.parametrize("text", ["fyvi Table", "fyvi Tables 1", "fyvi table 1", "fyvi Table 1 2"])
def test_a_table_reference_of_another_form_is_refused_and_named(text):
    with pytest.raises(ValueError, match=f"table reference '{text}' is not of the form '<paper> Table <id>'"):
        parse_table_ref(text)
    assert parse_table_ref("frac Table text") == ("frac", "text")


def test_a_twin_table_is_declared_under_itself_and_under_its_home():
    declared = declared_tables([FakeSpec("a", ("fyvl Table 1",)), FakeSpec("b", ("fyvi Table 1", "vr Table 1"))])
    assert declared == {("fyvl", "1"): ["a"], ("fyvi", "1"): ["a", "b"], ("vr", "1"): ["b"]}


def test_lines_follow_the_order_of_paper_tables_csv():
    parts = list(dict.fromkeys(joined_cells()["part"]))
    assert parts != sorted(parts)          # the file's order is not alphabetical, so a sorted grouping would show
    assert [line.part for line in coverage([], _fyvi_t1())] == parts


def test_rows_of_an_experiment_that_does_not_declare_the_table_never_count_for_it():
    lines = _lines([FakeSpec("vae", ("fyvi Table 2",))], _fyvi_t1(experiment="elsewhere"))
    line = lines["fyvi Table 1"]
    assert (line.status, line.at_paper, line.at_any, line.within) == ("not implemented", 0, 0, 0)


def test_a_cell_with_a_result_at_any_profile_is_the_union_over_profiles():
    both = pd.concat([_fyvi_t1(profile="quick", cells=slice(0, 5)), _fyvi_t1(profile="paper", cells=slice(4, 9))])
    line = _lines([FakeSpec("clustering", ("fyvi Table 1",))], both)["fyvi Table 1"]
    assert (line.at_any, line.at_paper, line.within) == (9, 5, 5)
    assert line.status == "partly reproduced (5 of 9 cells)"
    assert _lines([FakeSpec("clustering", ("fyvi Table 1",))],
                  pd.concat([_fyvi_t1(profile="paper", cells=slice(4, 9)),
                             _fyvi_t1(profile="quick", cells=slice(0, 5))]))["fyvi Table 1"].at_any == 9


def test_stale_rows_behind_the_paper_cells_are_counted_and_said_in_the_status():
    line = _lines([FakeSpec("clustering", ("fyvi Table 1",))], _fyvi_t1(stale=2))["fyvi Table 1"]
    assert line.stale == 18 and line.status == "reproduced (18 rows stale: code)"
    off = _lines([FakeSpec("clustering", ("fyvi Table 1",))], _fyvi_t1(offset=0.5, stale=1))["fyvi Table 1"]
    assert (off.within, off.at_paper, off.status) == (0, 9, "deviates (9 rows stale: code)")


def test_a_table_of_one_published_cell_is_covered(monkeypatch):
    cells = joined_cells()
    one = cells[(cells["paper"] == "fyvi") & (cells["table"] == "1")].iloc[:1]
    # the module, not the function of the same name that fyexp.report exports
    monkeypatch.setattr(importlib.import_module("fyexp.report.coverage"), "joined_cells", lambda: one)
    [line] = coverage([FakeSpec("clustering", ("fyvi Table 1",))], _fyvi_t1())
    assert (line.paper, line.part, line.published, line.within, line.status) == (
        "fyvi", "fyvi Table 1", 1, 1, "reproduced")
    assert line.experiments == ("clustering",)


def test_the_text_table_is_compared_as_text_and_kept_in_the_reports_manifest(tmp_path):
    manifest = Manifest(tmp_path)
    line = _lines([FakeSpec("vr-vae", ("vr Table 4",), paper="vr")], _fyvi_t1().iloc[0:0],
                  manifest=manifest)["vr Table 4"]
    assert "text:vr/4" in manifest.entries          # the report's next run reads it there, building no model
    # read from the code, not run (issue 49): no result, nothing within tolerance, never "reproduced"
    assert line.from_code == line.published == 12 and line.from_code_as_printed == 12
    assert line.numeric == line.at_paper == line.at_any == line.within == line.exact == 0
    assert line.status == "architectures read from the code, not run (12 of 12 cells as printed)"
    assert _lines([], _fyvi_t1().iloc[0:0])["vr Table 4"].status == "not implemented"


def _line(**fields):
    base = dict(paper="fyvi", part="fyvi Table 1", published=9, numeric=9, reference=0, at_paper=9, at_any=9,
                within=0, exact=0, by_convention=0, status="deviates", experiments=("clustering",))
    return CoverageLine(**{**base, **fields})


LINES = [
    _line(within=7, exact=3, status="partly reproduced (7 of 9 cells)"),
    _line(part="fyvl Table 1", paper="fyvl", same_as="fyvi Table 1", within=7, exact=3,
          status="partly reproduced (7 of 9 cells)"),
    _line(part="fyvi Table 2", published=30, numeric=24, reference=2, inputs=1, restated=1, at_paper=0, at_any=20,
          status="reduced profile only", experiments=("vae", "fyvae")),
    _line(paper="frac", part="frac Table 1", published=4, numeric=4, at_paper=4, at_any=4, within=2, exact=0,
          by_convention=1, stale=3, status="partly reproduced (2 of 4 cells; 1 cell matches the authors' code only)",
          experiments=()),
]


def test_the_coverage_table_renders_each_line_and_its_totals():
    text = coverage_markdown(LINES, links={"vae": "vae/NOTES.md"}, specs=[FakeSpec("trunc", (), paper="tvem")])
    assert text[:2] == [
        "| paper | table | published cells | with a `paper`-profile result | with a result at any profile | "
        "within tolerance (`paper`) | status | experiments |", "|---|---|---|---|---|---|---|---|"]
    assert text[2:6] == [
        "| fyvi | Table 1 | 9 | 9 | 9 | 7 (3 exact) | partly reproduced (7 of 9 cells) | `clustering` |",
        "| fyvl | Table 1 (= fyvi Table 1) | 9 | 9 | 9 | 7 (3 exact) | partly reproduced (7 of 9 cells) | `clustering` |",
        "| fyvi | Table 2 | 30 (2 not numeric, 2 of other methods, for reference, 1 settings used, not scored, "
        "1 restating a table cell, scored there) | 0 | 20 | 0 | reduced profile only | [`vae`](vae/NOTES.md), `fyvae` |",
        "| frac | Table 1 | 4 | 4 | 4 | 2 (0 exact, +1 matching the authors' code only) | partly reproduced (2 of 4 "
        "cells; 1 cell matches the authors' code only) | — |"]
    assert text[6] == "" and text[7] == totals_line(LINES)
    # each published table once (the twin is its original's), keyed by the status before its parenthesis
    assert text[8] == "Tables by status (each published table once): partly reproduced 2, reduced profile only 1."
    # the papers with no line: vr and tvem here, in the papers' order, each in one sentence
    assert [line.split(" ")[0] for line in text[9:]] == ["*vr*", "*tvem*"]
    assert text[10].startswith("*tvem* (Lücke, *Truncated Variational Expectation Maximization*) prints no table")
    assert text[10].endswith("has no cell of it; experiments on its method: `trunc`.")


def test_a_line_whose_cells_are_all_numeric_or_set_apart_says_no_not_numeric():
    line = _line(part="fyvi Table 2", published=10, numeric=6, reference=2, inputs=1, restated=1)
    assert coverage_markdown([line])[2].split(" | ")[2] == (
        "10 (2 of other methods, for reference, 1 settings used, not scored, 1 restating a table cell, scored there)")
    assert coverage_markdown([_line(published=9, numeric=9)])[2].split(" | ")[2] == "9"


def test_a_paper_without_tables_or_citing_experiments_is_said_in_a_sentence():
    text = coverage_markdown(LINES[:1])
    tvem = next(line for line in text if line.startswith("*tvem*"))
    assert tvem.endswith("so `paper_tables.csv` has no cell of it.")
    assert coverage_markdown([_line(within=0)])[2].split(" | ")[5] == "0"     # no notes without a cell within


def test_the_totals_count_each_published_cell_once():
    assert totals_line(LINES) == (
        "**Totals:** 52 published cells printed, 42 distinct in 3 tables (each counted once: 9 cells of twin tables "
        "and 1 in-text restatements of table cells left out), 37 of them results to reproduce (2 other methods' for "
        "reference, 1 settings used); 13 with a `paper`-profile result, 33 with a result at some profile, 9 within "
        "tolerance by our metric at the `paper` profile (3 of them exact at the printed precision); 1 more match the "
        "authors' code only (its convention column); 3 stale rows behind the `paper`-profile results.")
    assert totals_line(LINES[:1]).endswith("(3 of them exact at the printed precision).")
