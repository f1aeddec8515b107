"""The report's reading of Optuna study files (fyexp.report.runs): trials counted by state through Optuna's public
API, the file opened read-only, a damaged or foreign file named with its reason and left as it was."""

from __future__ import annotations

import hashlib
import sqlite3

import pytest

optuna = pytest.importorskip("optuna")

from fyexp.report.runs import damaged_studies, studies  # noqa: E402


def _study(path, name, outcomes):
    study = optuna.create_study(study_name=name, storage=f"sqlite:///{path}")
    for outcome in outcomes:
        trial = study.ask()
        if outcome == "complete":
            study.tell(trial, 1.0)
        else:
            study.tell(trial, state=optuna.trial.TrialState[outcome.upper()])
    return study


def _sha(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_trials_are_counted_by_state_per_study_as_the_tables_hold_them(tmp_path):
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    plain = tmp_path / "plain" / "study.db"
    plain.parent.mkdir()
    _study(plain, "zeta", ["complete", "fail", "complete", "pruned"])
    _study(plain, "alpha", [])
    optuna.create_study(study_name="beta", storage=f"sqlite:///{plain}").ask()   # left RUNNING
    db = plain.parent.rename(tmp_path / "a folder #1 ?x%") / "study.db"   # characters a SQLite URI misreads unquoted
    before = _sha(db)
    found = studies(db.parent)
    assert [(s.name, s.states) for s in found] == [("alpha", ()), ("beta", (("RUNNING", 1),)),
                                                   ("zeta", (("COMPLETE", 2), ("FAIL", 1), ("PRUNED", 1)))]
    assert found[2].describe() == "`zeta`: 4 trials (2 complete, 1 fail, 1 pruned)"
    with sqlite3.connect(db) as conn:   # the tables themselves, as the report once read them
        rows = conn.execute("SELECT s.study_name, t.state, COUNT(*) FROM studies s JOIN trials t "
                            "ON t.study_id = s.study_id GROUP BY s.study_name, t.state").fetchall()
    assert sorted(rows) == sorted((s.name, state, n) for s in found for state, n in s.states)
    assert _sha(db) == before and damaged_studies(db.parent) == []


def test_a_damaged_or_foreign_file_is_named_and_left_untouched(tmp_path):
    (tmp_path / "garbage.db").write_bytes(b"this is not SQLite" * 100)
    (tmp_path / "empty.db").write_bytes(b"")
    with sqlite3.connect(tmp_path / "other.db") as conn:
        conn.execute("CREATE TABLE x (a)")
    before = {p.name: _sha(p) for p in tmp_path.iterdir()}
    damaged = dict((p.name, why) for p, why in damaged_studies(tmp_path))
    assert damaged == {"empty.db": "empty (0 bytes)",               # told before SQLite opens it (as run --best)
                       "garbage.db": "not an SQLite database",
                       "other.db": "not a readable Optuna study (no such table: version_info)"}
    assert studies(tmp_path) == []
    assert {p.name: _sha(p) for p in tmp_path.iterdir()} == before   # no table created, nothing written


def test_a_study_file_is_opened_again_only_when_it_changed(tmp_path, monkeypatch):
    """The trial counts are kept across processes (fyexp.store.user_cache) under the file's stat signature: an unchanged
    file is not opened through Optuna again, a changed one is."""
    import fyexp.report.runs as runs

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    monkeypatch.setenv("FYEXP_CACHE_DIR", str(tmp_path / "cache"))
    db = tmp_path / "exp" / "study.db"
    db.parent.mkdir()
    _study(db, "s", ["complete"])
    assert [s.states for s in studies(db.parent)] == [(("COMPLETE", 1),)]
    monkeypatch.setattr(runs, "_STATES", {})                      # a new process
    monkeypatch.setattr(runs, "_read_study_states", lambda path: pytest.fail("opened an unchanged study file"))
    assert [s.states for s in studies(db.parent)] == [(("COMPLETE", 1),)]
    monkeypatch.undo()
    monkeypatch.setenv("FYEXP_CACHE_DIR", str(tmp_path / "cache"))
    _study(db, "t", ["fail"])                                       # the file changes: read again
    monkeypatch.setattr(runs, "_STATES", {})
    assert [(s.name, s.states) for s in studies(db.parent)] == [("s", (("COMPLETE", 1),)), ("t", (("FAIL", 1),))]
