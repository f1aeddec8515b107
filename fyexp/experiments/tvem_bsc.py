r"""Truncated variational EM for binary sparse coding: Lücke 2019, Alg. 1 (§6.1) on the bars test, and Figure 1.

Cells: ``tvem`` (``n_states`` = :math:`|\mathcal{K}|`) and ``exact`` (all :math:`2^H` states) × seed — one bars
data set per seed (:mod:`fyexp.data.bars`), the same data-driven start for every method of a seed
(:func:`fyexp.em.bsc.init_params`), then :class:`fyexp.em.tvem.TVEM` for ``n_iter`` iterations; ``figure1`` — a
noisy image made of two of Figure 1's four patterns and the log-joint of its 16 states, from which the report
draws the posterior and its best truncation (:func:`fyexp.report.figures.tvem.figure1_data`).

Metrics per bars cell (per data point where it is an energy): ``free_energy`` (eq. 18 after the last M-step),
``log_likelihood`` (eq. 2, exact), ``true_log_likelihood`` (at the generating parameters), ``bars_recovered``
(true bars matched by a learned field with cosine ≥ ``recovery_threshold``), ``all_bars_recovered`` (0/1),
``min_cosine``, ``sigma``, ``pi``, ``replaced_last`` (states replaced per data point in the last E-step),
``ms_per_iteration``; of ``figure1``: the posterior mass the truncation keeps, the KL −log(mass) of the truncated
from the exact posterior, whether the MAP state generated the image.  Fits are saved as JSON, Figure 1's arrays
as ``figure1.npz``, for the figure functions ``tvem-figure1`` / ``tvem-bars`` (:mod:`fyexp.report.figures.tvem`).
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import asdict, dataclass, field

import numpy as np
from threadpoolctl import threadpool_limits

from fyexp.data.bars import (FIGURE1_PATTERNS, BarsSpec, figure1_data_point, figure1_patterns, make_bars,
                             match_fields)
from fyexp.em.bsc import all_states, init_params, log_joint
from fyexp.em.tvem import TVEM, StateSearch, keep_top, log_likelihood, truncated_posterior
from fyexp.errors import CellFailed, require
from fyexp.experiments import Experiment, register
from fyexp.results import Cell

MAX_EXACT_LATENTS = 16


@dataclass
class TVEMBSCConfig:
    """Bars data, TV-EM settings, the grid of |K|, and Figure 1."""

    grid_size: int = 5
    bar_amplitude: float = 10.0
    bar_pi: float | None = None
    noise_sigma: float = 2.0
    n_points: int = 1000
    n_iter: int = 200
    n_states: list[int] = field(default_factory=lambda: [1, 5, 20])
    exact: bool = True
    n_prior_samples: int = 10
    n_bitflips: int = 10
    n_sweeps: int = 1
    init_noise: float = 0.25
    recovery_threshold: float = 0.9
    figure1: bool = True
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
        require(all(1 <= k <= 2 ** n_bars for k in self.n_states), "n_states", f"integers in [1, 2^H = {2 ** n_bars}]",
                self.n_states)
        require(not self.exact or n_bars <= MAX_EXACT_LATENTS, "exact", f"false when H = 2 * grid_size > "
                f"{MAX_EXACT_LATENTS} (2^H states per data point)", self.exact)
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


@register
class TVEMBSC(Experiment):
    name = "tvem-bsc"
    Config = TVEMBSCConfig

    def cells(self, config: TVEMBSCConfig, seeds: tuple[int, ...]) -> list[Cell]:
        grid = [Cell("tvem", s, {"n_states": k}) for s in seeds for k in config.n_states]
        grid += [Cell("exact", s) for s in seeds] if config.exact else []
        return ([Cell("figure1", 0)] if config.figure1 else []) + grid

    def run_cell(self, config: TVEMBSCConfig, cell: Cell, ctx) -> list[dict]:
        if cell.method == "figure1":
            return self._figure1(config, ctx)
        data = make_bars(config.bars(cell.seed))
        n_points, n_latents = data.S.shape
        n_states = cell.params.get("n_states")
        em = TVEM(n_states, StateSearch(config.n_prior_samples, config.n_bitflips, config.n_sweeps), config.n_iter)
        init = init_params(data.Y, n_latents, np.random.default_rng((cell.seed, 1)), noise=config.init_noise)
        advance = ctx.subtask(cell.key, config.n_iter)
        with threadpool_limits(1):
            start = time.perf_counter()
            result = em.fit(data.Y, init, np.random.default_rng((cell.seed, 2)), callback=lambda _: advance())
            seconds = time.perf_counter() - start
            log_lik, true_log_lik = log_likelihood(data.Y, result.params), log_likelihood(data.Y, data.truth)
        if not np.isfinite(result.free_energy).all():
            raise CellFailed(f"{cell.key}: non-finite free energy")
        match, cosine = match_fields(result.params.W, data.truth.W)
        recovered = int((cosine >= config.recovery_threshold).sum())
        label = f"TV-EM |K|={n_states}" if cell.method == "tvem" else f"exact EM (|K|=2^{n_latents})"
        metrics = {"free_energy": result.free_energy[-1] / n_points, "log_likelihood": log_lik / n_points,
                   "true_log_likelihood": true_log_lik / n_points, "bars_recovered": recovered,
                   "all_bars_recovered": float(recovered == n_latents), "min_cosine": float(cosine.min()),
                   "sigma": math.sqrt(result.params.sigma2), "pi": result.params.pi,
                   "replaced_last": result.accepted[-1] / n_points, "ms_per_iteration": 1e3 * seconds / config.n_iter}
        fitted = {"method": cell.method, "seed": cell.seed, "n_states": n_states, "label": label,
                  "W": result.params.W.tolist(), "match": match.tolist(), "cosine": cosine.tolist(),
                  "free_energy": (result.free_energy / n_points).tolist(),
                  "free_energy_estep": (result.free_energy_estep / n_points).tolist(),
                  "true_log_likelihood": true_log_lik / n_points, "truth_W": data.truth.W.tolist()}
        ctx.save_text(f"fits/{cell.key}.json", json.dumps(fitted))
        ctx.save_text("config.json", json.dumps(asdict(config), indent=1))
        extra = {"label": label, "n_states": n_states if n_states is not None else 2 ** n_latents}
        return [{"metric": m, "value": float(v), **extra} for m, v in metrics.items()]

    @staticmethod
    def _figure1(config: TVEMBSCConfig, ctx) -> list[dict]:
        """Figure 1 (:func:`fyexp.data.bars.figure1_data_point`): saves the patterns, image and the log-joint of the
        16 states; returns the rows of the truncation to the ``figure1_keep`` most probable states."""
        params, truth, image = figure1_data_point(config.figure1_grid, config.figure1_pair, config.figure1_sigma,
                                                  config.figure1_pi, config.figure1_noise_seed)
        states = all_states(len(FIGURE1_PATTERNS))
        joint = log_joint(image[None, :], states, params)
        ctx.save_artifact("figure1", patterns=figure1_patterns(config.figure1_grid), names=np.array(FIGURE1_PATTERNS),
                          image=image, truth=truth, states=states, log_joint=joint[0], keep=config.figure1_keep)
        posterior = truncated_posterior(joint)[0][0]
        mass = float(posterior[truncated_posterior(keep_top(joint, config.figure1_keep))[0][0] > 0].sum())
        values = {"kept_posterior_mass": mass, "kl_truncated_to_exact": -math.log(mass),
                  "map_is_generating_state": float((states[posterior.argmax()] == truth).all())}
        label = f"Figure 1 (|K|={config.figure1_keep} of 16)"
        return [{"metric": m, "value": v, "label": label} for m, v in values.items()]
