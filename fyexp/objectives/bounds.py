"""Variational bounds as functions of per-sample terms: one small function per bound.

Every function takes Monte Carlo terms of shape ``(K, ...)`` — K samples z_k ∼ q(z | x) in the first
dimension, the batch after it — and returns the bound per data point (shape ``(...)``), to be *maximised*.
The log-weights are log w_k = log p(x, z_k) − log q(z_k | x) (see :class:`fyexp.models.LatentTerms`).
Only log-sum-exp is used, never exp of a log-weight, so none of them overflows.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor


def log_mean_exp(values: Tensor, dim: int = 0) -> Tensor:
    """log (1/K) Σ_k exp(values_k) along ``dim``, computed with log-sum-exp."""
    return torch.logsumexp(values, dim) - math.log(values.shape[dim])


def elbo_mc(log_weights: Tensor) -> Tensor:
    """Monte Carlo ELBO (Li & Turner eq. 10 / 15): L̂_VI = (1/K) Σ_k log w_k; ``(K, ...) → (...)``."""
    return log_weights.mean(0)


def elbo_analytic(log_likelihood: Tensor, divergence: Tensor, beta: float = 1.0) -> Tensor:
    """ELBO with an analytic divergence, β-weighted (FYVI eq. 25):

        (1/K) Σ_k log p(x | z_k) − β KL(q(z | x) ‖ p(z)).

    ``log_likelihood`` has shape ``(K, ...)``, ``divergence`` shape ``(...)``; β = 1 is the ELBO.
    """
    return log_likelihood.mean(0) - beta * divergence


def fy_elbo(neg_loss: Tensor, regularizer: Tensor, beta: float) -> Tensor:
    """The FY β-ELBO (FYVI eq. 11–12 with eq. 25's β), to maximise:

        −( E_{z∼q}[L_Ψ(θ(z); x)] + β L_Ω(η; q) ),

    ``neg_loss = −L_Ψ(θ(z_k); x)`` of shape ``(K, ...)`` (the observation model's FY loss; at ρ′ = 1 it is the
    log-likelihood up to a constant) and ``regularizer = L_Ω(η; q)`` of shape ``(...)``, the FY loss of the
    prior score η = −½‖z‖² at the β-Gaussian posterior q (the KL to N(0, I) up to a constant at ρ = 1; see
    :func:`fyexp.distributions.beta_gaussian.fy_regularizer`).  Numerically the β-ELBO of
    :func:`elbo_analytic`; the name says which terms it is given.
    """
    return elbo_analytic(neg_loss, regularizer, beta)


def vr_bound(log_weights: Tensor, alpha: float) -> Tensor:
    """The Monte Carlo VR bound (Li & Turner eq. 18, the estimate of eq. 13 / 17):

        L̂_{α,K} = 1/(1−α) · log (1/K) Σ_k w_k^{1−α},

    for any real α: α → 1 is the ELBO (:func:`elbo_mc`, taken exactly at α = 1), α = 0 IWAE
    (:func:`iwae_bound`), α = −∞ VR-max (:func:`vr_max_bound`).  ``(K, ...) → (...)``.
    """
    alpha = float(alpha)
    if alpha == 1.0:
        return elbo_mc(log_weights)
    if alpha == -math.inf:
        return vr_max_bound(log_weights)
    if not math.isfinite(alpha):
        raise ValueError(f"vr_bound: alpha must be a real number or -inf, got {alpha}")
    return log_mean_exp((1.0 - alpha) * log_weights, 0) / (1.0 - alpha)


def iwae_bound(log_weights: Tensor) -> Tensor:
    """IWAE (Burda et al.; Li & Turner's α = 0): L̂_K = log (1/K) Σ_k w_k.  ``(K, ...) → (...)``."""
    return log_mean_exp(log_weights, 0)


def vr_max_bound(log_weights: Tensor) -> Tensor:
    """VR-max (Li & Turner Algorithm 1, α = −∞): max_k log w_k.

    Its gradient is the gradient of the largest-weight sample's log-weight alone (``max`` back-propagates to
    the arg-max only), so one backward pass realises Algorithm 1's "back-propagate ε_{j_n}, j_n = arg max".
    """
    return log_weights.max(0).values


def minibatch_log_weights(log_prior: Tensor, log_likelihood: Tensor, log_q: Tensor, n_data: int) -> Tensor:
    """Log-weights of the minibatch VR bound for a global latent θ (Li & Turner eq. 23):

        log w_k = log p₀(θ_k) + N · (1/M) Σ_m log f_{n_m}(θ_k) − log q(θ_k),

    i.e. the subset average likelihood f̄_S raised to the data-set size N.  ``log_likelihood`` has shape
    ``(K, M)`` (the M data points of the minibatch), ``log_prior`` and ``log_q`` shape ``(K,)``; returns
    ``(K,)``, to be passed to :func:`vr_bound` (whose α → 1 limit is then the usual minibatch ELBO).
    """
    return log_prior + n_data * log_likelihood.mean(-1) - log_q


def fractional_log_z(log_likelihood: Tensor, log_prior: Tensor, log_q: Tensor, gamma: float) -> tuple[Tensor, Tensor]:
    """Monte Carlo estimates of log Z_d and log Z_c of the fractional bound (Chai & Bonilla §2, eq. 1):

        Z_d = ∫ q(z) p(x|z)^{1−γ} dz ≈ (1/K) Σ_k p(x|z_k)^{1−γ},
        Z_c = ∫ q(z)^{1/γ} p(z)^{1−1/γ} dz ≈ (1/K) Σ_k (q(z_k)/p(z_k))^{1/γ−1},   z_k ∼ q.

    Inputs have shape ``(K, ...)``; returns ``(log Ẑ_d, log Ẑ_c)``, each ``(...)``, by log-sum-exp.
    """
    log_zd = log_mean_exp((1.0 - gamma) * log_likelihood, 0)
    log_zc = log_mean_exp((1.0 / gamma - 1.0) * (log_q - log_prior), 0)
    return log_zd, log_zc


def fractional_bound(log_likelihood: Tensor, log_prior: Tensor, log_q: Tensor, gamma: float) -> Tensor:
    """The fractional (Hölder) bound L_γ (Chai & Bonilla eq. 1; Monte Carlo form of Appendix C):

        L_γ = 1/(1−γ) · log Z_d − γ/(1−γ) · log Z_c,    0 < γ ≤ 1,

    with Z_d, Z_c from :func:`fractional_log_z` (the same K samples for both).  It lower-bounds log p(x) and
    is tight at the fractional posterior q ∝ p(x|z)^γ p(z); γ = 1 is the ELBO (Lemma A.3), taken exactly.
    """
    gamma = float(gamma)
    if not 0.0 < gamma <= 1.0:
        raise ValueError(f"fractional_bound: gamma must lie in (0, 1], got {gamma}")
    if gamma == 1.0:
        return elbo_mc(log_likelihood + log_prior - log_q)
    log_zd, log_zc = fractional_log_z(log_likelihood, log_prior, log_q, gamma)
    return (log_zd - gamma * log_zc) / (1.0 - gamma)
