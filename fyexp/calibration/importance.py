r"""Importance-sampling estimates of the mixture's log-evidence from a mean-field posterior (§C.3).

With proposal :math:`q(u, c) = \prod_k N(u_k; m_k, s^2_k)\prod_i \mathrm{Cat}(c_i; \varphi_i)` and
:math:`(u^{(s)}, c^{(s)}) \sim q`,

.. math::
    \log w_s = \sum_i\big[\log N(x_i; u^{(s)}_{c_i}, 1) + \log\tfrac1K - \log\varphi_{i c_i}\big]
             + \sum_k\big[\log N(u^{(s)}_k; 0, \sigma^2) - \log N(u^{(s)}_k; m_k, s^2_k)\big],

:math:`\widehat{\mathcal{L}}_{evd} = \log\frac1S\sum_s w_s` (a consistent, downward-biased estimate of
:math:`\log p(x)`), and the coefficient of variation of the weights
:math:`\mathrm{CV} = \sqrt{\frac1S\sum_s (w_s/\bar w - 1)^2}`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import logsumexp

from fyexp.calibration.gaussian import LOG_2PI, normal_logpdf


def log_weights(x: np.ndarray, m: np.ndarray, s2: np.ndarray, phi: np.ndarray, n_samples: int,
                rng: np.random.Generator, prior_var: float, block_elements: int = 2 ** 21) -> np.ndarray:
    """Log importance weights for each data set: ``x`` ``(R, n)``, ``m``, ``s2`` ``(R, K)``, ``phi`` ``(R, K, n)``.

    Returns ``(R, n_samples)``.  Data sets and samples are processed in blocks of about ``block_elements``
    sampled assignments (several data sets per block, or part of one data set's samples).
    """
    x = np.asarray(x, dtype=float)
    R, n = x.shape
    log_phi = np.log(phi)
    cumulative = np.cumsum(phi, axis=1)[:, :-1, :]                    # (R, K-1, n)
    out = np.empty((R, n_samples))
    samples_per_block = max(1, min(n_samples, block_elements // n))
    sets_per_block = max(1, block_elements // (n * samples_per_block))
    for r in range(0, R, sets_per_block):
        sets = slice(r, r + sets_per_block)
        for start in range(0, n_samples, samples_per_block):
            draws = slice(start, start + samples_per_block)
            out[sets, draws] = _block_log_weights(x[sets], m[sets], s2[sets], log_phi[sets], cumulative[sets],
                                                  min(samples_per_block, n_samples - start), rng, prior_var)
    return out


def _block_log_weights(x, m, s2, log_phi, cumulative, S, rng, prior_var):
    """Log weights ``(Rb, S)`` for a block of ``Rb`` data sets (arguments as in :func:`log_weights`)."""
    Rb, K, n = log_phi.shape
    u = m[:, None, :] + np.sqrt(s2)[:, None, :] * rng.standard_normal((Rb, S, K))          # (Rb, S, K)
    c = (rng.random((Rb, S, 1, n)) >= cumulative[:, None]).sum(axis=2)                    # (Rb, S, n)
    fit = x[:, None, :] - np.take_along_axis(u, c, axis=2)
    fit **= 2
    fit *= -0.5
    fit -= np.take_along_axis(log_phi[:, None], c[:, :, None, :], axis=2)[:, :, 0, :]     # log φ_{i c_i}
    prior = normal_logpdf(u, 0.0, prior_var) - normal_logpdf(u, m[:, None, :], s2[:, None, :])
    return fit.sum(axis=2) - n * (0.5 * LOG_2PI + np.log(K)) + prior.sum(axis=2)


@dataclass
class Estimate:
    """``log_evidence`` and ``cv`` per data set, each ``(R,)``."""

    log_evidence: np.ndarray
    cv: np.ndarray


def summarize(log_w: np.ndarray) -> Estimate:
    r""":math:`\log\bar w` and the weights' coefficient of variation along the last axis (computed stably)."""
    S = log_w.shape[-1]
    log_mean = logsumexp(log_w, axis=-1) - np.log(S)
    ratio = np.exp(log_w - log_mean[..., None])                       # w_s / w̄
    return Estimate(log_evidence=log_mean, cv=np.sqrt(np.mean((ratio - 1.0) ** 2, axis=-1)))
