"""Other methods' rows (VR Tables 2–3: PBP, BB-α, and VI, quoted from Graves 2011) are shown for reference: never
scored, never counted missing; our own run of a reference method (our VI) is a row of ours beside it."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd
import pytest

from fyexp.reference.rows import joined_cells, table_meta
from fyexp.report.coverage import coverage, coverage_markdown
from fyexp.report.tables import SUMMARY_COLUMNS, compare


@dataclass
class FakeSpec:
    name: str
    tables: tuple
    paper: str = "vr"
    description: str = ""


def _our_rows(methods):
    ref = joined_cells()
    cells = ref[(ref["paper"] == "vr") & (ref["table"] == "2") & ref["row"].isin(methods)]
    return pd.DataFrame.from_records([
        {"profile": "paper", "paper": "vr", "table": "2", "setting": c.setting, "paper_row": c.row, "label": c.row,
         "metric": c.column, "mean": c.value_num, "std": 0.0, "sd": 0.0, "n": 20, "own_tol": float("nan"),
         "failed": 0, "seeds": tuple(range(20)), "stale": 0, "experiment": "bnn"} for c in cells.itertuples()])


def test_a_table_of_our_methods_alone_can_be_reproduced():
    ours = _our_rows(["VI", "VR-0.5", "VR-0.0", "VR-max"])
    vi = ours["paper_row"] == "VI"
    ours.loc[vi, "mean"] = ours.loc[vi, "mean"] + 1.5  # our VI far from Graves' quoted VI: not a failure of ours
    assert set(table_meta("vr", "2").reference_rows) == {"VI", "PBP", "BB-alpha=BO"}
    line = {l.part: l for l in coverage([FakeSpec("bnn", ("vr Table 2",))], ours)}["vr Table 2"]
    assert line.reference == 21 and line.numeric == 21  # 7 data sets × (VI, PBP, BB-α) and × our 3 VR methods
    assert line.status == "reproduced" and line.at_paper == 21
    assert "21 of other methods, for reference" in "\n".join(coverage_markdown([line]))
    table = compare(ours[SUMMARY_COLUMNS], "vr", "2", "paper")
    assert table.status == "reproduced"
    pbp = table.published[table.published["paper_row"] == "PBP"]
    assert len(pbp) == 7 and (pbp["reference"] == True).all()  # noqa: E712 (one test-LL cell per data set)
    graves = table.published[table.published["paper_row"] == "VI"]
    assert len(graves) == 7 and (graves["n"] == 0).all() and graves["mean"].isna().all()
    own = table.cells[table.cells["label"] == "VI (ours)"]
    boston = ours[vi & (ours["setting"] == "Boston")]["mean"].iloc[0]
    assert len(own) == 7 and (own["kind"] == "ours").all()
    assert own[own["setting"] == "Boston"]["mean"].iloc[0] == pytest.approx(boston)
    from fyexp.report.tables import format_cells

    _, body = format_cells(table)
    labels = [row[1] for row in body if row[0] == "Boston"]
    assert labels[:2] == ["VI", "VI (ours)"]  # ours right beside the quoted number
    assert body[[r[1] for r in body].index("VI")][3] == "reference only"


def test_a_missing_method_of_ours_still_counts_against_the_table():
    ours = _our_rows(["VI", "VR-0.5", "VR-0.0"])
    line = {l.part: l for l in coverage([FakeSpec("bnn", ("vr Table 2",))], ours)}["vr Table 2"]
    assert line.status == "partly reproduced (14 of 21 cells)"


def test_a_printed_zero_that_means_below_1e_10_is_not_exact_for_3e_5():
    from fyexp.reference import load_paper_tables
    from fyexp.report.tolerance import EXACT, judge

    ref = load_paper_tables()
    zero = ref[(ref["paper"] == "frac") & (ref["table"] == "8") & (ref["value"] == "0")].iloc[0]
    assert zero["unit"] == 2e-10
    assert judge(3e-5, 0.0, unit=zero["unit"], n_ours=3).status != EXACT
    assert judge(5e-11, 0.0, unit=zero["unit"], n_ours=3).status == EXACT
