"""MLP VAEs with one or two stochastic layers, built from spec values, behind the objectives' protocol.

One stochastic layer (FYVI Appendix C; IWAE / VR one-layer):  q(z | x) from an MLP encoder, p(z) = N(0, I),
p(x | z) an observation head on an MLP decoder.  Two layers (IWAE / VR two-layer): q(h₁|x) q(h₂|h₁),
p(h₂) = N(0, I), p(h₁|h₂) Gaussian, p(x|h₁) — all conditionals diagonal Gaussians from MLPs.

``terms(x, K)`` draws K reparameterized samples and returns log p(x|z_k), log p(z_k), log q(z_k|x) (K, B) and,
for one layer, the closed-form divergence (KL, or the β-Gaussian's FY regularizer).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import torch
from torch import Tensor, nn

from fyexp.core.errors import require
from fyexp.models.base import LatentVariableModel
from fyexp.models.heads import (OBSERVATIONS, BetaGaussianPosterior, GaussianPosterior, Observation,
                                standard_normal_log_prob)
from fyexp.models.mlp import ACTIVATIONS, Decoder, GaussianEncoder
from fyexp.models.latent import LatentTerms


@dataclass
class ModelConfig:
    """A VAE as spec values (a ``model:`` block).

    ``latent`` has one entry per stochastic layer (bottom first); ``encoder_hidden[l]`` are the hidden sizes of
    q(h_{l+1} | h_l) (h_0 = x) and ``decoder_hidden[l]`` those of p(h_l | h_{l+1}) (p(x | h₁) first).
    """

    latent: list[int] = field(default_factory=lambda: [256])
    encoder_hidden: list[list[int]] = field(default_factory=lambda: [[512]])
    decoder_hidden: list[list[int]] = field(default_factory=lambda: [[512]])
    activation: Literal["relu", "tanh", "softplus", "leaky_relu"] = "relu"
    posterior: Literal["gaussian", "beta_gaussian"] = "gaussian"
    posterior_rho: float = 1.0
    regularizer: Literal["fy", "authors"] = "fy"
    scale: Literal["log_var", "log_sigma"] = "log_var"
    encoder_heads: Literal["joint", "separate"] = "joint"
    zero_scale_init: bool = False
    observation: Literal["bernoulli", "gaussian", "gaussian_sigmoid", "binary_entmax", "multinomial",
                         "entmax"] = "bernoulli"
    observation_rho: float = 1.0

    def __post_init__(self):
        layers = len(self.latent)
        require(layers in (1, 2), "latent", "one or two latent sizes", self.latent)
        require(all(n > 0 for n in self.latent), "latent", "positive integers", self.latent)
        require(len(self.encoder_hidden) == layers, "encoder_hidden", f"{layers} lists of hidden sizes",
                self.encoder_hidden)
        require(len(self.decoder_hidden) == layers, "decoder_hidden", f"{layers} lists of hidden sizes",
                self.decoder_hidden)
        require(self.posterior == "gaussian" or layers == 1, "posterior", "'gaussian' with two stochastic layers",
                self.posterior)
        require(self.posterior_rho >= 1.0, "posterior_rho", "a number >= 1", self.posterior_rho)
        require(self.observation_rho >= 1.0, "observation_rho", "a number >= 1", self.observation_rho)


class VAE(LatentVariableModel):
    """Encoders q(h_{l+1} | h_l), decoders p(h_l | h_{l+1}) (``decoders[0]`` emits the scores of p(x | h₁)).

    Parameters
    ----------
    encoders : list of GaussianEncoder
    decoders : list of modules; ``decoders[0]`` a :class:`Decoder`, the others :class:`GaussianEncoder`
    observation : Observation
    family : GaussianPosterior or BetaGaussianPosterior (of the first layer; deeper layers are Gaussian)
    """

    def __init__(self, encoders: list[nn.Module], decoders: list[nn.Module], observation: Observation,
                 family: GaussianPosterior | BetaGaussianPosterior):
        super().__init__()
        if len(encoders) == 1:  # the one-layer names of the original MLPVAE / NVDM
            self.encoder, self.decoder = encoders[0], decoders[0]
        else:
            self.encoders, self.decoders = nn.ModuleList(encoders), nn.ModuleList(decoders)
        self.observation, self.family = observation, family
        self.inner = GaussianPosterior(family.scale if isinstance(family, GaussianPosterior) else "log_var")

    @property
    def n_layers(self) -> int:
        return 1 if hasattr(self, "encoder") else len(self.encoders)

    def _encoders(self) -> list[nn.Module]:
        return [self.encoder] if self.n_layers == 1 else list(self.encoders)

    def _decoders(self) -> list[nn.Module]:
        return [self.decoder] if self.n_layers == 1 else list(self.decoders)

    def encoder_parameters(self) -> list[nn.Parameter]:
        return [p for m in self._encoders() for p in m.parameters()]

    def decoder_parameters(self) -> list[nn.Parameter]:
        return [p for m in self._decoders() for p in m.parameters()]

    def encode(self, x: Tensor) -> tuple[Tensor, Tensor]:
        """(μ, s) of q(h₁ | x), each (B, n₁)."""
        return self._encoders()[0](x)

    def posterior(self, x: Tensor):
        """q(h₁ | x) as a distribution with batch shape (B, n₁)."""
        return self.family.posterior(*self.encode(x))

    def decode(self, z: Tensor) -> Tensor:
        """Observation scores θ(h₁), shape (..., D · width)."""
        return self._decoders()[0](z)

    def terms(self, x: Tensor, n_samples: int) -> LatentTerms:
        mu, s = self.encode(x)
        q = self.family.posterior(mu, s)
        h = q.rsample((n_samples,))  # (K, B, n₁)
        log_q = self.family.log_q(q, h)
        samples = [h]
        for encoder in self._encoders()[1:]:
            q_next = self.inner.posterior(*encoder(samples[-1]))
            samples.append(q_next.rsample())
            log_q = log_q + q_next.log_prob(samples[-1]).sum(-1)
        log_prior = standard_normal_log_prob(samples[-1])
        for level, decoder in reversed(list(enumerate(self._decoders()[1:]))):
            p = self.inner.posterior(*decoder(samples[level + 1]))
            log_prior = log_prior + p.log_prob(samples[level]).sum(-1)
        scores = self.decode(h)
        divergence = self.family.divergence(q, mu, s) if self.n_layers == 1 else None
        return LatentTerms(self.observation.log_prob(scores, x), log_prior, log_q, divergence,
                           decode_mean=lambda: self.observation.mean(scores.detach()))


def build_vae(config: ModelConfig, n_in: int) -> VAE:
    """The VAE of ``config`` for data of dimension ``n_in``; modules are created encoder first (so a seed gives
    the same initial weights as the original one-layer models)."""
    require(config.activation in ACTIVATIONS, "activation", f"one of {sorted(ACTIVATIONS)}", config.activation)
    observation = OBSERVATIONS[config.observation](config.observation_rho)
    family = (GaussianPosterior(config.scale) if config.posterior == "gaussian"
              else BetaGaussianPosterior(config.posterior_rho, config.regularizer))
    sizes = [n_in, *config.latent]
    encoders = [GaussianEncoder(sizes[l], config.encoder_hidden[l], sizes[l + 1], config.activation,
                                config.encoder_heads, config.zero_scale_init) for l in range(len(config.latent))]
    decoders: list[nn.Module] = [Decoder(sizes[1], config.decoder_hidden[0], n_in * observation.width,
                                         config.activation)]
    decoders += [GaussianEncoder(sizes[l + 1], config.decoder_hidden[l], sizes[l], config.activation)
                 for l in range(1, len(config.latent))]
    return VAE(encoders, decoders, observation, family)
