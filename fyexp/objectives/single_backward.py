r"""Single-backward-pass objectives (Li & Turner Algorithm 1; Burda et al.'s one-sample gradient).

One step: draw ε_1 … ε_K, compute the K log-weights log ŵ(ε_k; x) **without** a graph, choose one sample j per
data point, and recompute only that sample with gradients; the gradient is ∇_φ log ŵ(ε_j; x):

* :class:`VRMaxSingle` — j = arg max_k log ŵ_k (α = −∞, VR-max).  Its value is max_k log ŵ_k = L̂_{−∞,K}.
* :class:`VRSingle` — j ∼ p_k ∝ ŵ_k^{1−α} (α = 0: IWAE with one backward pass, the paper's "−85.02" row).
  E_j[∇ log ŵ_j] = Σ_k w̃_{α,k} ∇ log ŵ_k, the gradient of L̂_{α,K} (eq. 21); the value reported is L̂_{α,K}.

The model must give its noise explicitly: ``noise(model, x, K)`` and ``terms_from_noise(model, x, noise)``
(for :class:`~fyexp.models.vae.VAE`, :mod:`fyexp.models.replay`).  Compared with back-propagating all K samples
(:class:`~fyexp.objectives.VRMax`, :class:`~fyexp.objectives.IWAE`), the backward pass and the graph shrink K-fold.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, ClassVar

import torch
from torch import Tensor

from fyexp.models.replay import vae_noise, vae_terms_from_noise
from fyexp.objectives import bounds
from fyexp.objectives.objective import Objective


def _select(noise: list[Tensor], index: Tensor) -> list[Tensor]:
    """The noise of sample ``index[b]`` for each data point b: (K, B, n) → (1, B, n)."""
    return [eps.gather(0, index.view(1, -1, 1).expand(1, -1, eps.shape[-1])) for eps in noise]


@dataclass(frozen=True)
class _SingleBackward(Objective):
    noise: Callable = vae_noise
    terms_from_noise: Callable = vae_terms_from_noise

    def choose(self, log_w: Tensor) -> Tensor:
        raise NotImplementedError

    def value(self, log_w: Tensor) -> Tensor:
        raise NotImplementedError

    def __call__(self, model, x: Tensor) -> tuple[Tensor, dict[str, Tensor]]:
        with torch.no_grad():
            eps = self.noise(model, x, self.n_samples)
            log_w = self.terms_from_noise(model, x, eps).log_weights()  # (K, B)
            index = self.choose(log_w)
            value = self.value(log_w)
        chosen = self.terms_from_noise(model, x, _select(eps, index)).log_weights()[0]  # (B,), with a graph
        return chosen - chosen.detach() + value, {}


@dataclass(frozen=True)
class VRMaxSingle(_SingleBackward):
    """VR-max by Algorithm 1: back-propagate the max-weight sample only."""

    name: ClassVar[str] = "vr_max_single"

    def choose(self, log_w):
        return log_w.argmax(0)

    def value(self, log_w):
        return bounds.vr_max_bound(log_w)


@dataclass(frozen=True)
class VRSingle(_SingleBackward):
    """VR-α with one backward pass: back-propagate one sample drawn with probability ∝ ŵ^{1−α} (α = 0: IWAE)."""

    name: ClassVar[str] = "vr_single"
    alpha: float = 0.0

    def choose(self, log_w):
        probs = torch.softmax((1.0 - self.alpha) * log_w, dim=0)
        return torch.multinomial(probs.T, 1).squeeze(-1)

    def value(self, log_w):
        return bounds.vr_bound(log_w, self.alpha)


__all__ = ["VRMaxSingle", "VRSingle"]
