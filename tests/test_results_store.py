"""The result store: atomic cell files, resume semantics, provenance columns, consolidation."""

from __future__ import annotations

import pandas as pd

from fyexp.results import CORE_COLUMNS, Cell, ResultStore, atomic_write_text


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

    class Boom(Exception):
        pass

    import os

    real_replace = os.replace

    def failing_replace(src, dst):
        raise Boom()

    monkeypatch.setattr(os, "replace", failing_replace)
    try:
        atomic_write_text(target, "new\n")
    except Boom:
        pass
    monkeypatch.setattr(os, "replace", real_replace)
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["f.csv"]
