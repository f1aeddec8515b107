"""The settings of the vr-bnn runner (Li & Turner §5.2; docs/protocols.md): its methods, grid and hyperparameters.

Torch-free: reading a spec (``fyexp show``) imports this module, not the runner's models."""

from __future__ import annotations

import math
from dataclasses import field
from typing import Annotated

from fyexp.constraints import DISTINCT, OneOf, PositiveFloat, PositiveInt, settings
from fyexp.experiments.grid import axes
from fyexp.train import OptimizerConfig, TrainConfig

#: The methods of Tables 2–3 and their α; the code (position + 1) makes each model's random streams independent
#: of the grid (fyexp.train.batched_bnn.stream_seed).
METHODS: dict[str, float] = {"VI": 1.0, "VR-0.5": 0.5, "VR-0.0": 0.0, "VR-max": -math.inf}
METHOD_CODES = {name: i + 1 for i, name in enumerate(METHODS)}
DATASETS = ["boston", "concrete", "energy", "wine", "yacht", "protein", "year"]


@axes
class Grid:
    """The cells: one per UCI data set."""

    dataset: list[str] = field(default_factory=lambda: list(DATASETS))


@settings
class Config:
    """Settings of §5.2 and docs/protocols.md; ``*_by_dataset`` override the defaults for the large sets."""

    grid: Grid = field(default_factory=Grid)
    methods: Annotated[list[Annotated[str, OneOf(METHODS)]], DISTINCT] = field(default_factory=lambda: list(METHODS))
    n_splits: PositiveInt | None = None  # null: every split of the data set
    hidden: PositiveInt = 50
    hidden_by_dataset: dict[str, PositiveInt] = field(default_factory=lambda: {"protein": 100, "year": 100})
    n_samples: PositiveInt = 100
    n_samples_by_dataset: dict[str, PositiveInt] = field(default_factory=lambda: {"protein": 10, "year": 10})
    epochs: PositiveInt = 500
    epochs_by_dataset: dict[str, PositiveInt] = field(default_factory=lambda: {"protein": 100, "year": 40})
    test_samples: PositiveInt | None = None  # null: the training K (the authors' evaluation)
    prior_var: PositiveFloat = 1.0
    init_std: float = 0.1
    init_log_var: float = -10.0
    analytic_kl: bool = True
    num_threads: int | None = 1
    model_chunk: int | None = 4  # models per batched product (cache-sized on a CPU; null: all at once)
    train: TrainConfig = field(default_factory=lambda: TrainConfig(batch_size=32, optimizer=OptimizerConfig(lr=1e-3)))
    datasets: list[str] | None = None  # a spec written before ``grid:`` (legacy rows compare with it): the grid

    def __post_init__(self):
        if self.datasets is not None:
            self.grid = Grid(dataset=list(self.datasets))

    def for_dataset(self, name: str) -> tuple[int, int, int]:
        """(hidden units, K, epochs) of data set ``name``."""
        return (self.hidden_by_dataset.get(name, self.hidden), self.n_samples_by_dataset.get(name, self.n_samples),
                self.epochs_by_dataset.get(name, self.epochs))


def cell_config(config: Config, cell) -> dict:
    """The whole config as JSON, the grid's data sets listed as ``datasets`` (the JSON of the Config before the
    grid was declared, so committed cells keep their settings hash)."""
    from fyexp.settings import jsonable

    data = jsonable(config)
    data["datasets"] = data.pop("grid")["dataset"]
    return data


cell_work = None
"""Its cells declare no work (the experiment's :meth:`~fyexp.experiments.base.Experiment.work` is None), so the
plan never scales their times from another profile's cells (:class:`fyexp.plan_scaled.LightWork`)."""


__all__ = ["cell_config", "cell_work", "METHOD_CODES", "METHODS", "Config", "Grid"]
