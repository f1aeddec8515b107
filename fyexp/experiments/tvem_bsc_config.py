"""The settings of tvem-bsc (Lücke 2019 §6.1 and Figure 1; every value fyexp's choice, see the spec): the bars data,
the TV-EM state search, the grid (:data:`AXES`) and Figure 1's model and image."""

from __future__ import annotations

from dataclasses import asdict, field
from typing import Annotated

from fyexp.core.constraints import Interval, NonNegativeInt, OneOf, PositiveFloat, PositiveInt, settings
from fyexp.data.bars import FIGURE1_PATTERNS, BarsSpec
from fyexp.core.errors import require
from fyexp.experiments.grid import check_method_grid

MAX_EXACT_LATENTS = 16
#: the grid's methods and their axes (:func:`fyexp.experiments.grid.check_method_grid`)
AXES = {"figure1": {"seed": NonNegativeInt}, "tvem": {"n_states": PositiveInt}, "exact": {}}


_Pattern = Annotated[str, OneOf(FIGURE1_PATTERNS)]


@settings
class TVEMBSCConfig:
    """Bars data, TV-EM settings, the grid (:data:`AXES`: Figure 1 at its seed, TV-EM × |K|, exact EM), Figure 1."""

    grid_size: Annotated[int, Interval(int, 2, None)] = 5
    bar_amplitude: PositiveFloat = 10.0
    bar_pi: Annotated[float, Interval(float, 0, 1, "neither")] | None = None     # null: 2/H
    noise_sigma: PositiveFloat = 2.0
    n_points: PositiveInt = 1000
    n_iter: PositiveInt = 200
    n_prior_samples: NonNegativeInt = 10
    n_bitflips: NonNegativeInt = 10
    n_sweeps: PositiveInt = 1
    init_noise: float = 0.25
    recovery_threshold: Annotated[float, Interval(float, 0, 1, "right")] = 0.9     # a cosine
    grid: dict[str, dict | bool | None] = field(default_factory=lambda: {"figure1": {"seed": [0]},
                                                                 "tvem": {"n_states": [1, 5, 20]}, "exact": {}})
    figure1_grid: int = 12
    figure1_pair: list[_Pattern] = field(default_factory=lambda: ["columns", "triangle"])
    figure1_sigma: float = 2.5
    figure1_pi: float = 0.3
    figure1_noise_seed: int = 1
    figure1_keep: Annotated[int, Interval(int, 1, 2 ** len(FIGURE1_PATTERNS))] = 3

    def __post_init__(self):
        n_bars = 2 * self.grid_size
        self.grid = check_method_grid(self.grid, AXES)
        n_states = self.grid.get("tvem", {}).get("n_states", [])
        require(all(k <= 2 ** n_bars for k in n_states), "grid.tvem.n_states", f"integers in [1, 2^H = "
                f"{2 ** n_bars}]", n_states)
        require("exact" not in self.grid or n_bars <= MAX_EXACT_LATENTS, "grid.exact", f"null when H = 2 * grid_size "
                f"> {MAX_EXACT_LATENTS} (2^H states per data point)", self.grid.get("exact"))
        require(self.n_prior_samples + self.n_bitflips >= 1, "n_bitflips", "at least one suggestion (n_prior_samples "
                "+ n_bitflips >= 1)", (self.n_prior_samples, self.n_bitflips))

    def bars(self, seed: int) -> BarsSpec:
        return BarsSpec(size=self.grid_size, amplitude=self.bar_amplitude, pi=self.bar_pi, sigma=self.noise_sigma,
                        n_points=self.n_points, seed=seed)


Config = TVEMBSCConfig   # the name fyexp.experiments.get_config_class reads


def cell_config(config: TVEMBSCConfig, cell) -> dict:
    """A cell's settings: the config as written before the grid was declared (``n_states``, ``exact``,
    ``figure1``), so that committed cells keep their settings hashes."""
    data, grid = asdict(config), config.grid
    return {**{k: v for k, v in data.items() if k != "grid"}, "n_states": grid.get("tvem", {}).get("n_states", []),
            "exact": "exact" in grid, "figure1": "figure1" in grid}


cell_work = None
"""Its cells declare no work (the experiment's :meth:`~fyexp.experiments.base.Experiment.work` is None), so the
plan never scales their times from another profile's cells (:class:`fyexp.run.estimate.LightWork`)."""
