r"""Fractional CAVI for the Gaussian mixture of Blei et al. (2017, §2.1), vectorized over data sets and γ.

Model (Chai & Bonilla §3.1.3): :math:`u_k \sim N(0, \sigma^2)`, :math:`c_i \sim \mathrm{Cat}(1/K)`,
:math:`x_i \mid c_i, u \sim N(u_{c_i}, 1)`.  Mean-field family :math:`q(u)\,q(c) = \prod_k N(u_k; m_k, s^2_k)
\prod_i \mathrm{Cat}(c_i; \varphi_i)`.  The bound maximized is eq. (7) of §A.7,

.. math::
    \mathcal{L}_\gamma = \sum_{i,k} \frac{1}{1-\gamma}\log\int q(u_k)\,p(x_i|u_k)^{(1-\gamma)\varphi_{ik}}du_k
    - \sum_{i,k}\varphi_{ik}\log(K\varphi_{ik}) - \sum_k D_{1/\gamma}[q(u_k)\,\|\,p(u_k)],

which is the ELBO at γ = 1.  One CAVI sweep (§3.1.3) is

1. leave-fraction-in posteriors :math:`q_i(u_k) \propto q(u_k)\,p(x_i|u_k)^{(1-\gamma)\varphi_{ik}}`,
2. :math:`\varphi_{ik} \propto \exp \mathbb{E}_{q_i}[\log p(x_i|u_k)]` (the assignment posterior sees the full
   likelihood of :math:`x_i`),
3. :math:`q(u_k) = N\big(\gamma\sum_i\varphi_{ik}x_i\, s^2_k,\; s^2_k\big)`,
   :math:`s^2_k = 1/(1/\sigma^2 + \gamma\sum_i\varphi_{ik})`,

and at γ = 1 step 1 is the identity, so the sweep is the standard CAVI of Blei et al. (2017, Alg. 2).

Layout: a leading batch axis ``B`` (data sets × γ's, flattened); ``x`` is ``(B, n)``, ``gamma`` ``(B,)``,
means and variances ``(B, K)``, responsibilities ``(B, K, n)`` (points last, so that sums over points are
contiguous and the softmax over the few components is elementwise).  :func:`fit` runs every row to its own
convergence and drops converged rows from the working set, so a row's result does not depend on its
batch-mates: the batched fit equals a loop over rows of the same code.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from fyexp.calibration.gaussian import LOG_2PI, renyi_to_centred_normal

#: bound conventions: ``"eq7"`` is the paper's eq. (7); ``"authors"`` is what the authors' notebook computes
#: (its divergence term carries log(σ²/s²) where eq. (7) has ½ log(σ²/s²); see :func:`bound`).
BOUND_CONVENTIONS = ("eq7", "authors")


@dataclass
class Posterior:
    """Mean-field posterior of a batch: ``m``, ``s2`` of shape ``(B, K)``; ``phi``, ``log_phi`` ``(B, K, n)``."""

    m: np.ndarray
    s2: np.ndarray
    phi: np.ndarray
    log_phi: np.ndarray

    def take(self, rows) -> "Posterior":
        return Posterior(self.m[rows], self.s2[rows], self.phi[rows], self.log_phi[rows])


def log_responsibilities(x: np.ndarray, m: np.ndarray, s2: np.ndarray) -> np.ndarray:
    r""":math:`\log\varphi_{ik}` with :math:`\varphi_{ik} \propto \exp(-((x_i - m_k)^2 + s^2_k)/2)`.

    This is :math:`\varphi_{ik} \propto \exp\mathbb{E}[\log p(x_i|u_k)]` under :math:`N(u_k; m_k, s^2_k)`.
    ``x`` is ``(B, n)``; ``m``, ``s2`` are ``(B, K)`` (the ELBO update) or ``(B, K, n)`` (per-point
    posteriors :math:`q_i`).  Returns ``(B, K, n)``.
    """
    if m.ndim == 2:
        m, s2 = m[:, :, None], s2[:, :, None]
    logits = x[:, None, :] - m
    np.square(logits, out=logits)
    logits += s2
    logits *= -0.5
    top = logits.max(axis=1, keepdims=True)
    logits -= top
    normalizer = np.log(np.exp(logits).sum(axis=1, keepdims=True))
    logits -= normalizer
    return logits


def leave_fraction_in(x: np.ndarray, post: Posterior, gamma: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r"""Per-point posteriors :math:`q_i(u_k) \propto q(u_k)\,N(x_i; u_k, 1)^{(1-\gamma)\varphi_{ik}}`.

    Gaussian product: precision :math:`1/s^2_k + (1-\gamma)\varphi_{ik}`, mean
    :math:`(m_k/s^2_k + (1-\gamma)\varphi_{ik}x_i)\,s^2_{ik}`.  Returns means and variances ``(B, K, n)``.
    """
    weight = post.phi * (1.0 - gamma)[:, None, None]
    precision = 1.0 / post.s2
    s2_i = weight + precision[:, :, None]
    np.reciprocal(s2_i, out=s2_i)
    weight *= x[:, None, :]
    weight += (post.m * precision)[:, :, None]
    weight *= s2_i
    return weight, s2_i


def component_update(x: np.ndarray, phi: np.ndarray, gamma: np.ndarray, prior_var: float) -> tuple[np.ndarray, np.ndarray]:
    r"""The optimal :math:`q(u_k) \propto p(u_k)\prod_i p(x_i|u_k)^{\gamma\varphi_{ik}}` given :math:`\varphi`.

    Returns means and variances ``(B, K)``: :math:`s^2_k = 1/(1/\sigma^2 + \gamma\sum_i\varphi_{ik})`,
    :math:`m_k = \gamma \sum_i \varphi_{ik} x_i\, s^2_k`.
    """
    counts = gamma[:, None] * phi.sum(axis=2)
    sums = gamma[:, None] * np.einsum("bkn,bn->bk", phi, x)
    s2 = 1.0 / (1.0 / prior_var + counts)
    return sums * s2, s2


def cavi_step(x: np.ndarray, post: Posterior, gamma: np.ndarray, prior_var: float) -> Posterior:
    """One fractional CAVI sweep (see the module docstring); at γ = 1 the standard ELBO sweep."""
    if np.all(gamma == 1.0):
        log_phi = log_responsibilities(x, post.m, post.s2)
    else:
        log_phi = log_responsibilities(x, *leave_fraction_in(x, post, gamma))
    phi = np.exp(log_phi)
    m, s2 = component_update(x, phi, gamma, prior_var)
    return Posterior(m, s2, phi, log_phi)


def bound(x: np.ndarray, post: Posterior, gamma: np.ndarray, prior_var: float, convention: str = "eq7") -> np.ndarray:
    r"""The closed-form :math:`\mathcal{L}_\gamma` of eq. (7) per row, shape ``(B,)`` (the ELBO where γ = 1).

    With :math:`c_{ik} = (1-\gamma)\varphi_{ik}s^2_k`, each data summand of eq. (7) is (see
    :func:`~fyexp.calibration.gaussian.tempered_likelihood_term`)

    .. math:: -\frac12\Big(\varphi_{ik}\log 2\pi + \frac{\log(1 + c_{ik})}{1-\gamma}
              + \frac{\varphi_{ik}(x_i - m_k)^2}{1 + c_{ik}}\Big),

    whose γ → 1 limit :math:`-\frac12\varphi_{ik}(\log 2\pi + s^2_k + (x_i - m_k)^2)` is used where γ = 1.
    The assignment term is :math:`\sum\varphi\log(K\varphi)` (0 log 0 = 0) and the complexity term
    :math:`\sum_k D_{1/\gamma}[N(m_k, s^2_k)\|N(0,\sigma^2)]`
    (:func:`~fyexp.calibration.gaussian.renyi_to_centred_normal`).

    ``convention="authors"`` subtracts a further :math:`\frac12\sum_k\log(\sigma^2/s^2_k)`: the authors'
    code writes the last term of the Gaussian Rényi divergence (and of the KL, at γ = 1) as
    :math:`\log(\sigma^2/s^2_k)` instead of :math:`\frac12\log(\sigma^2/s^2_k)`.  That is the bound printed in
    the paper's tables; it is looser than eq. (7) by exactly this amount.
    """
    if convention not in BOUND_CONVENTIONS:
        raise ValueError(f"convention must be one of {BOUND_CONVENTIONS}, got {convention!r}")
    K, n = post.phi.shape[1:]
    m, s2 = post.m[:, :, None], post.s2[:, :, None]
    one_minus = (1.0 - gamma)[:, None, None]
    c = post.phi * s2 * one_minus
    spread = np.log1p(c)
    spread /= np.where(one_minus > 0, one_minus, 1.0)
    elbo_rows = gamma == 1.0
    if elbo_rows.any():
        spread[elbo_rows] = (post.phi * s2)[elbo_rows]
    fit_term = x[:, None, :] - m
    np.square(fit_term, out=fit_term)
    fit_term *= post.phi
    c += 1.0
    fit_term /= c
    fit_term += spread
    data = -0.5 * (n * LOG_2PI + fit_term.sum(axis=(1, 2)))
    with np.errstate(invalid="ignore"):
        plogp = post.phi * (post.log_phi + np.log(K))
    assignment_kl = np.where(post.phi > 0, plogp, 0.0).sum(axis=(1, 2))
    complexity = renyi_to_centred_normal(post.m, post.s2, prior_var, (1.0 / gamma)[:, None]).sum(axis=1)
    if convention == "authors":
        complexity = complexity + authors_offset(post.s2, prior_var)
    return data - assignment_kl - complexity


def authors_offset(s2: np.ndarray, prior_var: float) -> np.ndarray:
    r"""``bound(..., "eq7") - bound(..., "authors")`` per row: :math:`\frac12\sum_k\log(\sigma^2/s^2_k)`."""
    return 0.5 * np.log(prior_var / s2).sum(axis=-1)


def safe_log(phi: np.ndarray) -> np.ndarray:
    """``log(phi)`` with ``-inf`` at zeros and no warning."""
    with np.errstate(divide="ignore"):
        return np.log(phi)


def initial_posterior(x: np.ndarray, m_init, s2_init: float) -> Posterior:
    """Means ``m_init`` (``(K,)``), variances ``s2_init``, and the ELBO responsibilities of that q(u) (§C.1)."""
    B = x.shape[0]
    m = np.broadcast_to(np.asarray(m_init, dtype=float), (B, len(m_init))).copy()
    s2 = np.full_like(m, float(s2_init))
    log_phi = log_responsibilities(x, m, s2)
    return Posterior(m, s2, np.exp(log_phi), log_phi)


@dataclass
class Fit:
    """Result of :func:`fit`, one entry per row: the final ``m``, ``s2`` ``(B, K)`` and ``phi`` ``(B, K, n)``
    (``None`` unless requested), the bound at them, the sweeps used and whether the stopping rule fired."""

    m: np.ndarray
    s2: np.ndarray
    phi: np.ndarray | None
    bound: np.ndarray
    n_iter: np.ndarray
    converged: np.ndarray


def _fit_block(x, gamma, prior_var, m_init, s2_init, tol, min_iter, max_iter, extra_sweeps, convention,
               keep_phi) -> Fit:
    B, n = x.shape
    K = len(m_init)
    post = initial_posterior(x, m_init, s2_init)
    out = Fit(np.empty((B, K)), np.empty((B, K)), np.empty((B, K, n)) if keep_phi else None,
              np.empty(B), np.zeros(B, dtype=int), np.zeros(B, dtype=bool))
    rows = np.arange(B)
    previous = np.full(B, -np.inf)
    fired_at = np.zeros(B, dtype=int)    # the sweep at which the stopping rule fired; 0: not yet
    for sweep in range(1, max_iter + 1):
        post = cavi_step(x, post, gamma, prior_var)
        current = bound(x, post, gamma, prior_var, convention)
        fires = (fired_at == 0) & (current - previous <= tol) & (sweep >= min_iter)
        fired_at[fires] = sweep
        done = (fired_at > 0) & (sweep >= fired_at + extra_sweeps) | (sweep == max_iter)
        if done.any():
            idx = rows[done]
            out.m[idx], out.s2[idx], out.bound[idx] = post.m[done], post.s2[done], current[done]
            out.n_iter[idx], out.converged[idx] = sweep, fired_at[done] > 0
            if keep_phi:
                out.phi[idx] = post.phi[done]
            keep = ~done
            if not keep.any():
                break
            rows, x, gamma, current, post = rows[keep], x[keep], gamma[keep], current[keep], post.take(keep)
            fired_at = fired_at[keep]
        previous = current
    return out


def fit(x: np.ndarray, gamma: np.ndarray | float, *, prior_var: float, m_init, s2_init: float,
        tol: float = 1e-5, min_iter: int = 3, max_iter: int = 10_000, extra_sweeps: int = 0,
        convention: str = "eq7", keep_phi: bool = False, block_elements: int = 2 ** 16,
        progress: Callable[[int], None] | None = None) -> Fit:
    r"""Run fractional CAVI on every row of ``x`` until its bound rises by at most ``tol``.

    Row ``b`` stops after the first sweep :math:`t \ge` ``min_iter`` with
    :math:`\mathcal{L}^{(t)}_b - \mathcal{L}^{(t-1)}_b \le` ``tol`` (or at ``max_iter``; then ``converged[b]``
    is False); with ``extra_sweeps`` > 0 it runs that many sweeps more after the rule fires (as a loop does
    whose test looks at the previous sweep's bound).  Stopped rows leave the working set, so each row sees
    exactly the computation of a fit on that row alone.  Rows are processed in blocks of about ``block_elements`` responsibilities, which keeps
    the working arrays in cache (several times faster than one big batch); ``progress(rows_done)`` is
    called after each block.

    Parameters
    ----------
    x : (B, n) observations, one data set per row.
    gamma : scalar or (B,) fractional power in (0, 1]; 1 is the ELBO.
    prior_var : σ² of the component-mean prior.
    m_init : (K,) initial posterior means; ``s2_init`` the initial variance of every component.
    convention : which bound drives the stopping rule and is returned, see :func:`bound`.
    """
    x = np.ascontiguousarray(x, dtype=float)
    B, n = x.shape
    gamma = np.broadcast_to(np.asarray(gamma, dtype=float), (B,)).copy()
    if np.any(gamma <= 0) or np.any(gamma > 1):
        raise ValueError("gamma must lie in (0, 1]")
    step = max(1, block_elements // (n * len(m_init)))
    blocks = []
    for start in range(0, B, step):
        sl = slice(start, start + step)
        blocks.append(_fit_block(x[sl], gamma[sl], prior_var, m_init, s2_init, tol, min_iter, max_iter,
                                 extra_sweeps, convention, keep_phi))
        if progress is not None:
            progress(min(step, B - start))
    return Fit(np.concatenate([b.m for b in blocks]), np.concatenate([b.s2 for b in blocks]),
               np.concatenate([b.phi for b in blocks]) if keep_phi else None,
               np.concatenate([b.bound for b in blocks]), np.concatenate([b.n_iter for b in blocks]),
               np.concatenate([b.converged for b in blocks]))
