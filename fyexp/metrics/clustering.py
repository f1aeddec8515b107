"""Clustering scores of a labelling against the true labels (FYVI Table 1, via scikit-learn).

* ``adjusted_mi``: adjusted mutual information :math:`(I(U;V) - E[I]) / (\\mathrm{mean}(H(U), H(V)) - E[I])`;
* ``adjusted_ri``: adjusted Rand index :math:`(RI - E[RI]) / (\\max RI - E[RI])`;
* ``silhouette_score``: mean over points of :math:`(b - a)/\\max(a, b)`, with :math:`a` the mean distance to
  the point's own cluster and :math:`b` to the nearest other one (nan when there is a single cluster).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["clustering_scores"]


def clustering_scores(X: np.ndarray, truth: np.ndarray, labels: np.ndarray) -> dict[str, float]:
    """AMI, ARI against the true labels and the silhouette of ``X`` under ``labels`` (nan for one cluster)."""
    from sklearn import metrics

    silhouette = metrics.silhouette_score(X, labels) if len(np.unique(labels)) > 1 else math.nan
    return {"adjusted_mi": metrics.adjusted_mutual_info_score(truth, labels),
            "adjusted_ri": metrics.adjusted_rand_score(truth, labels), "silhouette_score": silhouette}
