"""A linear-Gaussian latent-variable model with everything in closed form: the objectives' test bed.

    z ∼ N(0, I_d),   x | z ∼ N(W z + b, σ² I_D),   so   p(x) = N(x; b, W Wᵀ + σ² I),

the exact posterior is p(z | x) = N(M Wᵀ(x − b)/σ², M), M = (I + WᵀW/σ²)⁻¹, and the amortized Gaussian posterior
q(z | x) = N(A x + c, diag exp(2 log_s)) is exact when A = M Wᵀ/σ², c = −A b, s² = diag M (for d = 1, or a
diagonal M).  With ``likelihood_power`` γ the same formulas give the fractional posterior ∝ p(x|z)^γ p(z).
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from fyexp.models.latent import LatentTerms


class LinearGaussian(nn.Module):
    """z ∈ ℝ^d, x ∈ ℝ^D; parameters W (D, d), b (D,), log σ, and the encoder A (d, D), c (d,), log_s (d,)."""

    def __init__(self, weight: Tensor, bias: Tensor, noise_std: float):
        super().__init__()
        self.weight = nn.Parameter(weight.clone())
        self.bias = nn.Parameter(bias.clone())
        self.log_noise = nn.Parameter(torch.tensor(math.log(noise_std), dtype=weight.dtype))
        d, dim_x = weight.shape[1], weight.shape[0]
        self.enc_weight = nn.Parameter(torch.zeros(d, dim_x, dtype=weight.dtype))
        self.enc_bias = nn.Parameter(torch.zeros(d, dtype=weight.dtype))
        self.enc_log_scale = nn.Parameter(torch.zeros(d, dtype=weight.dtype))

    def posterior(self, x: Tensor) -> torch.distributions.Normal:
        """q(z | x) = N(A x + c, diag s²), batch shape (B, d)."""
        return torch.distributions.Normal(x @ self.enc_weight.T + self.enc_bias, self.enc_log_scale.exp().expand(
            x.shape[0], -1))

    def terms(self, x: Tensor, n_samples: int) -> LatentTerms:
        q = self.posterior(x)
        z = q.rsample((n_samples,))  # (K, B, d)
        noise = self.log_noise.exp()
        log_lik = torch.distributions.Normal(z @ self.weight.T + self.bias, noise).log_prob(x).sum(-1)
        log_prior = torch.distributions.Normal(0.0, 1.0).log_prob(z).sum(-1)
        kl = torch.distributions.kl_divergence(q, torch.distributions.Normal(torch.zeros_like(q.loc), 1.0)).sum(-1)
        return LatentTerms(log_lik, log_prior, q.log_prob(z).sum(-1), kl)

    def log_weights(self, x: Tensor, n_samples: int) -> Tensor:
        return self.terms(x, n_samples).log_weights()

    @torch.no_grad()
    def log_evidence(self, x: Tensor) -> Tensor:
        """Exact log p(x) = log N(x; b, W Wᵀ + σ² I), shape (B,)."""
        cov = self.weight @ self.weight.T + self.log_noise.exp() ** 2 * torch.eye(len(self.bias), dtype=x.dtype)
        return torch.distributions.MultivariateNormal(self.bias, cov).log_prob(x)

    @torch.no_grad()
    def set_exact_posterior(self, likelihood_power: float = 1.0) -> None:
        """Set the encoder to the (fractional, ∝ p(x|z)^γ p(z)) posterior; exact when its covariance is diagonal."""
        g, var = likelihood_power, self.log_noise.exp() ** 2
        d = self.weight.shape[1]
        cov = torch.linalg.inv(torch.eye(d, dtype=self.weight.dtype) + g * self.weight.T @ self.weight / var)
        self.enc_weight.copy_(g * cov @ self.weight.T / var)
        self.enc_bias.copy_(-self.enc_weight @ self.bias)
        self.enc_log_scale.copy_(0.5 * torch.diagonal(cov).log())
