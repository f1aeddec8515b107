"""The Monte Carlo test log-likelihood L̂_{0,S} (IWAE's and Li & Turner's evaluation, S = 5,000).

    log p(x) ≈ L̂_{0,S} = log (1/S) Σ_{s=1}^S w_s,     w_s = p(x, z_s) / q(z_s | x),  z_s ∼ q(z | x),

the VR bound at α = 0 (a lower bound in expectation that tends to log p(x) as S grows).  The S samples are
drawn in chunks of ``chunk`` (each chunk one batched call to the model, no Python loop per sample) and
combined by a running log-sum-exp, so memory is bounded by ``chunk × batch_size`` whatever S is.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from fyexp.models.latent import LatentModel


@torch.no_grad()
def mc_log_likelihood(model: LatentModel, x: Tensor, n_samples: int = 5000, chunk: int = 500,
                      batch_size: int | None = None) -> Tensor:
    """L̂_{0,S}(x) per data point, shape (N,).

    Parameters
    ----------
    model : LatentModel
        Anything with ``log_weights(x, K)`` → (K, B).
    x : Tensor (N, ...)
    n_samples : int
        S, the number of importance samples per data point.
    chunk : int
        Samples per model call.
    batch_size : int, optional
        Data points per model call (all of them by default).
    """
    if n_samples < 1 or chunk < 1:
        raise ValueError(f"mc_log_likelihood: n_samples and chunk must be >= 1, got {n_samples}, {chunk}")
    out = []
    for xb in x.split(batch_size or len(x)):
        total = None
        for start in range(0, n_samples, chunk):
            lse = torch.logsumexp(model.log_weights(xb, min(chunk, n_samples - start)), 0)
            total = lse if total is None else torch.logaddexp(total, lse)
        out.append(total - math.log(n_samples))
    return torch.cat(out)
