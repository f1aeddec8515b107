"""The settings of the vr-renyi-gaussians runner (Li & Turner Figure 2(b)): the two Gaussians, the α's and the grid of K.

Torch-free: reading a spec (``fyexp show``) imports this module, not torch."""

from __future__ import annotations

from dataclasses import field
from typing import Annotated

from fyexp.core.constraints import Interval, PositiveInt, settings
from fyexp.core.errors import require
from fyexp.experiments.grid import axes


@axes
class Grid:
    """The axis of the grid: K, the number of samples of one estimate."""

    K: list[PositiveInt] = field(default_factory=lambda: [1, 10, 100])


@settings
class Config:
    mu_p: list[float] = field(default_factory=lambda: [0.0, 0.0])
    mu_q: list[float] = field(default_factory=lambda: [1.0, 1.0])
    alphas: list[float] = field(default_factory=lambda: [-1.0, -0.5, 0.0, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0])
    grid: Grid = field(default_factory=Grid)
    repetitions: Annotated[int, Interval(int, 2, None)] = 200

    def __post_init__(self):
        require(len(self.mu_p) == len(self.mu_q) >= 1, "mu_q", "a point of the dimension of mu_p", self.mu_q)


def cell_config(config: Config, cell) -> dict:
    """A cell's settings (:func:`fyexp.spec.settings.scoped_config`): the config with the grid's K list as
    ``n_samples``, as written before the grid was declared, so that committed cells keep their hashes."""
    from fyexp.spec.settings import jsonable

    data = jsonable(config)
    return {**{k: v for k, v in data.items() if k != "grid"}, "n_samples": data["grid"]["K"]}


cell_work = None
"""Its cells declare no work (the experiment's :meth:`~fyexp.experiments.base.Experiment.work` is None), so the
plan never scales their times from another profile's cells (:class:`fyexp.run.estimate.LightWork`)."""


__all__ = ["cell_config", "cell_work", "Config", "Grid"]
