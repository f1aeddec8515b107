"""A VAE's terms at *given* posterior noise: what a single-backward objective needs to recompute one sample.

:meth:`fyexp.models.vae.VAE.terms` draws its reparameterization noise inside.  Li & Turner's Algorithm 1 (VR-max)
and IWAE's single-sample gradient first score K samples without a graph, pick one per data point, and recompute
only that one with gradients; for that the noise must be an input.  :func:`vae_noise` draws it in the order and
shapes ``VAE.terms`` does (ε₁ of shape (K, B, n₁), then ε₂ (K, B, n₂) for a second stochastic layer), and
:func:`vae_terms_from_noise` computes the same terms as ``VAE.terms`` from it — so under one RNG state the two
agree exactly (``tests/experiments/test_vr_vae.py`` checks it; Gaussian posteriors only, as in the VR experiments).
"""

from __future__ import annotations

import torch
from torch import Tensor

from fyexp.models.heads import GaussianPosterior, standard_normal_log_prob
from fyexp.models.vae import VAE
from fyexp.models.latent import LatentTerms


def vae_noise(vae: VAE, x: Tensor, n_samples: int) -> list[Tensor]:
    """ε_l ∼ N(0, I) of shape (K, B, n_l) for every stochastic layer l, drawn as ``VAE.terms`` draws them."""
    if not isinstance(vae.family, GaussianPosterior):
        raise ValueError("single-backward objectives need a Gaussian posterior")
    sizes = [enc.out.out_features // 2 if enc.heads == "joint" else enc.mean.out_features for enc in vae._encoders()]
    return [torch.empty(n_samples, len(x), n, dtype=x.dtype, device=x.device).normal_() for n in sizes]


def vae_terms_from_noise(vae: VAE, x: Tensor, noise: list[Tensor]) -> LatentTerms:
    """``VAE.terms`` at the given noise: h₁ = μ₁(x) + σ₁(x) ε₁, h₂ = μ₂(h₁) + σ₂(h₁) ε₂ (K' samples, any K')."""
    q = vae.family.posterior(*vae.encode(x))
    samples = [q.loc + q.scale * noise[0]]
    log_q = vae.family.log_q(q, samples[0])
    for encoder, eps in zip(vae._encoders()[1:], noise[1:]):
        q_next = vae.inner.posterior(*encoder(samples[-1]))
        samples.append(q_next.loc + q_next.scale * eps)
        log_q = log_q + q_next.log_prob(samples[-1]).sum(-1)
    log_prior = standard_normal_log_prob(samples[-1])
    for level, decoder in reversed(list(enumerate(vae._decoders()[1:]))):
        p = vae.inner.posterior(*decoder(samples[level + 1]))
        log_prior = log_prior + p.log_prob(samples[level]).sum(-1)
    scores = vae.decode(samples[0])
    return LatentTerms(vae.observation.log_prob(scores, x), log_prior, log_q,
                       decode_mean=lambda: vae.observation.mean(scores.detach()))


__all__ = ["vae_noise", "vae_terms_from_noise"]
