"""Behaviour fingerprints (:mod:`fyexp.fingerprints`): every experiment's tiny slice recomputes to the committed
values, every experiment has a slice, and the comparison flags a change in the 6th significant digit."""

from __future__ import annotations

import pytest

from fyexp import fingerprints
from fyexp.specs import experiments_dir

REFERENCE = fingerprints.load_reference()


def test_every_experiment_has_a_slice_and_a_committed_fingerprint():
    names = {p.stem for p in experiments_dir().glob("*.yaml")}
    assert names == set(fingerprints.SLICES)
    assert set(REFERENCE) == names
    assert all(REFERENCE[n] for n in names), "an empty fingerprint checks nothing"


@pytest.mark.parametrize("name", sorted(fingerprints.SLICES))
def test_fingerprint_matches_the_committed_one(name):
    lines = fingerprints.differences(name, REFERENCE.get(name, {}), fingerprints.compute(name))
    if lines:
        pytest.fail(f"behaviour changed ({len(lines)} metrics; if intended, run `python -m fyexp.fingerprints "
                    f"--update {name}` and say why in the commit): " + "; ".join(lines[:3]), pytrace=False)


def test_round_and_compare():
    assert fingerprints.round_sig(-647.24321987) == -647.243
    assert fingerprints.round_sig(1.23456789e-9) == 1.23457e-9
    same = {"m/a": 1.23456, "m/b": 0.0}
    assert fingerprints.differences("x", same, dict(same)) == []
    assert fingerprints.differences("x", same, {"m/a": 1.23457, "m/b": 0.0}) == [
        "x m/a: committed 1.23456, now 1.23457"]
    assert fingerprints.differences("x", same, {"m/a": 1.23456}) == ["x m/b: committed 0.0, now None"]


def _git(root, *args):
    import subprocess

    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout.strip()


def _commit(root, content: dict) -> str:
    import json

    path = root / "fyexp" / "reference" / "fingerprints.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(content))
    _git(root, "add", "-A")
    _git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "step")
    return _git(root, "rev-parse", "HEAD")


def test_stale_rows_whose_fingerprint_held_are_behaviour_unchanged(tmp_path):
    """Commits: old (no fingerprints), a (x, y), b (x same, y moved) = HEAD.  Rows stale by code: at a, x's
    fingerprint equals HEAD's (behaviour unchanged), y's does not (stale); rows at old, at a+dirty, and fresh rows
    keep their state."""
    import pandas as pd

    from fyexp.freshness import BEHAVIOUR_UNCHANGED, fingerprint_states

    _git(tmp_path, "init", "-q")
    (tmp_path / "code.py").write_text("0")
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "old")
    old = _git(tmp_path, "rev-parse", "HEAD")
    a = _commit(tmp_path, {"x": {"m/v": 1.0}, "y": {"m/v": 2.0}})
    _commit(tmp_path, {"x": {"m/v": 1.0}, "y": {"m/v": 2.5}})
    frame = pd.DataFrame({"git_commit": [a, old, a + "+dirty", a]})
    freshness = pd.Series(["stale", "stale", "stale", "fresh"])
    x = fingerprint_states("x", frame, freshness, root=tmp_path)
    assert list(x) == [BEHAVIOUR_UNCHANGED, "stale", "stale", "fresh"]
    assert list(fingerprint_states("y", frame, freshness, root=tmp_path)) == ["stale", "stale", "stale", "fresh"]
