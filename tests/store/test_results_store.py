"""The result store: atomic cell files, resume semantics, provenance columns, consolidation."""

from __future__ import annotations

import os

import pandas as pd
import pytest

from fyexp.store.results import CORE_COLUMNS, Cell, ResultStore, atomic_write_text


def test_cell_key_is_stable_and_file_safe():
    cell = Cell("sparse", 3, {"rho": 1.5, "prior": "log pi"})
    assert cell.key == "sparse__prior=log-pi__rho=1.5__seed=3"
    assert Cell("sparse", 3, {"prior": "log pi", "rho": 1.5}).key == cell.key


def test_write_read_and_finished(tmp_path):
    store = ResultStore(tmp_path, "exp")
    cell = Cell("m", 0, {"x": 1})
    assert not store.is_finished("paper", cell)
    store.write_cell("paper", cell, [{"metric": "a", "value": 1.0}, {"metric": "b", "value": 2.0, "rho": 2}],
                     {"git_commit": "abc", "device": "cpu", "wall_time_s": 0.1})
    assert store.is_finished("paper", cell) and not store.is_finished("quick", cell)
    frame = store.consolidate()
    assert list(frame.columns[: len(CORE_COLUMNS)]) == CORE_COLUMNS
    assert set(frame["metric"]) == {"a", "b"} and (frame["git_commit"] == "abc").all()
    assert pd.read_csv(store.table_path).shape == frame.shape


def test_failed_cells_are_recorded_without_a_number_and_retried(tmp_path):
    store = ResultStore(tmp_path, "exp")
    cell = Cell("m", 0)
    store.write_failure("paper", cell, "NaN loss at epoch 3", {})
    assert not store.is_finished("paper", cell)
    row = store.consolidate().iloc[0]
    assert row["status"] == "failed" and pd.isna(row["value"]) and "epoch 3" in row["label"]


def test_atomic_write_leaves_no_partial_file(tmp_path, monkeypatch):
    target = tmp_path / "f.csv"
    atomic_write_text(target, "old\n")
    monkeypatch.setattr(os, "replace", lambda src, dst: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        atomic_write_text(target, "new\n")
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["f.csv"]


def test_a_cell_file_is_parsed_once_while_unchanged_and_again_when_rewritten(tmp_path, monkeypatch):
    """``fyexp report`` reads every cell file twice (rows, damaged-file facts): the second read is the first's,
    unless the file changed in between; the caller's frame is its own copy."""
    import fyexp.store.results as results

    store = ResultStore(tmp_path, "exp")
    cell = Cell("m", 0, {"a": 1})
    store.write_cell("quick", cell, [{"metric": "x", "value": 1.5}], {})
    path = store.cell_files()[0]
    parsed = []
    real = results._read_cell_file
    monkeypatch.setattr(results, "_read_cell_file", lambda *a, **k: parsed.append(a[0]) or real(*a, **k))
    first, _ = results.read_cell_file(path)
    first.loc[0, "value"] = -1.0                          # the caller's copy: the cache is not touched
    second, problem = results.read_cell_file(path)
    assert len(parsed) == 1 and problem is None and second["value"].tolist() == [1.5]
    assert store.read_cells()[1] == [] and len(parsed) == 1
    store.write_cell("quick", cell, [{"metric": "x", "value": 2.5}, {"metric": "y", "value": 3.0}], {})
    third, _ = results.read_cell_file(path)
    assert len(parsed) == 2 and third["value"].tolist() == [2.5, 3.0]
    path.write_text("garbage without a final newline")
    assert results.read_cell_file(path) == (None, "cut short (no final newline)") and len(parsed) == 3


def test_hashes_and_commits_that_look_like_numbers_stay_text(tmp_path):
    """A hex settings hash such as '34e404522701' parses as the float 34·10^404522701 = inf, and an all-digit
    commit as an integer: read as numbers, the hash no longer matches the cell's settings record and the rows
    became 'unknown provenance' (tvem-bsc exact seed 6, 2026-11-25).  Identifiers are read as text, from the cell
    files and from the consolidated table alike."""
    from fyexp.store.results import read_cell_file, read_table

    store = ResultStore(tmp_path, "exp")
    cell = Cell("m", 0)
    store.write_cell("paper", cell, [{"metric": "a", "value": 1.0, "label": "0000000000e1"}],
                     {"git_commit": "123456789012", "device": "cpu", "wall_time_s": 0.1,
                      "settings_hash": "34e404522701"})
    frame, problem = read_cell_file(store.cell_path("paper", cell))
    assert problem is None
    assert frame.loc[0, "settings_hash"] == "34e404522701" and frame.loc[0, "git_commit"] == "123456789012"
    assert frame.loc[0, "label"] == "0000000000e1"
    store.consolidate()
    table, problem = read_table(store.table_path)
    assert problem is None and table.loc[0, "settings_hash"] == "34e404522701"
    assert table.loc[0, "git_commit"] == "123456789012" and table.loc[0, "value"] == 1.0


def test_the_session_guard_names_every_file_written_under_a_results_folder(tmp_path):
    from tests.conftest import results_snapshot, snapshot_changes

    folder = tmp_path / "results"
    (folder / "x" / "cells").mkdir(parents=True)
    (folder / "x" / "results.csv").write_text("a\n1\n")
    (folder / "x" / "cells" / "c.csv").write_text("a\n1\n")
    before = results_snapshot(folder)
    assert snapshot_changes(before, results_snapshot(folder)) == []  # read only: nothing to say
    (folder / "x" / "results.csv").write_text("a\n2\n")
    stamp = (folder / "x" / "cells" / "c.csv").stat().st_mtime_ns + 10**9
    os.utime(folder / "x" / "cells" / "c.csv", ns=(stamp, stamp))
    (folder / "x" / "new.json").write_text("{}")
    assert snapshot_changes(before, results_snapshot(folder)) == [
        "x/cells/c.csv: touched (same bytes, new modification time)", "x/new.json: added",
        "x/results.csv: rewritten"]
    (folder / "x" / "new.json").unlink()
    (folder / "x" / "cells" / "c.csv").unlink()
    assert "x/cells/c.csv: removed" in snapshot_changes(before, results_snapshot(folder))


def test_the_report_loads_without_writing_and_rebuilds_results_csv_only_when_asked(tmp_path):
    from fyexp.report import _load
    from fyexp.spec.specs import load_spec
    from tests.conftest import TOY_SPECS

    store = ResultStore(tmp_path, "toy")
    store.write_cell("quick", Cell("toy", 0, {"x": 1}), [{"metric": "a", "value": 1.5}], {"git_commit": "unknown"})
    spec = load_spec("toy", TOY_SPECS)
    assert _load(spec, tmp_path).frame["value"].tolist() == [1.5]
    assert not store.table_path.exists()  # loading wrote nothing
    _load(spec, tmp_path, write=True)     # the report, which means to write
    assert store.table_path.is_file()


def test_superseded_files_are_checked_by_shape_on_load_and_by_value_when_read(tmp_path, capsys):
    """A superseded cell file is kept, not read: loading checks its shape (garbage, cut short, without a cell file's
    columns, empty: one warning line each); its values are checked only when its rows are read
    (``report --superseded``)."""
    from fyexp.store.results import superseded_rows

    store = ResultStore(tmp_path, "exp")
    cell = Cell("m", 0, {"x": 1})
    store.write_cell("paper", cell, [{"metric": "a", "value": 1.0}], {"git_commit": "abc"})
    good = store.cell_path("paper", cell).read_text()
    folder = store.superseded_folder / "paper"
    folder.mkdir(parents=True)
    (folder / "m__x=1__seed=0.aaa.csv").write_text(good)                             # sound
    (folder / "m__x=1__seed=0.bbb.csv").write_text(good[:-1])                        # no final newline
    (folder / "m__x=1__seed=0.ccc.csv").write_text("a,b\n1,2\n")                     # not a cell file's columns
    (folder / "m__x=1__seed=0.ddd.csv").write_text(good.splitlines()[0] + "\n")      # header only
    (folder / "m__x=1__seed=0.eee.csv").write_text(good.replace(",1.0,", ",banana,"))  # shape fine, value not
    assert ",banana," in (folder / "m__x=1__seed=0.eee.csv").read_text()
    problems = {p.name.split(".")[1]: why for p, why in store.superseded_problems()}
    assert problems == {"bbb": "cut short (no final newline)", "ccc": "missing column(s) experiment, metric, value, "
                        "status, cell", "ddd": "no rows"}
    store.load()
    assert len(capsys.readouterr().err.strip().splitlines()) == 3
    rows = superseded_rows(store)
    err = capsys.readouterr().err
    assert "m__x=1__seed=0.eee.csv" in err and "value 'banana' of metric 'a' is not a number" in err
    assert set(rows["profile"]) == {"paper~superseded-aaa"}
