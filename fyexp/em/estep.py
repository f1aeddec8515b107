r"""E-step strategies for the one EM loop of :class:`fyexp.em.GaussianMixtureEM`.

Each strategy maps the component log-densities :math:`\ell_{nk} = \log \mathcal{N}(x_n; \mu_k, \Sigma_k)` and the
mixing proportions :math:`\pi` to responsibilities :math:`q_n \in \Delta_K` and to the value of the objective that
this E-step maximises (a lower bound on the log-likelihood, or the FY evidence lower bound), evaluated at the
current parameters:

* :class:`StandardEStep` — :math:`q_n = \operatorname{softmax}(\log\pi + \ell_n)`; objective the log-likelihood
  :math:`\sum_n \log \sum_k \pi_k \mathcal{N}_{nk}`.
* :class:`HardEStep` — :math:`q_n = \operatorname{argmax}(\log\pi + \ell_n)`, ties split :math:`1/m` (FYVI App. B);
  objective :math:`\sum_n \max_k \log \pi_k \mathcal{N}_{nk}` (Lücke eq. 46).
* :class:`SparseEStep` — :math:`q_n = \rho\text{-entmax}(\eta(\pi) + \ell_n)` (FYVI eq. 21); objective the FY
  evidence lower bound :math:`\sum_n \Omega_\rho^*(\eta + \ell_n) - N\,\Omega_\rho^*(\eta)`.
* :class:`TruncatedEStep` — exact posterior renormalised on the :math:`C'` largest joints (Lücke Alg. 2); objective
  the truncated free energy :math:`\sum_n \log \sum_{k \in \mathcal{K}_n} \pi_k \mathcal{N}_{nk}` (Lücke eq. 6).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Literal

import numpy as np
import torch
from scipy.special import logsumexp

from fyexp.em.tvem.truncation import keep_top, truncated_posterior
from fyexp.maps import tsallis_conjugate, tsallis_entmax, tsallis_log

__all__ = ["EStepResult", "EStep", "StandardEStep", "HardEStep", "SparseEStep", "TruncatedEStep"]


@dataclass(frozen=True)
class EStepResult:
    """Responsibilities ``resp`` (N, K), rows on the simplex, and the E-step's ``objective`` (a float)."""

    resp: np.ndarray
    objective: float


def _log(weights: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return np.log(weights)


class EStep(ABC):
    """Strategy interface: ``e_step(log_density (N, K), weights (K,)) -> EStepResult``."""

    name: str = "e-step"

    @abstractmethod
    def __call__(self, log_density: np.ndarray, weights: np.ndarray) -> EStepResult:
        """Responsibilities and objective at the current parameters."""


class StandardEStep(EStep):
    r"""Exact posterior, :math:`\Omega = -H` (FYVI App. B): :math:`q_{nk} \propto \pi_k \mathcal{N}(x_n; \mu_k, \Sigma_k)`."""

    name = "standard"

    def __call__(self, log_density: np.ndarray, weights: np.ndarray) -> EStepResult:
        joint = log_density + _log(weights)
        log_evidence = logsumexp(joint, axis=1)
        return EStepResult(np.exp(joint - log_evidence[:, None]), float(log_evidence.sum()))


class HardEStep(EStep):
    r""":math:`\Omega = 0`: :math:`q_n = \operatorname{argmax}_k \pi_k \mathcal{N}_{nk}`, with :math:`1/m` on each of
    :math:`m` tied maxima (FYVI App. B; classification EM of Celeux & Govaert)."""

    name = "hard"

    def __call__(self, log_density: np.ndarray, weights: np.ndarray) -> EStepResult:
        joint = log_density + _log(weights)
        best = joint.max(axis=1, keepdims=True)
        is_max = (joint == best).astype(float)
        return EStepResult(is_max / is_max.sum(axis=1, keepdims=True), float(best.sum()))


class SparseEStep(EStep):
    r"""FY E-step with the Tsallis :math:`\rho`-negentropy (FYVI eq. 13, 21).

    :math:`q_n = \rho\text{-entmax}(\eta + \ell_n)` with the prior score :math:`\eta` from the learned :math:`\pi`:

    * ``prior_term="tsallis"``: :math:`\eta_k = \ln_{2-\rho}\pi_k`, equal up to a constant to the
      :math:`\pi_k^{\rho-1}/(\rho-1)` printed in eq. 21 and the exact minimiser of eq. 15 — with it, EM is
      coordinate descent on the FY free energy (eq. 12) and the objective never decreases;
    * ``prior_term="log"``: :math:`\eta_k = \log\pi_k`, what the authors' code adds (docs/protocols.md); the objective is
      still reported, without that guarantee for :math:`\rho \ne 1`.

    The objective is the FY evidence lower bound :math:`-\sum_n F(q_n, \eta; x_n) =
    \sum_n \Omega_\rho^*(\eta + \ell_n) - N\,\Omega_\rho^*(\eta)` at the optimal :math:`q_n`; at :math:`\rho = 1`
    it is the log-likelihood.

    ``tol`` is the bisection tolerance on the threshold for :math:`\rho \notin \{1, 3/2, 2\}` (exact maps
    there): 1e-10 keeps responsibilities accurate to about 1e-9 (for :math:`\rho \le 2`, see
    :func:`fyexp.maps.tsallis_bisect`), far below what the M-step or the metrics resolve, with a third fewer
    halvings than the float64 default.
    """

    name = "sparse"

    def __init__(self, rho: float, prior_term: Literal["log", "tsallis"] = "tsallis", tol: float = 1e-10):
        if not rho > 0:
            raise ValueError(f"rho must be > 0, got {rho!r}")
        if prior_term not in ("log", "tsallis"):
            raise ValueError(f"prior_term must be 'log' or 'tsallis', got {prior_term!r}")
        self.rho, self.prior_term, self.tol = float(rho), prior_term, tol

    def prior_score(self, weights: np.ndarray) -> np.ndarray:
        r""":math:`\eta(\pi)`, shape (K,)."""
        if self.prior_term == "log":
            return _log(weights)
        with np.errstate(divide="ignore"):
            return tsallis_log(torch.from_numpy(weights), self.rho).numpy()

    def __call__(self, log_density: np.ndarray, weights: np.ndarray) -> EStepResult:
        eta = torch.from_numpy(self.prior_score(weights))
        scores = torch.from_numpy(log_density) + eta
        resp = tsallis_entmax(scores, self.rho, dim=-1, tol=self.tol)
        fy_elbo = tsallis_conjugate(scores, self.rho, p=resp).sum() - scores.shape[0] * tsallis_conjugate(eta, self.rho)
        return EStepResult(resp.numpy(), float(fy_elbo))


class TruncatedEStep(EStep):
    r"""Truncated variational E-step (Lücke 2019, Alg. 2, Prop. 7).

    :math:`\mathcal{K}_n` holds the ``n_active`` :math:`= C'` components with the largest joint
    :math:`\pi_k \mathcal{N}_{nk}`, and :math:`q_n` is the exact posterior renormalised on it (eq. 3).  The
    objective is the truncated free energy (eq. 6); TV-EM never decreases it.  :math:`C' = 1` is hard EM
    (Prop. 8, up to ties), :math:`C' = K` standard EM.  The truncation is the one of the multiple-cause TV-EM
    (:mod:`fyexp.em.tvem.truncation`): here the candidates are all :math:`K` components, scored once.
    """

    name = "truncated"

    def __init__(self, n_active: int):
        if n_active < 1:
            raise ValueError(f"n_active (C') must be >= 1, got {n_active!r}")
        self.n_active = int(n_active)

    def __call__(self, log_density: np.ndarray, weights: np.ndarray) -> EStepResult:
        resp, log_free = truncated_posterior(keep_top(log_density + _log(weights), self.n_active))
        return EStepResult(resp, float(log_free.sum()))
