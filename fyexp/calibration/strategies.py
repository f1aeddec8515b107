r"""Choosing γ to calibrate the credible intervals (Chai & Bonilla §5.1 and §C.1.1).

Every strategy fits, by least squares, a straight line of γ against a calibration statistic measured on the
fractional posteriors :math:`q_\gamma` at a grid of γ's, and reads off the γ at the statistic's target:

* :math:`R_\ell` — per data set and component, γ against the interval length ℓ, at the length
  :math:`\ell^* = 2 z_{1-\alpha/2}\sqrt{K\sigma^2_{obs}/n}` of a sample mean of the n/K points expected in a
  component; clipped to [0, 1] and averaged over components: one γ per data set.
* :math:`R_{\ell^{-2}}` — the same against :math:`\ell^{-2}` (proportional to the posterior precision, which
  is linear in γ for the exact fractional posterior of a Gaussian model, §C.1.1).
* :math:`R_\kappa` — over all data sets, γ against the coverage :math:`\kappa_k`, at :math:`1-\alpha`,
  averaged over components: one γ for every data set (needs the replicas, §5.1).
* :math:`C_\gamma` (a diagnostic, not a strategy) — the ELBO's means with the variances of :math:`q_\gamma`.
"""

from __future__ import annotations

import numpy as np

from fyexp.calibration.intervals import critical_value


def ideal_length(n: int, K: int, alpha: float, obs_var: float = 1.0) -> float:
    r""":math:`\ell^* = 2 z_{1-\alpha/2}\sqrt{K\sigma^2_{obs}/n}`: the interval of a mean of n/K observations."""
    return 2.0 * critical_value(alpha) * float(np.sqrt(K * obs_var / n))


def regress_at(gammas: np.ndarray, statistic: np.ndarray, target) -> np.ndarray:
    r"""Least-squares line :math:`\gamma = a + b\,y` through ``(statistic[..., g], gammas[g])``, evaluated at ``target``.

    ``statistic`` is ``(..., G)`` (one regression per leading index), ``gammas`` ``(G,)``, ``target``
    broadcastable to the leading shape.  :math:`b = \mathrm{cov}(y, \gamma)/\mathrm{var}(y)`,
    :math:`\hat\gamma = \bar\gamma + b\,(y^* - \bar y)`.
    """
    gammas = np.asarray(gammas, dtype=float)
    y = np.asarray(statistic, dtype=float)
    y_centred = y - y.mean(axis=-1, keepdims=True)
    slope = (y_centred * (gammas - gammas.mean())).sum(axis=-1) / (y_centred ** 2).sum(axis=-1)
    return gammas.mean() + slope * (np.asarray(target, dtype=float) - y.mean(axis=-1))


def gamma_from_lengths(gammas: np.ndarray, lengths: np.ndarray, target_length: float,
                       inverse_square: bool = False) -> np.ndarray:
    r""":math:`R_\ell` (or :math:`R_{\ell^{-2}}`): per-data-set γ from ``lengths`` of shape ``(G, R, K)``.

    Returns ``(R,)``: the per-component predictions clipped to [0, 1], averaged over components.
    """
    y = np.moveaxis(np.asarray(lengths, dtype=float), 0, -1)            # (R, K, G)
    target = target_length
    if inverse_square:
        y, target = y ** -2.0, target_length ** -2.0
    return np.clip(regress_at(gammas, y, target), 0.0, 1.0).mean(axis=-1)


def gamma_from_coverage(gammas: np.ndarray, coverage: np.ndarray, level: float) -> float:
    r""":math:`R_\kappa`: one γ from the coverages ``(G, K)`` of the grid, at the nominal ``level`` = 1 − α.

    Per component, the regression of γ on :math:`\kappa_k` at ``level``; then the average over components.
    """
    return float(regress_at(gammas, np.asarray(coverage, dtype=float).T, level).mean())


def interpolated_precision(prior_var: float, bayes_var: np.ndarray, gamma: np.ndarray) -> np.ndarray:
    r"""Precision of :math:`p^{1-\gamma} r^\gamma` for Gaussians :math:`p = N(\cdot, \sigma^2_0)`,
    :math:`r = N(\cdot, \sigma^2_1)`: :math:`(1-\gamma)/\sigma^2_0 + \gamma/\sigma^2_1` (§C.1.1, §C.2)."""
    return (1.0 - gamma) / prior_var + gamma / bayes_var


def interpolation_gap(prior_var: float, bayes_var: np.ndarray, gammas: np.ndarray,
                      learnt_precision: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r"""§C.2, Figure 2: learnt fractional posteriors against interpolations of prior and posterior.

    For γ's ``(G,)``, the ELBO's posterior variances :math:`\sigma^2_1` ``(R,)`` and the precisions of the learnt
    :math:`q_\gamma` ``(G, R)`` (one component, per data set): the interpolated precisions
    :math:`(1-\gamma)/\sigma^2_0 + \gamma/\sigma^2_1` ``(G, R)`` (:func:`interpolated_precision`) and, per data set,
    :math:`\log_{10}` of their mean-squared difference over γ from the learnt ones ``(R,)``."""
    interpolated = interpolated_precision(prior_var, np.asarray(bayes_var)[None, :], np.asarray(gammas)[:, None])
    return interpolated, np.log10(np.mean((learnt_precision - interpolated) ** 2, axis=0))
