"""Reconstruction errors of a VAE's decoder mean (FYVI Appendix C, Table 2).

For an image x ∈ [0, 1]^D and a latent z, the l1 reconstruction error is Σ_d |x_d − x̂_d(z)|, with
x̂(z) = E[x | z] the observation head's mean of the decoder's scores θ(z).  :func:`l1_errors` evaluates it at three
latents per image:

* ``sample`` — one draw z ∼ q(z | x) from the model's own posterior (FYVI's metric);
* ``mode`` — the posterior mode (μ for a Gaussian or β-Gaussian posterior);
* ``gaussian_sample`` — z = μ + σ ε, ε ∼ N(0, I), as the authors' evaluation drew it for every encoder (a bug for
  β-Gaussian encoders, whose samples lie in a bounded ellipsoid around μ).
"""

from __future__ import annotations

import torch

__all__ = ["l1_errors"]


@torch.no_grad()
def l1_errors(model, images: torch.Tensor, chunk: int = 2_500) -> dict[str, torch.Tensor]:
    """Per-image Σ_pixels |x − x̂| at a posterior sample, at the mode, and at a Gaussian sample; each (N,).

    ``model`` is a :class:`fyexp.models.VAE` (``posterior(x)`` with ``rsample``, ``mode``, ``loc``, ``scale``;
    ``decode``; ``observation.mean``).  The samples are drawn from torch's global generator, ``chunk`` images at a
    time, in the order sample, mode, Gaussian sample.
    """
    out: dict[str, list[torch.Tensor]] = {"sample": [], "mode": [], "gaussian_sample": []}
    for x in images.split(chunk):
        q = model.posterior(x)
        latents = {"sample": q.rsample(), "mode": q.mode,
                   "gaussian_sample": q.loc + q.scale * torch.randn_like(q.loc)}
        for key, z in latents.items():
            x_hat = model.observation.mean(model.decode(z))
            out[key].append((x - x_hat).abs().sum(-1))
    return {k: torch.cat(v) for k, v in out.items()}
