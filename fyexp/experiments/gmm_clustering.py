r"""FY-EM for Gaussian-mixture clustering: FYVI Table 1 and Figures 1–2 (§4.1, App. B), plus truncated EM.

One cell = one EM variant × its own grid values × seed, on the synthetic blobs of :mod:`fyexp.data.gmm_blobs`
(the spec's ``grid:`` names each method and its axes):

* ``standard`` (:math:`\Omega = -H`), ``hard`` (:math:`\Omega = 0`), ``sparse`` (:math:`\Omega_\rho`, eq. 21,
  axis ``rho``: Table 1's :math:`\rho \in \{2, 1.5\}` joined with Figure 2's sweep), ``truncated`` (Lücke's
  TV-EM, axis ``n_active`` = :math:`C'`) — the E-steps of :mod:`fyexp.em` (:data:`E_STEPS`), all run from
  :func:`fyexp.em.authors_torch_init` for a fixed number of iterations;
* ``sklearn`` — scikit-learn's ``GaussianMixture`` with its own k-means initialisation (reference row).

Metrics (sklearn) on the 1,000 inliers, labels :math:`\arg\max_k q_{nk}` of the last E-step: ``adjusted_mi``,
``adjusted_ri``, ``silhouette_score`` (Table 1; sparse EM there only at :data:`TABLE1_SPARSE_RHOS`); plus
``estep_zeros`` (zero responsibilities per sample, Figure 2) and ``objective`` (the E-step's objective at the last
iteration, see :mod:`fyexp.em.estep`).  Each cell saves its fitted mixture and objective trace as a small JSON
artifact, and the data as ``dataset.npz``, from which the figure functions ``fyvi-figure1`` / ``fyvi-figure2``
(:mod:`fyexp.report.figures.clustering`) draw the figures.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
from typing import Callable

import numpy as np

from fyexp.em import (GaussianMixtureEM, HardEStep, SparseEStep, StandardEStep, TruncatedEStep, authors_torch_init,
                      zeros_per_sample)
from fyexp.core.errors import CellFailed
from fyexp.experiments import register
from fyexp.experiments.gmm_clustering_config import TABLE1_SPARSE_RHOS, GMMClusteringConfig, cell_config
from fyexp.experiments.grid import GridExperiment, PaperKeys, metric
from fyexp.store.results import Cell

#: method → its E-step (:mod:`fyexp.em`) at the cell's parameters; ``sklearn`` runs scikit-learn's own EM
E_STEPS: dict[str, Callable] = {
    "standard": lambda config, p: StandardEStep(),
    "hard": lambda config, p: HardEStep(),
    "sparse": lambda config, p: SparseEStep(p["rho"], prior_term=config.prior_term),
    "truncated": lambda config, p: TruncatedEStep(p["n_active"]),
}
PAPER_ROWS = {"standard": "Standard EM", "hard": "Hard EM", "sparse": "Sparse EM"}
PAPER_SPARSE_RHO = 2.0              # "rho = 2 in sparse EM" (Table 1 caption)
CLUSTER_METRICS = ("adjusted_mi", "adjusted_ri", "silhouette_score")
SKLEARN_LABEL = "scikit-learn GaussianMixture (k-means init)"


def paper_row(cell: Cell) -> str:
    """The row of FYVI Table 1 a cell reproduces ("" for a variant the paper does not print)."""
    if cell.method == "sparse" and cell.params["rho"] != PAPER_SPARSE_RHO:
        return ""
    return PAPER_ROWS.get(cell.method, "")


def label(cell: Cell) -> str:
    """How a cell's rows are named: its Table 1 row, else the variant."""
    p = cell.params
    names = {"sparse": lambda: f"Sparse EM (ρ={p['rho']:g})", "truncated": lambda: f"Truncated EM (C′={p['n_active']})",
             "sklearn": lambda: SKLEARN_LABEL}
    return paper_row(cell) or names[cell.method]()


@register
class GMMClustering(GridExperiment):
    name = "gmm-clustering"
    Config = GMMClusteringConfig
    paper_keys = PaperKeys(tables=(("fyvi", "1"),), metrics=CLUSTER_METRICS, row=paper_row, setting="synthetic GMM",
                           when=lambda cell: cell.method != "sparse" or cell.params["rho"] in TABLE1_SPARSE_RHOS)

    cell_config = staticmethod(cell_config)   # the settings scope, in the light config module

    def memory_estimate(self, config: GMMClusteringConfig, cell: Cell) -> tuple[int, str]:
        """The largest arrays of a cell (:func:`fyexp.core.constraints.check_cell_memory`, before the run): float64 data
        (n × d) and responsibilities (n × K) with their work copies, ≈ 4 (d + K) values per point of the
        n = n_samples + n_outliers points (``n_samples=10**12`` is refused at the plan, not a MemoryError later)."""
        n, d, k = config.n_samples + config.n_outliers, len(config.centers[0]), config.n_components
        return 8 * 4 * (d + k) * n, f"n_samples + n_outliers = {n:,} points × (d={d} + K={k})"

    def measure(self, config: GMMClusteringConfig, cell: Cell, ctx):
        from fyexp.em.reference import single_threaded, sklearn_mixture
        from fyexp.metrics.clustering import clustering_scores

        data, seed = _blobs(config.blobs), self.seed_stream(cell, "init")
        with single_threaded():
            if cell.method == "sklearn":
                params, resp, objective = sklearn_mixture(data.X, config.n_components, config.n_iter,
                                                          config.reg_covar, seed)
            else:
                skip = config.sparse_init_skip if cell.method == "sparse" else 0
                init = authors_torch_init(seed, config.n_components, data.X.shape[1], skip=skip)
                advance = ctx.subtask(cell.key, config.n_iter, "iterations")
                em = GaussianMixtureEM(E_STEPS[cell.method](config, cell.params), n_iter=config.n_iter,
                                       reg_covar=config.reg_covar)
                fit = em.fit(data.X, init, callback=lambda _: advance())
                params, resp, objective = fit.params, fit.resp, fit.objective
        if not (np.isfinite(objective).all() and np.isfinite(params.means).all()):
            raise CellFailed(f"{cell.key}: EM produced a non-finite objective or mean")
        ctx.save_text("dataset.json", json.dumps(dataclasses.asdict(config.blobs), indent=1))
        ctx.save_artifact("dataset", X=data.X, labels=data.labels, inliers=data.inliers,
                          true_covariances=config.blobs.true_covariances)
        ctx.save_text(f"fits/{cell.key}.json", json.dumps({"method": cell.method, "seed": cell.seed,
                                                           "params": cell.params, **params.as_dict(),
                                                           "objective": objective.tolist()}))
        inliers = data.inliers
        scores = clustering_scores(data.X[inliers], data.labels[inliers], resp.argmax(axis=1)[inliers])
        extra = {"rho": cell.params.get("rho", math.nan), "n_active": cell.params.get("n_active", math.nan)}
        name = label(cell)
        return [metric(m, v, **({} if paper_row(cell) else {"label": name}), **extra) for m, v in scores.items()] + [
            metric("estep_zeros", zeros_per_sample(resp), label=name, **extra),
            metric("objective", float(objective[-1]), label=name, **extra)]


@functools.lru_cache(maxsize=4)
def _blobs(spec):
    from fyexp.data.gmm_blobs import make_gmm_blobs

    return make_gmm_blobs(spec)
