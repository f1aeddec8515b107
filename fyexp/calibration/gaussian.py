"""Closed-form Gaussian integrals behind the mixture-model bound (Chai & Bonilla, eq. 7 and §A.7).

All functions broadcast over their array arguments and are continuous in the power at its limit (β → 0,
α → 1), so one formula serves the fractional bound and the ELBO.
"""

from __future__ import annotations

import numpy as np

LOG_2PI = float(np.log(2.0 * np.pi))


def log1p_ratio(c: np.ndarray) -> np.ndarray:
    """``log(1 + c) / c``, continued by its limit 1 at ``c = 0`` (stable for tiny ``c``)."""
    c = np.asarray(c, dtype=float)
    safe = np.where(c == 0.0, 1.0, c)
    return np.where(c == 0.0, 1.0, np.log1p(safe) / safe)


def tempered_likelihood_term(x: np.ndarray, m: np.ndarray, s2: np.ndarray, weight: np.ndarray,
                             power: np.ndarray) -> np.ndarray:
    r"""``(1/b) log ∫ N(u; m, s2) N(x; u, 1)^{b w} du`` with ``b = power`` (the paper's 1 − γ), ``w = weight``.

    With :math:`\beta = b w`, :math:`\int N(u; m, s^2) N(x; u, 1)^\beta du
    = (2\pi)^{-\beta/2} (1 + \beta s^2)^{-1/2} \exp(-\beta (x - m)^2 / (2 (1 + \beta s^2)))`, so

    .. math:: \frac{1}{b}\log\int\ldots = -\frac{w}{2}\Big(\log 2\pi + s^2\,\frac{\log(1+\beta s^2)}{\beta s^2}
              + \frac{(x-m)^2}{1+\beta s^2}\Big),

    one (i, k) summand of the data term of eq. (7).  At ``b = 0`` it is the ELBO's
    :math:`w\,\mathbb{E}_q[\log N(x; u, 1)] = -\frac{w}{2}(\log 2\pi + s^2 + (x - m)^2)`.
    """
    beta_s2 = power * weight * s2
    return -0.5 * weight * (LOG_2PI + s2 * log1p_ratio(beta_s2) + (x - m) ** 2 / (1.0 + beta_s2))


def renyi_to_centred_normal(m: np.ndarray, s2: np.ndarray, prior_var: float, alpha: np.ndarray) -> np.ndarray:
    r"""Rényi divergence :math:`D_\alpha[N(m, s^2) \,\|\, N(0, \sigma^2)]` for :math:`\alpha \ge 1` (KL at 1).

    .. math:: D_\alpha = \frac{\alpha m^2}{2 s_\alpha^2} + \frac{\log(\sigma^2 / s_\alpha^2)}{2(\alpha - 1)}
              + \frac12 \log\frac{\sigma^2}{s^2}, \qquad s_\alpha^2 = \alpha\sigma^2 + (1-\alpha) s^2,

    which is :math:`\frac{\gamma}{1-\gamma}\log\int q^{1/\gamma} p^{1-1/\gamma}` of eq. (7) with
    :math:`\alpha = 1/\gamma` (Li & Turner 2016; Gil et al. 2013).  It needs :math:`s_\alpha^2 > 0`, i.e.
    :math:`s^2 < \alpha\sigma^2/(\alpha - 1)`; above that the integral diverges and ``inf`` is returned.
    The middle term is written with :func:`log1p_ratio` so that :math:`\alpha \to 1` gives
    :math:`\mathrm{KL} = \frac12(m^2/\sigma^2 + s^2/\sigma^2 - 1 + \log(\sigma^2/s^2))`.
    """
    alpha = np.asarray(alpha, dtype=float)
    s2_alpha = alpha * prior_var + (1.0 - alpha) * s2
    d = (alpha - 1.0) * (1.0 - s2 / prior_var)            # s2_alpha / σ² = 1 + d
    with np.errstate(invalid="ignore", divide="ignore"):
        middle = -0.5 * (1.0 - s2 / prior_var) * log1p_ratio(d)
        value = 0.5 * alpha * m ** 2 / s2_alpha + middle + 0.5 * np.log(prior_var / s2)
    return np.where(s2_alpha > 0, value, np.inf)


def kl_to_centred_normal(m: np.ndarray, s2: np.ndarray, prior_var: float) -> np.ndarray:
    r""":math:`\mathrm{KL}[N(m, s^2) \,\|\, N(0, \sigma^2)]`, the :math:`\alpha = 1` case of the above."""
    return 0.5 * ((m ** 2 + s2) / prior_var - 1.0 + np.log(prior_var / s2))


def normal_logpdf(x: np.ndarray, mean: np.ndarray, var: np.ndarray) -> np.ndarray:
    """``log N(x; mean, var)``, elementwise."""
    return -0.5 * (LOG_2PI + np.log(var) + (x - mean) ** 2 / var)
