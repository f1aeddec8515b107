"""scripts/compare_results.py: a refactor's proof must see every moved number, key and array."""

from __future__ import annotations

import importlib.util
import shutil
import sys

import numpy as np
import pandas as pd
import pytest

from tests.conftest import ROOT

spec = importlib.util.spec_from_file_location("compare_results", ROOT / "scripts" / "compare_results.py")
compare_results = importlib.util.module_from_spec(spec)
sys.modules["compare_results"] = compare_results   # dataclasses look their module up
spec.loader.exec_module(compare_results)

ROWS = [
    {"experiment": "e", "cell": "a__seed=0", "metric": "elbo", "value": "-1.5", "tolerance": "", "settings_hash": "h1",
     "paper_row": "VAE", "git_commit": "c1", "wall_time_s": "3.0"},
    {"experiment": "e", "cell": "a__seed=0", "metric": "epoch_time_s", "value": "0.2", "tolerance": "",
     "settings_hash": "h1", "paper_row": "", "git_commit": "c1", "wall_time_s": "3.0"},
    {"experiment": "e", "cell": "b__seed=0", "metric": "elbo", "value": "nan", "tolerance": "0.1",
     "settings_hash": "h2", "paper_row": "", "git_commit": "c1", "wall_time_s": "3.0"},
]


def _folder(root, rows, arrays):
    (root / "e" / "artifacts").mkdir(parents=True)
    pd.DataFrame(rows).to_csv(root / "e" / "results.csv", index=False)
    np.savez(root / "e" / "artifacts" / "a.npz", **arrays)
    return root


@pytest.fixture
def before(tmp_path):
    return _folder(tmp_path / "before", ROWS, {"x": np.array([1.0, np.nan])})


def _after(tmp_path, change=None, arrays=None):
    rows = [dict(r) for r in ROWS]
    for r in rows:       # the run's own columns and timings may differ
        r["git_commit"], r["wall_time_s"] = "c2", "9.0"
    rows[1]["value"] = "0.9"
    if change:
        change(rows)
    return _folder(tmp_path / "after", rows, arrays or {"x": np.array([1.0, np.nan])})


def test_the_same_numbers_at_another_commit_are_identical(before, tmp_path):
    after = _after(tmp_path, lambda rows: rows[0].update(value="-1.50"))    # same float, other text
    assert compare_results.compare(before, after, "e").identical
    assert compare_results.main([str(before), str(after)]) == 0


@pytest.mark.parametrize("change, kind", [
    (lambda rows: rows[0].update(value="-1.5000001"), "numbers"),
    (lambda rows: rows[2].update(value="0.0"), "numbers"),                  # NaN → a number
    (lambda rows: rows[2].update(tolerance="0.2"), "numbers"),
    (lambda rows: rows[0].update(settings_hash="h9"), "unmatched"),         # other settings: not the same row
    (lambda rows: rows[0].update(paper_row="IWAE"), "unmatched"),
    (lambda rows: rows.pop(2), "unmatched"),
])
def test_every_moved_number_or_key_is_reported(before, tmp_path, change, kind):
    result = compare_results.compare(before, _after(tmp_path, change), "e")
    assert not result.identical and getattr(result, kind)
    assert compare_results.main([str(before), str(tmp_path / "after"), "e"]) == 1


def test_artifacts_are_compared_array_by_array(before, tmp_path):
    after = _after(tmp_path, arrays={"x": np.array([1.0, 2.0])})
    assert compare_results.compare(before, after, "e").artifacts == ["arrays differ: a.npz"]
    shutil.rmtree(after / "e" / "artifacts")
    (after / "e" / "artifacts").mkdir()
    assert compare_results.compare(before, after, "e").artifacts == ["missing after: a.npz"]


def test_a_column_only_one_side_records_is_named_not_matched(before, tmp_path):
    """Rows written before cells kept a settings hash are compared on the columns both sides have; the column is
    named in the summary.  A column both sides have still decides the match."""
    def drop_hash(rows):
        for r in rows:
            del r["settings_hash"]
    after = _after(tmp_path, drop_hash)
    result = compare_results.compare(before, after, "e")
    assert result.identical and result.one_sided == ["settings_hash"]
    assert "not compared (one side only): settings_hash" in result.summary()
    shutil.rmtree(after)
    result = compare_results.compare(before, _after(tmp_path, lambda rows: (drop_hash(rows),
                                                                            rows[0].update(paper_row="IWAE"))), "e")
    assert result.unmatched


def test_a_column_empty_on_one_side_is_one_sided_too(before, tmp_path):
    """A results.csv whose other profiles kept settings hashes has the column, empty in the older cells' rows: a
    refresh of those cells is compared without it (it matched nothing: 840 rows of vr-bnn paper came out
    'unmatched' with every number equal).  Empty in only some rows of a side, it still decides the match."""
    def empty_hash(rows):
        for r in rows:
            r["settings_hash"] = ""
    result = compare_results.compare(before, _after(tmp_path, empty_hash), "e")
    assert result.identical and result.one_sided == ["settings_hash"]
    shutil.rmtree(tmp_path / "after")
    result = compare_results.compare(before, _after(tmp_path, lambda rows: rows[0].update(settings_hash="")), "e")
    assert not result.identical and result.unmatched and result.one_sided == []


def test_profile_restricts_rows_and_artifacts(tmp_path):
    rows = [dict(r, profile="paper") for r in ROWS] + [dict(ROWS[0], profile="cpu", cell="c__seed=0")]
    before = _folder(tmp_path / "before", rows, {"x": np.array([1.0])})
    moved = [dict(r) for r in rows]
    moved[-1]["value"] = "7.0"                      # only the cpu row moves
    after = _folder(tmp_path / "after", moved, {"x": np.array([1.0])})
    assert compare_results.compare(before, after, "e", ["paper"]).identical
    assert compare_results.compare(before, after, "e", ["cpu"]).numbers
    assert compare_results.main([str(before), str(after), "e", "--profile", "paper"]) == 0
    assert compare_results.main([str(before), str(after), "e"]) == 1
