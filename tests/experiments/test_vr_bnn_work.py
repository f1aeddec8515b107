"""vr-bnn's declared work (fyexp.experiments.vr_bnn_config.cell_work) and the scaled estimate across data sets it
allows: UCI Year, which no machine of the project has, is estimated from the recorded cells nearest in work
(issue 49: "vr-bnn Year has no estimate")."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from fyexp.experiments.base import CellWork
from fyexp.experiments.vr_bnn_config import UCI_SIZES, cell_work
from fyexp.run.estimate import ScaledRecord, scaled_cell_estimate, scaled_estimate
from tests.conftest import run_cli

#: a stated config unlike any profile's: 3 splits, 2 methods, H = 7, K = 4, 6 epochs (train.epochs 2, which the runner
#: never reads)
STATED = {"n_splits": 3, "methods": ["VI", "VR-max"], "hidden": 7, "hidden_by_dataset": {}, "n_samples": 4,
          "n_samples_by_dataset": {}, "epochs": 6, "epochs_by_dataset": {}, "test_samples": None,
          "train": {"epochs": 2}}


def test_the_work_is_rows_samples_models_and_weights_per_epoch():
    weights = 13 * 7 + 2 * 7 + 1                       # Boston: D = 13 features, H = 7
    per_epoch = 455 * 4 * (3 * 2) * weights             # 455 training rows, K = 4, 3 splits × 2 methods
    assert cell_work(STATED, {"dataset": "boston"}) == (per_epoch, 51 * 4 * 6 * weights)
    tested = {**STATED, "test_samples": 9}               # the evaluation's draws, where stated
    assert cell_work(tested, {"dataset": "boston"})[1] == 51 * 9 * 6 * weights


def test_a_data_sets_own_settings_and_splits_are_counted():
    own = {**STATED, "hidden_by_dataset": {"year": 11}, "n_samples_by_dataset": {"year": 3},
           "epochs_by_dataset": {"year": 5}}
    weights = 90 * 11 + 2 * 11 + 1
    # Year has one split: 3 asked count as 1 (× 2 methods)
    assert cell_work(own, {"dataset": "year"}) == (463_715 * 3 * 2 * weights, 51_630 * 3 * 2 * weights)
    everything = {**STATED, "n_splits": None}            # null: every split (Protein's 5)
    assert cell_work(everything, {"dataset": "protein"})[1] == 4_573 * 4 * (5 * 2) * (9 * 7 + 15)
    assert cell_work(STATED, {"dataset": "kin8nm"}) is None
    # a record written without the per-data-set fields: the defaults' (Year: H = 100, K = 10)
    bare = {"n_splits": None, "methods": ["VI"], "hidden": 50, "n_samples": 100, "epochs": 500, "train": {"epochs": 1}}
    assert cell_work(bare, {"dataset": "year"}) == (463_715 * 10 * 1 * (90 * 100 + 201),
                                                     51_630 * 10 * 1 * (90 * 100 + 201))


def test_the_sizes_are_the_data_sets_where_the_data_root_has_them():
    from fyexp.data.uci import load_uci, split_indices
    from fyexp.core.errors import DataMissing

    root = os.environ.get("FYEXP_DATA_DIR")
    checked = 0
    for name, (rows, features, splits, train) in UCI_SIZES.items():
        try:
            data = load_uci(root, name)
        except DataMissing:
            continue
        assert (data.x.shape, data.n_splits, len(split_indices(data, 0)[0])) == ((rows, features), splits, train)
        checked += 1
    if not checked:
        pytest.skip("no UCI data set in FYEXP_DATA_DIR")


def _rec(dataset: str, n: float, train_s: float, method: str = "bnn", profile: str = "cpu") -> ScaledRecord:
    return ScaledRecord(profile, method, {"dataset": dataset}, train_s, 2.0, 1, n, 1_000.0)


def test_the_nearest_in_work_is_the_least_log_ratio_on_either_side():
    def scaled_from(method, n, records):   # a cell on a data set no record used, scaled across: from which record
        found = scaled_cell_estimate(method, {"dataset": "year"}, 1, CellWork(n, 1.0), records, across=True)
        return found and [r for r in records if found == (r.train_s * n / r.train_examples + 2.0 / 1_000, "cpu")]

    small, middle, large = _rec("yacht", 10.0, 1.0), _rec("wine", 100.0, 5.0), _rec("protein", 1_000.0, 40.0)
    records = [small, middle, large]
    # 300: log 3 (100) < log 3.33 (1,000); 350: log 2.86 (1,000) < log 3.5 (100)
    assert scaled_from("bnn", 300.0, records) == [middle]
    assert scaled_from("bnn", 350.0, records) == [large]
    # the cell's method first; another method's records only where it has none
    other = _rec("protein", 300.0, 9.0, method="mlp")
    assert scaled_from("bnn", 300.0, [*records, other]) == [middle]
    assert scaled_from("gp", 300.0, [*records, other]) == [other]
    assert scaled_from("bnn", 300.0, []) is None
    assert scaled_from("bnn", 0.0, records) is None      # no training examples: no scale to be near


def test_a_cell_on_an_unseen_data_set_is_scaled_across_only_where_the_work_allows_it():
    protein = _rec("protein", 1_000.0, 40.0)
    records = [_rec("yacht", 10.0, 1.0), protein]
    work = CellWork(4_000.0, 3_000.0)
    assert scaled_cell_estimate("bnn", {"dataset": "year"}, 1, work, records) is None
    # T = 40 s · (1 · 4,000) / (1 · 1,000) + 2 s · 3,000 / 1,000 = 166 s, from Protein's record
    assert scaled_cell_estimate("bnn", {"dataset": "year"}, 1, work, records, across=True) == \
        pytest.approx((166.0, "cpu"))
    # a record on the cell's own data set is still the one used
    own = _rec("year", 8_000.0, 10.0, profile="paper")
    assert scaled_cell_estimate("bnn", {"dataset": "year"}, 1, work, [*records, own], across=True) == \
        pytest.approx((10.0 * 0.5 + 2.0 * 3.0, "paper"))
    cells = [("bnn", {"dataset": "year"}, 1, work)]
    assert scaled_estimate(cells, records) == (None, 0, ())
    assert scaled_estimate(cells, records, True) == (pytest.approx(166.0), 1, ("cpu",))


@pytest.mark.slow
def test_installed_show_and_plan_give_year_the_same_scaled_time(tmp_path):
    """At ``paper``, Year is the one cell without a recorded time (its data is absent): ``show`` and the plan scale
    it from the committed ``cpu`` Protein cell, the nearest in work, and print one figure."""
    data = tmp_path / "data"
    data.mkdir()
    env = {"FYEXP_MACHINE_SPEED": "1", "FYEXP_DATA_DIR": str(data), "COLUMNS": "250"}
    empty = str(tmp_path / "results")
    shown = run_cli("show", "vr-bnn", "--profile", "paper", "--results-dir", empty, env=env)
    planned = run_cli("run", "vr-bnn", "--profile", "paper", "--dry-run", "--allow-dirty", "--results-dir", empty,
                      env=env)
    assert shown.returncode == 0 and planned.returncode == 0, shown.stderr + planned.stderr
    pattern = r"about ([\d.,]+ (?:h|min)) for 1 of them, scaled from the 'cpu' profile's cells"
    in_show = re.search(pattern, shown.stdout.splitlines()[0])
    in_plan = re.search(pattern, planned.stdout.splitlines()[0])
    assert in_show and in_plan and in_show.group(1) == in_plan.group(1), (shown.stdout[:400], planned.stdout[:400])
    assert Path(empty).exists() is False or not any(Path(empty).rglob("*.csv"))


@pytest.mark.slow
def test_installed_plan_scales_with_the_epochs_the_runner_trains(tmp_path):
    """The plan of vr-bnn's quick cells follows ``epochs`` and ``epochs_by_dataset`` (which the runner trains), not the
    ``train.epochs`` it never reads: ten times the epochs is about ten times the estimate."""
    env = {"FYEXP_MACHINE_SPEED": "1", "COLUMNS": "250"}

    def estimate(*sets: str) -> float:
        args = [a for s in sets for a in ("--set", s)]
        ran = run_cli("run", "vr-bnn", "--profile", "quick", "--only", "dataset=yacht", "--dry-run", *args,
                      "--results-dir", str(tmp_path / "empty"), env=env)
        assert ran.returncode == 0, ran.stderr
        found = re.search(r"estimate ([\d.]+) (s|min)", ran.stdout.splitlines()[0])
        assert found, ran.stdout[:300]
        return float(found.group(1)) * (60 if found.group(2) == "min" else 1)

    base = estimate()
    assert estimate("train.epochs=50") == base
    assert 6 * base <= estimate("epochs=20") <= 11 * base   # "3 s" is rounded
    assert 6 * base <= estimate("epochs_by_dataset.yacht=20") <= 11 * base
