"""``run --force`` redoes finished cells but resumes a forced run that was interrupted: a work folder whose
training finished before its cell's result was written is emptied (its checkpoint would be returned at once), one
left part-way is kept, and so is one trained since the last result but not measured (fyexp.train.training_finished,
fyexp.run.runner.forget_finished_training, fyexp.run.runner.trained_since_result)."""

from __future__ import annotations

import os
from pathlib import Path

import torch
from torch import nn

from fyexp.store.results import Cell, ResultStore
from fyexp.run.runner import forget_finished_training, trained_since_result
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


def _written(path: Path, when_ns: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        path.write_text("experiment,metric,value\n")
    os.utime(path, ns=(when_ns, when_ns))


def test_force_empties_finished_work_folders_and_resumes_interrupted_ones(tmp_path):
    """A finished training older than its cell's result is emptied; one part-way is resumed; one that finished
    after the last result was written (a forced run cut short while measuring), or whose cell has no result, is
    kept to be measured."""
    store = ResultStore(tmp_path, "toy")
    finished, interrupted, fresh, unmeasured, never = (Cell("m", s) for s in range(5))
    for cell, done in ((finished, True), (interrupted, False), (unmeasured, True), (never, True)):
        _checkpoint(store.work_dir("paper", cell), done=done)
    t = 1_700_000_000 * 10**9
    _written(store.work_dir("paper", finished) / CHECKPOINT, t)
    _written(store.cell_path("paper", finished), t + 10**9)        # its result, written after its training
    _written(store.cell_path("paper", unmeasured), t)                # an older result ...
    _written(store.work_dir("paper", unmeasured) / CHECKPOINT, t + 1)   # ... and a forced retraining since

    class Notes:
        lines: list[str] = []

        def note(self, text):
            self.lines.append(text)

    notes = Notes()
    forget_finished_training(store, "paper", [finished, interrupted, fresh, unmeasured, never], notes)
    assert not store.work_dir("paper", finished).exists()
    for kept in (interrupted, unmeasured, never):
        assert (store.work_dir("paper", kept) / CHECKPOINT).is_file()
    measure = ("its training finished after its last result was written (a run cut short before measuring); "
               "measuring it, not retraining (delete {} to start it over)")
    assert notes.lines == [f"cell {interrupted.key}: resuming its unfinished training (an interrupted run; delete "
                           f"{store.work_dir('paper', interrupted)} to start it over)",
                           f"cell {unmeasured.key}: " + measure.format(store.work_dir("paper", unmeasured)),
                           f"cell {never.key}: " + measure.format(store.work_dir("paper", never))]


def test_trained_since_result_compares_every_checkpoint_with_the_result(tmp_path):
    t = 1_700_000_000 * 10**9
    result = tmp_path / "cell.csv"
    assert not trained_since_result(tmp_path / "work", result)            # no checkpoint: nothing to keep
    _checkpoint(tmp_path / "work" / "group0", done=True)
    _checkpoint(tmp_path / "work" / "group1", done=True)
    assert trained_since_result(tmp_path / "work", result)                # no result yet
    _written(result, t)
    _written(tmp_path / "work" / "group0" / CHECKPOINT, t + 1)
    _written(tmp_path / "work" / "group1" / CHECKPOINT, t + 2)
    assert trained_since_result(tmp_path / "work", result)
    _written(tmp_path / "work" / "group1" / CHECKPOINT, t)                # one as old as the result: from it
    assert not trained_since_result(tmp_path / "work", result)
