"""The settings of the vr-bnn runner (Li & Turner §5.2; docs/protocols.md): its methods, grid and hyperparameters.

Torch-free: reading a spec (``fyexp show``) imports this module, not the runner's models."""

from __future__ import annotations

import math
from dataclasses import field
from typing import Annotated

from fyexp.core.constraints import DISTINCT, OneOf, PositiveFloat, PositiveInt, settings
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
    n_splits: PositiveInt | None = None  # the first n splits, all of a data set with fewer (Year: 1); null: all
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
    from fyexp.spec.settings import jsonable

    data = jsonable(config)
    data["datasets"] = data.pop("grid")["dataset"]
    return data


#: The UCI sets as Hernández-Lobato & Adams (2015) split them, each ``(rows, features, splits, training rows of a
#: split)``: the shapes of their ``data.txt``, ``index_features.txt``, ``n_splits.txt`` and ``index_train_0.txt``
#: (tests/experiments/test_vr_bnn_work.py checks them against the data where it is present).  A cell's work is counted
#: from them, so that a set this machine lacks is estimated too: UCI Year (YearPredictionMSD, 515,345 rows × 90
#: features), one split, its first 463,715 rows for training (the producer's split, which H&A keep).
UCI_SIZES: dict[str, tuple[int, int, int, int]] = {
    "boston": (506, 13, 20, 455), "concrete": (1030, 8, 20, 927), "energy": (768, 8, 20, 691),
    "wine": (1599, 11, 20, 1439), "yacht": (308, 6, 20, 277), "protein": (45730, 9, 5, 41157),
    "year": (515345, 90, 1, 463715)}

WORK_ACROSS_DATASETS = True
""":func:`cell_work` counts all that differs between data sets (rows, features, width, samples, splits), so a cell
whose data set no recorded cell used is scaled from the recorded cells nearest in work on another
(:func:`fyexp.run.estimate.scaled_cell_estimate`)."""


def cell_work(stated: dict, params: dict) -> tuple[float, float] | None:
    """``(training work per epoch, evaluation work)`` of a cell on data set ``params['dataset']`` whose scoped config
    (:func:`cell_config`, as its run record states it) is ``stated``.  Every model (splits × methods) draws K weight
    samples for each training row of its split (:class:`fyexp.train.batched_bnn.BatchedBNN`), each a pass through a
    network of D·H + 2H + 1 weights (D features, H hidden units, one output); the evaluation does the same for each
    test row with ``test_samples`` (else K) draws.  So one epoch is N_train · K · models · (D·H + 2H + 1) and the
    evaluation N_test · K_test · models · (D·H + 2H + 1), their units the multiply-adds of one weight.  The epochs
    the runner trains a data set for (:meth:`Config.for_dataset`) are read by
    :func:`fyexp.spec.settings.training_epochs`
    from the same settings.  ``None`` for a data set not in :data:`UCI_SIZES`."""
    name = params.get("dataset")
    if name not in UCI_SIZES:
        return None
    rows, features, splits, train = UCI_SIZES[name]
    defaults = Config()

    def per_dataset(field_name: str) -> int:
        by_dataset = stated.get(f"{field_name}_by_dataset")
        by_dataset = getattr(defaults, f"{field_name}_by_dataset") if by_dataset is None else by_dataset
        default = stated.get(field_name, getattr(defaults, field_name))
        return int(by_dataset.get(name, default))

    hidden, samples = per_dataset("hidden"), per_dataset("n_samples")
    test_samples = int(stated.get("test_samples") or samples)
    models = min(int(stated.get("n_splits") or splits), splits) * len(stated.get("methods") or METHODS)
    weights = features * hidden + 2 * hidden + 1
    per_epoch = train * samples * models * weights
    return float(per_epoch), float((rows - train) * test_samples * models * weights)


__all__ = ["cell_config", "cell_work", "METHOD_CODES", "METHODS", "UCI_SIZES", "WORK_ACROSS_DATASETS", "Config",
           "Grid"]
