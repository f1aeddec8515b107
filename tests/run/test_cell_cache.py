"""What parsing an experiment's cell files gave, kept between processes (ResultStore.read_cells,
fyexp.store.user_cache):
a later process reads no cell file while none changed, gets the same rows and the same damaged-file warnings, and
parses again as soon as a file is written, added or removed."""

from __future__ import annotations

import subprocess
import sys

import pandas as pd
import pytest

import fyexp.store.damaged as damaged
import fyexp.store.results as results
from fyexp.store.results import Cell, ResultStore


@pytest.fixture
def store(tmp_path, monkeypatch):
    monkeypatch.setenv("FYEXP_CACHE_DIR", str(tmp_path / "cache"))
    store = ResultStore(tmp_path / "results", "exp")
    for seed in range(3):
        store.write_cell("paper", Cell("m", seed, {"x": 1}), [{"metric": "a", "value": 1.0 + seed}],
                         {"git_commit": "abc", "device": "cpu", "wall_time_s": 0.1})
    return store


def _new_process(monkeypatch) -> list[str]:
    """Forget what this process read (as a new process would) and count the cell files parsed from now on."""
    results._read_cells_once.cache_clear()
    damaged._parsed.cache_clear()
    monkeypatch.setattr(damaged, "_WARNED", set())
    parsed: list[str] = []
    real = results._read_cell_file

    def counting(path):
        parsed.append(path.name)
        return real(path)

    monkeypatch.setattr(results, "_read_cell_file", counting)
    return parsed


def test_a_later_process_reads_no_unchanged_cell_file(store, monkeypatch):
    first = store.load()
    parsed = _new_process(monkeypatch)
    again = store.load()
    assert parsed == []
    pd.testing.assert_frame_equal(first, again)
    again.loc[0, "value"] = -1.0                       # a copy: the cached rows are not the caller's to change
    assert store.load().loc[0, "value"] == first.loc[0, "value"]


def test_a_written_added_or_removed_cell_file_is_parsed_again(store, monkeypatch):
    store.load()
    parsed = _new_process(monkeypatch)
    store.write_cell("paper", Cell("m", 0, {"x": 1}), [{"metric": "a", "value": 7.0}], {"git_commit": "def"})
    assert 7.0 in set(store.load()["value"]) and len(parsed) == 3
    parsed = _new_process(monkeypatch)
    store.write_cell("paper", Cell("m", 9, {"x": 1}), [{"metric": "a", "value": 9.0}], {"git_commit": "def"})
    assert len(store.load()) == 4 and len(parsed) == 4
    parsed = _new_process(monkeypatch)
    store.cell_path("paper", Cell("m", 9, {"x": 1})).unlink()
    assert len(store.load()) == 3 and len(parsed) == 3


def test_a_damaged_file_is_named_on_every_load(store, monkeypatch, capsys):
    broken = store.cell_path("paper", Cell("m", 1, {"x": 1}))
    broken.write_text(broken.read_text().splitlines()[0] + "\n")     # the header alone: no rows
    assert len(store.load()) == 2
    assert "skipped damaged cell file" in capsys.readouterr().err
    parsed = _new_process(monkeypatch)
    assert len(store.load()) == 2 and parsed == []
    assert broken.name in capsys.readouterr().err
    assert store.read_cells()[1] == [(broken, "no rows")]


def test_other_reading_code_parses_again(store, monkeypatch):
    store.load()
    parsed = _new_process(monkeypatch)
    monkeypatch.setattr(results, "_cells_code_key", lambda: "another version of results.py")
    store.load()
    assert len(parsed) == 3


def test_without_a_cache_every_process_parses(store, monkeypatch, tmp_path):
    monkeypatch.setenv("FYEXP_CACHE_DIR", "off")
    store.load()
    parsed = _new_process(monkeypatch)
    store.load()
    assert len(parsed) == 3


def test_the_cache_is_shared_by_processes(store, tmp_path):
    """Two real processes: the second finds the first's entry (its count of parsed files is zero)."""
    script = ("import sys, fyexp.store.results as r\n"
              "from fyexp.store.results import ResultStore\n"
              "n = []\nreal = r._read_cell_file\n"
              "r._read_cell_file = lambda p: (n.append(p), real(p))[1]\n"
              f"rows = len(ResultStore(r'{store.root}', 'exp').load())\nprint(rows, len(n))\n")
    outs = [subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout.split()
            for _ in range(2)]
    assert outs[0][0] == outs[1][0] == "3" and outs[1][1] == "0"
