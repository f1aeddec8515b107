"""Variational objectives: K posterior samples → log-weights → a bound (to maximise), one function per bound.

The interface (:mod:`~fyexp.models.latent`): a model implements ``terms(x, K)`` → :class:`LatentTerms`
(log p(x|z_k), log p(z_k), log q(z_k|x) of shape (K, B), and where it exists an analytic divergence (B,)), and
hence ``log_weights(x, K)`` = log p(x, z_k) − log q(z_k|x), shape (K, B).

Bounds on tensors (:mod:`~fyexp.objectives.bounds`; each docstring states the bound and its equation):

====================================  =====================================================================
``elbo_mc(log_w)``                    (1/K) Σ_k log w_k                                  Li & Turner eq. 10
``elbo_analytic(log_lik, kl, beta)``  (1/K) Σ_k log p(x|z_k) − β KL                      FYVI eq. 25
``fy_elbo(neg_loss, reg, beta)``      −(E_q L_Ψ + β L_Ω(η; q)), β-Gaussian FY regularizer FYVI eq. 11, 25
``vr_bound(log_w, alpha)``            1/(1−α) log (1/K) Σ_k w_k^{1−α}, any real α         Li & Turner eq. 13, 18
``iwae_bound(log_w)``                 α = 0
``vr_max_bound(log_w)``               α = −∞, back-propagates the max-weight sample only  Algorithm 1
``minibatch_log_weights(...)``        global latents: log p₀ + N·mean_m log f_m − log q   Li & Turner eq. 23
``fractional_bound(...)``             L_γ = log Z_d/(1−γ) − γ log Z_c/(1−γ)              Chai & Bonilla eq. 1
``fractional_log_z(...)``             Monte Carlo log Z_d, log Z_c                        Chai & Bonilla §2, App. C
====================================  =====================================================================

Objectives for training (:mod:`~fyexp.objectives.objective`): ``ELBO(beta, analytic)``, ``VR(alpha)``,
``IWAE()``, ``VRMax()``, ``Fractional(gamma)``, each with ``n_samples`` = K; ``objective(model, x)`` returns the
bound per data point and parts to log; :func:`make_objective` builds one from a spec's ``objective:`` block.

Evaluation: :func:`mc_log_likelihood` — L̂_{0,S}, S = 5,000 samples in memory-bounded chunks.
"""

from fyexp.objectives.bounds import (elbo_analytic, elbo_mc, fractional_bound, fractional_log_z, fy_elbo, iwae_bound,
                                     log_mean_exp, minibatch_log_weights, vr_bound, vr_max_bound)
from fyexp.objectives.loglik import mc_log_likelihood
from fyexp.objectives.objective import ELBO, IWAE, OBJECTIVES, VR, Fractional, Objective, VRMax, make_objective
from fyexp.models.latent import LatentModel, LatentTerms

__all__ = ["LatentTerms", "LatentModel", "log_mean_exp", "elbo_mc", "elbo_analytic", "fy_elbo", "vr_bound",
           "iwae_bound", "vr_max_bound", "minibatch_log_weights", "fractional_bound", "fractional_log_z",
           "mc_log_likelihood", "Objective", "ELBO", "VR", "IWAE", "VRMax", "Fractional", "OBJECTIVES",
           "make_objective"]
