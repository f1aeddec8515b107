"""The plan's time for cells no recorded cell of their profile can estimate: scaled from another profile's cells
(fyexp/run/estimate.py), and the work each runner declares for it."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from fyexp.experiments.base import CellWork
from fyexp.run.estimate import ScaledRecord, records_as_recorded, scaled_cell_estimate, scaled_estimate, scaled_text
from fyexp.run.plan import RunPlan, describe_plan
from tests.conftest import run_cli


def _scoped(name: str, profile: str, method: str, params: dict) -> tuple[dict, object]:
    """A cell's scoped config as a run record states it, and the experiment."""
    from fyexp.experiments import get_experiment
    from fyexp.store.results import Cell
    from fyexp.spec.settings import scoped_config
    from fyexp.spec.specs import load_spec, resolve

    spec = load_spec(name)
    experiment = get_experiment(spec.runner)
    resolved = resolve(spec, profile, experiment.Config)
    return scoped_config(experiment, resolved.config, Cell(method, 0, params)), experiment


@pytest.mark.parametrize("profile, params, expected", [
    ("paper", {"dataset": "mnist", "L": 1, "K": 5}, (59_600.0, 10_000 * 5_000.0)),   # IWAE's 59,600; all test images
    ("cpu", {"dataset": "mnist", "L": 1, "K": 5}, (5_000.0, 300 * 500.0)),
    ("paper", {"dataset": "caltech", "L": 1, "K": 50}, (4_100.0, 2_307 * 5_000.0)),
    ("paper", {"dataset": "freyface", "L": 1, "K": 5, "fold": 3}, (1_768.0, 197 * 5_000.0)),
    ("freyface-stopping", {"dataset": "freyface", "L": 1, "K": 5, "fold": 0}, (1_768.0 - 177, 197 * 5_000.0)),
])
def test_vr_vae_declares_its_training_images_and_evaluation_samples(profile, params, expected):
    stated, experiment = _scoped("vr-vae", profile, "vae", params)
    assert experiment.work(stated, params) == CellWork(*expected)
    assert experiment.work(stated, {**params, "dataset": "omniglot"}) is None   # no known sizes: not scaled


def test_a_cap_above_the_data_set_counts_the_data_set():
    from fyexp.experiments.vr_vae_config import cell_work

    assert cell_work({"n_train": {"caltech": 10**6}, "n_test": {"caltech": 7}, "test_samples": 3},
                     {"dataset": "caltech"}) == (4_100.0, 21.0)
    assert cell_work({"n_test": {"caltech": 7}}, {"dataset": "caltech"}) == (4_100.0, 7.0)   # no samples stated: 1


def test_frac_work_without_caps_or_samples_is_the_whole_data_set_once():
    from fyexp.experiments.frac_vae_config import cell_work

    assert cell_work({}, {"dataset": "MNIST"}) == (60_000.0, 10_000.0)
    assert cell_work({"n_train": 10**6, "n_test": 10**6, "eval_samples": 3}, {"dataset": "FashionMNIST"}) == \
        (60_000.0, 30_000.0)


@pytest.mark.parametrize("profile, expected", [("paper", (60_000.0, 10_000 * 1_024.0)),
                                               ("claims", (1_024.0, 500 * 1_024.0)),
                                               ("cpu", (512.0, 300 * 32.0))])
def test_frac_vae_declares_its_training_images_and_evaluation_samples(profile, expected):
    params = {"dataset": "FashionMNIST", "latent": 2, "parameterization": "consistent", "table": "9", "value": 1.0}
    stated, experiment = _scoped("frac-vae", profile, "L", params)
    assert experiment.work(stated, params) == CellWork(*expected)
    assert experiment.work(stated, {**params, "dataset": "CIFAR10"}) is None


@pytest.mark.parametrize("profile, expected", [("paper", 60_000.0 * 50 / 500), ("claims", 1_024.0),
                                               ("cpu", 512.0 * 2 / 4)])
def test_a_table7_cell_counts_its_encoders_epochs_not_the_profiles(profile, expected):
    """Table 7's encoder trains ``table7_epochs`` (paper 50, claims 14, cpu 2) while its settings state the
    profile's ``train.epochs`` (500, 14, 4): its images per stated epoch carry the ratio."""
    params = {"dataset": "MNIST", "latent": 2, "parameterization": "consistent", "table": "7", "value": 0.5}
    stated, experiment = _scoped("frac-vae", profile, "L-fixed-decoder", params)
    assert experiment.work(stated, params).train_examples == pytest.approx(expected)
    assert experiment.work(stated, {**params, "table": "2"}).train_examples == pytest.approx(
        {"paper": 60_000.0, "claims": 1_024.0, "cpu": 512.0}[profile])


@pytest.mark.parametrize("name, profile, expected", [
    ("nvdm", "paper", (11_290.0 * 2, 6_505.0 * 21)),        # multinomial: RE, then 20 perplexity samples
    ("fy-nvdm", "paper", (11_290.0 * 2 * 3, 6_505.0)),      # entmax, 3 alternating epochs: RE only
])
def test_nvdm_declares_its_documents_per_epoch_and_evaluation(name, profile, expected):
    params = {}
    stated, experiment = _scoped(name, profile, "NVDM" if name == "nvdm" else "FY-VAE", params)
    assert experiment.work(stated, params) == CellWork(*expected)
    from fyexp.experiments.nvdm_config import cell_work

    assert cell_work({**stated, "alternating_epochs": 5}, params)[0] == 11_290.0 * 10   # both passes, each 5 times


def test_installed_show_scales_nvdm_paper_search_from_the_paper_cells_it_equals():
    """paper-search's cells run at the paper defaults until tuned: scaled from paper's recorded cells, the nvdm
    figure is paper's own (the same settings: a ratio of 1)."""
    env = {"FYEXP_MACHINE_SPEED": "1", "COLUMNS": "300"}
    paper = run_cli("show", "nvdm", "--profile", "paper", env=env).stdout.splitlines()[0]
    search = run_cli("show", "nvdm", "--profile", "paper-search", env=env).stdout.splitlines()[0]
    recorded = re.search(r"estimate ([\d.]+ h) from 5 recorded cells", paper)
    assert recorded, paper
    assert f"about {recorded.group(1)} for 5 of them, scaled from the 'paper' profile's cells" in search, search


def test_an_experiment_without_declared_work_is_never_scaled():
    from fyexp.experiments.base import Experiment

    assert Experiment().work({"train": {"epochs": 3}}, {"dataset": "mnist"}) is None
    assert CellWork.of(None) is None and CellWork.of((2.0, 3.0)) == CellWork(2.0, 3.0)


def _rec(profile="cpu", method="vae", dataset="mnist", train_s=30.0, rest_s=6.0, epochs=3, n=5_000.0, v=150_000.0,
         **params):
    return ScaledRecord(profile, method, {"dataset": dataset, **params}, train_s, rest_s, epochs, n, v)


def test_a_cell_is_its_nearest_records_training_and_rest_each_scaled_by_its_own_work():
    cpu = _rec()
    work = CellWork(60_000.0, 10_000 * 5_000.0)
    seconds, profile = scaled_cell_estimate("vae", {"dataset": "mnist"}, 300, work, [cpu])
    # training: 30 s · (300 · 60,000) / (3 · 5,000) = 36,000 s; the rest: 6 s · 5e7 / 1.5e5 = 2,000 s
    assert seconds == pytest.approx(36_000.0 + 2_000.0) and profile == "cpu"
    # twice the epochs doubles the training part only; twice the test samples doubles the rest only
    assert scaled_cell_estimate("vae", {"dataset": "mnist"}, 600, work, [cpu])[0] == pytest.approx(72_000 + 2_000)
    assert scaled_cell_estimate("vae", {"dataset": "mnist"}, 300, CellWork(60_000.0, 1e8), [cpu])[0] == \
        pytest.approx(36_000 + 4_000)


def test_the_pool_is_the_cells_data_set_its_nearest_method_and_the_profile_that_trained_the_most():
    small = _rec("quick", epochs=1, n=200.0, train_s=1.0, rest_s=0.0)
    big = _rec("cpu", train_s=30.0, rest_s=0.0)
    big_iwae = _rec("cpu", method="iwae", train_s=90.0, rest_s=0.0)
    caltech = _rec("paper", dataset="caltech", epochs=255, n=4_100.0, train_s=3_000.0, rest_s=0.0)
    work = CellWork(5_000.0, 1.0)
    records = [small, big, big_iwae, caltech]
    # the vae's nearest are the vae cells on MNIST; of those, the cpu profile trained more (15,000 > 200 examples)
    assert scaled_cell_estimate("vae", {"dataset": "mnist"}, 3, work, records) == (30.0, "cpu")
    # a method no record has: every MNIST record is as near; the cpu profile's two are averaged
    assert scaled_cell_estimate("vr_max", {"dataset": "mnist"}, 3, work, records) == (60.0, "cpu")
    # the quick record alone when it is the only one of the cell's method
    assert scaled_cell_estimate("vae", {"dataset": "mnist"}, 1, CellWork(200.0, 1.0), [small, big_iwae]) == \
        (1.0, "quick")
    assert scaled_cell_estimate("vae", {"dataset": "freyface"}, 3, work, records) is None   # no record on its data
    assert scaled_cell_estimate("vae", {"dataset": "mnist"}, None, work, records) is None   # no epochs stated
    assert scaled_cell_estimate("vae", {"dataset": "mnist"}, 3, None, records) is None      # no work declared


def test_scaled_estimate_sums_the_cells_that_have_one_and_names_their_profiles():
    work = CellWork(5_000.0, 150_000.0)
    records = [_rec("cpu"), _rec("claims", dataset="caltech", train_s=10.0, rest_s=2.0)]
    cells = [("vae", {"dataset": "mnist"}, 3, work), ("vae", {"dataset": "caltech"}, 3, work),
             ("vae", {"dataset": "freyface"}, 3, work)]
    assert scaled_estimate(cells, records) == (36.0 + 12.0, 2, ("claims", "cpu"))
    assert scaled_estimate(cells[2:], records) == (None, 0, ())
    assert scaled_estimate([], records) == (None, 0, ())


def test_the_scaled_text_names_its_profiles_and_says_it_extrapolates():
    assert scaled_text(2_541_600.0, 14, ("cpu",)) == (
        "about 706 h for 14 of them, scaled from the 'cpu' profile's cells by training examples and evaluation "
        "samples (an extrapolation)")
    assert "from the 'claims' and 'cpu' profiles' cells" in scaled_text(7200.0, 3, ("claims", "cpu"))
    assert "from the 'a', 'b' and 'c' profiles' cells" in scaled_text(7200.0, 3, ("a", "b", "c"))
    assert scaled_text(7200.0, 0, ()) == "" and scaled_text(None, 2, ("cpu",)) == ""


def _plan(**fields) -> RunPlan:
    base = dict(experiment="vr-vae", profile="paper", cells=60, finished=46, to_run=14, old_settings=0,
                estimate_s=None, recorded=46, source="results", unestimated=14)
    return RunPlan(**{**base, **fields})


def test_the_plan_line_adds_the_scaled_time_to_an_unknown_or_partly_unknown_estimate():
    scaled = dict(scaled_s=2_541_600.0, scaled=14, scaled_from=("cpu",))
    unknown = describe_plan(_plan(**scaled))
    assert unknown.endswith("estimate unknown (no finished cell of this profile recorded on these data); about 706 h "
                            "for 14 of them, scaled from the 'cpu' profile's cells by training examples and "
                            "evaluation samples (an extrapolation)")
    part = describe_plan(_plan(to_run=20, estimate_s=3_600.0, unestimated=14, **scaled))
    assert "estimate 60 min for 6 of them, unknown for 14" in part and part.endswith("(an extrapolation)")
    assert "scaled" not in describe_plan(_plan())                      # nothing scaled: the line as before
    assert "scaled" not in describe_plan(_plan(to_run=20, estimate_s=3_600.0, unestimated=14))


def _cell_file(folder: Path, profile: str, key: str, rows: list[dict], config: dict | None) -> None:
    import csv

    cells = folder / "vr-vae" / "cells" / profile
    cells.mkdir(parents=True, exist_ok=True)
    fields = ["experiment", "profile", "method", "params", "seed", "metric", "value", "status", "wall_time_s", "cell"]
    with (cells / f"{key}.csv").open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fields)
        writer.writeheader()
        for row in rows:
            writer.writerow({"experiment": "vr-vae", "profile": profile, "cell": key, "status": "ok", **row})
    if config is not None:
        (cells / f"{key}.record.json").write_text(json.dumps({"settings": {"config": config}}))


def _rows(method: str, dataset: str, wall: float, **times: float) -> list[dict]:
    params = json.dumps({"K": 5, "L": 1, "dataset": dataset})
    return [{"method": method, "params": params, "seed": 0, "metric": metric, "value": value, "wall_time_s": wall}
            for metric, value in [("test_loglik", -90.0), *times.items()]]


def test_scaled_records_split_each_cells_time_and_read_its_work_from_its_run_record(tmp_path):
    from fyexp.experiments import get_experiment
    from fyexp.spec.specs import load_spec

    experiment = get_experiment(load_spec("vr-vae").runner)
    config = {"train_mnist": {"epochs": 3}, "n_train": {"mnist": 5_000}, "n_test": {"mnist": 300},
              "test_samples": 500}
    _cell_file(tmp_path, "cpu", "vae__mnist", _rows("vae", "mnist", 25.0, train_time_s=22.0, epoch_time_s=7.0),
               config)
    _cell_file(tmp_path, "cpu", "iwae__mnist", _rows("iwae", "mnist", 40.0, epoch_time_s=10.0), config)
    _cell_file(tmp_path, "cpu", "slow__mnist", _rows("vr_max", "mnist", 20.0, epoch_time_s=10.0), config)
    _cell_file(tmp_path, "cpu", "norecord__mnist", _rows("vae", "mnist", 25.0, train_time_s=1.0), None)
    _cell_file(tmp_path, "cpu", "notime__mnist", _rows("vae", "mnist", 25.0), config)
    _cell_file(tmp_path, "paper", "vae__caltech", _rows("vae", "caltech", 99.0, train_time_s=50.0),
               {"train_caltech": {"epochs": 255}})
    found = {r.method: r for r in records_as_recorded(tmp_path, "vr-vae", experiment, ["paper"])[0]}
    assert sorted(found) == ["iwae", "vae", "vr_max"]     # no run record, or no training time: left out
    assert (found["vae"].train_s, found["vae"].rest_s) == (22.0, 3.0)          # train_time_s before epoch_time_s
    assert (found["iwae"].train_s, found["iwae"].rest_s) == (30.0, 10.0)       # epoch_time_s × 3 epochs
    assert found["vr_max"].rest_s == 0.0                                       # never negative
    assert (found["vae"].epochs, found["vae"].train_examples, found["vae"].eval_units) == (3, 5_000.0, 150_000.0)
    assert {r.profile for r in found.values()} == {"cpu"}
    both, folder = records_as_recorded(tmp_path, "vr-vae", experiment, [])
    assert {r.profile for r in both} == {"cpu", "paper"} and folder == tmp_path


@pytest.mark.slow
def test_installed_dry_run_states_the_scaled_cost_of_a_set_that_never_ran_here(tmp_path):
    """vr-vae's MNIST at ``paper`` never ran on a CPU: its plan is unknown from its own profile, and states a time
    scaled from the committed ``cpu`` MNIST cells (the repository's results), labelled as an extrapolation."""
    result = run_cli("run", "vr-vae", "--profile", "paper", "--only", "dataset=mnist", "--dry-run",
                     "--results-dir", str(tmp_path / "results"))
    assert result.returncode == 0, result.stderr
    line = " ".join(result.stdout.split())
    assert "estimate unknown (no finished cell of this profile recorded" in line
    assert "for 14 of them, scaled from the 'cpu' profile's cells by training examples and evaluation samples " \
           "(an extrapolation)" in line
    reproduce = run_cli("reproduce", "vr", "--profile", "paper", "--dry-run", "--results-dir", str(tmp_path / "r"))
    assert reproduce.returncode == 0, reproduce.stderr
    assert "scaled from the 'cpu' profile's cells" in " ".join(reproduce.stdout.split())


def test_with_scaled_leaves_a_plan_without_unestimated_cells_as_it_is_and_scales_the_others(tmp_path):
    from fyexp.experiments import get_experiment
    from fyexp.run.estimate import with_scaled
    from fyexp.store.results import Cell
    from fyexp.spec.specs import load_spec, resolve

    spec = load_spec("vr-vae")
    experiment = get_experiment(spec.runner)
    resolved = resolve(spec, "paper", experiment.Config)
    plan = _plan()
    assert with_scaled(plan, resolved, experiment, tmp_path) is plan          # nothing to scale: not even read
    config = {"train_mnist": {"epochs": 3}, "n_train": {"mnist": 5_000}, "n_test": {"mnist": 300},
              "test_samples": 500}
    _cell_file(tmp_path, "cpu", "vae__mnist", _rows("vae", "mnist", 25.0, train_time_s=22.0), config)
    _cell_file(tmp_path, "paper", "vae__mnist_paper", _rows("vae", "mnist", 1.0, train_time_s=1.0), config)
    cell = Cell("vae", 0, {"K": 5, "L": 1, "dataset": "mnist"})
    scaled = with_scaled(_plan(unestimated_cells=(cell,)), resolved, experiment, tmp_path)
    # 22 s · (3,280 · 59,600) / (3 · 5,000) + 3 s · (10,000 · 5,000) / (300 · 500);
    # the paper cell is of the plan's own profile: not a source
    expected = 22.0 * 3_280 * 59_600 / 15_000 + 3.0 * 5e7 / 1.5e5
    assert (scaled.scaled_s, scaled.scaled, scaled.scaled_from) == (pytest.approx(expected), 1, ("cpu",))


def test_the_gpu_kits_estimate_scales_a_recorded_cell_as_the_plan_does():
    from gpu_kit.estimate import _cpu_cell, _one_cell
    from gpu_kit.queue import Unit
    from fyexp.run.estimate import scaled_time

    small, target = CellWork(5_000.0, 150_000.0), CellWork(59_600.0, 5e7)
    cpu = {"profile": "cpu", "method": "vae", "params": {"dataset": "mnist", "K": 5}, "device": "cpu (2 cores)",
           "wall": 25.0, "epoch_time": 7.0, "epochs": 3, "train_time": 22.0, "work": small}
    assert _one_cell(cpu, 3_280, target) == pytest.approx(22.0 * 3_280 * 59_600 / 15_000 + 3.0 * 5e7 / 1.5e5)
    assert scaled_time(22.0, 3.0, 3, small, 3_280, target) == pytest.approx(_one_cell(cpu, 3_280, target))
    by_epochs = {**cpu, "train_time": None}                 # no train_time_s: epoch_time_s × its 3 epochs
    assert _one_cell(by_epochs, 3_280, target) == pytest.approx(21.0 * 3_280 * 59_600 / 15_000 + 4.0 * 5e7 / 1.5e5)
    undeclared = {**cpu, "work": None}                      # no declared work: the epochs ratio alone, as before
    assert _one_cell(undeclared, 30, None) == pytest.approx(25.0 * 10) == _one_cell(cpu, 30, None)
    assert _one_cell({**cpu, "train_time": None, "epoch_time": 10.0}, 30, None) == pytest.approx(300.0)

    claims = {**cpu, "profile": "claims", "epochs": 14, "work": CellWork(1_024.0, 150_000.0), "train_time": 140.0,
              "wall": 150.0}
    unit = Unit("t", "vr-vae", "paper", "vae", {"dataset": "mnist", "K": 5}, [0], False, ["MNIST"], [], "paper")
    seconds, source, measured = _cpu_cell(unit, 3_280, [cpu, claims], target)
    assert source == "1 cpu cell(s) of profile cpu" and not measured   # 15,000 examples trained beat 14,336
    assert seconds == pytest.approx(_one_cell(cpu, 3_280, target))
    both, _, _ = _cpu_cell(unit, 3_280, [cpu, claims])       # no target work: the median of both, by epochs
    assert both == pytest.approx((25.0 * 3_280 / 3 + 150.0 * 3_280 / 14) / 2)


def test_scaled_records_leave_out_what_cannot_be_scaled_and_fall_back_to_the_committed_results(tmp_path):
    from fyexp.experiments import get_experiment
    from fyexp.run.estimate import committed_results
    from fyexp.spec.specs import load_spec

    experiment = get_experiment(load_spec("vr-vae").runner)
    config = {"train_mnist": {"epochs": 3}, "n_train": {"mnist": 5_000}, "n_test": {"mnist": 300},
              "test_samples": 500}

    def rows(method, wall=25.0, status="ok", dataset="mnist"):
        return [{**row, "status": status} for row in _rows(method, dataset, wall, train_time_s=20.0)]

    _cell_file(tmp_path, "cpu", "blank_status", rows("vae", status=""), config)            # no status: finished
    _cell_file(tmp_path, "cpu", "one_unit", rows("iwae"), {**config, "n_test": {"mnist": 1}, "test_samples": 1})
    _cell_file(tmp_path, "cpu", "failed", rows("vr_max", status="failed"), config)
    _cell_file(tmp_path, "cpu", "no_wall", rows("vr_half", wall=""), config)
    _cell_file(tmp_path, "cpu", "no_epochs", rows("iwae_single"), {k: v for k, v in config.items() if k[:5] != "train"})
    _cell_file(tmp_path, "cpu", "no_images", rows("vae_all_held_out"), {**config, "n_train": {},
                                                                         "validation": {"mnist": 60_000}})
    _cell_file(tmp_path, "cpu", "no_sizes", rows("vae_omniglot", dataset="omniglot"), config)
    _cell_file(tmp_path, "cpu", "no_config", rows("vae_listed"), None)
    (tmp_path / "vr-vae" / "cells" / "cpu" / "no_config.record.json").write_text(
        json.dumps({"settings": {"config": ["not", "a", "mapping"]}}))
    found, _ = records_as_recorded(tmp_path, "vr-vae", experiment, ["paper"])
    assert sorted(r.method for r in found) == ["iwae", "vae"]
    assert {r.method: r.eval_units for r in found} == {"vae": 150_000.0, "iwae": 1.0}

    committed, folder = records_as_recorded(tmp_path / "empty", "vr-vae", experiment, ["paper"])   # the checkout's
    assert folder == committed_results() and committed and {"cpu"} <= {r.profile for r in committed}
    assert any(r.params.get("dataset") == "mnist" for r in committed)


def test_scaled_estimate_pools_each_cell_by_its_own_method():
    work = CellWork(5_000.0, 150_000.0)
    records = [_rec(method="vae", train_s=30.0, rest_s=0.0), _rec(method="iwae", train_s=90.0, rest_s=0.0)]
    assert scaled_estimate([("iwae", {"dataset": "mnist"}, 3, work)], records) == (90.0, 1, ("cpu",))


def test_run_plan_names_the_cells_without_a_recorded_cell_on_their_data(tmp_path):
    """vr-vae at ``paper`` against the committed results: the cells to run on a data set no committed ``paper`` cell
    used (MNIST, in November 2026) are the unestimated ones; with ``--force`` on Caltech only, none is."""
    from fyexp.run.cell_filter import parse_only
    from fyexp.cli.commands.options import Options, resolve_experiment
    from fyexp.run.estimate import times_as_recorded
    from fyexp.run.plan import run_plan

    experiment, resolved = resolve_experiment("vr-vae", Options(profile="paper"))
    recorded = {t.params.get("dataset") for t in times_as_recorded(tmp_path / "results", "vr-vae", ["paper"])[0]}
    plan = run_plan(resolved, experiment, tmp_path / "results")
    expected = [c.key for c in plan.todo if c.params["dataset"] not in recorded]
    assert [c.key for c in plan.unestimated_cells] == expected and plan.unestimated == len(expected)
    assert "caltech" in recorded and "freyface" in recorded
    caltech = run_plan(resolved, experiment, tmp_path / "results", force=True, only=parse_only(["dataset=caltech"]))
    assert caltech.to_run == 6 and caltech.unestimated_cells == () and caltech.unestimated == 0
    if "mnist" not in recorded:   # until a GPU runs them: all 14 MNIST cells
        assert len(expected) == 14
