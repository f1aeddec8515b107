"""The runner hands the seeds of each pending cell to ``experiment.prefit`` when ``train.ensemble`` is on."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from types import SimpleNamespace

from fyexp.experiments import Experiment
from fyexp.store.results import Cell
from fyexp.run.runner import run_experiment


@dataclass
class Config:
    train: SimpleNamespace = field(default_factory=lambda: SimpleNamespace(ensemble=True))


class Recording(Experiment):
    name = "recording"
    Config = Config

    def __init__(self):
        self.calls = []

    def cells(self, config, seeds):
        return [Cell("m", s, {"a": a}) for a in (1, 2) for s in seeds]

    def prefit(self, config, cells, ctxs):
        self.calls.append(("prefit", sorted(c.key for c in cells), [x.work_dir.name for x in ctxs]))

    def run_cell(self, config, cell, ctx):
        self.calls.append(("run", cell.key))
        return [{"metric": "x", "value": float(cell.seed)}]


def _resolved(config, seeds):
    spec = SimpleNamespace(name="recording", runner="recording")
    return SimpleNamespace(spec=spec, name="recording", profile="quick", seeds=seeds, config=config)


def test_seeds_of_a_cell_are_prefit_together_then_each_cell_runs(tmp_path):
    experiment = Recording()
    summary = run_experiment(_resolved(Config(), (0, 1, 2)), experiment, device="cpu", data_dir=None,
                             results_dir=tmp_path, show_progress=False)
    assert summary.ran == 6
    prefits = [c for c in experiment.calls if c[0] == "prefit"]
    assert [p[1] for p in prefits] == [[f"m__a=1__seed={s}" for s in (0, 1, 2)], [f"m__a=2__seed={s}" for s in (0, 1, 2)]]
    assert all(p[1] == p[2] for p in prefits)  # each member trains in its own cell's work folder
    assert experiment.calls.index(prefits[-1]) < experiment.calls.index(("run", "m__a=1__seed=0"))


def test_no_prefit_without_ensemble(tmp_path):
    experiment = Recording()
    config = Config(train=SimpleNamespace(ensemble=False))
    run_experiment(_resolved(config, (0, 1)), experiment, device="cpu", data_dir=None, results_dir=tmp_path,
                   show_progress=False)
    assert not [c for c in experiment.calls if c[0] == "prefit"]


def test_force_discards_a_cells_checkpoints_so_it_retrains(tmp_path):
    experiment = Recording()
    resolved = _resolved(Config(train=SimpleNamespace(ensemble=False)), (0,))
    run_experiment(resolved, experiment, device="cpu", data_dir=None, results_dir=tmp_path, show_progress=False)
    stale = tmp_path / "recording" / "work" / "quick" / "m__a=1__seed=0" / "checkpoint.pt"
    stale.parent.mkdir(parents=True, exist_ok=True)  # the run made it (its settings mark)
    stale.write_bytes(b"a finished run's checkpoint")
    result = tmp_path / "recording" / "cells" / "quick" / "m__a=1__seed=0.csv"
    written = result.stat().st_mtime_ns  # a finished run's checkpoint precedes its result (runner.trained_since_result)
    os.utime(stale, ns=(written - 10**9, written - 10**9))
    run_experiment(resolved, experiment, device="cpu", data_dir=None, results_dir=tmp_path, show_progress=False)
    assert stale.exists()  # a rerun without --force skips the finished cell and leaves its folder alone
    run_experiment(resolved, experiment, device="cpu", data_dir=None, results_dir=tmp_path, show_progress=False,
                   force=True)
    assert not stale.exists()
