"""The settings of the fy-vae runner (FYVI Table 2, App. C; docs/protocols.md): its grid and hyperparameters.

Torch-free: reading a spec (``fyexp show``) imports this module, not the runner's models."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from fyexp.data.names import VISION_DATASETS as DATASETS
from fyexp.errors import require
from fyexp.experiments.grid import check_axes
from fyexp.train import OptimizerConfig, TrainConfig

LATENT_NAMES = {1.0: "Gaussian rho=1", 1.5: "Biweight rho=3/2", 2.0: "Epanechnikov rho=2"}
OBSERVATION_NAMES = {1.0: "Bernoulli rho'=1", 2.0: "Psi_2 sparse binary rho'=2"}


@dataclass
class Grid:
    """The axes of the grid (FYVI Table 2): data set × observation ρ′ × posterior ρ × regularizer."""

    dataset: list[str] = field(default_factory=lambda: list(DATASETS))
    obs_rho: list[float] = field(default_factory=lambda: [1.0, 2.0])
    latent_rho: list[float] = field(default_factory=lambda: [1.0, 1.5, 2.0])
    regularizer: list[Literal["fy", "authors"]] = field(default_factory=lambda: ["fy", "authors"])
    include: list[dict] = field(default_factory=list)
    exclude: list[dict] = field(default_factory=lambda: [{"regularizer": "authors", "latent_rho": 1.0}])

    def __post_init__(self):
        check_axes(self)
        require(set(self.dataset) <= set(DATASETS), "dataset", f"names among {list(DATASETS)}", self.dataset)
        require(set(self.obs_rho) <= set(OBSERVATION_NAMES), "obs_rho", "values among [1, 2]", self.obs_rho)
        require(set(self.latent_rho) <= set(LATENT_NAMES), "latent_rho", "values among [1, 1.5, 2]", self.latent_rho)


@dataclass
class Config:
    """Hyperparameters of the FY β-VAE grid (FYVI Appendix C; the paper profile follows ``docs/protocols.md``)."""

    grid: Grid = field(default_factory=Grid)
    n_train: int = 55_000
    n_valid: int = 5_000
    n_test: int | None = None
    train: TrainConfig = field(default_factory=lambda: TrainConfig(epochs=50, batch_size=64,
                                                                   optimizer=OptimizerConfig(lr=5e-5)))
    beta: float = 0.01
    hidden: int = 512
    latent: int = 256
    figure_seed: int = 0
    n_prior_samples: int = 64
    n_reconstructions: int = 16

    def __post_init__(self):
        for key in ("n_train", "n_valid", "hidden", "latent"):
            require(getattr(self, key) > 0, key, "a positive integer", getattr(self, key))
        require(self.n_test is None or self.n_test > 0, "n_test", "a positive integer or null", self.n_test)
        require(self.beta >= 0, "beta", "a number >= 0", self.beta)


def cell_config(config: Config, cell) -> dict:
    """A cell's settings (:func:`fyexp.settings.scoped_config`): the whole config less the grid listing, whose
    values the cell carries in its params."""
    from fyexp.settings import jsonable

    data = jsonable(config)
    data.pop("grid", None)
    return data


__all__ = ["cell_config", "LATENT_NAMES", "OBSERVATION_NAMES", "Config", "Grid"]
