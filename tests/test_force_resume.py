"""``run --force`` redoes finished cells but resumes a forced run that was interrupted: a work folder whose
training finished is emptied (its checkpoint would be returned at once), one left part-way is kept
(fyexp.train.training_finished, fyexp.runner.forget_finished_training)."""

from __future__ import annotations

from pathlib import Path

import torch
from torch import nn

from fyexp.results import Cell, ResultStore
from fyexp.runner import forget_finished_training
from fyexp.train import CHECKPOINT, training_finished
from fyexp.train._state import save_checkpoint


class _Task:
    def __init__(self):
        self.model = nn.Linear(2, 1)

    def extra_state(self):
        return {}


def _checkpoint(folder: Path, done: bool) -> None:
    task = _Task()
    save_checkpoint(folder, task, {"main": torch.optim.SGD(task.model.parameters(), lr=0.1)},
                    torch.Generator().manual_seed(0), {}, [{"epoch": 1}], epoch=1, done=done)


def test_training_finished_reads_every_checkpoint_under_the_folder(tmp_path):
    assert training_finished(tmp_path / "absent") and training_finished(tmp_path)  # nothing to keep
    _checkpoint(tmp_path / "one", done=True)
    assert training_finished(tmp_path / "one")
    _checkpoint(tmp_path / "two", done=False)
    assert not training_finished(tmp_path / "two")
    _checkpoint(tmp_path / "groups" / "group0", done=True)   # a cell trained in groups, the second cut short
    _checkpoint(tmp_path / "groups" / "group1", done=False)
    assert not training_finished(tmp_path / "groups")
    (tmp_path / "garbage").mkdir()
    (tmp_path / "garbage" / CHECKPOINT).write_bytes(b"not a checkpoint")
    assert training_finished(tmp_path / "garbage")           # unreadable: discarded, as before


def test_force_empties_finished_work_folders_and_resumes_interrupted_ones(tmp_path):
    store = ResultStore(tmp_path, "toy")
    finished, interrupted, fresh = Cell("m", 0), Cell("m", 1), Cell("m", 2)
    _checkpoint(store.work_dir("paper", finished), done=True)
    _checkpoint(store.work_dir("paper", interrupted), done=False)

    class Notes:
        lines: list[str] = []

        def note(self, text):
            self.lines.append(text)

    notes = Notes()
    forget_finished_training(store, "paper", [finished, interrupted, fresh], notes)
    assert not store.work_dir("paper", finished).exists()
    assert (store.work_dir("paper", interrupted) / CHECKPOINT).is_file()
    assert notes.lines == [f"cell {interrupted.key}: resuming its unfinished training (an interrupted run; delete "
                           f"{store.work_dir('paper', interrupted)} to start it over)"]
