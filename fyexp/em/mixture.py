r"""The one EM loop for Gaussian mixtures (FYVI §3.3 FYEM; Lücke 2019 TV-EM), scikit-learn ``mixture`` style.

:class:`GaussianMixtureEM` owns the loop — E-step, objective bookkeeping, M-step, optional stopping — and takes the
E-step as a strategy (:mod:`fyexp.em.estep`); the M-step (:func:`fyexp.em.gaussian.gaussian_m_step`) is the
same for every strategy, as in FYVI App. B.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from fyexp.em.estep import EStep
from fyexp.em.gaussian import MixtureParams, gaussian_m_step, log_gaussian_density

__all__ = ["EMResult", "GaussianMixtureEM", "zeros_per_sample", "exact_ties", "TIE_ATOL"]

TIE_ATOL = 1e-12
"""Responsibilities closer than this to their row's maximum are ties (float64 noise is ~1e-16)."""


def exact_ties(resp: np.ndarray, atol: float = TIE_ATOL) -> np.ndarray:
    r"""``resp`` with every entry within ``atol`` of its row's maximum set to that maximum, so that
    :math:`\arg\max_k q_{nk}` (first maximal index) is a property of the fit, not of floating-point noise.

    When components coincide (FYVI Fig. 2 at :math:`\rho = 0.1`: every :math:`q_n` is uniform up to ~1e-16),
    the plain argmax picks a component by rounding noise, which changes with the order of floating-point
    operations (BLAS kernel, memory alignment) and so between runs; tied entries now go to the lowest index.
    Entries move by at most ``atol``; exact zeros (E-step sparsity) are untouched unless the row's max is zero.
    """
    resp = np.asarray(resp, dtype=np.float64)
    top = resp.max(axis=1, keepdims=True)
    return np.where(top - resp <= atol, top, resp)


@dataclass(frozen=True)
class EMResult:
    """Outcome of :meth:`GaussianMixtureEM.fit`.

    Attributes
    ----------
    params : MixtureParams
        Parameters after the last M-step.
    resp : ndarray, shape (N, K)
        Responsibilities of the last E-step (the ones the last M-step used), with near-ties made exact by
        :func:`exact_ties` so that ``resp.argmax(axis=1)`` is reproducible.
    objective : ndarray, shape (n_iter,)
        The E-step's objective at each iteration, evaluated before that iteration's M-step.
    """

    params: MixtureParams
    resp: np.ndarray
    objective: np.ndarray

    @property
    def n_iter(self) -> int:
        return len(self.objective)

    @property
    def labels(self) -> np.ndarray:
        """Hard assignment :math:`\\arg\\max_k q_{nk}`, shape (N,); ties (see :func:`exact_ties`) go to the lowest k."""
        return self.resp.argmax(axis=1)

    @property
    def zeros_per_sample(self) -> float:
        """E-step sparsity of the last E-step, see :func:`zeros_per_sample`."""
        return zeros_per_sample(self.resp)


def zeros_per_sample(resp: np.ndarray) -> float:
    """E-step sparsity (FYVI Fig. 2): the average number of exactly-zero responsibilities per sample of (N, K)."""
    return float((resp == 0).sum(axis=1).mean())


class GaussianMixtureEM:
    r"""Alternate ``e_step`` and the weighted Gaussian M-step for ``n_iter`` iterations.

    Parameters
    ----------
    e_step : EStep
        Responsibilities and objective from log-densities and mixing proportions.
    n_iter : int
        Maximum number of iterations (the paper runs a fixed 200).
    reg_covar : float
        Ridge :math:`\lambda` added to every covariance in the M-step (authors and scikit-learn: 1e-6).
    tol : float or None
        Stop once the objective changes by less than ``tol`` between iterations; ``None`` runs all ``n_iter``.
    """

    def __init__(self, e_step: EStep, n_iter: int = 200, reg_covar: float = 1e-6, tol: float | None = None):
        if n_iter < 1:
            raise ValueError(f"n_iter must be >= 1, got {n_iter!r}")
        if reg_covar < 0:
            raise ValueError(f"reg_covar must be >= 0, got {reg_covar!r}")
        self.e_step, self.n_iter, self.reg_covar, self.tol = e_step, n_iter, reg_covar, tol

    def fit(self, X: np.ndarray, init: MixtureParams, callback: Callable[[int], None] | None = None) -> EMResult:
        """Run EM from ``init`` on data ``X`` of shape (N, d); ``callback(iteration)`` after each iteration."""
        X = np.asarray(X, dtype=np.float64)
        params = MixtureParams(*(np.asarray(a, dtype=np.float64) for a in (init.weights, init.means, init.covariances)))
        objective = []
        for iteration in range(self.n_iter):
            step = self.e_step(log_gaussian_density(X, params.means, params.covariances), params.weights)
            objective.append(step.objective)
            params = gaussian_m_step(X, step.resp, params, self.reg_covar)
            if callback is not None:
                callback(iteration)
            if self.tol is not None and iteration and abs(objective[-1] - objective[-2]) < self.tol:
                break
        return EMResult(params=params, resp=exact_ties(step.resp), objective=np.asarray(objective))
