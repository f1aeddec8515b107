"""Observation models p(x | z) and posterior families q(z | x) for :class:`fyexp.models.vae.VAE`.

An observation head maps decoder scores θ(z) of shape (K, B, D·width) and data x of shape (B, D) to a per-sample
log-likelihood (K, B) — for an FY head the negative FY loss −L_Ψ(θ; x), the log-likelihood up to a constant at
ρ′ = 1 (FYVI §4.2) — and to the decoder's mean E[x | z].  A posterior family turns the encoder's (μ, s) into
q(z | x) and gives its closed-form divergence to the prior N(0, I) where there is one.
"""

from __future__ import annotations

import math
from typing import Callable

import torch
import torch.nn.functional as F
from torch import Tensor
from torch.distributions import Distribution, Normal

from fyexp.distributions.beta_gaussian import BetaGaussian, authors_regularizer, fy_regularizer
from fyexp.distributions.beta_gaussian_masked import RankMaskedBetaGaussian
from fyexp.losses.binary_entmax import binary_entmax, binary_fy_loss
from fyexp.losses.fy_multinomial import fy_multinomial_loss, multinomial_nll, observation_probs


# ------------------------------------------------------------------------------------ observation heads
class Observation:
    """p(x | θ): ``log_prob(scores, x)`` → (K, B) and ``mean(scores)`` → E[x | θ]; ``width`` scores per dimension."""

    width: int = 1

    def log_prob(self, scores: Tensor, x: Tensor) -> Tensor:
        raise NotImplementedError

    def mean(self, scores: Tensor) -> Tensor:
        raise NotImplementedError


class Bernoulli(Observation):
    """Independent Bernoulli(sigmoid θ_d): log p = −Σ_d BCE(θ_d, x_d) (gray levels allowed)."""

    def log_prob(self, scores, x):
        return -F.binary_cross_entropy_with_logits(scores, x.expand_as(scores), reduction="none").sum(-1)

    def mean(self, scores):
        return torch.sigmoid(scores)


class Gaussian(Observation):
    """Independent N(μ_d, exp(log σ²_d)); the decoder emits (μ, log σ²) side by side (``width`` 2)."""

    width = 2

    def log_prob(self, scores, x):
        mu, log_var = scores.chunk(2, dim=-1)
        mu = self.link(mu)
        return -0.5 * (math.log(2 * math.pi) + log_var + (x - mu).pow(2) / log_var.exp()).sum(-1)

    def mean(self, scores):
        return self.link(scores.chunk(2, dim=-1)[0])

    @staticmethod
    def link(mean_scores):
        """The decoder mean from its scores: the identity here."""
        return mean_scores


class SigmoidMeanGaussian(Gaussian):
    """N(sigmoid(a_d), exp(log σ²_d)), the decoder emitting (a, log σ²): the mean squashed into (0, 1), for data in
    [0, 1] (the Frey Face decoder of the VR authors' code, YingzhenLi/VRbound ``vae_autograd/network_layer.py``,
    ``_encode``: ``mu_out = sigmoid(mu_out)`` for the generative network)."""

    @staticmethod
    def link(mean_scores):
        return torch.sigmoid(mean_scores)


class BinaryEntmax(Observation):
    """Binary ρ′-entmax (FYVI §4.2): −Σ_d L_Ψρ′(θ_d; x_d), the FY loss of scores [θ, 0] against [x, 1 − x].

    ρ′ = 1 is the Bernoulli up to the constant Σ_d H(x_d); ρ′ = 2 the sparse Ψ₂ (2-entmax) head.
    """

    def __init__(self, rho: float):
        self.rho = float(rho)

    def log_prob(self, scores, x):
        return -binary_fy_loss(scores, x, self.rho).sum(-1)

    def mean(self, scores):
        return binary_entmax(scores, self.rho)


class Multinomial(Observation):
    """NVDM's multinomial of word counts: Σ_v x_v log softmax(θ)_v (the multinomial coefficient omitted)."""

    def log_prob(self, scores, x):
        return -multinomial_nll(scores, x)

    def mean(self, scores):
        return torch.softmax(scores, -1)


class Entmax(Observation):
    """FY-NVDM's ρ′-entmax head: −N · L_Ω(θ; x/N) of the Tsallis ρ′-negentropy (FYVI Appendix D)."""

    def __init__(self, rho: float):
        self.rho = float(rho)

    def log_prob(self, scores, x):
        return -fy_multinomial_loss(scores, x, self.rho)

    def mean(self, scores):
        return observation_probs(scores, self.rho)


OBSERVATIONS: dict[str, Callable[[float], Observation]] = {
    "bernoulli": lambda rho: Bernoulli(), "gaussian": lambda rho: Gaussian(),
    "gaussian_sigmoid": lambda rho: SigmoidMeanGaussian(),
    "binary_entmax": BinaryEntmax, "multinomial": lambda rho: Multinomial(), "entmax": Entmax,
}


# ---------------------------------------------------------------------------------- posterior families
class GaussianPosterior:
    """q(z | x) = N(μ, diag σ²) with prior N(0, I); the encoder's s is log σ (``log_sigma``) or log σ² (``log_var``).

    KL(q ‖ N(0, I)) = ½ Σ_k (μ_k² + σ_k² − 1 − log σ_k²).
    """

    def __init__(self, scale: str = "log_var"):
        self.scale = scale

    def posterior(self, mu: Tensor, s: Tensor) -> Distribution:
        return Normal(mu, torch.exp(s) if self.scale == "log_sigma" else (0.5 * s).exp(), validate_args=False)

    def divergence(self, q: Distribution, mu: Tensor, s: Tensor) -> Tensor:
        if self.scale == "log_sigma":
            return 0.5 * (mu.pow(2) + torch.exp(2.0 * s) - 1.0 - 2.0 * s).sum(-1)
        return 0.5 * (mu.pow(2) + s.exp() - 1.0 - s).sum(-1)

    def log_q(self, q: Distribution, z: Tensor) -> Tensor:
        return q.log_prob(z).sum(-1)


class BetaGaussianPosterior:
    """q(z | x) = β-Gaussian(μ, diag σ², ρ) (FYVI §4.2; ρ = 1 the Gaussian); s = log σ².

    The divergence is the FY regularizer L_Ω(η; q) toward the prior score η = −½‖z‖²
    (:func:`~fyexp.distributions.beta_gaussian.fy_regularizer`).  ``authors`` is the authors' code as executed:
    their term (:func:`~fyexp.distributions.beta_gaussian.authors_regularizer`) and spcdist's sampler, which
    drops coordinates of negligible scale (:class:`~fyexp.distributions.beta_gaussian_masked.RankMaskedBetaGaussian`).
    """

    def __init__(self, rho: float, regularizer: str = "fy"):
        self.rho = float(rho)
        self.regularizer = regularizer
        self.regularize = fy_regularizer if regularizer == "fy" else authors_regularizer

    def posterior(self, mu: Tensor, s: Tensor) -> Distribution:
        # no argument validation: a NaN must reach the loss, where the trainer fails the cell cleanly
        if self.regularizer == "authors" and self.rho > 1:
            return RankMaskedBetaGaussian(mu, (0.5 * s).exp(), self.rho, validate_args=False)
        return BetaGaussian(mu, (0.5 * s).exp(), self.rho, validate_args=False)

    def divergence(self, q: Distribution, mu: Tensor, s: Tensor) -> Tensor:
        return self.regularize(q)

    def log_q(self, q: Distribution, z: Tensor) -> Tensor:
        return q.log_prob(z)


def standard_normal_log_prob(z: Tensor) -> Tensor:
    """log N(z; 0, I) summed over the last dimension."""
    return -0.5 * (z.pow(2).sum(-1) + z.shape[-1] * math.log(2 * math.pi))
