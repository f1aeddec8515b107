r"""The binary sparse coding generative model (Haft et al. 2004; Henniges et al. 2010), as data are drawn from it.

.. math::

    p(\vec s \mid \Theta) = \prod_{h=1}^H \pi^{s_h} (1-\pi)^{1-s_h}, \qquad
    p(\vec y \mid \vec s, \Theta) = \mathcal{N}(\vec y;\, W \vec s,\, \sigma^2 I_D).

The parameters and ancestral sampling live here, below :mod:`fyexp.em.bsc` (inference and learning: the joint,
the posterior, the M-step), so that data sets such as :mod:`fyexp.data.bars` draw from the model without
importing the EM code.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["BSCParams", "sample_prior", "sample_data"]


@dataclass(frozen=True)
class BSCParams:
    r""":math:`\Theta = (W, \sigma^2, \pi)`: dictionary ``W`` (D, H), noise variance ``sigma2`` > 0, prior ``pi``
    in [0, 1] (the same for every latent, as in Henniges et al. 2010)."""

    W: np.ndarray
    sigma2: float
    pi: float

    @property
    def n_latents(self) -> int:
        return self.W.shape[1]

    @property
    def n_observed(self) -> int:
        return self.W.shape[0]

    def as_dict(self) -> dict:
        return {"W": self.W.tolist(), "sigma2": float(self.sigma2), "pi": float(self.pi)}


def sample_prior(pi: float, shape: tuple[int, ...], n_latents: int, rng: np.random.Generator) -> np.ndarray:
    r"""States :math:`\vec s \sim \prod_h \mathrm{Bernoulli}(\pi)`, shape ``(*shape, H)``, dtype uint8."""
    return (rng.random((*shape, n_latents)) < pi).astype(np.uint8)


def sample_data(params: BSCParams, n_points: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    r"""``(Y, S)``: :math:`N` draws :math:`\vec s \sim p(\vec s)`, :math:`\vec y = W\vec s + \sigma\epsilon`."""
    S = sample_prior(params.pi, (n_points,), params.n_latents, rng)
    Y = S @ params.W.T + np.sqrt(params.sigma2) * rng.standard_normal((n_points, params.n_observed))
    return Y, S
