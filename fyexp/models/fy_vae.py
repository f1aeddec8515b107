"""The FY β-VAE of FYVI §4.2 / Appendix C (the authors' ``mvb.py``) as a :class:`~fyexp.models.vae.VAE`, and the
images its figures show.

Encoder x ∈ [0, 1]^784 → 512 (ReLU) → (μ, log σ²) ∈ ℝ^{2·256} of a β-Gaussian posterior of index ρ (1 Gaussian,
3/2 biweight, 2 Epanechnikov); decoder z ∈ ℝ^256 → 512 (ReLU) → 784 scores θ(z) of a binary ρ′-entmax head
(1 Bernoulli, 2 Ψ₂ sparse binary).  The regularizer is the FY loss toward η = −½‖z‖² (``fy``; the KL at ρ = 1) or
the authors' code's term (``authors``, :func:`~fyexp.distributions.beta_gaussian.authors_regularizer`).
"""

from __future__ import annotations

import torch

from fyexp.distributions.beta_gaussian import BetaGaussian
from fyexp.models.vae import VAE, ModelConfig, build_vae

__all__ = ["build_fy_vae", "decoded_prior_samples", "mode_reconstructions"]


def build_fy_vae(n_in: int, hidden: int = 512, latent: int = 256, posterior_rho: float = 1.0,
                 observation_rho: float = 1.0, regularizer: str = "fy") -> VAE:
    """The authors' MLP (``mvb.py``): 784 → 512 (ReLU) → (μ, log σ²) ∈ ℝ^{2·256}; 256 → 512 (ReLU) → 784 scores."""
    return build_vae(ModelConfig(latent=[latent], encoder_hidden=[[hidden]], decoder_hidden=[[hidden]],
                                 activation="relu", posterior="beta_gaussian", posterior_rho=posterior_rho,
                                 regularizer=regularizer, observation="binary_entmax",
                                 observation_rho=observation_rho), n_in)


@torch.no_grad()
def decoded_prior_samples(model: VAE, n_samples: int, latent: int, rho: float) -> torch.Tensor:
    """Decoder means E[x | z] at ``n_samples`` draws z ∼ q* = β-Gaussian_ρ(0, I) ∈ ℝ^latent — the entmax of
    η = −½‖z‖², the FY regularizer's target (FYVL Figure 3's samples); shape (n_samples, D)."""
    device = next(model.parameters()).device
    prior = BetaGaussian(torch.zeros(latent, device=device), torch.ones(latent, device=device), rho)
    return model.observation.mean(model.decode(prior.rsample((n_samples,))))


@torch.no_grad()
def mode_reconstructions(model: VAE, x: torch.Tensor) -> torch.Tensor:
    """Decoder means E[x | z] at the posterior modes z = mode q(z | x); shape of ``x``."""
    return model.observation.mean(model.decode(model.posterior(x).mode))
