"""MLP building blocks: a body of Linear + activation layers, a Gaussian encoder, a decoder."""

from __future__ import annotations

from typing import Sequence

import torch
from torch import Tensor, nn

ACTIVATIONS = {"relu": nn.ReLU, "tanh": nn.Tanh, "softplus": nn.Softplus, "leaky_relu": nn.LeakyReLU}


def mlp(n_in: int, hidden: Sequence[int], activation: str) -> tuple[nn.Sequential, int]:
    """Linear → activation for each hidden size; returns the body and its output width."""
    layers: list[nn.Module] = []
    for width in hidden:
        layers += [nn.Linear(n_in, width), ACTIVATIONS[activation]()]
        n_in = width
    return nn.Sequential(*layers), n_in


class GaussianEncoder(nn.Module):
    """x → body → (μ, s) ∈ ℝ^{2n}: one joint Linear split in two (``joint``) or two Linear heads (``separate``,
    NVDM's layout, where ``zero_scale`` initialises the s head to zero)."""

    def __init__(self, n_in: int, hidden: Sequence[int], latent: int, activation: str = "relu",
                 heads: str = "joint", zero_scale: bool = False):
        super().__init__()
        self.body, width = mlp(n_in, hidden, activation)
        self.heads = heads
        if heads == "joint":
            self.out = nn.Linear(width, 2 * latent)
        else:
            self.mean = nn.Linear(width, latent)
            self.scale = nn.Linear(width, latent)
            if zero_scale:
                nn.init.zeros_(self.scale.weight)
                nn.init.zeros_(self.scale.bias)

    def forward(self, x: Tensor) -> tuple[Tensor, Tensor]:
        h = self.body(x)
        if self.heads == "joint":
            mu, s = self.out(h).chunk(2, dim=-1)
            return mu, s
        return self.mean(h), self.scale(h)


class Decoder(nn.Module):
    """z → body → scores θ of width ``n_out`` (a single Linear when ``hidden`` is empty)."""

    def __init__(self, latent: int, hidden: Sequence[int], n_out: int, activation: str = "relu"):
        super().__init__()
        self.body, width = mlp(latent, hidden, activation)
        self.out = nn.Linear(width, n_out)

    def forward(self, z: Tensor) -> Tensor:
        return self.out(self.body(z))
