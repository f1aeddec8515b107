"""The freshness rule's branches one by one (fyexp/store/provenance/freshness.py), each with the reason a user reads in
the
report: found missing by mutating the module (docs/contributing/mutation.md)."""

from __future__ import annotations

import dataclasses
import functools
from pathlib import Path

import pandas as pd
import pytest

from fyexp.store.provenance import freshness as fr
from fyexp.store.provenance.record import RunRecord

RECORDED = {"config": {"train": {"lr": 0.003, "epochs": 5}, "k": 7}, "method": "m", "seed": 4}


def _record(settings: dict | None = RECORDED, **fields) -> RunRecord:
    return RunRecord(Path("c.csv"), "abc" if settings is not None else None, "0123abcd", settings, **fields)


@pytest.mark.parametrize("record, expected, answer", [
    (_record(), None, (None, "settings not compared")),
    (_record(), fr.Expected(settings=RECORDED, gone="its profile quick is gone"), (True, "its profile quick is gone")),
    (_record(), fr.Expected(), (None, "the settings asked now cannot be told")),
    (_record(), fr.Expected(settings={"config": RECORDED["config"]}), (False, "same settings")),
    (_record(), fr.Expected(settings={**RECORDED, "seed": 5, "method": "n"}),
     (True, "settings changed: method, seed")),
    (_record(), fr.Expected(settings={**RECORDED, "seed": 5}, tuned={"seed": 4}),
     (False, "same settings as `run --best` (its profile's tuning study)")),
    (_record(), fr.Expected(settings={**RECORDED, "seed": 5, "method": "n"}, tuned={"seed": 6, "method": "o"}),
     (True, "settings changed: method, seed (and from `run --best`'s: method, seed)")),
    (RunRecord(Path("c.csv"), "abc", "0123abcd"), fr.Expected(settings=RECORDED),   # a hash, its record unread
     (None, "its settings record was not compared")),
    (_record(None), fr.Expected(settings=RECORDED), (None, "its settings record was not compared")),
], ids=["not compared", "gone", "cannot tell", "same", "changed", "as run --best", "changed from both", "unread",
        "no hash"])
def test_each_settings_state_and_its_reason(record, expected, answer):
    assert fr.settings_state(record, expected) == answer


def test_settings_differences_name_the_first_differing_path_in_a_mapping():
    now = {"config": {"train": {"lr": 0.004, "epochs": 5}, "k": 7}, "method": "m", "seed": 4}
    assert fr.settings_differences(RECORDED, now) == ["config.train.lr"]
    # a key on one side only is a difference, and named
    assert fr.settings_differences({"config": {"a": 1}}, {"config": {"a": 1, "b": None}}) == ["config.b"]
    # a mapping against a value is a difference at that key, not below it
    assert fr.settings_differences({"config": 3}, {"config": {"a": 1}}) == ["config"]
    assert fr.settings_differences({"config": {"a": 1}}, {"config": None}) == ["config"]
    assert fr.settings_differences(RECORDED, {"data": None}) == ["data"]                  # not recorded at all


def test_judge_keeps_the_code_axis_reason_and_the_settings_answer():
    fresh = fr.judge(_record(), fr.Expected(settings=RECORDED), (fr.FRESH, "every executed function is as at HEAD"))
    assert (fresh.kind, fresh.reason, fresh.code, fresh.old_settings) == (
        fr.CURRENT, "every executed function is as at HEAD", fr.FRESH, False)
    stale = fr.judge(_record(), None, (fr.STALE, "2 executed function(s) differ at HEAD (f)", "its fingerprint moved"))
    assert (stale.kind, stale.old_settings, stale.stale_because) == (fr.STALE, None, "its fingerprint moved")
    damaged = fr.judge(_record(problem="missing key(s) code"), fr.Expected(settings=RECORDED))
    assert (damaged.kind, damaged.reason, damaged.code, damaged.old_settings) == (
        fr.UNKNOWN_PROVENANCE, "missing key(s) code", fr.UNKNOWN_PROVENANCE, None)
    assert not damaged.finished


def test_the_columns_keep_the_frames_index_as_objects_and_evidence_drops_only_unknown_provenance():
    judged = pd.Series([fr.Freshness(fr.CURRENT, "x", fr.FRESH, False), fr.Freshness(fr.OLD_SETTINGS, "y", None, True)],
                       index=[7, 3], dtype=object)
    code, settings = fr.code_column(judged), fr.settings_column(judged)
    assert list(code.index) == [7, 3] and list(code) == [fr.FRESH, None] and code.dtype == object
    assert list(settings.index) == [7, 3] and list(settings) == [False, True] and settings.dtype == object
    rows = pd.DataFrame({"value": [1.0, 2.0, 3.0]})
    assert fr.evidence(rows) is rows                                     # no freshness column: all are evidence
    marked = rows.assign(freshness=[fr.STALE, fr.UNKNOWN_PROVENANCE, fr.FRESH])
    assert list(fr.evidence(marked)["value"]) == [1.0, 3.0]
    assert fr.evidence(marked.iloc[:0]).empty


def test_frame_freshness_asks_each_cell_once_with_its_row_and_keeps_the_frames_index(tmp_path):
    empty = pd.DataFrame({"profile": [], "cell": []}, index=pd.Index([], dtype="int64"))
    none = fr.frame_freshness(empty, tmp_path, code=False)
    assert none.empty and none.dtype == object and none.index.equals(empty.index)

    frame = pd.DataFrame({"profile": ["quick", "quick", "quick~superseded-abc", "quick"], "cell": ["a", "a", "b", "c"],
                          "git_commit": ["0123abcd", "0123abcd", float("nan"), "0123abcd"],
                          "settings_hash": [None, None, None, "abc"], "code_hash": ["h1", "h1", None, None],
                          "method": ["m", "m", "n", "m"], "seed": [0, 0, 1, 2],
                          "params": ['{"x": 1}', '{"x": 1}', '{"x": 2}', "{}"]}, index=[10, 11, 12, 13])
    asked = []

    def expectation(record, row):
        asked.append((record.git_commit, row))
        return fr.Expected(gone=None if row["cell"] == "a" else "its profile is gone")

    judged = fr.frame_freshness(frame, None, expectation=expectation, code=False)
    assert list(judged.index) == [10, 11, 12, 13] and judged.dtype == object
    assert [f.kind for f in judged] == [fr.CURRENT, fr.CURRENT, fr.CURRENT, fr.CURRENT]
    # no folder holds the records: their settings are not compared, whatever is expected
    assert judged.iloc[2].old_settings is None and judged.iloc[0].old_settings is None
    assert judged.iloc[3].reason == "its settings record was not compared" and judged.iloc[3].old_settings is None
    assert asked == [  # once a cell; a NaN commit is none
        ("0123abcd", {"profile": "quick", "cell": "a", "method": "m", "seed": 0, "params": '{"x": 1}',
                      "superseded": False}),
        (None, {"profile": "quick~superseded-abc", "cell": "b", "method": "n", "seed": 1, "params": '{"x": 2}',
                "superseded": True}),
        ("0123abcd", {"profile": "quick", "cell": "c", "method": "m", "seed": 2, "params": "{}", "superseded": False})]


def test_frame_freshness_judges_the_code_of_each_row_by_its_record_and_name(tmp_path, monkeypatch):
    import fyexp.store.provenance.executed as executed
    import fyexp.store.provenance.source as source

    seen = []

    def fingerprint_difference(name, commit, recorded=None):
        seen.append(("fingerprint", name, commit))
        return None if name == "held" else "its fingerprint moved"

    monkeypatch.setattr(executed, "changed_functions", lambda code, tree, files: ["fyexp/a.py:f"])
    monkeypatch.setattr(source, "fingerprint_difference", fingerprint_difference)
    frame = pd.DataFrame({"profile": ["quick"] * 4, "cell": ["a", "a", "d", "e"],
                          "git_commit": ["c1", "c1", "c2", float("nan")]})
    ran = RunRecord(Path("c.csv"), None, None, code={"fyexp/a.py:f": "0123456789ab"})
    monkeypatch.setattr(fr, "RunRecord", lambda path, hash_, commit: dataclasses.replace(ran, git_commit=commit))
    held = fr.frame_freshness(frame, None, "held", head=tmp_path)
    assert [f.kind for f in held] == [fr.BEHAVIOUR_UNCHANGED] * 4
    assert held.iloc[0].reason == ("1 executed function(s) differ at HEAD (fyexp/a.py:f), but the fingerprint of "
                                   "held is as at its commit")
    # the fingerprint once per commit over the frame; a missing commit is none
    assert seen == [("fingerprint", "held", "c1"), ("fingerprint", "held", "c2"), ("fingerprint", "held", "")]
    moved = fr.frame_freshness(frame.iloc[:1], None, "moved", head=tmp_path).iloc[0]
    assert (moved.kind, moved.stale_because) == (fr.STALE, "its fingerprint moved")
    assert moved.reason == "1 executed function(s) differ at HEAD (fyexp/a.py:f); its fingerprint moved"
    unnamed = fr.frame_freshness(frame.iloc[:1], None, head=tmp_path).iloc[0]
    assert (unnamed.kind, unnamed.reason) == (fr.STALE, "1 executed function(s) differ at HEAD (fyexp/a.py:f)")


def test_code_state_says_why_by_executed_functions_or_that_none_were_recorded(tmp_path, monkeypatch):
    import fyexp.store.provenance.executed as executed

    monkeypatch.setattr(executed, "changed_functions", lambda code, tree, files: sorted(code.get("changed", [])))
    ran = _record(code={"changed": []})
    assert fr.code_state(ran, None, head=tmp_path) == (fr.FRESH, "every executed function is as at HEAD")
    moved = _record(code={"changed": ["fyexp/a.py:f", "fyexp/b.py:g"]})
    assert fr.code_state(moved, None, head=tmp_path) == (
        fr.STALE, "2 executed function(s) differ at HEAD (fyexp/a.py:f)")
    assert fr.code_state(_record(), "named", head=tmp_path) == (fr.UNKNOWN, "its cell recorded no executed code")


def test_frame_freshness_compares_executed_code_in_heads_tree_and_leaves_a_superseded_files_settings_unread(
        tmp_path, monkeypatch):
    import fyexp.store.provenance.executed as executed
    import fyexp.store.provenance.source as source
    from fyexp.store.provenance.record import settings_hash, write_record
    from fyexp.store.results import Cell, ResultStore

    settings = {"experiment": "toy", "profile": "quick", "overrides": {}, "config": {"k": 7}, "method": "m",
                "params": {}, "seed": 0, "data": None, "environment": {"device_kind": "cpu"}}
    store, cell = ResultStore(tmp_path, "toy"), Cell("m", 0, {})
    profiles = ["quick", f"quick{fr.SUPERSEDED_MARK}abc"]
    for profile in profiles:
        store.write_cell(profile, cell, [{"metric": "a", "value": 1.0}],
                         {"git_commit": source.git_commit(), "settings_hash": settings_hash(settings)})
        write_record(store.cell_path(profile, cell), settings, {"fyexp/x.py:f": "0123456789ab"})
    frame = pd.DataFrame({"profile": profiles, "cell": [cell.key] * 2, "git_commit": [source.git_commit()] * 2,
                          "settings_hash": [settings_hash(settings)] * 2})
    trees, head_tree = [], source.head_tree
    monkeypatch.setattr(executed, "changed_functions", lambda code, tree, files: trees.append(tree) or [])
    monkeypatch.setattr(source, "head_tree", lambda root: tmp_path / "head" if root == executed.ROOT else None)
    monkeypatch.setattr(source, "in_git_checkout", lambda root: True)
    now = fr.Expected(settings={"config": {"k": 8}})
    judged = fr.frame_freshness(frame, store.folder, expectation=lambda record, row: now)
    assert trees == [tmp_path / "head"] * 2                      # HEAD's tree, not the working tree
    assert [f.kind for f in judged] == [fr.OLD_SETTINGS, fr.CURRENT]
    # the superseded file's record is not beside a current cell: its settings are not compared
    assert (judged.iloc[1].reason, judged.iloc[1].old_settings) == ("every executed function is as at HEAD", None)
    monkeypatch.setattr(source, "head_tree", functools.cache(head_tree.__wrapped__))   # the real one, a fresh cache
    monkeypatch.setattr(source, "in_git_checkout", lambda root: False)   # outside git: the working tree
    fr.frame_freshness(frame.iloc[:1], store.folder)
    assert trees[-1] == executed.ROOT
