"""The plan `fyexp run` prints before its first cell, its estimate, and the confirmation a long plan needs."""

from __future__ import annotations

from pathlib import Path

import pytest

from fyexp.run.estimate import Recorded, estimate_cells, nearest, times_as_recorded
from fyexp.run.plan import RunPlan, describe_plan, long_plan_reason
from fyexp.spec.settings import training_epochs
from fyexp.store.results import Cell, ResultStore
from tests.conftest import ROOT, TOY_SPECS, committed_paper_seconds, run_cli, run_in_terminal, strip_ansi


def estimate(methods, times, epochs=None, params=None):
    """The whole :func:`estimate_cells` figure; ``None`` when a cell has no nearest recorded cell."""
    found = estimate_cells(methods, times, epochs, params)
    return None if found.unestimated else found.seconds


def estimate_parts(methods, times, epochs=None, params=None):
    found = estimate_cells(methods, times, epochs, params)
    return found.seconds, len(found.unestimated)


def extrapolated_keys(methods, times, params=None):
    found = estimate_cells(methods, times, None, params)
    return found.extrapolated, found.keys


def _record(results: Path, seconds: float, values=(1.0,), seeds=(0, 1), profile="paper", *,
            finished: bool = False) -> None:
    """Toy cells with a recorded wall time each, consolidated into results.csv: recorded times, of unknown provenance
    without a run record; ``finished``: with the run record and settings hash a run on this CPU writes."""
    from fyexp.cli.commands.options import Options, resolve_experiment
    from fyexp.store.provenance.record import settings_hash, write_record
    from fyexp.store.provenance.source import git_commit
    from fyexp.spec.settings import expected_settings

    store = ResultStore(results, "toy")
    prov = {"git_commit": "unknown", "fyexp_version": "0", "device": "cpu", "wall_time_s": seconds,
            "timestamp": "2026-01-01T00:00:00+00:00"}
    experiment, resolved = resolve_experiment("toy", Options(profile=profile, experiments_dir=TOY_SPECS))
    for v in values:
        for s in seeds:
            cell, extra = Cell("toy", s, {"x": v}), {}
            if finished:
                settings = expected_settings(resolved, experiment, cell, "cpu", None)
                write_record(store.cell_path(profile, cell), settings, None)
                extra = {"git_commit": git_commit(), "settings_hash": settings_hash(settings)}
            store.write_cell(profile, cell, [{"metric": "adjusted_mi", "value": v}], {**prov, **extra})
    store.consolidate()


def _cells(results: Path) -> list[str]:
    return sorted(p.name for p in (results / "toy" / "cells").rglob("*.csv"))


def test_estimate_sums_each_methods_recorded_mean():
    times = [("a", 10.0), ("a", 30.0), ("b", 100.0)]
    assert estimate(["a", "b", "b"], times) == 20.0 + 100.0 + 100.0
    assert estimate(["c"], times) == 140.0 / 3  # a method without recorded cells: the overall mean
    assert estimate([], times) == 0.0 and estimate(["a"], []) is None


def test_estimate_scales_a_recorded_time_by_the_ratio_of_epochs():
    times = [Recorded("a", 600.0, 1500), Recorded("a", 300.0, None), Recorded("b", 100.0, 10)]
    # a cell now at 5,000 epochs: 600 · 5000/1500 = 2000 from the first, 300 unscaled from the second (no epochs)
    assert estimate(["a"], times, [5000]) == pytest.approx((2000.0 + 300.0) / 2)
    assert estimate(["b", "b"], times, [5, None]) == pytest.approx(50.0 + 100.0)  # None: unscaled
    assert estimate(["b"], times) == 100.0  # no epochs given: as recorded


def test_the_nearest_recorded_cells_are_on_the_cells_data_set_with_the_most_in_common():
    caltech = Recorded("vae", 1900.0, 255, {"dataset": "caltech", "K": 5})
    frey_iwae = Recorded("iwae", 700.0, 1500, {"dataset": "freyface", "K": 5, "fold": 3})
    frey_vae = Recorded("vae", 500.0, 1500, {"dataset": "freyface", "K": 5, "fold": 0})
    times = [caltech, frey_iwae, frey_vae]
    assert nearest("vae", {"dataset": "freyface", "K": 5, "fold": 1}, times) == [frey_vae]
    assert nearest("vr_max", {"dataset": "freyface", "K": 5, "fold": 3}, times) == [frey_iwae]
    assert nearest("vr_max", {"dataset": "freyface", "K": 50}, times) == [frey_iwae, frey_vae]
    assert nearest("vae", {"dataset": "mnist", "K": 5}, times) == []  # none on its data: no peer
    assert nearest("vae", {"K": 5}, times) == [caltech, frey_vae]  # no data set named: every cell may serve
    assert estimate(["vae", "iwae"], times, [3000, 1500], [{"dataset": "freyface", "fold": 9}] * 2) == 1000.0 + 700.0
    # a cell on data no recorded cell used makes the whole estimate unknown: Caltech's times are no estimate of MNIST
    assert estimate(["vae", "vae"], times, None, [{"dataset": "caltech"}, {"dataset": "mnist"}]) is None


def test_estimate_parts_leaves_out_and_counts_the_cells_without_a_peer_on_their_data():
    times = [Recorded("vae", 100.0, 10, {"dataset": "caltech"})]
    params = [{"dataset": "caltech"}, {"dataset": "mnist"}, {"dataset": "mnist"}]
    assert estimate_parts(["vae"] * 3, times, [20, 20, 20], params) == (200.0, 2)
    assert estimate_parts(["vae"], times, None, [{"dataset": "mnist"}]) == (None, 1)
    assert estimate_parts([], times) == (0.0, 0)


def test_a_cell_whose_nearest_recorded_cells_all_differ_in_a_setting_is_counted_and_the_setting_named():
    k5 = Recorded("iwae", 1000.0, 255, {"dataset": "caltech", "K": 5, "L": 1})
    k50_vae = Recorded("vae", 3000.0, 255, {"dataset": "caltech", "K": 50, "L": 1})
    frey = Recorded("vae", 900.0, 2490, {"dataset": "freyface", "K": 5, "fold": 0})
    times = [k5, k50_vae, frey]
    caltech = {"dataset": "caltech", "K": 50, "L": 1}
    # the IWAE K = 50 cell's nearest are k5 (method, dataset, L) and k50_vae (dataset, K, L): one has its K
    assert extrapolated_keys(["iwae"], times, [caltech]) == (0, ())
    assert extrapolated_keys(["iwae"], [k5, frey], [caltech]) == (1, ("K",))
    assert extrapolated_keys(["iwae", "iwae"], [k5], [caltech, {**caltech, "L": 2}]) == (2, ("K", "L"))
    # a new fold (a replicate) or epochs is no other setting; a cell without a peer on its data is not counted
    assert extrapolated_keys(["vae"], times, [{"dataset": "freyface", "K": 5, "fold": 7}]) == (0, ())
    assert extrapolated_keys(["vae"], times, [{"dataset": "freyface", "K": 5, "epochs": 10}]) == (0, ())
    assert extrapolated_keys(["vae"], times, [{"dataset": "mnist", "K": 5}]) == (0, ())
    assert extrapolated_keys(["vae"], times) == (0, ())  # no parameters: nothing to differ
    line = describe_plan(RunPlan("vr-vae", "paper", 3, 0, 3, 0, 3420.0, 19, "/elsewhere/results", extrapolated=3,
                                 extrapolated_keys=("K",)))
    assert line.endswith("(from 19 recorded cells in /elsewhere/results); 3 of them at another K than any recorded "
                         "cell: their time may differ")
    assert "another" not in describe_plan(RunPlan("vr-vae", "paper", 3, 0, 3, 0, 3420.0, 19, "results"))


def test_a_partly_unknown_plan_says_so_and_asks_at_a_paper_profile():
    line = describe_plan(RunPlan("vr-vae", "paper", 60, 3, 57, 0, 5820.0, 3, "results", unestimated=54))
    assert "estimate 97 min for 3 of them, unknown for 54 on data no finished cell of this profile used" in line
    assert RunPlan("vr-vae", "paper", 60, 3, 57, 0, 5820.0, 3, "results", unestimated=54).seconds_per_cell is None
    assert RunPlan("vr-vae", "paper", 60, 3, 57, 0, 5700.0, 3, "results").seconds_per_cell == 100.0
    assert long_plan_reason(57, 5820.0, "paper", 54) == "the time of 54 of its 57 cells is unknown at profile 'paper'"
    assert long_plan_reason(57, 5820.0, "cpu", 54) is None  # a reduced profile does not ask
    assert long_plan_reason(57, 7300.0, "paper", 54) == "it is estimated at 2.0 h for 3 of its cells (over 2 h)"
    assert long_plan_reason(57, 5820.0, "paper", 0) is None
    none_here = describe_plan(RunPlan("vr-vae", "paper", 40, 0, 40, 0, None, 3, "results", unestimated=40))
    assert none_here.endswith("estimate unknown (no finished cell of this profile recorded on these data)")


def test_finished_times_keep_one_time_per_finished_cell_of_the_profile():
    from fyexp.run.estimate import _finished_times

    rows = [
        {"profile": "paper", "status": "failed", "wall_time_s": "5", "cell": "b", "method": "m1"},
        {"profile": "paper", "status": "ok", "wall_time_s": "abc", "cell": "e", "method": "m1"},  # not a number
        {"profile": "paper", "status": "ok", "wall_time_s": "", "cell": "f", "method": "m1"},  # none recorded
        {"profile": "cpu", "status": "ok", "wall_time_s": "7", "cell": "c", "method": "m1"},  # another profile
        {"profile": "paper", "status": "ok", "wall_time_s": "10", "cell": "a", "method": "m1",
         "params": '{"dataset": "x"}'},
        {"profile": "paper", "status": "ok", "wall_time_s": "99", "cell": "a", "method": "m1"},  # a's second row
        {"profile": "paper", "status": "", "wall_time_s": "20", "cell": "d", "method": ""},  # no status: ok
        {"profile": "paper", "status": "ok", "wall_time_s": "30", "cell": "g", "method": "m2", "params": "[1]"},
        {"profile": "paper", "wall_time_s": "40", "method": "m3"},  # rows without a cell name: one cell each
        {"profile": "paper", "wall_time_s": "50", "method": "m3", "params": "{not json"},
    ]
    assert _finished_times(rows, "paper", 7) == [
        Recorded("m1", 10.0, 7, {"dataset": "x"}), Recorded("", 20.0, 7, {}), Recorded("m2", 30.0, 7, {}),
        Recorded("m3", 40.0, 7, {}), Recorded("m3", 50.0, 7, {})]
    assert _finished_times(rows, "cpu") == [Recorded("m1", 7.0, None, {})]


def test_recorded_times_fall_back_to_results_csv_then_to_the_committed_results(tmp_path):
    import csv

    folder = tmp_path / "toy"
    folder.mkdir()
    with (folder / "results.csv").open("w", newline="") as handle:
        writer = csv.DictWriter(handle, ["profile", "status", "wall_time_s", "cell", "method", "params"])
        writer.writeheader()
        writer.writerow({"profile": "paper", "status": "ok", "wall_time_s": "12", "cell": "k", "method": "m",
                         "params": "{}"})
    (folder / "cells" / "paper").mkdir(parents=True)  # a cell folder without a finished cell: the table is read
    times, where = times_as_recorded(tmp_path, "toy", ["paper+lr=1", "paper"])
    assert times == [Recorded("m", 12.0, None, {})] and where == tmp_path
    from fyexp.run.estimate import committed_results

    committed, where = times_as_recorded(tmp_path, "fy-vae", ["paper"])  # nothing here: the repository's results
    assert where == committed_results() and len(committed) >= 50
    assert times_as_recorded(tmp_path, "no-such-experiment", ["paper"]) == ([], None)


def test_the_plan_line_at_its_edges():
    assert describe_plan(RunPlan("toy", "paper", 4, 4, 0, 0, 0.0)).endswith("4 finished; nothing to run")
    assert describe_plan(RunPlan("toy", "paper", 4, 0, 4, 0, 60.0, 1, "r")) == (
        "plan: toy [paper]: 4 cells: 4 to run, 0 finished; estimate 60 s (from 1 recorded cell in r)")
    assert describe_plan(RunPlan("toy", "paper", 4, 0, 4, 0, None, 0)).endswith(
        "estimate unknown (no finished cell of this profile recorded)")
    assert long_plan_reason(3, 7200.0, "paper") is None  # exactly two hours does not ask
    assert long_plan_reason(3, 7201.0, "paper") is not None


def test_training_epochs_reads_the_first_train_block_then_a_top_level_value():
    assert training_epochs({"lr": 1, "train_freyface": {"epochs": 5000}, "train_caltech": {"epochs": 255}}) == 5000
    assert training_epochs({"train": {"lr": 1}, "epochs": 30}) == 30
    assert training_epochs({"epochs": True}) is None and training_epochs({"train": {"epochs": 2.5}}) is None
    assert training_epochs(None) is None and training_epochs([1]) is None


def test_training_epochs_per_data_set_are_the_cells_entry_else_the_top_level_count():
    """vr-bnn trains each data set for its own epochs and never reads ``train.epochs`` (issue 49: its estimates were
    blind to an epochs edit)."""
    config = {"epochs": 7, "epochs_by_dataset": {"protein": 3}, "train": {"epochs": 1}}
    assert training_epochs(config, {"dataset": "protein"}) == 3
    assert training_epochs(config, {"dataset": "yacht"}) == 7 and training_epochs(config) == 7
    assert training_epochs({**config, "epochs_by_dataset": {"protein": True}}, {"dataset": "protein"}) == 7
    # without a top-level count the mapping is not the runner's: the train block's, as before
    assert training_epochs({"epochs_by_dataset": {"protein": 3}, "train": {"epochs": 1}}, {"dataset": "protein"}) == 1
    assert training_epochs({"epochs": 7, "train": {"epochs": 1}}, {"dataset": "protein"}) == 1


def test_recorded_times_read_each_cells_epochs_from_its_run_record(tmp_path):
    import json

    _record(tmp_path, 100.0, values=(1.0, 2.0), seeds=(0,))
    cells = tmp_path / "toy" / "cells" / "paper"
    stated = {"settings": {"config": {"train": {"epochs": 40}}}}
    (cells / "toy__x=1__seed=0.record.json").write_text(json.dumps(stated))
    times, folder = times_as_recorded(tmp_path, "toy", ["paper"])
    assert folder == tmp_path
    assert sorted((t.params["x"], t.epochs) for t in times) == [(1.0, 40), (2.0, None)]


def test_duration_on_both_sides_of_its_unit_changes():
    from fyexp.core.words import duration

    assert duration(None) == "unknown"
    assert (duration(119.4), duration(120.0)) == ("119 s", "2 min")
    assert (duration(7199.0), duration(7200.0)) == ("120 min", "2.0 h")
    assert duration(359_999.0) == "100.0 h" and duration(360_000.0) == "100 h"   # whole hours from 100 h
    assert duration(721_900.0) == "201 h"   # hours by 3,600 s: 721,900 / 3,601 would print 200
    assert duration(180_200.0) == "50.1 h"  # and below 100 h: 180,200 / 3,601 would print 50.0
    assert duration(4_021_000.0) == "1,117 h"


def test_the_one_estimate_finds_each_cells_nearest_recorded_cells_once():
    """estimate_cells is the plan's, list's and show's one estimator: per cell its nearest recorded cells give its
    seconds (scaled by epochs where both are known), whether it is extrapolated, or that it is unestimated."""
    import fyexp.run.estimate as plan

    times = [Recorded("a", 10.0, 2, {"dataset": "d", "K": 5}), Recorded("b", 30.0, None, {"dataset": "d", "K": 5})]
    found = plan.estimate_cells(["a", "b", "c"], times, [4, None, None],
                                [{"dataset": "d", "K": 5}, {"dataset": "d", "K": 50}, {"dataset": "e"}])
    # a: its own record, 10 s x 4/2 epochs; b: its own at K = 5 (extrapolated in K); c: no record on its data
    assert found == plan.CellsEstimate(10.0 * 4 / 2 + 30.0, (2,), 1, ("K",))
    assert plan.estimate_cells([], times) == plan.CellsEstimate(0.0, (), 0, ())
    assert plan.estimate_cells(["c"], times, None, [{"dataset": "e"}]).seconds is None   # none has a record



def test_cells_of_the_same_method_and_parameters_share_one_search():
    """A profile's seeds repeat its cells' parameters: estimate_cells searches once per distinct method and
    parameters (nearest_once: in any order of the parameters) and sums exactly what one search per cell sums."""
    import fyexp.run.estimate as plan

    times = [Recorded("a", 10.0, None, {"dataset": "d", "K": 5}), Recorded("a", 14.0, None, {"dataset": "d", "K": 5}),
             Recorded("b", 30.0, None, {"dataset": "d", "K": 50})]
    params = [{"dataset": "d", "K": 5}, {"K": 5, "dataset": "d"}, {"dataset": "d", "K": 50}, {"dataset": "d", "K": 5.0},
              {"dataset": "e"}]
    methods = ["a", "a", "b", "a", "a"]
    per_cell = [sum(t.seconds for t in pool) / len(pool) for m, p in zip(methods, params)
                if (pool := plan.nearest(m, p, times))]
    find = plan.nearest_once(times)
    pools = [find(m, p) for m, p in zip(methods, params)]
    # one search, one shared list, for the second cell (the first's parameters in another order); 5.0 is not 5 here
    assert pools[1] is pools[0] is find("a", params[0]) and pools[3] is not pools[0] and pools[3] == pools[0]
    assert len({id(pool) for pool in pools}) == 4
    assert pools == [plan.nearest(m, p, times) for m, p in zip(methods, params)]
    found = plan.estimate_cells(methods, times, None, params)
    assert found.seconds == sum(per_cell) and found.unestimated == (4,)


def test_a_csv_file_is_read_once_while_unchanged_and_again_once_changed(tmp_path, monkeypatch):
    """plan.csv_rows keeps a file's rows for the process under its stat signature: a file rewritten at the same
    size with its modification time put back is read again (its inode or change time differ)."""
    import os

    import fyexp.store.damaged as damaged
    from fyexp.run.estimate import csv_rows

    path = tmp_path / "cell.csv"
    path.write_text("profile,wall_time_s\npaper,0.446\n")
    reads, real = [], damaged.read_record_text
    monkeypatch.setattr(damaged, "read_record_text", lambda *a: reads.append(a) or real(*a))
    assert csv_rows(path) == [{"profile": "paper", "wall_time_s": "0.446"}] == csv_rows(path)
    assert len(reads) == 1
    before = path.stat()
    path.write_text("profile,wall_time_s\npaper,0.947\n")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert csv_rows(path) == [{"profile": "paper", "wall_time_s": "0.947"}] and len(reads) == 2
    assert csv_rows(tmp_path / "missing.csv") == []
    (tmp_path / "link.csv").symlink_to(path)
    assert csv_rows(tmp_path / "link.csv") == []      # a link is never followed

def test_extrapolated_keys_pools_by_method_first_and_gathers_the_settings_of_every_cell():
    from fyexp.run.estimate import extrapolated_text

    iwae_k5 = Recorded("iwae", 1000.0, 255, {"dataset": "caltech", "K": 5, "L": 1})
    vae_k50 = Recorded("vae", 3000.0, 255, {"dataset": "caltech", "K": 50, "L": 2})
    # the IWAE K = 50, L = 1 cell: its own method at K = 5 is nearer (3 in common) than the VAE at K = 50 (2)
    assert extrapolated_keys(["iwae"], [iwae_k5, vae_k50], [{"dataset": "caltech", "K": 50, "L": 1}]) == (1, ("K",))
    # the settings of every extrapolated cell, in whatever order the cells come
    two = [{"dataset": "caltech", "K": 50, "L": 2}, {"dataset": "caltech", "K": 50, "L": 1}]
    assert extrapolated_keys(["iwae", "iwae"], [iwae_k5], two) == (2, ("K", "L"))
    assert extrapolated_text(2, ("K", "L")) == "2 of them at another K, L than any recorded cell"
    assert extrapolated_text(0, ()) == ""


def _set_wall_time(results: Path, key: str, seconds: float) -> None:
    """Give a finished toy cell a chosen wall time (a real run's is milliseconds and never the same twice)."""
    import pandas as pd

    path = results / "toy" / "cells" / "paper" / f"{key}.csv"
    pd.read_csv(path).assign(wall_time_s=seconds).to_csv(path, index=False)


def test_run_plan_counts_the_grid_and_estimates_each_cell_from_its_nearest_recorded_cells(tmp_path, monkeypatch):
    """In process, the plan of ``fyexp run`` at its edges: defaults (finished cells skipped, on the cpu), another
    device or other data (the finished cells at old settings), ``--force`` with ``--only``, and a ``--set`` variant
    that reads its base profile's times, scales them by the stated epochs and names the setting no recorded cell
    had."""
    from fyexp.run.cell_filter import parse_only
    from fyexp.cli.commands.options import Options, resolve_experiment
    from fyexp.run.plan import run_plan
    from fyexp.run.runner import run_experiment
    from tests.toy_experiment import Toy

    # the toy's data: the folder it is read from (a real runner names file sizes), part of a cell's settings
    monkeypatch.setattr(Toy, "data_identity", lambda self, config, data_dir: str(data_dir))

    def toy(*sets):
        return resolve_experiment("toy", Options(profile="paper", sets=sets, experiments_dir=TOY_SPECS))

    results = tmp_path / "results"
    experiment, resolved = toy()
    run_experiment(resolved, experiment, device="cpu", data_dir=None, results_dir=results, show_progress=False,
                   only=parse_only(["x=2"]))    # x = 2 at both seeds, each with its run record (1 epoch)
    _set_wall_time(results, "toy__x=2__seed=0", 100.0)
    _set_wall_time(results, "toy__x=2__seed=1", 300.0)
    _record(results, 600.0, seeds=(0,))         # x = 1 at seed 0, without a run record: no epochs stated
    # (and of unknown provenance: its time is recorded, the cell is not finished)

    plan = run_plan(resolved, experiment, results)
    assert (plan.cells, plan.finished, plan.to_run, plan.old_settings) == (4, 2, 2, 0)
    assert [c.key for c in plan.todo] == ["toy__x=1__seed=0", "toy__x=1__seed=1"]
    assert plan.estimate_s == 1200.0  # x = 1's time
    assert (plan.recorded, plan.source, plan.unestimated, plan.extrapolated) == (3, str(results), 0, 0)

    elsewhere = run_plan(resolved, experiment, results, device="cuda")   # the x = 2 cells ran on another device
    assert (elsewhere.finished, elsewhere.to_run, elsewhere.old_settings) == (0, 4, 2)
    assert elsewhere.estimate_s == 2 * 600.0 + 2 * (100.0 + 300.0) / 2

    moved = run_plan(resolved, experiment, results, data_dir=tmp_path / "data")   # they read no data folder
    assert (moved.finished, moved.to_run, moved.old_settings) == (0, 4, 2)

    forced = run_plan(resolved, experiment, results, force=True, only=parse_only(["x=1"]))
    assert (forced.cells, forced.finished, forced.to_run, forced.estimate_s) == (2, 0, 2, 1200.0)

    experiment, variant = toy("values=[1.0,2.0,3.0]", "epochs=4")
    plan = run_plan(variant, experiment, results)   # nothing finished at the variant: its base profile's times
    assert (plan.profile, plan.cells, plan.to_run, plan.recorded) == (variant.profile, 6, 6, 3)
    x1, x2 = 600.0, (100.0 * 4 + 300.0 * 4) / 2     # x = 2's recorded 1 epoch scaled to 4; x = 1's states none
    x3 = (600.0 + 400.0 + 1200.0) / 3               # no recorded x = 3: every cell is as near
    assert plan.estimate_s == pytest.approx(2 * (x1 + x2 + x3))
    assert (plan.extrapolated, plan.extrapolated_keys) == (2, ("x",))
    nothing = run_plan(variant, experiment, tmp_path / "empty")   # no toy times here nor in the checkout's results
    assert (nothing.source, nothing.recorded, nothing.estimate_s, nothing.unestimated) == ("", 0, None, 6)


def test_run_plan_reads_each_cells_epochs_from_its_own_training_block(tmp_path):
    """vr-vae keeps a training block per data set (Frey Face's first): a Caltech cell's time is scaled by
    ``train_caltech``'s epochs, not by the first block's."""
    import json

    from fyexp.run.cell_filter import parse_only
    from fyexp.cli.commands.options import Options, resolve_experiment
    from fyexp.run.plan import run_plan

    experiment, resolved = resolve_experiment("vr-vae", Options(profile="paper"))
    caltech, frey = resolved.config.train_caltech.epochs, resolved.config.train_freyface.epochs
    assert caltech != frey
    store = ResultStore(tmp_path, "vr-vae")
    prov = {"git_commit": "unknown", "fyexp_version": "0", "device": "cpu", "wall_time_s": 1000.0,
            "timestamp": "2026-01-01T00:00:00+00:00"}
    recorded = Cell("vae", 0, {"dataset": "caltech", "L": 1, "K": 50})
    store.write_cell("paper", recorded, [{"metric": "test_loglik", "value": -120.0}], prov)
    record = tmp_path / "vr-vae" / "cells" / "paper" / f"{recorded.key}.record.json"
    record.write_text(json.dumps({"settings": {"config": {"train_caltech": {"epochs": 50}}}}))
    plan = run_plan(resolved, experiment, tmp_path, only=parse_only(["dataset=caltech", "K=5", "method=vae"]))
    assert plan.to_run == 1 and plan.estimate_s == pytest.approx(1000.0 * caltech / 50)


def test_the_committed_results_are_the_checkouts_own_results_folder():
    from fyexp.run.estimate import committed_results

    assert committed_results() == ROOT / "results"


def test_long_plan_reason_on_both_sides_of_two_hours_and_for_unknown_times():
    assert long_plan_reason(3, 7300.0, "quick") == "it is estimated at 2.0 h (over 2 h)"
    assert long_plan_reason(3, 7100.0, "paper") is None
    assert long_plan_reason(3, None, "paper") == "its time is unknown at profile 'paper'"
    assert long_plan_reason(3, None, "paper-text") is not None
    assert long_plan_reason(3, None, "quick") is None  # a reduced profile's unknown time does not ask
    assert long_plan_reason(0, None, "paper") is None  # nothing to run


def test_a_plan_with_a_scaled_time_is_confirmed_by_that_time_not_as_unknown():
    # frac-vae paper: no recorded cell of the profile, all 528 scaled (issue 49: "unknown" after "about 157,993 h")
    reason = long_plan_reason(528, None, "paper", 528, 157_993 * 3600.0, 528)
    assert reason == ("it is estimated at about 157,993 h, scaled from other profiles' cells (an extrapolation) for "
                      "528 cells (over 2 h)")
    assert "unknown" not in reason
    # vr-vae paper: 40 cells recorded (1.0 h), 14 scaled (706 h), one of them without any
    both = long_plan_reason(55, 3600.0, "paper", 15, 706 * 3600.0, 14)
    assert both == ("it is estimated at about 707 h, 706 h of it for 14 cells scaled from other profiles' cells (an "
                    "extrapolation) (over 2 h); 1 cell without any estimate")
    short = 3000.0                                                    # under two hours: asked at paper only
    assert long_plan_reason(5, None, "paper", 5, short, 5) == (
        "it is estimated at about 50 min, scaled from other profiles' cells (an extrapolation) for 5 cells, at "
        "profile 'paper'")
    assert long_plan_reason(5, None, "cpu", 5, short, 5) is None
    assert long_plan_reason(5, None, "cpu", 5, 7300.0, 5).startswith("it is estimated at about 2.0 h")
    assert long_plan_reason(5, None, "paper", 5, None, 0) == "its time is unknown at profile 'paper'"  # none scaled


def test_the_plan_line_says_what_runs_and_how_long():
    line = describe_plan(RunPlan("vr-vae", "paper", 60, 3, 57, 2, 110520.0, 3, "results"))
    assert line.startswith("plan: vr-vae [paper]: 60 cells: 57 to run (2 at old settings), 3 finished;")
    assert "estimate 30.7 h (from 3 recorded cells in results" in line
    assert "estimate unknown" in describe_plan(RunPlan("toy", "quick", 1, 0, 1, 0, None))


@pytest.mark.slow
def test_installed_run_prints_its_plan_and_refuses_a_long_one_off_a_terminal(tmp_path):
    results = tmp_path / "results"
    env = {"FYEXP_EXPERIMENTS_DIR": str(TOY_SPECS), "FYEXP_RESULTS_DIR": str(results)}
    unknown = run_cli("run", "toy", "--no-progress", env=env)  # paper profile, nothing recorded anywhere
    assert unknown.returncode == 2 and "Traceback" not in unknown.stderr
    assert unknown.stderr.strip().splitlines()[-1] == (
        "error: fyexp run toy: not started: its time is unknown at profile 'paper'; pass --yes to start it "
        "(--dry-run shows the plan)")
    assert "plan: toy [paper]: 4 cells: 4 to run, 0 finished; estimate unknown" in unknown.stderr
    assert not results.joinpath("toy", "cells").exists()

    _record(results, 5000.0, finished=True)  # x=1 finished at 5000 s a cell: the two x=2 cells take 10,000 s > 2 h
    long = run_cli("run", "toy", "--no-progress", env=env)
    assert long.returncode == 2 and "it is estimated at 2.8 h (over 2 h); pass --yes" in long.stderr
    assert _cells(results) == ["toy__x=1__seed=0.csv", "toy__x=1__seed=1.csv"]
    dry = run_cli("run", "toy", "--dry-run", env=env)
    assert dry.returncode == 0 and dry.stdout.startswith(
        "plan: toy [paper]: 4 cells: 2 to run, 2 finished; estimate 2.8 h (from 2 recorded cells in")
    local = run_cli("run", "toy", "--dry-run", "--executor", "local", env=env)  # every executor has a dry run
    assert local.returncode == 0 and local.stdout == dry.stdout
    assert len(_cells(results)) == 2

    yes = run_cli("run", "toy", "--no-progress", "--yes", "--only", "seed=0", env=env)
    assert yes.returncode == 0 and "1 cell run" in " ".join(yes.stderr.split()), yes.stderr


@pytest.mark.slow
def test_installed_run_starts_a_plan_under_two_hours_without_asking(tmp_path):
    results = tmp_path / "results"
    env = {"FYEXP_EXPERIMENTS_DIR": str(TOY_SPECS), "FYEXP_RESULTS_DIR": str(results)}
    _record(results, 3000.0, finished=True)  # two cells to run at 3000 s each: 100 min
    ran = run_cli("run", "toy", "--no-progress", env=env)
    assert ran.returncode == 0, ran.stderr
    assert "plan: toy [paper]: 4 cells: 2 to run, 2 finished; estimate 100 min" in ran.stderr
    assert ran.stderr.index("plan: toy") < ran.stderr.index("toy__x=2__seed=0")  # before the first cell
    assert len(_cells(results)) == 4


def _answer_in_terminal(args: list[str], env: dict, answer: bytes, timeout: float = 120) -> tuple[int, str]:
    """Run the installed fyexp on a pseudo-terminal, type ``answer`` at its question, return (status, screen)."""
    code, screen = run_in_terminal(*args, env={"TERM": "xterm", **env}, timeout=timeout,
                                   answer=(b"Start it?", answer))
    return code, strip_ansi(screen)


@pytest.mark.slow
def test_on_a_terminal_a_long_plan_asks_and_a_no_starts_nothing(tmp_path):
    results = tmp_path / "results"
    env = {"FYEXP_EXPERIMENTS_DIR": str(TOY_SPECS), "FYEXP_RESULTS_DIR": str(results)}
    code, screen = _answer_in_terminal(["run", "toy", "--no-progress"], env, b"n\n")
    assert "its time is unknown at profile 'paper'. Start it?" in screen
    assert code == 1 and "not started" in screen and not results.joinpath("toy", "cells").exists()
    code, screen = _answer_in_terminal(["run", "toy", "--no-progress"], env, b"y\n")
    assert code == 0 and "4 cells run" in screen, screen


@pytest.mark.slow
def test_installed_reproduce_all_dry_run_lists_each_experiment_once_with_a_total(tmp_path):
    """fyvl's claims read gmm-clustering, planned under fyvi: listed once, named again as shared, one total."""
    import shutil

    specs = tmp_path / "specs"
    specs.mkdir()
    shutil.copy(TOY_SPECS / "toy.yaml", specs / "toy.yaml")
    shutil.copy(ROOT / "experiments" / "gmm-clustering.yaml", specs / "gmm-clustering.yaml")
    shown = run_cli("reproduce", "all", "--dry-run", "--experiments-dir", str(specs), "--results-dir",
                    str(tmp_path / "results"))
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert sum(line.startswith("  gmm-clustering: ") for line in lines) == 1
    assert sum(line.startswith("  toy: ") for line in lines) == 1
    assert "  also needs gmm-clustering (listed above)" in lines  # fyvl
    assert lines[-2] == "all 5 papers, each experiment once (2 experiments):"
    from fyexp.core.words import duration

    assert lines[-1] == (f"  total: 64 cells, 64 to run, estimate {duration(committed_paper_seconds())} (+ "
                         "cells without recorded times) from recorded times, those of the project's machine × 1 for this machine's "
                         "speed ($FYEXP_MACHINE_SPEED)")  # gmm-clustering's committed
    # paper times (all 60 of its cells); none for toy
