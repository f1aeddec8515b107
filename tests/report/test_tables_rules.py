"""The decisions of fyexp/report/tables.py at their edges: the summary over seeds (what is averaged, what is dropped,
the label a row goes by, failed seeds, stale rows), the scoring of each published cell (our row's own error, the
authors' convention column, a cell without our row), the counts and the table's status line.

Written from the survivors of a mutation run of the file's decision functions (docs/contributing/mutation.md,
"fyexp/report/tables.py"); the values are ours, placed inside or outside the bands on purpose.
"""

from __future__ import annotations

import importlib
import math

import numpy as np
import pandas as pd
import pytest

from fyexp.reference.rows import TableMeta, joined_cells
from fyexp.report.tables import (AUTHORS_ONLY, SUMMARY_COLUMNS, TEXT_ONLY, ComparedTable, failed_cells, score_cells, summarize,
                                 table_status, tally)
from fyexp.report.tolerance import EXACT, NOT_RUN, NOT_SCORED, OUTSIDE, WITHIN

TABLES = importlib.import_module("fyexp.report.tables")


def _row(**fields):
    base = dict(profile="paper", paper="fyvi", table=1.0, setting=np.nan, paper_row="Standard EM", label=np.nan,
                metric="adjusted_mi", method="A", params="{}", seed=0, value=1.0, status=np.nan)
    return {**base, **fields}


def test_summarize_averages_each_cell_over_its_good_rows_and_counts_the_rest():
    frame = pd.DataFrame.from_records([
        _row(seed=0, value=1.0, tolerance="0.1", freshness="stale"),
        _row(seed=1, value="3.0", tolerance=0.3, freshness="current", status="ok"),
        _row(seed=2, value=np.nan, status="failed"),                       # a failed seed of method A
        _row(method="B", paper_row=np.nan, label="", value=5.0, tolerance="n/a", freshness="current"),
        _row(method="D", table=np.nan, value=9.0, freshness="current"),   # no table: not a published cell's row
        _row(method="E", paper=np.nan, value=9.0, freshness="current"),
        _row(method="C", params=np.nan, seed=4, value=np.nan, status="failed"),
        _row(method="C", params=np.nan, seed=3, paper_row="Hard EM", label="Cee", value="seven", freshness="current"),
    ])
    out = summarize(frame)
    assert list(out.columns) == SUMMARY_COLUMNS
    # in order of first appearance, not sorted (sorted, B's empty row name would come first)
    assert list(out["label"]) == ["Standard EM", "B", "Cee"]
    first, second, third = (out.iloc[i] for i in range(3))
    assert (first["table"], first["setting"], first["paper_row"]) == ("1", "", "Standard EM")
    assert first["mean"] == 2.0 and first["std"] == 1.0 and first["sd"] == pytest.approx(math.sqrt(2))
    assert (first["n"], first["own_tol"], first["failed"], first["seeds"], first["stale"]) == (2, 0.3, 1, (0, 1), 1)
    assert (second["paper_row"], second["mean"], second["std"], second["n"]) == ("", 5.0, 0.0, 1)
    assert math.isnan(second["sd"]) and math.isnan(second["own_tol"]) and second["failed"] == 0
    assert third["paper_row"] == "Hard EM" and math.isnan(third["mean"])   # text that is not a number: NaN
    assert third["failed"] == 1 and third["seeds"] == (3,)                 # C's params are NaN: its failure counts


def test_summarize_without_status_tolerance_or_freshness_columns_takes_every_row_as_good_and_current():
    frame = pd.DataFrame.from_records([_row(seed=0, value=1.0), _row(seed=1, value=2.0)]).drop(columns="status")
    out = summarize(frame.drop(columns="label"))
    assert len(out) == 1 and out.iloc[0]["n"] == 2 and out.iloc[0]["label"] == "Standard EM"
    assert out.iloc[0]["stale"] == 0 and math.isnan(out.iloc[0]["own_tol"]) and out.iloc[0]["sd"] == pytest.approx(
        math.sqrt(0.5))
    kept = summarize(pd.DataFrame.from_records([_row(metric=np.nan)]))
    assert len(kept) == 1 and kept.iloc[0]["mean"] == 1.0                  # a row without a metric is not lost


def test_summarize_of_nothing_usable_is_an_empty_frame_with_the_summary_columns():
    out = summarize(pd.DataFrame.from_records([_row(status="failed"), _row(table=np.nan)]))
    assert out.empty and list(out.columns) == SUMMARY_COLUMNS


def test_failed_cells_lists_each_failed_cell_of_the_profile_once_in_order():
    frame = pd.DataFrame({"status": ["failed", "ok", "failed", "failed", "failed"],
                          "profile": ["paper", "paper", "paper", "cpu", "paper"],
                          "cell": ["b", "a", "a", "c", "b"]})
    assert failed_cells(frame, "paper") == ["a", "b"]
    assert failed_cells(frame, "cpu") == ["c"]
    assert failed_cells(frame.drop(columns="status"), "paper") == []


def _pub(statuses, conv=None, reference=None, own=None):
    frame = pd.DataFrame({"status": statuses})
    for name, values in (("convention_agrees", conv), ("reference", reference), ("own_error_only", own)):
        if values is not None:
            frame[name] = pd.Series(values, dtype=object)
    return frame


def test_tally_counts_every_key_and_reads_missing_flags_as_false():
    statuses = [EXACT, WITHIN, OUTSIDE, OUTSIDE, NOT_RUN, NOT_SCORED, NOT_SCORED]
    bare = tally(_pub(statuses))
    assert bare == {EXACT: 1, WITHIN: 1, OUTSIDE: 2, NOT_RUN: 1, NOT_SCORED: 2, AUTHORS_ONLY: 0, "published": 7,
                    "reference": 0, "scorable": 5, "with_result": 4, "own_error_only": 0, TEXT_ONLY: 0,
                    "by_authors": 0}
    flagged = tally(_pub(statuses, conv=[np.nan, True, True, np.nan, True, np.nan, False],
                         reference=[np.nan, False, False, False, False, True, np.nan],
                         own=[np.nan, False, True, np.nan, False, False, np.nan]))
    # an outside cell and a not-run cell that the authors' convention matches count there, not as ✗ / not run
    assert flagged == {EXACT: 1, WITHIN: 1, OUTSIDE: 1, NOT_RUN: 0, NOT_SCORED: 2, AUTHORS_ONLY: 2, "published": 7,
                       "reference": 1, "scorable": 5, "with_result": 5, "own_error_only": 1, TEXT_ONLY: 0,
                       "by_authors": 0}
    read = _pub(statuses, conv=[np.nan, True, True, np.nan, True, np.nan, False])
    read["reading"] = ["text", "text", "authors", "text", "text", "text", "text"]
    # scored on the authors' code, within only by the paper's text: counted apart as text only
    assert (tally(read)[AUTHORS_ONLY], tally(read)[TEXT_ONLY], tally(read)["by_authors"]) == (1, 1, 1)


def test_a_table_status_names_one_stale_row_in_the_singular_and_joins_its_notes():
    assert table_status(4, 4, 4, True, stale_rows=1) == "reproduced (1 row stale: code)"
    assert table_status(4, 4, 2, True, authors_only=1, stale_rows=2) == (
        "partly reproduced (2 of 4 cells; 1 cell matches the authors' code only; 2 rows stale: code)")


def _compared(cells, profile="paper"):
    return ComparedTable(paper="fyvi", table="1", profile=profile, cells=pd.DataFrame(cells),
                         meta=TableMeta("fyvi 1", 5, "std", True, "", ""))


def test_counts_add_the_stale_rows_of_every_cell_shown_and_read_none_as_zero():
    cells = {"kind": ["paper", "paper", "ours"], "status": [EXACT, NOT_SCORED, NOT_SCORED],
             "reference": [False, False, False], "stale": [2, np.nan, 3]}
    assert _compared(cells).counts()["stale"] == 5
    assert _compared({k: v for k, v in cells.items() if k != "stale"}).counts()["stale"] == 0


def test_the_count_line_names_cells_not_numeric_and_of_other_methods_apart():
    cells = {"kind": ["paper"] * 5, "status": [EXACT, OUTSIDE, NOT_SCORED, NOT_SCORED, NOT_SCORED],
             "reference": [False, False, True, False, False], "stale": [0] * 5}
    assert _compared(cells).count_line() == (
        "✓ exact 1 · ✓ within 0 · ✗ 1 · — not run 0 (of 5 published cells; 2 not numeric; 1 of other methods, "
        "shown for reference)")
    only_reference = {**cells, "reference": [False, False, True, True, True]}
    assert _compared(only_reference).count_line().endswith("(of 5 published cells; 3 of other methods, shown for "
                                                           "reference)")


def _t1():
    cells = joined_cells()
    return cells[(cells["paper"] == "fyvi") & (cells["table"] == "1")].reset_index(drop=True)


def _ours(cell, metric=None, **fields):
    base = dict(profile="paper", paper="fyvi", table="1", setting=cell.setting, paper_row=cell.row, label=cell.row,
                metric=metric or cell.column, mean=cell.value_num, std=0.0, sd=float("nan"), n=1,
                own_tol=float("nan"), failed=0, seeds=(0,), stale=0)
    return {**base, **fields}


def test_a_cell_without_our_row_is_not_run_with_every_column_at_its_empty_value():
    scored = score_cells(_t1().iloc[:2], pd.DataFrame(columns=SUMMARY_COLUMNS))
    assert list(scored["status"]) == [NOT_RUN, NOT_RUN]
    first = scored.iloc[0]
    assert first["n"] == 0 and first["failed"] == 0 and first["seeds"] == () and first["stale"] == 0
    assert math.isnan(first["std"]) and math.isnan(first["mean"]) and first["paper_se"] > 0
    assert first["convention_status"] == NOT_RUN and first["convention_mark"] == "" and not first["convention_agrees"]
    assert math.isnan(first["convention_mean"]) and math.isnan(first["convention_std"]) and first["convention_n"] == 0


def test_our_rows_own_error_flags_a_cell_it_covers_and_the_flag_is_kept():
    cell = _t1().iloc[0]
    ours = pd.DataFrame([_ours(cell, mean=cell.value_num + 0.5, own_tol=0.6, stale=2, failed=1, seeds=(0, 3))])
    scored = score_cells(_t1().iloc[:1], ours).iloc[0]
    assert scored["status"] == OUTSIDE and bool(scored["own_error_only"]) and scored["mark"] == "✗†"
    assert (scored["own_tol"], scored["stale"], scored["failed"], scored["seeds"]) == (0.6, 2, 1, (0, 3))


def test_the_authors_convention_column_is_judged_with_the_papers_and_its_own_spreads(monkeypatch):
    cell = _t1().iloc[0]                                    # its ± read as a standard error here, for round bands
    monkeypatch.setattr(TABLES, "table_meta", lambda paper, table: TableMeta("fyvi 1", 1, "std_err", True, "", ""))
    spread = float(cell.spread_num)
    ours = pd.DataFrame([
        _ours(cell, mean=cell.value_num + 1.0),                                            # ours: far outside
        _ours(cell, metric=cell.column + "_authors", mean=cell.value_num + 1.9 * spread, sd=0.0, n=1, std=0.1),
    ])
    scored = score_cells(_t1().iloc[:1], ours).iloc[0]
    # the convention is within by the paper's standard error alone (1.9 of its ± of 2 standard errors)
    assert scored["status"] == OUTSIDE and scored["convention_status"] == WITHIN and scored["convention_agrees"]
    assert scored["convention_mean"] == pytest.approx(cell.value_num + 1.9 * spread)
    assert scored["convention_std"] == 0.1 and scored["convention_n"] == 1 and scored["convention_mark"] == "✓ within"
    # with two runs of its own the convention's spread widens its band too (paper + ours)
    wide = pd.DataFrame([_ours(cell, mean=cell.value_num + 1.0),
                         _ours(cell, metric=cell.column + "_authors", mean=cell.value_num + 3.0 * spread,
                               sd=4.0 * spread, n=2)])
    assert score_cells(_t1().iloc[:1], wide).iloc[0]["convention_status"] == WITHIN
    # and its own declared error flags it when outside
    flagged = pd.DataFrame([_ours(cell, metric=cell.column + "_authors", mean=cell.value_num + 3.0 * spread,
                                  own_tol=4.0 * spread)])
    convention = score_cells(_t1().iloc[:1], flagged).iloc[0]
    assert convention["convention_status"] == OUTSIDE and convention["convention_mark"] == "✗†"


def test_a_per_setting_run_count_sets_the_papers_standard_error(monkeypatch):
    cell = _t1().iloc[0]
    meta = TableMeta("fyvi 1", 1, "std", True, "", "", settings=((cell.setting, 4),))
    monkeypatch.setattr(TABLES, "table_meta", lambda paper, table: meta)
    scored = score_cells(_t1().iloc[:1], pd.DataFrame(columns=SUMMARY_COLUMNS)).iloc[0]
    assert scored["paper_se"] == pytest.approx(float(cell.spread_num) / 2)


def _summary_row(paper, table, setting, row, metric, mean, **fields):
    base = dict(profile="paper", paper=paper, table=table, setting=setting, paper_row=row, label=row, metric=metric,
                mean=mean, std=0.0, sd=float("nan"), n=1, own_tol=float("nan"), failed=0, seeds=(0,), stale=0)
    return {**base, **fields}


def test_compare_shows_our_rows_of_the_table_only_and_each_extra_row_as_ours_unscored():
    t1 = _t1()
    rows = [_ours(cell) for cell in t1.itertuples()]
    rows += [_summary_row("fyvi", "1", "synthetic GMM", "Our variant", "adjusted_mi", 0.5, sd=0.1, n=3, failed=1,
                          own_tol=0.2, seeds=(0, 1, 2), stale=1),
             _summary_row("fyvi", "2", "synthetic GMM", "Elsewhere", "adjusted_mi", 0.4),     # another table
             _summary_row("fyvl", "1", "synthetic GMM", "Other paper", "adjusted_mi", 0.3),  # another paper
             _summary_row("fyvi", "1", "synthetic GMM", "Hard EM", "adjusted_mi", 0.2, profile="cpu")]
    table = TABLES.compare(pd.DataFrame(rows), "fyvi", "1", "paper")
    assert table.meta.ref == "fyvi 1" and table.status == "reproduced (1 row stale: code)"   # the extra row's
    extra = table.cells[table.cells["kind"] == "ours"]
    assert len(table.cells) == 10 and list(extra["paper_row"]) == ["Our variant"]
    record = extra.iloc[0].to_dict()
    expected = {"setting": "synthetic GMM", "paper_row": "Our variant", "metric": "adjusted_mi", "kind": "ours",
                "label": "Our variant", "paper_text": None, "spread_text": "", "mean": 0.5, "std": 0.0, "sd": 0.1,
                "n": 3, "failed": 1, "own_tol": 0.2, "seeds": (0, 1, 2), "stale": 1, "status": NOT_SCORED, "mark": "",
                "own_error_only": False, "convention_agrees": False, "convention_status": NOT_RUN}
    assert {key: record[key] for key in expected} == expected
    assert math.isnan(record["paper_value"]) and math.isnan(record["unit"])
    assert table.counts()["stale"] == 1


def test_rows_another_experiment_produces_are_left_out_with_our_rows_of_them():
    t1 = _t1()
    rows = [_ours(cell) for cell in t1.itertuples()]
    rows += [_summary_row("fyvi", "1", "synthetic GMM", "Hard EM", "made_up_metric", 0.2)]   # an excluded row's
    table = TABLES.compare(pd.DataFrame(rows), "fyvi", "1", "paper", exclude_rows={"other": ["Hard EM"], "none": []})
    assert "Hard EM" not in set(table.cells["paper_row"]) and len(table.cells) == 6
    assert table.other_rows == {"other": ["Hard EM"]}


def test_a_twins_own_keys_are_its_cells_not_extra_rows():
    cells = joined_cells()
    twin = cells[(cells["paper"] == "fyvl") & (cells["table"] == "2")].iloc[0]
    ours = pd.DataFrame([_summary_row("fyvl", "2", twin.setting, twin.row, twin.column, twin.value_num)])
    table = TABLES.compare(ours, "fyvl", "2", "paper")
    assert (table.cells["kind"] == "ours").sum() == 0
    assert (table.published["n"] > 0).sum() >= 1


def test_caption_gammas_are_compared_only_where_the_experiment_reports_gamma_rows():
    cells = joined_cells()
    frac1 = cells[(cells["paper"] == "frac") & (cells["table"] == "1")]
    gamma = frac1[frac1["column"] == "gamma"].iloc[0]
    plain = TABLES.compare(pd.DataFrame([_summary_row("frac", "1", gamma.setting, gamma.row, "bound", -1.0)]),
                           "frac", "1", "paper")
    assert "gamma" not in set(plain.cells["metric"])
    with_gamma = TABLES.compare(pd.DataFrame([_summary_row("frac", "1", gamma.setting, gamma.row, "gamma", 0.5)]),
                                "frac", "1", "paper")
    assert "gamma" in set(with_gamma.published["metric"])


def test_the_settings_the_paper_states_come_with_the_table_minus_the_rows_left_out():
    table = TABLES.compare(pd.DataFrame(columns=SUMMARY_COLUMNS), "fyvi", "3", "paper")
    cells = joined_cells()
    stated = cells[(cells["role"] == "input") & (cells["home_paper"] == "fyvi") & (cells["home_table"] == "3")]
    assert len(table.inputs) == len(stated) > 0 and list(table.inputs.index) == list(range(len(stated)))
    assert "index" not in table.inputs and set(table.inputs["home_table"]) == {"3"}
    assert set(table.inputs["role"]) == {"input"}
    fewer = TABLES.compare(pd.DataFrame(columns=SUMMARY_COLUMNS), "fyvi", "3", "paper", exclude_rows={"x": ["NVDM"]})
    assert "NVDM" not in set(fewer.inputs["row"]) and len(fewer.inputs) < len(stated)


def test_a_label_left_empty_goes_by_the_row_name_each_row_by_its_own():
    frame = pd.DataFrame.from_records([_row(label=""), _row(paper_row="Hard EM", label="", method="B"),
                                       _row(paper_row="Sparse EM", method="C")])
    assert list(summarize(frame)["label"]) == ["Standard EM", "Hard EM", "Sparse EM"]
    assert list(summarize(frame.drop(columns="label"))["label"]) == ["Standard EM", "Hard EM", "Sparse EM"]


def test_failed_seeds_count_only_for_the_same_profile_method_and_parameters():
    frame = pd.DataFrame.from_records([
        _row(seed=0, params='{"a": 1}'), _row(seed=1, params='{"a": 1}', status="failed", value=np.nan),
        _row(seed=0, params='{"a": 2}', paper_row="Hard EM"),
        _row(seed=0, params='{"a": 2}', paper_row="Sparse EM", profile="cpu"),
        _row(seed=2, params='{"a": 2}', status="failed", value=np.nan, profile="cpu")])
    out = summarize(frame).set_index(["profile", "paper_row"])["failed"].to_dict()
    assert out == {("paper", "Standard EM"): 1, ("paper", "Hard EM"): 0, ("cpu", "Sparse EM"): 1}


def test_a_twin_table_states_the_settings_of_its_home():
    empty = pd.DataFrame(columns=SUMMARY_COLUMNS)
    twin, home = TABLES.compare(empty, "fyvl", "3", "paper"), TABLES.compare(empty, "fyvi", "3", "paper")
    assert len(twin.inputs) == len(home.inputs) > 0
    assert list(twin.inputs["row"]) == list(home.inputs["row"])


def test_our_unnamed_rows_are_never_taken_for_an_excluded_row():
    t1 = _t1()
    rows = [_ours(cell) for cell in t1.itertuples()]
    rows += [_summary_row("fyvi", "1", "synthetic GMM", "", "train_time_s", 12.0)]
    table = TABLES.compare(pd.DataFrame(rows), "fyvi", "1", "paper", exclude_rows={"other": ["", "Hard EM"]})
    assert list(table.cells.loc[table.cells["kind"] == "ours", "metric"]) == ["train_time_s"]


# ---- readings: a table the authors' code produced is scored on it, the text beside ---------------------------
def _bound_rows(bound: float, authors: float) -> pd.DataFrame:
    rows = [{"profile": "paper", "paper": "frac", "table": "1", "setting": "n=400 K=2 mu=±2", "paper_row": "L_0.1",
             "label": "L_0.1", "metric": metric, "mean": value, "std": 0.0, "sd": float("nan"), "n": 1,
             "own_tol": float("nan"), "failed": 0, "seeds": (23,)}
            for metric, value in (("bound", bound), ("bound_authors", authors))]
    return pd.DataFrame.from_records(rows)


def _l01(table):
    return table.cells[(table.cells["paper_row"] == "L_0.1") & (table.cells["metric"] == "bound")].iloc[0]


def test_frac_table1_is_scored_on_the_authors_bound_with_the_text_bound_beside():
    published = float(joined_cells().query("paper == 'frac' and table == '1' and row == 'L_0.1' and "
                                           "column == 'bound'")["value_num"].iloc[0])
    table = TABLES.compare(_bound_rows(published + 5.0, published), "frac", "1", "paper")
    cell = _l01(table)
    assert (cell["reading"], cell["status"], cell["convention_status"]) == ("authors", EXACT, OUTSIDE)
    assert cell["mean"] == published and cell["convention_mean"] == published + 5.0
    counts = table.counts()
    assert counts[EXACT] == 1 and counts[AUTHORS_ONLY] == counts[TEXT_ONLY] == 0 and counts["by_authors"] == 1
    header, _ = TABLES.format_cells(table)
    assert "bound (ours, authors' code)" in header and "bound: paper's text (ours)" in header
    assert any(line.startswith("**Readings.**") for line in TABLES.caption(table))
    # the authors' reading off, the text on: counted apart as matching the paper's text only
    flipped = TABLES.compare(_bound_rows(published, published + 5.0), "frac", "1", "paper")
    assert _l01(flipped)["status"] == OUTSIDE and flipped.counts()[TEXT_ONLY] == 1
    assert "matches the paper's text only 1" in flipped.count_line()


def test_a_cell_without_a_run_of_the_authors_code_is_scored_on_ours():
    only_ours = _bound_rows(-800.0, 0.0)
    only_ours = only_ours[only_ours["metric"] == "bound"]
    cell = _l01(TABLES.compare(only_ours, "frac", "1", "paper"))
    assert cell["reading"] == "text" and cell["mean"] == -800.0


def test_the_authors_runs_stand_under_the_published_row_their_text_counterpart_fills():
    def row(method, reg, metric, value, seed=0, paper_row="Bernoulli rho'=1 / Biweight rho=3/2"):
        return {"experiment": "fy-vae", "profile": "paper", "method": method, "seed": seed, "metric": metric,
                "value": value, "params": f'{{"dataset":"MNIST","regularizer":"{reg}"}}', "paper": "fyvi",
                "table": 2.0, "setting": "MNIST", "paper_row": paper_row if reg == "fy" else None,
                "label": paper_row if reg == "fy" else "theirs", "status": "ok"}

    frame = pd.DataFrame([row("bernoulli-biweight", "fy", "l1_reconstruction_error", 13.0),
                          row("bernoulli-biweight", "authors", "l1_reconstruction_error", 99.0),
                          row("bernoulli-biweight", "authors", "l1_reconstruction_error_gaussian_sample", 12.0),
                          row("bernoulli-biweight", "fy", "l1_reconstruction_error_mode", 1.0),   # not printed
                          row("bernoulli-gaussian", "fy", "l1_reconstruction_error", 13.3,
                              paper_row="Bernoulli rho'=1 / Gaussian rho=1")])
    extra = TABLES.reading_rows(frame)
    # the authors' regularizer scored by Gaussian sampling (both departures), under the fy row's published row
    assert extra[["paper_row", "metric", "value"]].values.tolist() == [
        ["Bernoulli rho'=1 / Biweight rho=3/2", "l1_reconstruction_error_authors", 12.0]]
    summary = summarize(frame)
    assert set(summary["metric"]) >= {"l1_reconstruction_error", "l1_reconstruction_error_authors"}
    assert TABLES.reading_rows(frame[frame["method"] == "bernoulli-gaussian"]).empty   # no departure touches it
