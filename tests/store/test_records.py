"""Issue 29, unit level: loading never writes, and every damaged record is refused by one rule (checked against what
fyexp writes; one warning line naming the file and what is wrong; its rows of unknown provenance)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from fyexp.store.damaged import LEFTOVER_AGE_S, is_leftover, warn_damaged
from fyexp.store.provenance import executed, record as rec
from fyexp.store.provenance.freshness import UNKNOWN_PROVENANCE, Expected, code_column, evidence, frame_freshness
from fyexp.store.results import Cell, ResultStore, read_table, superseded_rows

PROV = {"git_commit": "unknown", "fyexp_version": "0", "device": "cpu", "wall_time_s": 0.5,
        "timestamp": "2026-01-01T00:00:00+00:00"}
SETTINGS = {"experiment": "exp", "profile": "paper", "overrides": {}, "config": {"lr": 0.1}, "method": "m",
            "params": {"x": 1}, "seed": 0, "data": None, "environment": {"device_kind": "cpu"}}


def _states(frame: pd.DataFrame, folder: Path, code: bool = True) -> pd.Series:
    """The code axis of every row (the file rule, for rows without a code record, says ``unknown``: commit unknown)."""
    return code_column(frame_freshness(frame, folder, None, code=code,
                                       head=executed.ROOT))


def _warnings(capsys) -> list[str]:
    return [line for line in capsys.readouterr().err.splitlines() if line.strip()]


def _write(path: Path, settings: dict, code: dict | None = None, **change) -> Path:
    """The run record fyexp writes beside a cell file (:func:`fyexp.store.provenance.record.write_record`), its commit
    the
    rows' (``PROV``'s), changed by ``change``."""
    record = {"settings": settings, "code": code, "commit": PROV["git_commit"], "fingerprint": None, **change}
    rec.record_path(path).write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
    return rec.record_path(path)


def _cell(store: ResultStore, seed: int = 0, settings: dict | None = SETTINGS) -> Path:
    """A finished cell with (when ``settings``) its settings hash on every row and its run record beside it."""
    cell = Cell("m", seed, {"x": 1})
    extra = {"settings_hash": rec.settings_hash(settings)} if settings else {}
    store.write_cell("paper", cell, [{"metric": "a", "value": 1.0 + seed}, {"metric": "b", "value": 2.0}],
                     {**PROV, **extra})
    path = store.cell_path("paper", cell)
    if settings:
        _write(path, settings)
    return path


# ---- the warning ------------------------------------------------------------------------------------------------
def test_a_damaged_record_is_one_line_once(tmp_path, capsys):
    path = tmp_path / "x.json"
    warn_damaged(path, "damaged thing", "not JSON\n(garbage)", "it is skipped")
    warn_damaged(path, "damaged thing", "not JSON\n(garbage)", "it is skipped")  # read again by a later step
    warn_damaged(path, "damaged thing", "another problem", "it is skipped")
    assert _warnings(capsys) == [f"warning: damaged thing {path} (not JSON (garbage)); it is skipped",
                                 f"warning: damaged thing {path} (another problem); it is skipped"]


# ---- loading never writes -----------------------------------------------------------------------------------------
def _tree(root: Path) -> dict[str, int]:
    return {p.relative_to(root).as_posix(): p.stat().st_mtime_ns for p in sorted(root.rglob("*"))}


def test_load_reads_a_read_only_folder_and_writes_nothing(tmp_path):
    store = ResultStore(tmp_path, "exp")
    for seed in (0, 1):
        _cell(store, seed, {**SETTINGS, "seed": seed})
    folders = [p for p in tmp_path.rglob("*") if p.is_dir()] + [tmp_path]
    before = _tree(tmp_path)
    for folder in folders:
        folder.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        frame = store.load()
        assert len(frame) == 4 and not store.table_path.exists()
        assert _tree(tmp_path) == before
    finally:
        for folder in folders:
            folder.chmod(stat.S_IRWXU)
    first = store.consolidate()  # the commands that mean to write rebuild results.csv
    assert store.table_path.is_file() and first.equals(store.load())
    written = store.table_path.stat().st_mtime_ns
    time.sleep(0.01)
    store.consolidate()  # unchanged rows: the file is left as it is
    assert store.table_path.stat().st_mtime_ns == written


# ---- results.csv --------------------------------------------------------------------------------------------------
GOOD_TABLE = ("experiment,profile,method,seed,metric,value,status,cell,git_commit\n"
              "exp,paper,m,0,a,1.5,ok,m__seed=0,abc\n")


@pytest.mark.parametrize("content, problem", [
    (b"\xff\xfe\x00garbage", "not UTF-8 text"),
    (b"", "empty"),
    (b"experiment,metric,value\nexp,a,1.0\n", "missing column(s) profile, method, seed, status, cell, git_commit"),
    (GOOD_TABLE.replace("1.5", "banana").encode(), "value 'banana' of metric 'a' is not a number"),
    (b'experiment,profile\n"unclosed,x\n', "not a readable CSV (ParserError)"),
])
def test_a_damaged_results_table_is_skipped_with_one_line(tmp_path, capsys, content, problem):
    store = ResultStore(tmp_path, "exp")
    store.folder.mkdir()
    store.table_path.write_bytes(content)
    assert read_table(store.table_path)[1].startswith(problem)
    assert store.load().empty
    line, = _warnings(capsys)
    assert line.startswith(f"warning: skipped damaged results table {store.table_path} ({problem}")


def test_a_sound_results_table_is_read_when_there_are_no_cell_files(tmp_path, capsys):
    store = ResultStore(tmp_path, "exp")
    store.folder.mkdir()
    store.table_path.write_text(GOOD_TABLE)
    frame = store.load()
    assert frame["value"].tolist() == [1.5] and "wall_time_s" in frame and _warnings(capsys) == []


# ---- superseded/ and temporary files ---------------------------------------------------------------------------
def test_garbage_under_superseded_is_named(tmp_path, capsys):
    store = ResultStore(tmp_path, "exp")
    good = _cell(store, 0, SETTINGS)
    kept = store.superseded_folder / "paper" / f"{good.stem}.{rec.settings_hash(SETTINGS)}.csv"
    kept.parent.mkdir(parents=True)
    kept.write_bytes(good.read_bytes())
    (kept.parent / "m__x=1__seed=9.abc.csv").write_bytes(b"\x00\xff not a cell\n")
    (kept.parent / "notes.txt").write_text("hello\n")
    (store.superseded_folder / "stray.csv").write_text("a,b\n")
    problems = {p.name: why for p, why in store.superseded_problems()}
    assert set(problems) == {"m__x=1__seed=9.abc.csv", "notes.txt", "stray.csv"}  # the sound file is not named
    assert problems["notes.txt"].startswith("not a superseded cell file") and problems["stray.csv"].startswith("not in")
    store.load()
    assert len(_warnings(capsys)) == 3
    assert len(superseded_rows(store)) == 2  # the sound file's rows only


def test_leftover_temporary_files_are_named_and_run_removes_only_those(tmp_path, capsys):
    store = ResultStore(tmp_path, "exp")
    path = _cell(store)
    folder = path.parent
    killed = folder / f".{path.name}.k2j3h4l5.tmp"      # an atomic write's name, untouched for longer than the limit
    in_flight = folder / f".{path.name}.a1b2c3d4.tmp"   # the same, just written to
    other = folder / ".notes.tmp"                          # not an atomic write's name
    for tmp in (killed, in_flight, other):
        tmp.write_text("half a fi")
    then = time.time() - LEFTOVER_AGE_S - 5
    os.utime(killed, (then, then))
    os.utime(other, (then, then))
    assert store.leftover_temp_files() == [killed]
    assert is_leftover(killed) and not is_leftover(in_flight) and not is_leftover(other)
    assert not is_leftover(killed, now=then + LEFTOVER_AGE_S - 1)  # just under the limit: a write may be in flight
    store.load()  # reading names it
    line, = _warnings(capsys)
    assert line.startswith(f"warning: leftover temporary file {killed} (")
    assert store.remove_leftovers() == [killed]
    assert not killed.exists() and in_flight.exists() and other.exists()
    killed.write_text("x")
    os.unlink(killed)
    assert not is_leftover(killed)  # gone meanwhile: nothing to name


# ---- the executed-code record ----------------------------------------------------------------------------------
OUTSIDE = "def f(:\n"  # a file outside the package that would not even parse: opening it would crash


@pytest.mark.parametrize("code, problem", [
    (["fyexp/spec/specs.py:deep_merge"], "'code' is a JSON list, not of the run record schema"),
    ({"fyexp/reference/claims.yaml:f": None}, "does not name a function of a Python file of the fyexp package"),
    ({"/etc/passwd:root": None}, "does not name a function"),
    ({"OUTSIDE:f": "0123456789ab"}, "does not name a function"),
    ({"fyexp/../tests/toy_broken.py:f": None}, "does not name a function"),
    ({"fyexp/spec/specs.py:deep_merge": 12}, "is not a function hash"),
    ({"fyexp/spec/specs.py:deep_merge": "nothex"}, "is not a function hash"),
])
def test_a_damaged_code_record_is_refused_and_nothing_outside_the_package_is_opened(tmp_path, capsys, monkeypatch,
                                                                                   code, problem):
    outside = tmp_path / "outside.py"
    outside.write_text(OUTSIDE)
    store = ResultStore(tmp_path / "results", "exp")
    path = _cell(store)
    code = json.loads(json.dumps(code).replace("OUTSIDE", str(outside)))
    record = _write(path, SETTINGS, code)
    opened = []
    real = executed._module_hashes
    monkeypatch.setattr(executed, "_module_hashes", lambda p, m: opened.append(p) or real(p, m))
    found = rec.load_record(path, rec.settings_hash(SETTINGS))
    assert found.code is None and problem in found.problem
    frame = store.load()
    states = _states(frame, store.folder)
    assert (states == UNKNOWN_PROVENANCE).all() and opened == []
    line, = _warnings(capsys)
    assert line.startswith(f"warning: damaged run record {record} (") and "unknown provenance" in line


def test_a_sound_code_record_is_read_and_judged(tmp_path, capsys):
    store = ResultStore(tmp_path, "exp")
    path = _cell(store)
    _write(path, SETTINGS, executed.function_hashes({"fyexp/spec/specs.py:deep_merge"}))
    assert rec.load_record(path, rec.settings_hash(SETTINGS)).problem is None
    assert (_states(store.load(), store.folder) == "fresh").all()
    _write(path, SETTINGS, None)  # not recorded: not damage, the file rule judges the row (commit unknown)
    assert rec.load_record(path, rec.settings_hash(SETTINGS)).code is None
    assert (_states(store.load(), store.folder) == "unknown").all() and _warnings(capsys) == []


# ---- the settings in the record ----------------------------------------------------------------------------------
def _edit(settings: dict, **changes) -> dict:
    return {**settings, **changes}


@pytest.mark.parametrize("edit, problem", [
    (lambda p, s: rec.record_path(p).unlink(), "the rows of m__x=1__seed=0.csv name settings"),
    (lambda p, s: rec.record_path(p).write_text("{garbage"), "not JSON"),
    (lambda p, s: _write(p, [1, 2]), "'settings' is a JSON list, not of the run record schema"),
    (lambda p, s: _write(p, {k: v for k, v in s.items() if k != "config"}), "missing key(s) config"),
    (lambda p, s: _write(p, _edit(s, seed="0")), "settings: 'seed' is a JSON str, not of the settings schema"),
    (lambda p, s: _write(p, _edit(s, config={"lr": 0.2})), "its settings hash "),
])
def test_a_missing_damaged_or_other_settings_record_is_unknown_provenance(tmp_path, capsys, edit, problem):
    store = ResultStore(tmp_path, "exp")
    path = _cell(store, 0, SETTINGS)
    record = rec.record_path(path)
    edit(path, SETTINGS)
    found = rec.load_record(path, rec.settings_hash(SETTINGS))
    assert found.settings is None and problem in found.problem
    frame = store.load()
    assert (_states(frame, store.folder, code=False) == UNKNOWN_PROVENANCE).all()
    line, = _warnings(capsys)
    missing = "name settings" in problem
    assert str(record) in line and problem in line and "unknown provenance" in line
    assert line.startswith("warning: missing run record" if missing else "warning: damaged run record")
    frame["freshness"] = UNKNOWN_PROVENANCE
    assert evidence(frame).empty  # never a verdict's evidence


def test_a_sound_record_is_not_flagged_and_rows_naming_no_settings_are_unknown_provenance(tmp_path, capsys):
    store = ResultStore(tmp_path, "exp")
    _cell(store, 0, SETTINGS)
    frame = store.load()
    assert not (_states(frame, store.folder, code=False) == UNKNOWN_PROVENANCE).any() and _warnings(capsys) == []
    frame["freshness"] = ["fresh"] * len(frame)
    assert evidence(frame).equals(frame)
    store.write_cell("paper", Cell("m", 1, {"x": 1}), [{"metric": "a", "value": 3.0}], PROV)  # no hash, no record
    states = _states(store.load(), store.folder, code=False)
    assert states.tolist() == [None, None, UNKNOWN_PROVENANCE]
    line, = _warnings(capsys)
    assert line.startswith("warning: missing run record") and "name no settings hash" in line


def test_rows_of_one_cell_naming_different_settings_are_a_damaged_cell_file(tmp_path):
    store = ResultStore(tmp_path, "exp")
    path = _cell(store, 0, SETTINGS)
    frame = pd.read_csv(path)
    frame.loc[1, "settings_hash"] = "0123456789ab"
    frame.to_csv(path, index=False)
    assert [why for _, why in store.read_cells()[1]] == ["rows name different settings hashes"]


def test_run_redoes_a_cell_whose_records_are_damaged(tmp_path, capsys):
    """:meth:`ResultStore.is_finished` at the settings asked: a finished file whose records fail is not finished."""
    store = ResultStore(tmp_path, "exp")
    path = _cell(store, 0, SETTINGS)
    expected = Expected(settings=SETTINGS)
    cell = Cell("m", 0, {"x": 1})
    assert store.is_finished("paper", cell, expected)
    _write(path, SETTINGS, [])
    assert not store.is_finished("paper", cell, expected) and store.is_finished("paper", cell)
    rec.record_path(path).unlink()
    assert not store.is_finished("paper", cell, expected)
    assert len(_warnings(capsys)) == 2
