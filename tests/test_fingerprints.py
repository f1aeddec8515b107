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
    assert fingerprints.differences("x", same, {"m/a": 1.23457, "m/b": 0.0}) == ["x m/a: committed 1.23456, now 1.23457"]
    assert fingerprints.differences("x", same, {"m/a": 1.23456}) == ["x m/b: committed 0.0, now None"]
