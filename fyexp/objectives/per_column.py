"""The VR bound with its own α for each column of a batch: independent models trained as one computation.

When the "batch" axis of :class:`~fyexp.models.latent.LatentTerms` indexes independent models (the splits ×
methods of :class:`fyexp.models.bnn.BatchedBNN`), column m gets the bound of its own method,

    L̂_{α_m, K} = 1/(1−α_m) · log (1/K) Σ_k w_{k,m}^{1−α_m}        (Li & Turner eq. 18, :func:`vr_bound`),

with α = 1 the ELBO — by default with the closed-form divergence, as the authors' VI does — and α = −∞ VR-max.
Columns do not interact: the gradient of Σ_m L̂_m with respect to model m's parameters is that of L̂_m alone.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import torch
from torch import Tensor

from fyexp.core.errors import ConfigValueError
from fyexp.objectives import bounds
from fyexp.objectives.objective import Objective
from fyexp.models.latent import LatentTerms


@dataclass(frozen=True)
class PerColumnVR(Objective):
    """``alphas[m]`` is the α of column m (``-inf`` for VR-max); ``analytic_kl``: α = 1 columns use the
    closed-form divergence when the terms carry one (else the Monte Carlo ELBO)."""

    name: ClassVar[str] = "vr_per_column"
    alphas: tuple[float, ...] = ()
    analytic_kl: bool = True

    def __post_init__(self):
        super().__post_init__()
        for a in self.alphas:
            if not (math.isfinite(a) or a == -math.inf):
                raise ConfigValueError("alphas", "real numbers or -inf", list(self.alphas))

    def bound(self, terms: LatentTerms) -> Tensor:
        n_cols = terms.log_likelihood.shape[1]
        if len(self.alphas) != n_cols:
            raise ValueError(f"PerColumnVR: {len(self.alphas)} alphas for {n_cols} columns")
        device = terms.log_likelihood.device
        out = None
        for alpha in dict.fromkeys(self.alphas):
            cols = torch.tensor([m for m, a in enumerate(self.alphas) if a == alpha], device=device)
            if alpha == 1.0 and self.analytic_kl and terms.divergence is not None:
                piece = bounds.elbo_analytic(terms.log_likelihood[:, cols], terms.divergence[cols])
            else:
                piece = bounds.vr_bound(terms.log_weights()[:, cols], alpha)
            placed = torch.zeros(n_cols, dtype=piece.dtype, device=device).index_copy(0, cols, piece)
            out = placed if out is None else out + placed
        return out


__all__ = ["PerColumnVR"]
