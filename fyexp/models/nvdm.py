"""NVDM (Miao et al., 2016) and FY-NVDM (FYVI Appendix D): a Gaussian-latent VAE of word counts.

Encoder: x ∈ ℕ^V → h = tanh(W₁x + b₁) ∈ ℝ^500 → q(z|x) = N(μ(h), diag σ(h)²), z ∈ ℝ^K ("topics"), with the
log σ layer initialized to zero (NVDM).  Prior p(z) = N(0, I).  Decoder scores θ(z) = R z + b ∈ ℝ^V, read as
softmax(θ) (NVDM, multinomial likelihood) or α-entmax(θ) (FY-NVDM, FY loss of the Tsallis α-negentropy).
The per-document objective (FYVI eq. 25 with the observation term swapped, Appendix D) is

    J(x) = E_{z∼q}[ N · L_Ω(θ(z); x/N) ] + β KL(q(z|x) ‖ N(0, I)),

estimated with one reparameterized sample z = μ + σ ⊙ ε.  At α = 1 it is NVDM's negative β-ELBO up to a
constant (see :mod:`fyexp.losses.fy_multinomial`).
"""

from __future__ import annotations

import torch
from torch import nn

from fyexp.losses.fy_multinomial import fy_multinomial_loss, l1_reconstruction_error, multinomial_nll, observation_probs


def gaussian_kl(mean: torch.Tensor, log_sigma: torch.Tensor) -> torch.Tensor:
    """KL(N(μ, diag σ²) ‖ N(0, I)) = ½ Σ_k (μ_k² + σ_k² − 1 − 2 log σ_k) per row; (n, K) → (n,)."""
    return 0.5 * (mean.pow(2) + torch.exp(2.0 * log_sigma) - 1.0 - 2.0 * log_sigma).sum(-1)


class NVDM(nn.Module):
    """NVDM's encoder and linear decoder.

    Parameters
    ----------
    vocab_size : int
        V, the vocabulary size (2,000).
    n_topics : int
        K, the latent dimension (50 in the paper).
    hidden : int
        Width of the encoder's tanh layer (500).
    """

    def __init__(self, vocab_size: int, n_topics: int = 50, hidden: int = 500):
        super().__init__()
        self.hidden = nn.Sequential(nn.Linear(vocab_size, hidden), nn.Tanh())
        self.mean = nn.Linear(hidden, n_topics)
        self.log_sigma = nn.Linear(hidden, n_topics)
        nn.init.zeros_(self.log_sigma.weight)
        nn.init.zeros_(self.log_sigma.bias)
        self.decoder = nn.Linear(n_topics, vocab_size)

    def encoder_parameters(self) -> list[nn.Parameter]:
        return [*self.hidden.parameters(), *self.mean.parameters(), *self.log_sigma.parameters()]

    def decoder_parameters(self) -> list[nn.Parameter]:
        return list(self.decoder.parameters())

    def encode(self, counts: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(μ, log σ) of q(z|x), each (n, K), for counts of shape (n, V)."""
        h = self.hidden(counts)
        return self.mean(h), self.log_sigma(h)

    def decode(self, z: torch.Tensor) -> torch.Tensor:
        """Decoder scores θ = R z + b, shape (n, V)."""
        return self.decoder(z)

    def topic_word_weights(self) -> torch.Tensor:
        """R, shape (V, K): column k scores every word for topic (latent dimension) k."""
        return self.decoder.weight.detach()


def nvdm_objective(model: NVDM, counts: torch.Tensor, alpha: float, beta: float) -> dict[str, torch.Tensor]:
    """One-sample estimate of J per document and its parts; each entry has shape (n,).

    ``alpha == 1`` uses NVDM's multinomial NLL (exactly, without the constant), otherwise the scaled FY loss.
    """
    mean, log_sigma = model.encode(counts)
    z = mean + torch.exp(log_sigma) * torch.randn_like(mean)
    scores = model.decode(z)
    recon = multinomial_nll(scores, counts) if alpha == 1.0 else fy_multinomial_loss(scores, counts, alpha)
    kl = gaussian_kl(mean, log_sigma)
    return {"objective": recon + beta * kl, "reconstruction": recon, "kl": kl}


@torch.no_grad()
def reconstruction_error(model: NVDM, counts: torch.Tensor, alpha: float, batch_size: int = 2048) -> torch.Tensor:
    """FYVI Table 3's RE per document: ‖x/N − α-entmax(θ(μ(x)))‖₁ at the encoder's mean; shape (n,)."""
    out = []
    for chunk in counts.split(batch_size):
        mean, _ = model.encode(chunk)
        out.append(l1_reconstruction_error(observation_probs(model.decode(mean), alpha), chunk))
    return torch.cat(out)


@torch.no_grad()
def perplexity(model: NVDM, counts: torch.Tensor, n_samples: int = 20, batch_size: int = 2048) -> float:
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
        ratios.append((nll + gaussian_kl(mean, log_sigma)) / chunk.sum(-1))
    return float(torch.exp(torch.cat(ratios).mean()))
