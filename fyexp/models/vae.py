"""The MLP encoder/decoder of the FY β-VAE (FYVI Appendix C; the authors' ``mvb.py``).

Encoder 784 → 512 (ReLU) → (μ, log σ²) ∈ ℝ^{2·256}; decoder 256 → 512 (ReLU) → 784 per-pixel scores θ
(logits for a Bernoulli decoder, entmax scores for the Ψ₂ one).
"""

from __future__ import annotations

import torch
from torch import nn


class MLPVAE(nn.Module):
    """One-hidden-layer MLP encoder and decoder.

    Parameters
    ----------
    n_in : int
        Pixels per image (784).
    hidden : int
        Hidden units of both networks (512).
    latent : int
        Latent dimension n (256).
    """

    def __init__(self, n_in: int = 784, hidden: int = 512, latent: int = 256):
        super().__init__()
        self.latent = latent
        self.encoder = nn.Sequential(nn.Linear(n_in, hidden), nn.ReLU(), nn.Linear(hidden, 2 * latent))
        self.decoder = nn.Sequential(nn.Linear(latent, hidden), nn.ReLU(), nn.Linear(hidden, n_in))

    def encode(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(μ, log σ²), each of shape (B, latent), for images x of shape (B, n_in)."""
        mu, log_var = self.encoder(x).chunk(2, dim=-1)
        return mu, log_var

    def decode(self, z: torch.Tensor) -> torch.Tensor:
        """Per-pixel scores θ of shape (..., n_in) for latents z of shape (..., latent)."""
        return self.decoder(z)
