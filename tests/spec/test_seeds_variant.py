"""Issue 49: ``--seeds`` is an override of the profile's settings like ``--set``: seeds other than the profile's make
a variant (``paper+seeds=5-6``) whose rows and verdicts never mix with the profile's; the profile's own seeds are the
profile."""

from __future__ import annotations

import json
import shutil

import pandas as pd
import pytest

from fyexp.cli.commands.options import Options, resolve_experiment
from fyexp.core.errors import FyexpError
from fyexp.spec.specs import seed_ranges, shown_override
from tests.conftest import REPO_RESULTS, TOY_SPECS, run_in_process


def _resolved(seeds: str | None, sets: tuple[str, ...] = (), profile: str = "quick"):
    return resolve_experiment("toy", Options(profile=profile, seeds=seeds, sets=sets, experiments_dir=TOY_SPECS))[1]


def test_seed_ranges_write_runs_of_consecutive_seeds_low_high():
    assert seed_ranges([3, 1, 2, 9, 7, 10]) == "1-3,7,9-10"
    assert seed_ranges([4]) == "4"
    assert seed_ranges([0, 2]) == "0,2"


def test_other_seeds_make_a_variant_and_the_profiles_own_seeds_the_profile():
    plain = _resolved(None)
    assert plain.profile == "quick" and not plain.overrides
    other = _resolved("5-7")
    assert other.profile == "quick+seeds=5-7" and other.base_profile == "quick" and other.seeds == (5, 6, 7)
    assert dict(other.overrides) == {"seeds": [5, 6, 7]}  # recorded in every cell's settings, as --set is
    same = _resolved(",".join(str(s) for s in reversed(plain.seeds)))  # the profile's seeds in another order
    assert same.profile == "quick" and same.seeds == plain.seeds and not same.overrides
    one_more = _resolved(",".join(str(s) for s in (*plain.seeds, max(plain.seeds) + 1)))
    assert one_more.profile.startswith("quick+seeds=")
    both = _resolved("8", ("lr=0.5",))
    assert both.profile == "quick+lr=0.5,seeds=8" and dict(both.overrides) == {"lr": 0.5, "seeds": [8]}


def test_seeds_given_twice_is_an_error():
    with pytest.raises(FyexpError, match="--seeds: give the seeds once"):
        _resolved("0-2", ("seeds=[1]",))
    assert _resolved(None, ("seeds=[1]",)).seeds == (1,)


@pytest.mark.slow
def test_run_with_other_seeds_leaves_the_paper_rows_and_verdicts_untouched(tmp_path):
    """The issue's case through the CLI (in this process: the variant is the point, not the script's start):
    `fyexp run gmm-clustering --seeds ...` writes a variant; the paper profile's rows and every verdict at `paper`
    are byte for byte what they were."""
    results = tmp_path / "results"
    shutil.copytree(REPO_RESULTS / "gmm-clustering", results / "gmm-clustering")
    before = run_in_process("claims", "fyvi", "--json", "--results-dir", str(results))
    assert before.returncode == 0, before.stderr
    paper_rows = pd.read_csv(results / "gmm-clustering" / "results.csv").query("profile == 'paper'")
    assert len(paper_rows)
    done = run_in_process("run", "gmm-clustering", "--seeds", "5-6", "--only", "method=standard", "--results-dir",
                   str(results), "--no-progress", "--allow-dirty")
    assert done.returncode == 0, done.stderr
    assert "gmm-clustering [paper+seeds=5-6]: 2 cells run" in done.stderr, done.stderr
    assert (results / "gmm-clustering" / "cells" / "paper+seeds=5-6").is_dir()
    rows = pd.read_csv(results / "gmm-clustering" / "results.csv")
    assert set(rows.query("profile == 'paper+seeds=5-6'")["seed"]) == {5, 6}
    now = rows.query("profile == 'paper'").reset_index(drop=True)  # the variant's rows add a column: overrides
    assert set(now.columns) - set(paper_rows.columns) <= {"overrides"} and now.get("overrides", pd.Series()).isna().all()
    pd.testing.assert_frame_equal(now[paper_rows.columns], paper_rows.reset_index(drop=True))
    after = run_in_process("claims", "fyvi", "--json", "--results-dir", str(results))

    def at_paper(text: str) -> list[dict]:
        return [v for v in json.loads(text) if v["profile"] == "paper"]

    assert at_paper(after.stdout) == at_paper(before.stdout) and at_paper(before.stdout)
    variant = [v for v in json.loads(after.stdout) if v["profile"] == "paper+seeds=5-6"]
    assert variant and not any(v["headline"] for v in variant)


def test_a_seeds_override_is_shown_as_runs_and_any_other_as_python_writes_it():
    """A cell's ``overrides`` column: ``seeds=0-99999`` is 11 characters where the list is 688,890 (more than a CSV
    field may hold: the cell file could not be read back)."""
    assert shown_override("seeds", list(range(100_000))) == "0-99999"
    assert shown_override("seeds", [5, 1, 2]) == "1-2,5"
    assert shown_override("train.epochs", 1500) == "1500" and shown_override("freyface.init_std", None) == "None"
    assert shown_override("grid.seeds", ["a"]) == "['a']"
