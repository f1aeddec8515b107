"""A cell's work folder holds only checkpoints of its own settings, and a resumed cell's ``wall_time_s`` counts
its training in earlier processes (``fyexp/store/work_dirs.py``): unit rules, the real Trainer, and the installed
``fyexp`` script on the toy experiment."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest
import torch
from torch import nn

from fyexp.experiments import Experiment
from fyexp.store.results import Cell
from fyexp.run.runner import run_experiment
from fyexp.train import TrainConfig, Trainer, TrainTask
from fyexp.train._state import METRICS
from fyexp.store.work_dirs import SETTINGS_MARK, TRAINING_HISTORY, claim_work_dir, earlier_training_s
from tests.conftest import TOY_SPECS, run_cli


def test_a_folder_marked_for_other_settings_or_unmarked_is_emptied_and_one_of_the_same_is_kept(tmp_path):
    folder = tmp_path / "cell"
    assert claim_work_dir(folder, "aaa") is False and (folder / SETTINGS_MARK).read_text() == "aaa\n"
    (folder / "checkpoint.pt").write_text("trained at aaa")
    assert claim_work_dir(folder, "aaa") is False and (folder / "checkpoint.pt").is_file()
    assert claim_work_dir(folder, "bbb") is True and not (folder / "checkpoint.pt").exists()
    assert (folder / SETTINGS_MARK).read_text() == "bbb\n"
    unmarked = tmp_path / "unmarked"  # checkpoints of unknown settings: emptied, then marked
    unmarked.mkdir()
    (unmarked / "checkpoint.pt").write_text("unknown settings")
    assert claim_work_dir(unmarked, "ccc") is True and not (unmarked / "checkpoint.pt").exists()
    assert (unmarked / SETTINGS_MARK).read_text() == "ccc\n"
    empty = tmp_path / "empty"  # an empty folder without a mark holds nothing to discard
    empty.mkdir()
    assert claim_work_dir(empty, "ddd") is False and (empty / SETTINGS_MARK).read_text() == "ddd\n"


def test_earlier_training_is_the_sum_of_every_history_under_the_folder(tmp_path):
    assert TRAINING_HISTORY == METRICS  # the Trainer's history file, named without importing torch there
    assert earlier_training_s(tmp_path / "absent") == 0.0
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / METRICS).write_text("epoch,epoch_time_s\n1,1.5\n2,2.25\n")
    (tmp_path / "b" / "group").mkdir(parents=True)
    (tmp_path / "b" / "group" / METRICS).write_text("epoch,epoch_time_s,loss\n1,4.0,1\n2,,2\n3,nan,3\n")
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / METRICS).write_text("epoch,loss\n1,3\n")  # no time column
    assert earlier_training_s(tmp_path) == 7.75


class Line(TrainTask):
    def __init__(self):
        self.model = nn.Linear(1, 1)

    def loss(self, batch):
        x, = batch
        return ((self.model(x) - 2 * x) ** 2).mean(), {}


def _fit(work_dir: Path, epochs: int) -> list[dict]:
    torch.manual_seed(0)
    return Trainer(TrainConfig(epochs=epochs, batch_size=8, seed=0), work_dir=work_dir).fit(
        Line(), (torch.linspace(-1, 1, 32)[:, None],))


def test_the_trainer_retrains_after_a_settings_change_instead_of_returning_the_old_checkpoint(tmp_path):
    folder = tmp_path / "cell"
    claim_work_dir(folder, "epochs=2")
    assert len(_fit(folder, 2)) == 2
    assert len(_fit(folder, 3)) == 2  # the hole: a finished checkpoint comes back under other settings
    claim_work_dir(folder, "epochs=3")
    history = _fit(folder, 3)
    assert [h["epoch"] for h in history] == [1, 2, 3]
    assert earlier_training_s(folder) == sum(h["epoch_time_s"] for h in history) > 0


def _env(tmp_path: Path) -> tuple[dict, Path]:
    specs = tmp_path / "specs"
    specs.mkdir()
    spec = specs / "toy.yaml"
    spec.write_text((TOY_SPECS / "toy.yaml").read_text().replace("    values: [0.5]",
                                                                 "    values: [0.5]\n    resume: true"))
    return {"FYEXP_EXPERIMENTS_DIR": str(specs), "FYEXP_RESULTS_DIR": str(tmp_path / "results")}, spec


@pytest.mark.slow
def test_a_settings_edit_reruns_from_scratch_not_from_the_old_checkpoint(tmp_path):
    env, spec = _env(tmp_path)
    assert run_cli("run", "toy", "-p", "quick", "--no-progress", env=env).returncode == 0
    spec.write_text(spec.read_text().replace("resume: true", "resume: true\n    mode: cube"))
    edited = run_cli("run", "toy", "-p", "quick", "--no-progress", env=env)
    assert edited.returncode == 0, edited.stderr
    assert "work folder held checkpoints trained at other settings; discarded" in " ".join(edited.stderr.split())
    rows = pd.read_csv(tmp_path / "results/toy/results.csv")
    assert rows["value"].tolist() == [0.125]  # 0.5³, not the square's 0.25 from the old checkpoint


@pytest.mark.slow
def test_a_resumed_cell_records_its_training_in_earlier_processes(tmp_path):
    env, _ = _env(tmp_path)
    assert run_cli("run", "toy", "-p", "quick", "--no-progress", env=env).returncode == 0
    cells = tmp_path / "results/toy/cells/quick"
    first = float(pd.read_csv(next(cells.glob("*.csv")))["wall_time_s"].iloc[0])
    assert first < 100
    for path in cells.glob("*"):  # as if the process had been killed before writing the cell
        path.unlink()
    (work,) = (tmp_path / "results/toy/work/quick").glob("toy__*")  # beside it: claims/, the cells' claim marks
    (work / METRICS).write_text("epoch,epoch_time_s\n1,100.0\n2,250.0\n")
    assert run_cli("run", "toy", "-p", "quick", "--no-progress", env=env).returncode == 0
    resumed = float(pd.read_csv(next(cells.glob("*.csv")))["wall_time_s"].iloc[0])
    assert 350 <= resumed < 350 + 100


@dataclass
class PowerConfig:
    power: int = 2


class WithReference(Experiment):
    """Like frac's Table 7: cell ``dependent`` (run first) uses the model of cell ``reference``, training it in the
    reference's own work folder when no checkpoint is there, as the reference cell itself then finds it."""
    name = "with-reference"
    Config = PowerConfig

    def cells(self, config, seeds):
        return [Cell("dependent", 0, {"x": 2.0}), Cell("reference", 0, {"x": 2.0})]

    def run_cell(self, config, cell, ctx):
        saved = Path(ctx.work_dir).parent / "reference__x=2__seed=0" / "checkpoint.txt"
        if not saved.is_file():
            saved.parent.mkdir(parents=True, exist_ok=True)
            saved.write_text(repr(cell.params["x"] ** config.power))
        return [{"metric": "value", "value": float(saved.read_text())}]


def test_every_pending_cells_folder_is_claimed_before_any_cell_runs(tmp_path):
    def run(power):
        spec = SimpleNamespace(name="with-reference", runner="with-reference")
        resolved = SimpleNamespace(spec=spec, name="with-reference", profile="quick", seeds=(0,),
                                   config=PowerConfig(power))
        run_experiment(resolved, WithReference(), device="cpu", data_dir=None, results_dir=tmp_path,
                       show_progress=False)
        return sorted(pd.read_csv(tmp_path / "with-reference" / "results.csv")["value"])

    assert run(2) == [4.0, 4.0]
    assert run(3) == [8.0, 8.0]  # not the square left in the reference's folder
