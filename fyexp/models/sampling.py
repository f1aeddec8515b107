"""Ancestral sampling from a (hierarchical) VAE's generative model — the decoded samples of VR Figure 3."""

from __future__ import annotations

import torch

from fyexp.models.vae import VAE


@torch.no_grad()
def prior_samples(model: VAE, n: int) -> torch.Tensor:
    """Decoded means E[x | h₁] of ancestral samples h_L ∼ N(0, I), h_{l} ∼ p(h_l | h_{l+1}); (n, D)."""
    device = next(model.parameters()).device
    decoders = model._decoders()
    top = decoders[-1].body[0].in_features  # the top latent's size
    h = torch.randn(n, top, device=device)
    for decoder in reversed(decoders[1:]):
        h = model.inner.posterior(*decoder(h)).sample()
    return model.observation.mean(model.decode(h))


__all__ = ["prior_samples"]
