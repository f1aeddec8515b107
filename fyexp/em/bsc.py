r"""Binary sparse coding (Haft et al. 2004; Henniges et al. 2010): the multiple-cause model of Lücke 2019, §6.1.

.. math::

    p(\vec s \mid \Theta) = \prod_{h=1}^H \pi^{s_h} (1-\pi)^{1-s_h}, \qquad
    p(\vec y \mid \vec s, \Theta) = \mathcal{N}(\vec y;\, W \vec s,\, \sigma^2 I_D), \qquad
    \Theta = (W \in \mathbb{R}^{D\times H}, \sigma^2, \pi).

Everything takes the latent states as arrays of 0/1 entries in one of two layouts:

* **shared** states ``S`` of shape (M, H), the same for every data point (the exact posterior enumerates all
  :math:`2^H`);
* **per-point** states ``S`` of shape (N, K, H), one set :math:`\mathcal{K}^{(n)}` per data point (TV-EM).

The functions are vectorised over data points and states (no Python loop over either), in float64.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fyexp.data.bsc import BSCParams, sample_data, sample_prior  # the generative model, re-exported here

__all__ = ["BSCParams", "BSCStatistics", "log_joint", "log_prior", "sufficient_statistics", "m_step", "q_function",
           "sample_prior", "sample_data", "all_states", "init_params"]

_LOG_2PI = float(np.log(2.0 * np.pi))


def all_states(n_latents: int) -> np.ndarray:
    r"""Every :math:`\vec s \in \{0,1\}^H`, shape (2^H, H), row :math:`m` the binary digits of :math:`m`
    (bit :math:`h` is :math:`s_h`)."""
    codes = np.arange(2 ** n_latents, dtype=np.int64)
    return ((codes[:, None] >> np.arange(n_latents)) & 1).astype(np.uint8)


def log_prior(S: np.ndarray, pi: float) -> np.ndarray:
    r""":math:`\log p(\vec s) = |\vec s| \log\pi + (H - |\vec s|)\log(1-\pi)`, shape ``S.shape[:-1]``
    (:math:`-\infty` where a state has zero prior probability)."""
    n_on = S.sum(axis=-1, dtype=np.float64)
    n_off = S.shape[-1] - n_on
    with np.errstate(divide="ignore", invalid="ignore"):
        on = np.where(n_on > 0, n_on * np.log(pi), 0.0)
        off = np.where(n_off > 0, n_off * np.log1p(-pi), 0.0)
    return on + off


def log_joint(Y: np.ndarray, S: np.ndarray, params: BSCParams) -> np.ndarray:
    r"""The log-joint :math:`\log p(\vec s, \vec y^{(n)} \mid \Theta)`.

    .. math::

        \log p(\vec s, \vec y) = \log p(\vec s) - \tfrac D2 \log(2\pi\sigma^2) - \frac{\|\vec y - W\vec s\|^2}{2\sigma^2}.

    The square is expanded, :math:`\|\vec y\|^2 - 2\,(W^\top\vec y)^\top\vec s + \vec s^\top W^\top W\vec s`: for
    shared states the (N, M) array costs one matrix product; per-point states cost :math:`O(NKH^2)` instead of
    forming the (N, K, D) residuals.

    Parameters
    ----------
    Y : ndarray, shape (N, D)
    S : ndarray, shape (M, H) (shared states) or (N, K, H) (one set per data point), entries 0/1
    params : BSCParams

    Returns
    -------
    ndarray, shape (N, M) or (N, K)
    """
    D = Y.shape[1]
    precision = 1.0 / params.sigma2
    constant = -0.5 * D * (_LOG_2PI + np.log(params.sigma2))
    Sf = S.astype(np.float64)
    if S.ndim == 2:
        means = Sf @ params.W.T  # (M, D)
        joint = Y @ means.T
        joint *= precision
        joint += (log_prior(S, params.pi) + constant - 0.5 * precision * (means * means).sum(axis=1))[None, :]
        joint -= (0.5 * precision * (Y * Y).sum(axis=1))[:, None]
        return joint
    n_points, n_states, n_latents = S.shape
    gram = params.W.T @ params.W  # (H, H)
    quadratic = np.einsum("nkh,nkh->nk", (Sf.reshape(-1, n_latents) @ gram).reshape(Sf.shape), Sf)
    cross = np.einsum("nkh,nh->nk", Sf, Y @ params.W)
    squared = (Y * Y).sum(axis=1)[:, None] - 2.0 * cross + quadratic
    return log_prior(S, params.pi) + constant - 0.5 * precision * squared


@dataclass(frozen=True)
class BSCStatistics:
    r"""Expectations under :math:`q^{(n)}` (eq. 4) summed over data points, all the M-step needs.

    Attributes
    ----------
    n_points : int
    yy : float
        :math:`\sum_n \|\vec y^{(n)}\|^2`.
    ys : ndarray, shape (D, H)
        :math:`\sum_n \vec y^{(n)} \langle \vec s\rangle_n^\top`.
    ss : ndarray, shape (H, H)
        :math:`\sum_n \langle \vec s \vec s^\top\rangle_n`.
    """

    n_points: int
    yy: float
    ys: np.ndarray
    ss: np.ndarray

    @property
    def s(self) -> np.ndarray:
        r""":math:`\sum_n \langle \vec s\rangle_n` (H,): the diagonal of ``ss``, since :math:`s_h^2 = s_h`."""
        return np.diagonal(self.ss).copy()


def sufficient_statistics(Y: np.ndarray, q: np.ndarray, S: np.ndarray) -> BSCStatistics:
    r"""Expectations (eq. 4) with weights ``q`` — (N, M) for shared ``S`` (M, H), (N, K) for per-point (N, K, H)."""
    Sf = S.astype(np.float64)
    if S.ndim == 2:
        mean_s = q @ Sf  # (N, H)
        ss = Sf.T @ (q.sum(axis=0)[:, None] * Sf)
    else:
        mean_s = np.einsum("nk,nkh->nh", q, Sf)
        ss = np.einsum("nkh,nkg->hg", q[:, :, None] * Sf, Sf)
    return BSCStatistics(n_points=Y.shape[0], yy=float((Y * Y).sum()), ys=Y.T @ mean_s, ss=ss)


def m_step(Y: np.ndarray, q: np.ndarray, S: np.ndarray, previous: BSCParams) -> BSCParams:
    r"""The closed-form maximiser of :math:`Q(\Theta)` (Lücke eq. 38) for BSC (Henniges et al. 2010, eqs. 5–7).

    .. math::

        W = \Big(\sum_n \vec y^{(n)} \langle\vec s\rangle_n^\top\Big)\Big(\sum_n \langle\vec s\vec s^\top\rangle_n\Big)^{-1},
        \quad
        \sigma^2 = \frac{1}{ND}\sum_n \big\langle \|\vec y^{(n)} - W\vec s\|^2 \big\rangle_n,
        \quad
        \pi = \frac{1}{NH}\sum_n \sum_h \langle s_h\rangle_n,

    with :math:`\langle\cdot\rangle_n` the truncated expectations of eq. 4 (exact ones when :math:`\mathcal{K}^{(n)}`
    holds every state).  :math:`Q` separates into a prior part in :math:`\pi` and a Gaussian part whose maximiser in
    :math:`W` does not depend on :math:`\sigma^2`, so these updates are the joint maximum.  The expected squared
    residual is :math:`\sum\|\vec y\|^2 - 2\operatorname{tr}(W^\top \sum \vec y\langle\vec s\rangle^\top) +
    \operatorname{tr}(W^\top W \sum\langle\vec s\vec s^\top\rangle)`.  A latent that no state of any
    :math:`\mathcal{K}^{(n)}` switches on (:math:`\sum_n\langle s_h\rangle_n = 0`) leaves :math:`Q` independent of
    its column :math:`W_{:h}`, which keeps its previous value; where the remaining
    :math:`\sum_n\langle\vec s\vec s^\top\rangle_n` is singular (latents that are only ever on together) the
    minimum-norm solution of the normal equations is used, which maximises :math:`Q` as well.
    """
    stats = sufficient_statistics(Y, q, S)
    n_points, D = Y.shape
    W = previous.W.copy()
    alive = stats.s > 0
    if alive.any():
        sub = stats.ss[np.ix_(alive, alive)]
        try:
            W[:, alive] = np.linalg.solve(sub, stats.ys[:, alive].T).T
        except np.linalg.LinAlgError:  # latents always on together: any solution of the normal equations maximises Q
            W[:, alive] = np.linalg.lstsq(sub, stats.ys[:, alive].T, rcond=None)[0].T
    residual = stats.yy - 2.0 * np.sum(W * stats.ys) + np.sum((W.T @ W) * stats.ss)
    sigma2 = max(residual / (n_points * D), np.finfo(float).tiny)
    pi = float(stats.s.sum() / (n_points * W.shape[1]))
    return BSCParams(W=W, sigma2=float(sigma2), pi=pi)


def q_function(Y: np.ndarray, q: np.ndarray, S: np.ndarray, params: BSCParams) -> float:
    r""":math:`Q(\Theta) = \sum_n \langle \log p(\vec s, \vec y^{(n)} \mid \Theta)\rangle_{q^{(n)}}` (Lücke eq. 38),
    computed directly from the log-joint (states with :math:`q = 0` contribute nothing)."""
    joint = log_joint(Y, S, params)
    return float(np.sum(np.where(q > 0, q * joint, 0.0)))


def init_params(Y: np.ndarray, n_latents: int, rng: np.random.Generator, noise: float = 0.25) -> BSCParams:
    r"""A data-driven start: :math:`W_{dh} = \bar y_d + \epsilon_{dh}`, :math:`\epsilon \sim
    \mathcal{N}(0, (\texttt{noise}\cdot s)^2)` with :math:`s` the pixels' average standard deviation,
    :math:`\sigma^2` the average pixel variance, :math:`\pi = 1/H` (one cause per data point on average)."""
    scale = float(Y.std(axis=0).mean())
    W = Y.mean(axis=0)[:, None] + noise * scale * rng.standard_normal((Y.shape[1], n_latents))
    return BSCParams(W=W, sigma2=float(Y.var(axis=0).mean()), pi=1.0 / n_latents)
