"""The settings of tvem-bsc (Lücke 2019 §6.1 and Figure 1; every value fyexp's choice, see the spec): the bars data,
the TV-EM state search, the grid (:data:`AXES`) and Figure 1's model and image."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from fyexp.data.bars import FIGURE1_PATTERNS, BarsSpec
from fyexp.errors import require
from fyexp.experiments.method_grid import check_method_grid

MAX_EXACT_LATENTS = 16
AXES = {"figure1": {"seed": int}, "tvem": {"n_states": int}, "exact": {}}   # the grid's methods and their axes


@dataclass
class TVEMBSCConfig:
    """Bars data, TV-EM settings, the grid (:data:`AXES`: Figure 1 at its seed, TV-EM × |K|, exact EM), Figure 1."""

    grid_size: int = 5
    bar_amplitude: float = 10.0
    bar_pi: float | None = None
    noise_sigma: float = 2.0
    n_points: int = 1000
    n_iter: int = 200
    n_prior_samples: int = 10
    n_bitflips: int = 10
    n_sweeps: int = 1
    init_noise: float = 0.25
    recovery_threshold: float = 0.9
    grid: dict[str, dict | bool | None] = field(default_factory=lambda: {"figure1": {"seed": [0]},
                                                                 "tvem": {"n_states": [1, 5, 20]}, "exact": {}})
    figure1_grid: int = 12
    figure1_pair: list[str] = field(default_factory=lambda: ["columns", "triangle"])
    figure1_sigma: float = 2.5
    figure1_pi: float = 0.3
    figure1_noise_seed: int = 1
    figure1_keep: int = 3

    def __post_init__(self):
        n_bars = 2 * self.grid_size
        require(self.grid_size >= 2, "grid_size", "an integer >= 2", self.grid_size)
        require(self.bar_amplitude > 0 and self.noise_sigma > 0, "noise_sigma", "positive amplitude and sigma",
                (self.bar_amplitude, self.noise_sigma))
        require(self.bar_pi is None or 0 < self.bar_pi < 1, "bar_pi", "null (2/H) or a number in (0, 1)", self.bar_pi)
        require(self.n_points >= 1 and self.n_iter >= 1, "n_iter", "n_points, n_iter >= 1", (self.n_points, self.n_iter))
        self.grid = check_method_grid(self.grid, AXES)
        n_states = self.grid.get("tvem", {}).get("n_states", [])
        require(all(1 <= k <= 2 ** n_bars for k in n_states), "grid.tvem.n_states", f"integers in [1, 2^H = "
                f"{2 ** n_bars}]", n_states)
        require("exact" not in self.grid or n_bars <= MAX_EXACT_LATENTS, "grid.exact", f"null when H = 2 * grid_size "
                f"> {MAX_EXACT_LATENTS} (2^H states per data point)", self.grid.get("exact"))
        require(self.n_prior_samples >= 0 and self.n_bitflips >= 0 and self.n_prior_samples + self.n_bitflips >= 1,
                "n_bitflips", "n_prior_samples, n_bitflips >= 0, at least one suggestion",
                (self.n_prior_samples, self.n_bitflips))
        require(self.n_sweeps >= 1, "n_sweeps", "an integer >= 1", self.n_sweeps)
        require(0 < self.recovery_threshold <= 1, "recovery_threshold", "a cosine in (0, 1]", self.recovery_threshold)
        require(len(self.figure1_pair) >= 1 and set(self.figure1_pair) <= set(FIGURE1_PATTERNS), "figure1_pair",
                f"names among {list(FIGURE1_PATTERNS)}", self.figure1_pair)
        require(1 <= self.figure1_keep <= 2 ** len(FIGURE1_PATTERNS), "figure1_keep", "an integer in [1, 16]",
                self.figure1_keep)

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
