r"""Truncated variational EM for binary sparse coding: Lücke 2019, Alg. 1 (§6.1) on the bars test, and Figure 1.

Cells (the spec's ``grid:``): ``tvem`` (``n_states`` = :math:`|\mathcal{K}|`) and ``exact`` (all :math:`2^H`
states) × seed — one bars data set per seed (:mod:`fyexp.data.bars`), one data-driven start per seed
(:func:`fyexp.em.bsc.init_params`), then :class:`fyexp.em.tvem.TVEM` for ``n_iter`` iterations; ``figure1`` — a
noisy image of two of Figure 1's four patterns and the log-joint of its 16 states, from which the report draws the
posterior and its best truncation (:func:`fyexp.report.figures.tvem.figure1_data`).

Metrics per bars cell (per data point for energies): ``free_energy`` (eq. 18 after the last M-step),
``log_likelihood`` (eq. 2), ``true_log_likelihood`` (at the generating parameters), ``bars_recovered`` (true bars
matched by a learned field with cosine ≥ ``recovery_threshold``), ``all_bars_recovered``, ``min_cosine``, ``sigma``,
``pi``, ``replaced_last`` (states replaced per point in the last E-step), ``ms_per_iteration``; of ``figure1``: the
posterior mass the truncation keeps, the KL −log(mass), whether the MAP state generated the image.  Fits are saved as
JSON, Figure 1's arrays as ``figure1.npz``, for ``tvem-figure1`` / ``tvem-bars`` (:mod:`fyexp.report.figures.tvem`).
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import asdict

import numpy as np
from threadpoolctl import threadpool_limits

from fyexp.data.bars import FIGURE1_PATTERNS, figure1_data_point, figure1_patterns, make_bars, match_fields
from fyexp.em.bsc import all_states, init_params, log_joint
from fyexp.em.tvem import TVEM, StateSearch, keep_top, log_likelihood, truncated_posterior
from fyexp.core.errors import CellFailed
from fyexp.experiments import register
from fyexp.experiments.grid import GridExperiment, Metric, metric
from fyexp.experiments.tvem_bsc_config import TVEMBSCConfig, cell_config
from fyexp.store.results import Cell

#: a bars cell's random streams, declared once: numpy generators seeded with (cell seed, stream); the data set is
#: drawn from the cell seed alone (:func:`fyexp.data.bars.make_bars`)
SEED_STREAMS = {"init": 1, "search": 2}


def _rng(cell: Cell, stream: str) -> np.random.Generator:
    return np.random.default_rng((cell.seed, SEED_STREAMS[stream]))


@register
class TVEMBSC(GridExperiment):
    name = "tvem-bsc"
    Config = TVEMBSCConfig
    by_seed = True   # every |K| of a seed, then the next seed
    cell_config = staticmethod(cell_config)   # the settings scope, in the light config module

    def measure(self, config: TVEMBSCConfig, cell: Cell, ctx) -> list[Metric]:
        if cell.method == "figure1":
            return self._figure1(config, ctx)
        data = make_bars(config.bars(cell.seed))
        n_points, n_latents = data.S.shape
        n_states = cell.params.get("n_states")
        em = TVEM(n_states, StateSearch(config.n_prior_samples, config.n_bitflips, config.n_sweeps), config.n_iter)
        init = init_params(data.Y, n_latents, _rng(cell, "init"), noise=config.init_noise)
        advance = ctx.subtask(cell.key, config.n_iter, "iterations")
        with threadpool_limits(1):
            start = time.perf_counter()
            result = em.fit(data.Y, init, _rng(cell, "search"), callback=lambda _: advance())
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
        return [metric(m, v, **extra) for m, v in metrics.items()]

    @staticmethod
    def _figure1(config: TVEMBSCConfig, ctx) -> list[Metric]:
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
        return [metric(m, v, label=label) for m, v in values.items()]
