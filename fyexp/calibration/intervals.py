r"""Credible intervals of the component means and their frequentist calibration (Chai & Bonilla §5.1).

For a Gaussian posterior :math:`N(m_k, s^2_k)` the equal-tailed :math:`1-\alpha` interval is
:math:`m_k \pm z_{1-\alpha/2}\, s_k`, of length :math:`\ell_k = 2 z_{1-\alpha/2}\, s_k`.  Posterior components
are matched to the true means by sorting both (the mixture is identified only up to relabelling).  Over
replicated data sets, the coverage :math:`\kappa_k` is the fraction of intervals that contain the true
:math:`\mu_k`; calibrated intervals have :math:`\kappa_k = 1 - \alpha`.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import norm


def critical_value(alpha: float) -> float:
    """:math:`z_{1-\\alpha/2}`, the standard-normal quantile of a two-sided ``1 - alpha`` interval."""
    return float(norm.ppf(1.0 - alpha / 2.0))


def sort_components(m: np.ndarray, s2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Reorder the components of each row ``(R, K)`` by increasing posterior mean."""
    order = np.argsort(m, axis=-1, kind="stable")
    return np.take_along_axis(m, order, -1), np.take_along_axis(s2, order, -1)


def interval_lengths(s2: np.ndarray, alpha: float) -> np.ndarray:
    """:math:`2 z_{1-\\alpha/2} s`, elementwise."""
    return 2.0 * critical_value(alpha) * np.sqrt(s2)


def covers(m: np.ndarray, s2: np.ndarray, truth: np.ndarray, alpha: float) -> np.ndarray:
    """Whether each interval :math:`m \\pm z s` contains ``truth`` (broadcast against ``(R, K)``)."""
    return np.abs(m - truth) <= critical_value(alpha) * np.sqrt(s2)


def calibration(m: np.ndarray, s2: np.ndarray, truth, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Coverage :math:`\\kappa_k` and mean length :math:`\\bar\\ell_k` over replicas, each ``(K,)``.

    ``m``, ``s2`` are ``(R, K)`` posterior means and variances in any component order; ``truth`` the ``(K,)``
    true means in increasing order.
    """
    m, s2 = sort_components(m, s2)
    return covers(m, s2, np.asarray(truth, dtype=float), alpha).mean(axis=0), interval_lengths(s2, alpha).mean(axis=0)


def coverage_standard_error(kappa: np.ndarray, n_replicas: int) -> np.ndarray:
    """Binomial standard error :math:`\\sqrt{\\kappa(1-\\kappa)/R}` of an empirical coverage."""
    kappa = np.asarray(kappa, dtype=float)
    return np.sqrt(kappa * (1.0 - kappa) / n_replicas)
