"""The one interface between models and objectives: K posterior samples → per-sample terms.

It sits at the bottom layer (below :mod:`fyexp.models` and :mod:`fyexp.objectives`), so that a model returns its
terms without importing any objective (``tests/project/test_architecture.py``).

A latent-variable model (see :mod:`fyexp.models`) implements ``terms(x, K)`` and so gets ``log_weights(x, K)``:

    log w_k = log p(x | z_k) + log p(z_k) − log q(z_k | x),    z_k ∼ q(z | x),  k = 1 … K,

of shape ``(K, batch)``, reparameterized so that gradients flow through z_k.  Where it exists in closed form the
model also gives a divergence D(q(z|x) ‖ p(z)) per data point (the KL of a Gaussian posterior to N(0, I), or the
FY regularizer L_Ω(η; q) of a β-Gaussian one).  For FY observation models the "log-likelihood" slot holds the
negative FY loss −L_Ψ(θ(z_k); x) (the log-likelihood up to a constant at ρ′ = 1).

A semi-implicit posterior (mixing samples u_i ∼ q(u), then z_ij ∼ q̃(z | u_i)) returns
:class:`HierarchicalTerms` instead, read by the bounds of :mod:`fyexp.objectives.semi_implicit`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Protocol, runtime_checkable

from torch import Tensor


@dataclass
class LatentTerms:
    """Per-sample terms of K posterior samples for a batch.

    Attributes
    ----------
    log_likelihood : Tensor (K, B)
        log p(x | z_k) (or −L_Ψ(θ(z_k); x) for an FY observation model).
    log_prior : Tensor (K, B) or None
        log p(z_k) (None where the model has no normalised prior density, e.g. with an FY regularizer).
    log_q : Tensor (K, B) or None
        log q(z_k | x) (None where the posterior has no usable density).
    divergence : Tensor (B,) or None
        D(q(z|x) ‖ p(z)) in closed form, where the model has one.
    decode_mean : callable or None
        ``decode_mean()`` → E[x | z_k], shape (K, B, ...), computed on demand (reconstruction metrics).
    """

    log_likelihood: Tensor
    log_prior: Tensor | None = None
    log_q: Tensor | None = None
    divergence: Tensor | None = None
    decode_mean: Callable[[], Tensor] | None = None

    @property
    def n_samples(self) -> int:
        return self.log_likelihood.shape[0]

    def log_weights(self) -> Tensor:
        """log w_k = log p(x|z_k) + log p(z_k) − log q(z_k|x), shape (K, B)."""
        if self.log_prior is None or self.log_q is None:
            raise ValueError("this model has no log-weights (its prior or posterior has no density); "
                             "use an objective with an analytic divergence")
        return self.log_likelihood + self.log_prior - self.log_q

    def mc_divergence(self) -> Tensor:
        """The Monte Carlo KL (1/K) Σ_k [log q(z_k|x) − log p(z_k)], shape (B,)."""
        if self.log_prior is None or self.log_q is None:
            raise ValueError("this model has no Monte Carlo divergence (no prior or posterior density)")
        return (self.log_q - self.log_prior).mean(0)


@runtime_checkable
class LatentModel(Protocol):
    """What objectives need from a model: ``terms(x, K)`` (and hence ``log_weights(x, K)``)."""

    def terms(self, x: Tensor, n_samples: int) -> LatentTerms:
        """Terms of ``n_samples`` reparameterized posterior samples per data point of ``x``."""

    def log_weights(self, x: Tensor, n_samples: int) -> Tensor:
        """``terms(x, n_samples).log_weights()``, shape (K, B)."""


@dataclass
class HierarchicalTerms:
    """Per-sample terms of N′ × M hierarchical samples for a batch of B data points.

    Attributes
    ----------
    log_likelihood : (N′, M, B)
        log p(x | z) at the samples of the data term (z ∼ q̃(z|u) for L^h; z′ ∼ r(z|u) with a Bayes posterior).
    log_prior, log_q : (N′, M, B)
        log p(z_ij) and log q̃(z_ij | u_i) at z_ij ∼ q̃(z | u_i) (the Rényi / Z_c term).
    log_r, log_prior_r : (N′, M, B) or None
        log r(z′_ik | u_i) and log p(z′_ik) at z′ ∼ r(z | u_i) (Bayes posterior only).
    log_q_cross : (1 + C, N′, M, B) or None
        log q̃(z′_ik | u_{i+s}), s = 0 … C (s = 0: the same u_i, for L^bh; s ≥ 1: U_i of L^bh-alt).
    """

    log_likelihood: Tensor
    log_prior: Tensor
    log_q: Tensor
    log_r: Tensor | None = None
    log_prior_r: Tensor | None = None
    log_q_cross: Tensor | None = None

    def flat(self, name: str) -> Tensor:
        """A (N′, M, B) term as (N′M, B), the layout of :mod:`fyexp.objectives.bounds`."""
        value = getattr(self, name)
        return value.reshape(-1, value.shape[-1])
