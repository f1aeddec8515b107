r"""The bias of the VR bound's Monte Carlo estimate against a many-sample reference (Li & Turner Figure 4).

For a model with log-weights log w_k(x) = log p(x, h_k) − log q(h_k | x), h_k ∼ q(h | x), the estimate

    L̂_{α,K}(x) = 1/(1−α) log (1/K) Σ_k w_k(x)^{1−α}        (α = 1: (1/K) Σ_k log w_k, the ELBO)

is compared with L̂_{0,S}(x) (S ≫ K, the test log-likelihood estimate): the bias at (α, K) is the mean over the
points of L̂_{0,S}(x) − L̂_{α,K}(x), drawn ``repetitions`` times; its mean and standard deviation over the draws.
"""

from __future__ import annotations

from typing import Iterable

import torch

from fyexp.objectives import vr_bound


@torch.no_grad()
def vr_bias(model, x: torch.Tensor, reference: torch.Tensor, alphas: Iterable[float], ks: Iterable[int],
            repetitions: int) -> list[tuple[float, int, float, float]]:
    """(α, K, mean, std) over ``repetitions`` draws of mean_n [reference_n − L̂_{α,K}(x_n)], K outer, α inner;
    ``model.log_weights(x, K)`` gives (K, N) log-weights, ``reference`` is (N,)."""
    out = []
    for k in ks:
        draws = torch.stack([model.log_weights(x, k) for _ in range(repetitions)])  # (R, K, N)
        for alpha in alphas:
            bias = (reference - torch.stack([vr_bound(d, alpha) for d in draws])).mean(-1)  # (R,)
            out.append((alpha, k, float(bias.mean()), float(bias.std())))
    return out


__all__ = ["vr_bias"]
