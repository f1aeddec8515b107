"""What the figures show of a trained image VAE with a 2-D (or small) latent space, as arrays for the artifacts
(frac Figures 1, 3–7; drawn by :mod:`fyexp.report.figures.frac`).

* ``grid``: the decoded mean images λ(z) over :func:`~fyexp.models.conv_vae.inverse_cdf_grid` (2-D latents only);
* ``test_images``: the first test images; ``labels``: the classes of the scattered ones (uint8);
* explicit posteriors: ``means`` μ(x) and one reparameterized ``samples`` z ∼ q(z|x) per test image;
  semi-implicit: one ``samples`` z per image from q̃(z|x) (or the Bayes posterior r with ``bayes``) and
  ``implicit`` draws u ∼ q(u|x) of the first test images.

Images are uint8 (:func:`fyexp.data.images.to_uint8`), floats float16; draws use the global torch generator in
the order above.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

from fyexp.data.images import to_uint8
from fyexp.models.conv_vae import SIDE, inverse_cdf_grid


@torch.no_grad()
def latent_views(model, test: Tensor, labels: Tensor, *, grid_size: int, n_scatter: int, n_implicit: int, implicit_samples: int,
                 semi_implicit: bool, bayes: bool = False) -> dict[str, np.ndarray]:
    """The arrays above for ``model`` (a :class:`~fyexp.models.conv_vae.ConvVAE` or a semi-implicit VAE) on the
    (N, 784) ``test`` images: scatters of the first ``n_scatter`` (and their class ``labels``), a ``grid_size`` ×
    ``grid_size`` grid."""
    x = test[:n_scatter]
    out: dict[str, np.ndarray] = {"labels": labels[:len(x)].cpu().numpy().astype(np.uint8)}
    if model.latent == 2:
        out["grid"] = to_uint8(model.decode_image(inverse_cdf_grid(grid_size).to(test.device, torch.float32)),
                               (SIDE, SIDE))
    out["test_images"] = to_uint8(test[:grid_size], (SIDE, SIDE))
    if semi_implicit:
        which = "r" if bayes else "q"
        out["samples"] = torch.cat([model.posterior_samples(b, which) for b in x.split(500)]).cpu().numpy()
        out["implicit"] = model.implicit(test[:n_implicit], implicit_samples).cpu().numpy()
    else:
        mu, log_var = model.encode(x)
        out["means"] = mu.cpu().numpy()
        out["samples"] = model.sample(mu, log_var, 1)[0].cpu().numpy()
    return {k: (v.astype(np.float16) if v.dtype.kind == "f" else v) for k, v in out.items()}
