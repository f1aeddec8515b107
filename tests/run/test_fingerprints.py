"""Behaviour fingerprints (:mod:`fyexp.run.fingerprints`): every experiment's tiny slice recomputes to the committed
values, every experiment has a slice, and the comparison flags a change in the 6th significant digit."""

from __future__ import annotations

import json
import subprocess

import pytest

from fyexp.run import fingerprints
from fyexp.spec.specs import experiments_dir

REFERENCE = fingerprints.load_reference()


def test_every_experiment_has_a_slice_and_a_committed_fingerprint():
    names = {p.stem for p in experiments_dir().glob("*.yaml")}
    assert names == set(fingerprints.SLICES)
    assert set(REFERENCE) == names
    assert all(REFERENCE[n] for n in names), "an empty fingerprint checks nothing"


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(fingerprints.SLICES))
def test_fingerprint_matches_the_committed_one(name):
    lines = fingerprints.differences(name, REFERENCE.get(name, {}), fingerprints.compute(name))
    if lines:
        pytest.fail(f"behaviour changed ({len(lines)} metrics; if intended, run `python -m fyexp.run.fingerprints "
                    f"--update {name}` and say why in the commit): " + "; ".join(lines[:3]), pytrace=False)


def test_round_and_compare():
    assert fingerprints.round_sig(-647.24321987) == -647.243
    assert fingerprints.round_sig(1.23456789e-9) == 1.23457e-9
    same = {"m/a": 1.23456, "m/b": 0.0}
    assert fingerprints.differences("x", same, dict(same)) == []
    assert fingerprints.differences("x", same, {"m/a": 1.23457, "m/b": 0.0}) == [
        "x m/a: committed 1.23456, now 1.23457"]
    assert fingerprints.differences("x", same, {"m/a": 1.23456}) == ["x m/b: committed 0.0, now None"]


# a change of the numerics an experiment with a machine tolerance must still show: its learning rate times 1.5
NUMERIC_CHANGE = {"frac-vae": ("train.optimizer.lr=1.5e-3",), "vr-vae": ("train_freyface.optimizer.lr=7.5e-4",)}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(fingerprints.MACHINE_TOLERANCE))
def test_a_machine_tolerance_still_sees_a_change_of_the_numerics(name):
    """The looser comparison of a CPU-sensitive slice (:data:`fingerprints.MACHINE_TOLERANCE`) is not blind: a
    learning rate 1.5 times the profile's moves several of its metrics beyond it."""
    assert set(NUMERIC_CHANGE) == set(fingerprints.MACHINE_TOLERANCE)
    moved = fingerprints.differences(name, fingerprints.compute(name),
                                     fingerprints.compute(name, NUMERIC_CHANGE[name]))
    assert len(moved) >= 2, moved


def test_the_tolerance_is_the_experiments_own():
    rounding = 0.5 * 10.0 ** (1 - fingerprints.SIG_DIGITS)
    assert fingerprints.tolerance("gmm-clustering") == rounding
    assert fingerprints.tolerance("vr-vae (settings move 0)") == fingerprints.MACHINE_TOLERANCE["vr-vae"] > rounding
    loose = fingerprints.MACHINE_TOLERANCE["frac-vae"]
    assert fingerprints.differences("frac-vae", {"m": 100.0}, {"m": 100.0 * (1 + 0.9 * loose)}) == []
    assert fingerprints.differences("frac-vae", {"m": 100.0}, {"m": 100.0 * (1 + 1.1 * loose)}) != []
    assert fingerprints.differences("gmm-clustering", {"m": 100.0}, {"m": 100.0 * (1 + 2 * rounding)}) != []


def _git(root, *args):
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout.strip()


def _commit(root, content: dict | None = None, moves: dict | None = None) -> str:
    """Commit ``content`` as fingerprints.json and ``moves`` as fingerprint-moves.json (each where given); the
    commit's hash."""
    folder = root / "fyexp" / "reference"
    folder.mkdir(parents=True, exist_ok=True)
    for name, value in (("fingerprints.json", content), ("fingerprint-moves.json", moves)):
        if value is not None:
            (folder / name).write_text(json.dumps(value))
    _git(root, "add", "-A")
    _git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "--allow-empty", "-qm", "step")
    return _git(root, "rev-parse", "HEAD")


@pytest.mark.slow
def test_the_fingerprint_a_row_was_made_under_is_compared_with_the_one_committed_at_head(tmp_path):
    """Commits: old (no fingerprints), a (x, y), b (x same, y moved) = HEAD.  A row made at a stores a's
    fingerprints: x's equals HEAD's (a row stale by code is then behaviour unchanged,
    :func:`fyexp.store.provenance.freshness.code_state`), y's does not; no stored fingerprint, a dirty tree and an
    unknown commit never count."""
    from fyexp.store.provenance.source import fingerprint_difference, head_tree

    def fingerprint_unchanged(*args) -> bool:
        return fingerprint_difference(*args) is None

    _git(tmp_path, "init", "-q")
    old = _commit(tmp_path)
    a = _commit(tmp_path, {"x": {"m/v": 1.0}, "y": {"m/v": 2.0}})
    _commit(tmp_path, {"x": {"m/v": 1.0}, "y": {"m/v": 2.5}})
    head_tree.cache_clear()
    x, y = {"m/v": 1.0}, {"m/v": 2.0}   # what a row made at a stores
    assert fingerprint_unchanged("x", a, tmp_path, x) and not fingerprint_unchanged("y", a, tmp_path, y)
    assert not fingerprint_unchanged("x", old, tmp_path)  # none stored
    assert not any(fingerprint_unchanged("x", c, tmp_path, x) for c in (a + "+dirty", "unknown", ""))
    assert not fingerprint_unchanged("z", a, tmp_path, x)  # HEAD keeps no fingerprint of that experiment
    # each "not unchanged" says why, one phrase: what the report lists beside a stale row
    assert fingerprint_difference("x", a, tmp_path, x) is None
    assert fingerprint_difference("y", a, tmp_path, y) == f"the fingerprint of y changed since {a[:7]}"
    assert fingerprint_difference("x", old, tmp_path) == f"no fingerprint of x was kept at {old[:7]}"
    assert fingerprint_difference("x", a + "+dirty", tmp_path, x) == "made from a tree with uncommitted changes"
    assert fingerprint_difference("x", "unknown", tmp_path, x) == fingerprint_difference("x", "", tmp_path, x) \
        == "its commit is unknown"
    assert fingerprint_difference("z", a, tmp_path, x) == "HEAD keeps no fingerprint of z"
    assert fingerprint_difference("y", a, tmp_path, recorded={"m/v": 2.5}) is None  # the stored one decides
    assert fingerprint_difference("y", a, tmp_path, recorded={}) == f"no fingerprint of y was kept at {a[:7]}"


@pytest.mark.parametrize("name", sorted(fingerprints.SETTINGS_MOVES))
def test_each_settings_move_recomputes_to_the_stored_one(name):
    """HEAD's code under the settings from before a declared settings-only change gives the stored fingerprint:
    what lets :func:`fyexp.store.provenance.source.fingerprint_difference` clear the rows made before it."""
    stored = fingerprints.load_reference(fingerprints.MOVES_REFERENCE).get(name, [])
    computed = fingerprints.compute_moves(name)
    assert [m["undo"] for m in stored] == [m["undo"] for m in computed]
    for old, new in zip(stored, computed):
        assert fingerprints.differences(name, old["fingerprint"], new["fingerprint"]) == []


def test_an_undo_that_does_not_undo_gives_another_fingerprint():
    """The vr-vae move is of settings alone: without its undo the slice differs (so the move is not empty) and
    with it the slice is the fingerprint committed before the change (stored as the move)."""
    move = fingerprints.load_reference(fingerprints.MOVES_REFERENCE)["vr-vae"][0]
    assert move["fingerprint"] != REFERENCE["vr-vae"]
    assert {k for k in REFERENCE["vr-vae"] if REFERENCE["vr-vae"][k] != move["fingerprint"][k]} == {
        "iwae_single/final_train_bound", "iwae_single/test_loglik"}   # the one MNIST cell of the slice


@pytest.mark.slow
def test_a_settings_move_at_head_clears_the_rows_made_before_it(tmp_path):
    """Commits: a (y = 2.0), then HEAD (y = 2.5) declaring a settings move whose fingerprint is 2.0: y's rows of a
    are behaviour unchanged.  A move of another value, of another experiment, or only at an older commit does not
    clear them."""
    from fyexp.store.provenance.source import fingerprint_difference, head_tree

    def difference(recorded: dict) -> str | None:
        head_tree.cache_clear()  # HEAD moved: its files are unpacked again
        return fingerprint_difference("y", a, tmp_path, recorded)

    _git(tmp_path, "init", "-q")
    a = _commit(tmp_path, {"x": {"m/v": 1.0}, "y": {"m/v": 2.0}})
    stored = {"m/v": 2.0}   # what a row made at a stores
    head = {"x": {"m/v": 1.0}, "y": {"m/v": 2.5}}
    moved = f"the fingerprint of y changed since {a[:7]}"
    _commit(tmp_path, head, {"y": [{"undo": ["k=0"], "fingerprint": {"m/v": 2.0}}]})
    assert difference(stored) is None
    assert difference({"m/v": 2.25}) == moved
    _commit(tmp_path, head, {"y": [{"undo": ["k=0"], "fingerprint": {"m/v": 2.1}}]})
    assert difference(stored) == moved
    _commit(tmp_path, head, {"x": [{"undo": ["k=0"], "fingerprint": {"m/v": 2.0}}]})
    assert difference(stored) == moved
    _commit(tmp_path, head, {})  # the move declared at an older commit only: HEAD's file decides
    assert difference(stored) == moved
    _commit(tmp_path, head, {"y": "damaged"})
    assert difference(stored) == moved
