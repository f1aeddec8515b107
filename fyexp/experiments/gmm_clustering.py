r"""FY-EM for Gaussian-mixture clustering: FYVI Table 1 and Figures 1–2 (§4.1, App. B), plus truncated EM.

One cell = one EM variant × one seed on the synthetic blobs of :mod:`fyexp.data.gmm_blobs`:

* ``standard`` (:math:`\Omega = -H`), ``hard`` (:math:`\Omega = 0`), ``sparse`` (:math:`\Omega_\rho`, eq. 21; the
  ``rho`` grid is Table 1's :math:`\rho \in \{2, 1.5\}` joined with Figure 2's sweep) — the E-steps of
  :mod:`fyexp.em`, all run from :func:`fyexp.em.authors_torch_init` for a fixed number of iterations;
* ``truncated`` — Lücke's TV-EM with :math:`C'` active components (extra row);
* ``sklearn`` — scikit-learn's ``GaussianMixture`` with its own k-means initialisation (reference row).

Metrics (sklearn) on the 1,000 inliers, labels :math:`\arg\max_k q_{nk}` of the last E-step: ``adjusted_mi``,
``adjusted_ri``, ``silhouette_score``; plus ``estep_zeros`` (zero responsibilities per sample, Figure 2) and
``objective`` (the E-step's objective at the last iteration, see :mod:`fyexp.em.estep`).  Each cell saves its
fitted mixture and objective trace as a small JSON artifact, from which the figure functions
``fyvi-figure1`` / ``fyvi-figure2`` (:mod:`fyexp.report.figures.clustering`) draw the figures.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import math
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np
import torch
from sklearn import metrics
from sklearn.exceptions import ConvergenceWarning
from sklearn.mixture import GaussianMixture
from threadpoolctl import threadpool_limits

from fyexp.data.gmm_blobs import BlobsData, BlobsSpec, make_gmm_blobs
from fyexp.em import (EStep, GaussianMixtureEM, HardEStep, MixtureParams, SparseEStep, StandardEStep,
                      TruncatedEStep, authors_torch_init, zeros_per_sample)
from fyexp.errors import CellFailed, require
from fyexp.experiments import Experiment, register
from fyexp.results import Cell, atomic_write_text

TABLE = {"paper": "fyvi", "table": "1", "setting": "synthetic GMM"}
PAPER_ROWS = {"standard": "Standard EM", "hard": "Hard EM"}
PAPER_SPARSE_RHO = 2.0  # "rho = 2 in sparse EM" (Table 1 caption)
CLUSTER_METRICS = ("adjusted_mi", "adjusted_ri", "silhouette_score")
SKLEARN_LABEL = "scikit-learn GaussianMixture (k-means init)"


@dataclass
class GMMClusteringConfig:
    """Data (FYVI App. B / anchors), EM settings and the grid of variants."""

    centers: list[list[float]] = field(default_factory=lambda: [[0.0, 0.0], [1.0, 1.0], [1.0, -1.0], [-1.0, -1.0]])
    spread: list[float] = field(default_factory=lambda: [0.5, 0.7, 0.9, 0.11])
    spread_kind: Literal["std", "variance"] = "std"
    n_samples: int = 1000
    data_seed: int = 0
    n_outliers: int = 100
    outlier_seed: int = 40
    outlier_box: float = 3.0
    n_components: int = 4
    n_iter: int = 200
    reg_covar: float = 1e-6
    prior_term: Literal["log", "tsallis"] = "log"
    sparse_init_skip: int = 0
    table_rhos: list[float] = field(default_factory=lambda: [2.0, 1.5])
    sweep_rhos: list[float] = field(default_factory=lambda: [0.1, 0.5, 0.9, 1.0, 1.1, 1.5, 2.0, 3.0])
    truncated_active: list[int] = field(default_factory=lambda: [2])
    sklearn_reference: bool = True

    def __post_init__(self):
        require(len(self.centers) >= 1 and len({len(c) for c in self.centers}) == 1, "centers",
                "a non-empty list of points of equal dimension", self.centers)
        require(len(self.spread) == len(self.centers) and all(s > 0 for s in self.spread), "spread",
                "one positive number per center", self.spread)
        require(self.n_samples >= len(self.centers), "n_samples", "at least one point per center", self.n_samples)
        require(self.n_outliers >= 0, "n_outliers", "an integer >= 0", self.n_outliers)
        require(self.outlier_box > 0, "outlier_box", "a number > 0", self.outlier_box)
        require(self.n_components >= 2, "n_components", "an integer >= 2", self.n_components)
        require(self.n_iter >= 1, "n_iter", "an integer >= 1", self.n_iter)
        require(self.reg_covar >= 0, "reg_covar", "a number >= 0", self.reg_covar)
        require(self.sparse_init_skip >= 0, "sparse_init_skip", "an integer >= 0", self.sparse_init_skip)
        require(all(r > 0 for r in self.table_rhos + self.sweep_rhos), "sweep_rhos", "entropic indices > 0",
                self.table_rhos + self.sweep_rhos)
        require(all(1 <= c <= self.n_components for c in self.truncated_active), "truncated_active",
                f"integers C' in [1, n_components={self.n_components}]", self.truncated_active)

    @property
    def blobs(self) -> BlobsSpec:
        return BlobsSpec.from_lists(self.centers, self.spread, spread_kind=self.spread_kind,
                                    n_samples=self.n_samples, random_state=self.data_seed,
                                    n_outliers=self.n_outliers, outlier_seed=self.outlier_seed,
                                    outlier_box=self.outlier_box)

    @property
    def rhos(self) -> list[float]:
        return sorted(set(self.table_rhos) | set(self.sweep_rhos))


@functools.lru_cache(maxsize=4)
def _data(spec: BlobsSpec) -> BlobsData:
    return make_gmm_blobs(spec)


@contextlib.contextmanager
def single_threaded():
    """Run torch and BLAS on one thread: at these sizes (1,100 × 4) threads cost more than they save."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with threadpool_limits(1):
            yield
    finally:
        torch.set_num_threads(threads)


def clustering_scores(X: np.ndarray, truth: np.ndarray, labels: np.ndarray) -> dict[str, float]:
    """AMI, ARI against the true labels and the silhouette of ``X`` under ``labels`` (nan for one cluster)."""
    silhouette = metrics.silhouette_score(X, labels) if len(np.unique(labels)) > 1 else math.nan
    return {"adjusted_mi": metrics.adjusted_mutual_info_score(truth, labels),
            "adjusted_ri": metrics.adjusted_rand_score(truth, labels), "silhouette_score": silhouette}


def _e_step(config: GMMClusteringConfig, cell: Cell) -> EStep:
    if cell.method == "standard":
        return StandardEStep()
    if cell.method == "hard":
        return HardEStep()
    if cell.method == "sparse":
        return SparseEStep(cell.params["rho"], prior_term=config.prior_term)
    if cell.method == "truncated":
        return TruncatedEStep(cell.params["n_active"])
    raise ValueError(f"unknown method {cell.method!r}")


def _row_keys(config: GMMClusteringConfig, cell: Cell) -> dict:
    """Paper keys and label of a cell's clustering rows (empty paper keys for rows of Figure 2 only)."""
    if cell.method in PAPER_ROWS:
        return {**TABLE, "paper_row": PAPER_ROWS[cell.method]}
    if cell.method == "sparse":
        rho = cell.params["rho"]
        if rho == PAPER_SPARSE_RHO and rho in config.table_rhos:
            return {**TABLE, "paper_row": "Sparse EM"}
        label = f"Sparse EM (ρ={rho:g})"
        return {**TABLE, "label": label} if rho in config.table_rhos else {"label": label}
    if cell.method == "truncated":
        return {**TABLE, "label": f"Truncated EM (C′={cell.params['n_active']})"}
    return {**TABLE, "label": SKLEARN_LABEL}


@register
class GMMClustering(Experiment):
    name = "gmm-clustering"
    Config = GMMClusteringConfig

    def cells(self, config: GMMClusteringConfig, seeds: tuple[int, ...]) -> list[Cell]:
        grid = [Cell("standard", 0), Cell("hard", 0)] + [Cell("sparse", 0, {"rho": r}) for r in config.rhos]
        grid += [Cell("truncated", 0, {"n_active": c}) for c in config.truncated_active]
        grid += [Cell("sklearn", 0)] if config.sklearn_reference else []
        return [Cell(c.method, seed, c.params) for c in grid for seed in seeds]

    def run_cell(self, config: GMMClusteringConfig, cell: Cell, ctx) -> list[dict]:
        data = _data(config.blobs)
        with single_threaded():
            if cell.method == "sklearn":
                params, resp, objective = self._fit_sklearn(config, data, cell.seed)
            else:
                params, resp, objective = self._fit_em(config, data, cell, ctx)
        if not (np.isfinite(objective).all() and np.isfinite(params.means).all()):
            raise CellFailed(f"{cell.key}: EM produced a non-finite objective or mean")
        inliers = data.inliers
        scores = clustering_scores(data.X[inliers], data.labels[inliers], resp.argmax(axis=1)[inliers])
        self._save_artifacts(ctx.artifact_dir, cell, config, params, objective)
        keys = _row_keys(config, cell)
        extra = {"rho": cell.params.get("rho", math.nan), "n_active": cell.params.get("n_active", math.nan)}
        rows = [{"metric": m, "value": v, **keys, **extra} for m, v in scores.items()]
        label = keys.get("label", keys.get("paper_row"))
        rows += [{"metric": "estep_zeros", "value": zeros_per_sample(resp), "label": label, **extra},
                 {"metric": "objective", "value": float(objective[-1]), "label": label, **extra}]
        return rows

    @staticmethod
    def _fit_em(config: GMMClusteringConfig, data: BlobsData, cell: Cell, ctx):
        skip = config.sparse_init_skip if cell.method == "sparse" else 0
        init = authors_torch_init(cell.seed, config.n_components, data.X.shape[1], skip=skip)
        advance = ctx.subtask(cell.key, config.n_iter)
        em = GaussianMixtureEM(_e_step(config, cell), n_iter=config.n_iter, reg_covar=config.reg_covar)
        result = em.fit(data.X, init, callback=lambda _: advance())
        return result.params, result.resp, result.objective

    @staticmethod
    def _fit_sklearn(config: GMMClusteringConfig, data: BlobsData, seed: int):
        model = GaussianMixture(config.n_components, covariance_type="full", reg_covar=config.reg_covar,
                                max_iter=config.n_iter, random_state=seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            model.fit(data.X)
        params = MixtureParams(model.weights_, model.means_, model.covariances_)
        return params, model.predict_proba(data.X), np.array([model.score(data.X) * len(data.X)])

    @staticmethod
    def _save_artifacts(folder: Path, cell: Cell, config: GMMClusteringConfig, params: MixtureParams,
                        objective: np.ndarray) -> None:
        atomic_write_text(folder / "dataset.json", json.dumps(dataclasses.asdict(config.blobs), indent=1))
        fitted = {"method": cell.method, "seed": cell.seed, "params": cell.params, **params.as_dict(),
                  "objective": objective.tolist()}
        atomic_write_text(folder / "fits" / f"{cell.key}.json", json.dumps(fitted))
