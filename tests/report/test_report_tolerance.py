"""The tolerance of the report (fyexp/report/tolerance.py) on hand-made cases, and row/table statuses."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from fyexp.report.tables import AUTHORS_ONLY, compare, table_status
from fyexp.report.tolerance import EXACT, NOT_RUN, NOT_SCORED, OUTSIDE, WITHIN, judge


def test_paper_spread_only():
    # one seed of ours: the band is the paper's standard error alone, 2 * 0.1 / sqrt(4) = 0.1
    assert judge(1.09, 1.0, unit=0.01, paper_se=0.1 / 2, n_ours=1).status == WITHIN
    verdict = judge(1.11, 1.0, unit=0.01, paper_se=0.05, n_ours=1)
    assert verdict.status == OUTSIDE and verdict.band == pytest.approx(0.1) and verdict.spreads == "paper"


def test_ours_only():
    # the paper prints no ±; four seeds with sd 0.2: band 2 * 0.2 / 2 = 0.2
    assert judge(1.19, 1.0, unit=0.01, ours_std=0.2, n_ours=4).status == WITHIN
    verdict = judge(1.21, 1.0, unit=0.01, ours_std=0.2, n_ours=4)
    assert verdict.status == OUTSIDE and verdict.spreads == "ours"


def test_both_spreads_add_in_quadrature():
    band = 2 * math.sqrt(0.03 ** 2 + 0.04 ** 2)  # = 0.1
    assert judge(1.0 + 0.099, 1.0, unit=0.001, paper_se=0.03, ours_std=0.08, n_ours=4).status == WITHIN
    verdict = judge(1.0 + 0.101, 1.0, unit=0.001, paper_se=0.03, ours_std=0.08, n_ours=4)
    assert verdict.status == OUTSIDE and verdict.band == pytest.approx(band) and verdict.spreads == "paper+ours"


def test_neither_spread_uses_printed_precision():
    assert judge(0.60649, 0.606, unit=0.001, n_ours=1).status == EXACT
    assert judge(0.60651, 0.606, unit=0.001, n_ours=1).status == OUTSIDE
    assert judge(0.6056, 0.606, unit=0.001, paper_se=0.01, ours_std=0.01, n_ours=5).status == EXACT


def test_single_seed_is_never_within_by_its_own_error():
    # n_ours = 1: a declared within-run error (e.g. twice a test-set standard error) does not make a cell agree
    verdict = judge(13.2675, 13.272, unit=0.001, n_ours=1, own_tolerance=0.0876)
    assert verdict.status == OUTSIDE and verdict.own_error_only and not verdict.agrees and verdict.mark == "✗†"
    # nor does a zero spread of one seed
    assert judge(1.05, 1.0, unit=0.01, ours_std=0.0, n_ours=1).status == OUTSIDE


def test_not_run_and_not_scored():
    assert judge(float("nan"), 1.0, unit=0.1).status == NOT_RUN
    assert judge(1.0, float("nan"), unit=float("nan"), n_ours=3).status == NOT_SCORED


def _summary(rows, profile="paper"):
    records = []
    for row, metric, mean, sd, n in rows:
        records.append({"profile": profile, "paper": "fyvi", "table": "1", "setting": "synthetic GMM",
                        "paper_row": row, "label": row, "metric": metric, "mean": mean, "std": sd, "sd": sd, "n": n,
                        "own_tol": float("nan"), "failed": 0, "seeds": tuple(range(n))})
    return pd.DataFrame.from_records(records)


FYVI_T1 = {("Standard EM", "adjusted_mi"): 0.606, ("Standard EM", "adjusted_ri"): 0.531,
           ("Standard EM", "silhouette_score"): 0.345, ("Hard EM", "adjusted_mi"): 0.537,
           ("Hard EM", "adjusted_ri"): 0.348, ("Hard EM", "silhouette_score"): 0.207,
           ("Sparse EM", "adjusted_mi"): 0.636, ("Sparse EM", "adjusted_ri"): 0.476,
           ("Sparse EM", "silhouette_score"): 0.393}


def test_every_cell_exact_is_reproduced_and_a_missing_cell_is_not():
    full = _summary([(r, m, v, 0.01, 5) for (r, m), v in FYVI_T1.items()])
    table = compare(full, "fyvi", "1", "paper", planned_seeds=5)
    assert table.status == "reproduced" and table.counts()[EXACT] == 9
    missing = full[~((full["paper_row"] == "Hard EM") & (full["metric"] == "silhouette_score"))]
    table = compare(missing, "fyvi", "1", "paper", planned_seeds=5)
    assert table.counts()[NOT_RUN] == 1
    assert table.status == "partly reproduced (8 of 9 cells)"
    assert "— not run" in table.cells.loc[table.cells["status"] == NOT_RUN, "mark"].iloc[0]


def test_reduced_profile_and_statuses():
    cpu = _summary([(r, m, v, 0.01, 5) for (r, m), v in FYVI_T1.items()], profile="cpu")
    assert compare(cpu, "fyvi", "1", "cpu").status == "not the paper profile (9 of 9 cells within tolerance)"
    assert table_status(9, 9, 0, True) == "deviates"
    assert table_status(9, 0, 0, True) == "not run"


def test_fewer_seeds_than_planned_is_said():
    one = _summary([(r, m, v, float("nan"), 1) for (r, m), v in FYVI_T1.items()])
    md = compare(one, "fyvi", "1", "paper", planned_seeds=5)
    from fyexp.report.tables import to_markdown

    text = to_markdown(md, "t")
    assert "1 of 5" in text and "fewer seeds than planned" in text


def test_convention_column_scored_separately(monkeypatch):
    """frac Table 1's bound: ours (eq. 7) off, the authors' convention column on the published number (as in a table
    no departure of readings.yaml names; one that does is scored on the authors' reading:
    tests/report/test_tables_rules)."""
    monkeypatch.setattr("fyexp.report.tables.authors_tables", lambda: set())
    rows = [{"profile": "paper", "paper": "frac", "table": "1", "setting": "n=400 K=2 mu=±2", "paper_row": "L_0.1",
             "label": "L_0.1", "metric": metric, "mean": value, "std": 0.0, "sd": float("nan"), "n": 1,
             "own_tol": float("nan"), "failed": 0, "seeds": (23,)}
            for metric, value in (("bound", -827.32), ("bound_authors", -832.52))]
    table = compare(pd.DataFrame.from_records(rows), "frac", "1", "paper")
    cell = table.cells[(table.cells["paper_row"] == "L_0.1") & (table.cells["metric"] == "bound")].iloc[0]
    assert cell["status"] == OUTSIDE and cell["convention_status"] == EXACT
    counts = table.counts()  # our metric decides ✓; the authors' convention is counted apart, in no other count
    assert counts[AUTHORS_ONLY] == 1 and counts[OUTSIDE] == 0 and counts[EXACT] + counts[WITHIN] == 0
    assert table.status == "deviates (1 cell matches the authors' code only)"
    assert "matches the authors' code only 1" in table.count_line()
    from fyexp.report.tables import format_cells

    header, _ = format_cells(table)
    assert "bound: authors' convention (ours)" in header
