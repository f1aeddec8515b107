"""A tiny experiment used by the framework tests: each cell squares a number (optionally slowly)."""

from __future__ import annotations

import time
from pathlib import Path
from dataclasses import dataclass, field

from fyexp.core.errors import CellFailed, CellSkipped, require
from fyexp.experiments import Experiment, register
from fyexp.store.results import Cell


@dataclass
class ToyConfig:
    values: list[float] = field(default_factory=lambda: [1.0, 2.0])
    sleep_s: float = 0.0
    fail_on: float = -1.0
    skip_on: float = -1.0   # a cell whose "data is missing" (CellSkipped)
    mode: str = "square"
    lr: float = 0.1
    n_trials: int = 4
    search: dict = field(default_factory=dict)
    resume: bool = False    # keep the value in the cell's work folder and return it when there (a finished checkpoint)
    epochs: int = 1         # the training epochs a cell states (the toy trains nothing): the plan scales times by them
    log: str = ""           # a file each cell run appends its key to (tests count how often each cell ran)

    def __post_init__(self):
        require(self.sleep_s >= 0, "sleep_s", "a number >= 0", self.sleep_s)
        require(self.mode in ("square", "cube"), "mode", "one of 'square', 'cube'", self.mode)


@register
class Toy(Experiment):
    name = "toy"
    Config = ToyConfig

    def cells(self, config, seeds):
        return [Cell("toy", seed, {"x": v}) for v in config.values for seed in seeds]

    def run_cell(self, config, cell, ctx):
        if config.log:
            with open(config.log, "a", encoding="utf-8") as handle:   # one short append: whole lines, any process
                handle.write(f"{cell.key}\n")
        time.sleep(config.sleep_s)
        x = cell.params["x"]
        if x == config.skip_on:
            raise CellSkipped(f"data missing (toy data for x={x}; get it from the toy's own data set)")
        if x == config.fail_on:
            raise CellFailed(f"x={x} is the failing value")
        power = 2 if config.mode == "square" else 3
        value = x ** power + cell.seed
        if config.resume:  # as the Trainer does: a finished checkpoint is returned, not retrained
            saved = Path(ctx.work_dir) / "checkpoint.txt"
            value = float(saved.read_text()) if saved.is_file() else value
            saved.parent.mkdir(parents=True, exist_ok=True)
            saved.write_text(repr(value))
        return [{"metric": "adjusted_mi", "value": value, "paper": "fyvi", "table": "1",
                 "setting": "synthetic GMM", "paper_row": "Standard EM"}]

    TRIAL_OBJECTIVE = "validation loss"

    def trial(self, config, ctx, report, work_dir):
        """A tuning trial: the 'validation loss' (log10 lr + 1)² is smallest at lr = 0.1."""
        import math

        time.sleep(config.sleep_s)
        loss = (math.log10(config.lr) + 1.0) ** 2
        report(1, loss)
        return loss
