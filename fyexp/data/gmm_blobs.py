r"""The synthetic clustering data of FYVI Table 1 (App. B): four overlapping Gaussian blobs plus uniform outliers.

Inliers come from :func:`sklearn.datasets.make_blobs` (equal counts per blob, isotropic, ``random_state``);
outliers are ``torch.manual_seed(outlier_seed)`` then ``torch.rand(n, 2) * 2b - b`` (float32, as in the authors'
notebooks), uniform on :math:`[-b, b]^2`, labelled :math:`-1`.  Deterministic: the same spec gives the same points.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Sequence

import numpy as np
import torch
from sklearn.datasets import make_blobs

__all__ = ["BlobsSpec", "BlobsData", "make_gmm_blobs"]

OUTLIER = -1


@dataclass(frozen=True)
class BlobsSpec:
    """How to generate the data.

    ``spread`` is the per-blob standard deviation (``spread_kind="std"``, scikit-learn's ``cluster_std``, what the
    authors passed) or variance (``"variance"``: covariance ``spread * I``, what the paper's text states).
    """

    centers: tuple[tuple[float, ...], ...]
    spread: tuple[float, ...]
    spread_kind: Literal["std", "variance"] = "std"
    n_samples: int = 1000
    random_state: int = 0
    n_outliers: int = 100
    outlier_seed: int = 40
    outlier_box: float = 3.0

    @classmethod
    def from_lists(cls, centers: Sequence[Sequence[float]], spread: Sequence[float], **kwargs) -> "BlobsSpec":
        return cls(centers=tuple(tuple(float(c) for c in row) for row in centers),
                   spread=tuple(float(s) for s in spread), **kwargs)

    @property
    def stds(self) -> np.ndarray:
        """Per-blob standard deviation, shape (K,)."""
        spread = np.asarray(self.spread, dtype=float)
        return spread if self.spread_kind == "std" else np.sqrt(spread)

    @property
    def true_covariances(self) -> np.ndarray:
        """Generating covariances :math:`\\sigma_k^2 I`, shape (K, d, d)."""
        dim = len(self.centers[0])
        return self.stds[:, None, None] ** 2 * np.eye(dim)


@dataclass(frozen=True)
class BlobsData:
    """Points ``X`` (N, d) float64 — inliers first, then outliers — and ``labels`` (N,), ``-1`` for outliers."""

    X: np.ndarray
    labels: np.ndarray
    spec: BlobsSpec

    @property
    def inliers(self) -> np.ndarray:
        """Boolean mask (N,) of the blob points (the ones the metrics are computed on)."""
        return self.labels != OUTLIER


def make_gmm_blobs(spec: BlobsSpec) -> BlobsData:
    """Generate the inliers with scikit-learn and the outliers with torch's seeded generator."""
    inliers, labels = make_blobs(n_samples=spec.n_samples, centers=np.asarray(spec.centers, dtype=float),
                                 cluster_std=spec.stds, random_state=spec.random_state)
    dim = inliers.shape[1]
    state = torch.random.get_rng_state()
    try:
        torch.manual_seed(spec.outlier_seed)
        outliers = torch.rand(spec.n_outliers, dim) * (2 * spec.outlier_box) - spec.outlier_box
    finally:
        torch.random.set_rng_state(state)
    X = np.concatenate([inliers, outliers.double().numpy()])
    labels = np.concatenate([labels, np.full(spec.n_outliers, OUTLIER)])
    return BlobsData(X=X, labels=labels, spec=spec)
