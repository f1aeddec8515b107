"""The settings of the fy-vae runner (FYVI Table 2, App. C; docs/protocols.md): its grid and hyperparameters.

Torch-free: reading a spec (``fyexp show``) imports this module, not the runner's models."""

from __future__ import annotations

from dataclasses import field
from typing import Annotated, Literal

from fyexp.core.constraints import NonNegativeFloat, OneOf, PositiveInt, settings
from fyexp.data.names import VISION_DATASETS as DATASETS
from fyexp.experiments.grid import axes
from fyexp.train import OptimizerConfig, TrainConfig

LATENT_NAMES = {1.0: "Gaussian rho=1", 1.5: "Biweight rho=3/2", 2.0: "Epanechnikov rho=2"}
OBSERVATION_NAMES = {1.0: "Bernoulli rho'=1", 2.0: "Psi_2 sparse binary rho'=2"}


@axes
class Grid:
    """The axes of the grid (FYVI Table 2): data set × observation ρ′ × posterior ρ × regularizer."""

    dataset: list[Annotated[str, OneOf(DATASETS)]] = field(default_factory=lambda: list(DATASETS))
    obs_rho: list[Annotated[float, OneOf(OBSERVATION_NAMES)]] = field(default_factory=lambda: [1.0, 2.0])
    latent_rho: list[Annotated[float, OneOf(LATENT_NAMES)]] = field(default_factory=lambda: [1.0, 1.5, 2.0])
    regularizer: list[Literal["fy", "authors"]] = field(default_factory=lambda: ["fy", "authors"])
    include: list[dict] = field(default_factory=list)
    exclude: list[dict] = field(default_factory=lambda: [{"regularizer": "authors", "latent_rho": 1.0}])


@settings
class Config:
    """Hyperparameters of the FY β-VAE grid (FYVI Appendix C; the paper profile follows ``docs/protocols.md``)."""

    grid: Grid = field(default_factory=Grid)
    n_train: PositiveInt = 55_000
    n_valid: PositiveInt = 5_000
    n_test: PositiveInt | None = None
    train: TrainConfig = field(default_factory=lambda: TrainConfig(epochs=50, batch_size=64,
                                                                   optimizer=OptimizerConfig(lr=5e-5)))
    beta: NonNegativeFloat = 0.01
    hidden: PositiveInt = 512
    latent: PositiveInt = 256
    figure_seed: int = 0
    n_prior_samples: int = 64
    n_reconstructions: int = 16


def cell_config(config: Config, cell) -> dict:
    """A cell's settings (:func:`fyexp.spec.settings.scoped_config`): the whole config less the grid listing, whose
    values the cell carries in its params."""
    from fyexp.spec.settings import jsonable

    data = jsonable(config)
    data.pop("grid", None)
    return data


cell_work = None
"""Its cells declare no work (the experiment's :meth:`~fyexp.experiments.base.Experiment.work` is None), so the
plan never scales their times from another profile's cells (:class:`fyexp.run.estimate.LightWork`)."""


__all__ = ["cell_config", "cell_work", "LATENT_NAMES", "OBSERVATION_NAMES", "Config", "Grid"]
