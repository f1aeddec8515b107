r"""Gaussian pieces of the mixture EM: the log-density (E-step input) and the weighted M-step (FYVI App. B).

Per-component maths, vectorised over the :math:`K` components with batched linear algebra (no Python loop over
components); everything in float64.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["MixtureParams", "log_gaussian_density", "gaussian_m_step"]

_LOG_2PI = float(np.log(2.0 * np.pi))


@dataclass(frozen=True)
class MixtureParams:
    r"""Parameters of a :math:`K`-component Gaussian mixture in :math:`\mathbb{R}^d`.

    Attributes
    ----------
    weights : ndarray, shape (K,)
        Mixing proportions :math:`\pi_k` (non-negative, summing to one; a component may have :math:`\pi_k = 0`).
    means : ndarray, shape (K, d)
    covariances : ndarray, shape (K, d, d)
        Symmetric positive definite.
    """

    weights: np.ndarray
    means: np.ndarray
    covariances: np.ndarray

    @property
    def n_components(self) -> int:
        return self.means.shape[0]

    def as_dict(self) -> dict:
        """JSON-able lists (for small artifacts)."""
        return {"weights": self.weights.tolist(), "means": self.means.tolist(),
                "covariances": self.covariances.tolist()}


def log_gaussian_density(X: np.ndarray, means: np.ndarray, covariances: np.ndarray) -> np.ndarray:
    r""":math:`\log \mathcal{N}(x_n; \mu_k, \Sigma_k)` for every point and component, via Cholesky factors.

    With :math:`\Sigma_k = L_k L_k^\top`,
    :math:`\log \mathcal{N} = -\tfrac12 \|L_k^{-1}(x_n - \mu_k)\|^2 - \sum_i \log (L_k)_{ii} - \tfrac d2 \log 2\pi`.

    Parameters
    ----------
    X : ndarray, shape (N, d)
    means : ndarray, shape (K, d)
    covariances : ndarray, shape (K, d, d)

    Returns
    -------
    ndarray, shape (N, K)

    Raises
    ------
    numpy.linalg.LinAlgError
        If a covariance is not positive definite.
    """
    chol = np.linalg.cholesky(covariances)  # (K, d, d)
    d = X.shape[1]
    eye = np.broadcast_to(np.eye(d), chol.shape)
    inv_chol_t = np.linalg.solve(chol, eye).transpose(0, 2, 1)  # (K, d, d): L_k^{-T}
    # rows of (x_n - mu_k) L_k^{-T} are L_k^{-1}(x_n - mu_k)
    whitened = X @ inv_chol_t - (means[:, None, :] @ inv_chol_t)  # (K, N, d)
    mahalanobis = np.einsum("knd,knd->nk", whitened, whitened)
    half_log_det = np.log(np.diagonal(chol, axis1=1, axis2=2)).sum(axis=1)  # (K,)
    return -0.5 * mahalanobis - half_log_det - 0.5 * d * _LOG_2PI


def gaussian_m_step(X: np.ndarray, resp: np.ndarray, previous: MixtureParams, reg_covar: float) -> MixtureParams:
    r"""Weighted maximum-likelihood update of FYVI App. B (the same for every E-step).

    .. math::

        N_k = \sum_n q_{nk}, \quad \pi_k = N_k / N, \quad \mu_k = \frac{1}{N_k}\sum_n q_{nk} x_n, \quad
        \Sigma_k = \frac{1}{N_k}\sum_n q_{nk}(x_n - \mu_k)(x_n - \mu_k)^\top + \lambda I.

    :math:`\pi = \bar q` is the prior update of FYVI eq. 14–15 (the E-step strategies map it to the score
    :math:`\eta`).  The ridge :math:`\lambda` = ``reg_covar`` (1e-6 in the authors' code, as scikit-learn's
    ``reg_covar``) keeps :math:`\Sigma_k` positive definite.  A component that received no mass
    (:math:`N_k = 0`, possible with sparse or hard E-steps) gets :math:`\pi_k = 0` and keeps its previous mean and
    covariance.

    Parameters
    ----------
    X : ndarray, shape (N, d)
    resp : ndarray, shape (N, K)
        Responsibilities :math:`q_{nk}`, rows on the simplex.
    previous : MixtureParams
        Parameters kept by empty components.
    reg_covar : float
        :math:`\lambda \ge 0`.
    """
    n_k = resp.sum(axis=0)  # (K,)
    alive = n_k > 0
    safe_n_k = np.where(alive, n_k, 1.0)
    means = (resp.T @ X) / safe_n_k[:, None]
    centred = X[None, :, :] - means[:, None, :]  # (K, N, d)
    weighted = centred * resp.T[:, :, None]
    covariances = weighted.transpose(0, 2, 1) @ centred / safe_n_k[:, None, None]
    covariances = covariances + reg_covar * np.eye(X.shape[1])
    if not alive.all():
        means = np.where(alive[:, None], means, previous.means)
        covariances = np.where(alive[:, None, None], covariances, previous.covariances)
    return MixtureParams(weights=n_k / n_k.sum(), means=means, covariances=covariances)
