"""NVDM (Miao et al., 2016) and FY-NVDM (FYVI Appendix D) as a :class:`~fyexp.models.vae.VAE` of word counts.

Encoder: x ∈ ℕ^V → h = tanh(W₁x + b₁) ∈ ℝ^500 → q(z|x) = N(μ(h), diag σ(h)²), z ∈ ℝ^K ("topics"), with the
log σ layer initialized to zero (NVDM).  Prior p(z) = N(0, I).  Decoder scores θ(z) = R z + b ∈ ℝ^V, read as
softmax(θ) (NVDM, multinomial likelihood) or ρ′-entmax(θ) (FY-NVDM, N times the FY loss of the Tsallis
ρ′-negentropy; :mod:`fyexp.losses.fy_multinomial`).  Trained on the β-ELBO (FYVI eq. 25 with the observation
term swapped) with one reparameterized sample: :class:`fyexp.objectives.ELBO` with ``beta``.
"""

from __future__ import annotations

import torch

from fyexp.losses.fy_multinomial import l1_reconstruction_error, multinomial_nll, observation_probs
from fyexp.models.vae import VAE, ModelConfig, build_vae


def build_nvdm(vocab_size: int, n_topics: int = 50, hidden: int = 500, rho_prime: float = 1.0) -> VAE:
    """NVDM (``rho_prime`` = 1: softmax / multinomial) or FY-NVDM (ρ′ > 1: entmax / FY loss)."""
    config = ModelConfig(latent=[n_topics], encoder_hidden=[[hidden]], decoder_hidden=[[]], activation="tanh",
                         scale="log_sigma", encoder_heads="separate", zero_scale_init=True,
                         observation="multinomial" if rho_prime == 1.0 else "entmax", observation_rho=rho_prime)
    return build_vae(config, vocab_size)


def topic_word_weights(model: VAE) -> torch.Tensor:
    """R, shape (V, K): column k scores every word for topic (latent dimension) k."""
    return model.decoder.out.weight.detach()


@torch.no_grad()
def reconstruction_error(model: VAE, counts: torch.Tensor, alpha: float, batch_size: int = 2048) -> torch.Tensor:
    """FYVI Table 3's RE per document: ‖x/N − α-entmax(θ(μ(x)))‖₁ at the encoder's mean; shape (n,)."""
    out = []
    for chunk in counts.split(batch_size):
        mean, _ = model.encode(chunk)
        out.append(l1_reconstruction_error(observation_probs(model.decode(mean), alpha), chunk))
    return torch.cat(out)


@torch.no_grad()
def perplexity(model: VAE, counts: torch.Tensor, n_samples: int = 20, batch_size: int = 2048) -> float:
    """NVDM's per-document perplexity exp(mean_d (−ELBO_d / N_d)) with the multinomial likelihood (β = 1).

    The ELBO is averaged over ``n_samples`` reparameterized samples of z (Miao et al. use one).
    """
    ratios = []
    for chunk in counts.split(batch_size):
        mean, log_sigma = model.encode(chunk)
        nll = torch.zeros(chunk.shape[0], device=chunk.device)
        for _ in range(n_samples):
            z = mean + torch.exp(log_sigma) * torch.randn_like(mean)
            nll += multinomial_nll(model.decode(z), chunk) / n_samples
        ratios.append((nll + model.family.divergence(None, mean, log_sigma)) / chunk.sum(-1))
    return float(torch.exp(torch.cat(ratios).mean()))


def NVDM(vocab_size: int, n_topics: int = 50, hidden: int = 500) -> VAE:  # noqa: N802 (the former class name)
    """The NVDM layout with a multinomial head (use :func:`build_nvdm`; kept for existing callers)."""
    return build_nvdm(vocab_size, n_topics, hidden)


def gaussian_kl(mean: torch.Tensor, log_sigma: torch.Tensor) -> torch.Tensor:
    """KL(N(μ, diag σ²) ‖ N(0, I)) = ½ Σ_k (μ_k² + σ_k² − 1 − 2 log σ_k) per row; (n, K) → (n,)."""
    return 0.5 * (mean.pow(2) + torch.exp(2.0 * log_sigma) - 1.0 - 2.0 * log_sigma).sum(-1)


def nvdm_objective(model: VAE, counts: torch.Tensor, alpha: float, beta: float) -> dict[str, torch.Tensor]:
    """One-sample J = N·L(θ(z); x/N) + β KL per document at observation index ``alpha`` (1: multinomial NLL)."""
    from fyexp.losses.fy_multinomial import fy_multinomial_loss

    mean, log_sigma = model.encode(counts)
    z = mean + torch.exp(log_sigma) * torch.randn_like(mean)
    scores = model.decode(z)
    recon = multinomial_nll(scores, counts) if alpha == 1.0 else fy_multinomial_loss(scores, counts, alpha)
    kl = gaussian_kl(mean, log_sigma)
    return {"objective": recon + beta * kl, "reconstruction": recon, "kl": kl}
