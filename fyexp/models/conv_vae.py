"""The 2-D-latent convolutional VAE of the fractional-posterior experiments (Chai & Bonilla §5.2, App. C.4).

The network of Ruthotto & Haber (2021), as ``docs/protocols.md`` describes it (88,837 parameters with width 32 and a
2-D latent, the number quoted in frac App. C.4):

* encoder: conv 1→32 and 32→64 (kernel 4, stride 2, padding 1, ReLU; 28 → 14 → 7), flatten (3,136), linear
  heads to μ and the log-variance s of a diagonal Gaussian q(z | x);
* decoder: linear → 64·7·7, BN–ReLU–convT 64→32, BN–ReLU–convT 32→1, read as the logits η of a continuous
  Bernoulli likelihood per pixel (λ = sigmoid η clamped to [1e-4, 1 − 1e-4], as the authors do;
  :mod:`fyexp.distributions.continuous_bernoulli`);
* prior p(z) = N(0, I).

Posterior parameterization (``docs/protocols.md``: "a variance bug inherited by the authors' VAE"):

* ``consistent`` (fyexp's): z = μ + exp(s/2) ε and log q(z|x) = log N(z; μ, exp(s)), the density of the sampler;
* ``authors``: z = μ + exp(s) ε (s used as a log-*std*) while log q(z|x) = −½ Σ (log 2π + s + ε²) (s used as a
  log-*variance*), so log q is not the log-density of what is sampled: it is off by +½ Σ s.  Its "KL"
  E[log q − log p] = ½ Σ (μ² + e^{2s} − s − 1) is minimised at s = −½ log 2 with value −0.0767 per dimension
  (−0.153 for 2-D), the negative divergence of frac Table 9's β = 10³, 10⁵ rows.

The encoder runs once per image; only the decoder sees the K samples (K·B decoder inputs).
"""

from __future__ import annotations

import math
from typing import Literal

import torch
from torch import Tensor, nn

from fyexp.distributions.continuous_bernoulli import clamp_logits, log_prob_logits
from fyexp.core.errors import require
from fyexp.models.base import LatentVariableModel
from fyexp.models.latent import HierarchicalTerms
from fyexp.models.latent import LatentTerms

SIDE = 28
PIXELS = SIDE * SIDE
LOG_2PI = math.log(2 * math.pi)
Parameterization = Literal["consistent", "authors"]
PARAMETERIZATIONS = ("consistent", "authors")


# ------------------------------------------------------------------------------- the Gaussian family
def posterior_std(log_var: Tensor, parameterization: str) -> Tensor:
    """The std the sampler uses: exp(s/2) (consistent) or exp(s) (the authors')."""
    return torch.exp(0.5 * log_var) if parameterization == "consistent" else torch.exp(log_var)


def gaussian_log_q(z: Tensor, mu: Tensor, log_var: Tensor, parameterization: str) -> Tensor:
    """log q(z | μ, s) summed over the last dimension, as each parameterization computes it.

    consistent: log N(z; μ, e^s) = −½ Σ (log 2π + s + (z − μ)²/e^s);
    authors: −½ Σ (log 2π + s + ε²) with ε = (z − μ)/e^s (their sampler's noise).
    """
    eps = (z - mu) / posterior_std(log_var, parameterization)
    return -0.5 * (LOG_2PI + log_var + eps * eps).sum(-1)


def standard_normal_log_prob(z: Tensor) -> Tensor:
    """log N(z; 0, I) summed over the last dimension."""
    return -0.5 * (LOG_2PI + z * z).sum(-1)


def gaussian_kl(mu: Tensor, log_var: Tensor) -> Tensor:
    """KL(N(μ, e^s) ‖ N(0, I)) = ½ Σ (μ² + e^s − 1 − s), the consistent parameterization's divergence."""
    return 0.5 * (mu * mu + log_var.exp() - 1.0 - log_var).sum(-1)


# ----------------------------------------------------------------------------------------- networks
class ConvTrunk(nn.Module):
    """x (B, 784) → features (B, 2w·7·7): conv 1→w, conv w→2w (kernel 4, stride 2, padding 1), ReLU."""

    def __init__(self, width: int = 32):
        super().__init__()
        self.conv1 = nn.Conv2d(1, width, 4, 2, 1)
        self.conv2 = nn.Conv2d(width, 2 * width, 4, 2, 1)
        self.n_features = 2 * width * 7 * 7

    def forward(self, x: Tensor) -> Tensor:
        h = torch.relu(self.conv1(x.reshape(-1, 1, SIDE, SIDE)))
        return torch.relu(self.conv2(h)).flatten(1)


class ConvDecoder(nn.Module):
    """z (..., d) → logits (..., 784): linear → (2w, 7, 7), BN–ReLU–convT 2w→w, BN–ReLU–convT w→1."""

    def __init__(self, latent: int, width: int = 32):
        super().__init__()
        self.width = width
        self.fc = nn.Linear(latent, 2 * width * 7 * 7)
        self.bn2 = nn.BatchNorm2d(2 * width)
        self.conv2 = nn.ConvTranspose2d(2 * width, width, 4, 2, 1)
        self.bn1 = nn.BatchNorm2d(width)
        self.conv1 = nn.ConvTranspose2d(width, 1, 4, 2, 1)

    def forward(self, z: Tensor) -> Tensor:
        lead = z.shape[:-1]
        h = self.fc(z.reshape(-1, z.shape[-1])).reshape(-1, 2 * self.width, 7, 7)
        h = self.conv2(torch.relu(self.bn2(h)))
        h = self.conv1(torch.relu(self.bn1(h)))
        return h.reshape(*lead, PIXELS)


class ContinuousBernoulliHead:
    """p(x | η): Σ_pixels log CB(x; sigmoid η) after the authors' clamp of λ to [eps, 1 − eps]."""

    def __init__(self, clamp: float | None = 1e-4):
        self.clamp = clamp

    def logits(self, raw: Tensor) -> Tensor:
        return clamp_logits(raw, self.clamp)

    def log_prob(self, raw: Tensor, x: Tensor) -> Tensor:
        return log_prob_logits(self.logits(raw), x).sum(-1)

    def parameter(self, raw: Tensor) -> Tensor:
        """λ, the decoded "mean image" of frac Figures 1, 3, 7 (the CB parameter, not E[x])."""
        return torch.sigmoid(self.logits(raw))


#: images decoded at once when no graph is kept (evaluation): the decoder's activations of 4,096 images are about
#: 0.4 GB, so an evaluation chunk's peak memory no longer grows with chunk × batch (frac's 1,024 samples)
DECODE_ROWS = 4096


def bounded_log_likelihood(decoder: nn.Module, head: "ContinuousBernoulliHead", z: Tensor, x: Tensor,
                           rows: int) -> Tensor:
    """log p(x | z) = head.log_prob(decoder(z), x) for z of shape (..., B, d), x (B, 784) → (..., B).

    Without a graph (``torch.no_grad``) the samples are decoded whole sample slices of B images at a time, at most
    ``rows`` images (at least one slice); each image's value is its one-pass value, since the decoder treats the
    images of a batch independently (BatchNorm in eval mode) —
    ``tests/experiments/test_frac_vae.py`` checks it bit for bit.
    """
    lead, batch = z.shape[:-1], x.shape[0]
    if torch.is_grad_enabled() or lead.numel() <= rows:
        return head.log_prob(decoder(z), x)
    slices = z.reshape(-1, batch, z.shape[-1]).split(max(1, rows // batch))
    return torch.cat([head.log_prob(decoder(part), x) for part in slices]).reshape(lead)


# ----------------------------------------------------------------------------------------- the model
class DecoderSplit:
    """Parameters split for training a part alone (frac Table 7 refits encoders against a frozen decoder): the
    decoder's (a ``decoder`` submodule), and every other parameter (the encoder's)."""

    def encoder_parameters(self) -> list[nn.Parameter]:
        return [p for name, p in self.named_parameters() if not name.startswith("decoder.")]

    def decoder_parameters(self) -> list[nn.Parameter]:
        return list(self.decoder.parameters())


class ConvVAE(DecoderSplit, LatentVariableModel):
    """Conv encoder → explicit Gaussian q(z|x); conv decoder → continuous Bernoulli p(x|z); p(z) = N(0, I).

    Parameters
    ----------
    latent : int
        dim z (2 in frac Tables 2, 6–8; 2 or 4 in Table 9).
    width : int
        Channels of the first conv (32).
    parameterization : 'consistent' or 'authors'
        See the module docstring.
    cb_clamp : float or None
        λ is clamped to [cb_clamp, 1 − cb_clamp] (the authors' 1e-4); None disables the clamp.
    """

    def __init__(self, latent: int = 2, width: int = 32, parameterization: Parameterization = "consistent",
                 cb_clamp: float | None = 1e-4):
        super().__init__()
        require(parameterization in PARAMETERIZATIONS, "parameterization", f"one of {PARAMETERIZATIONS}",
                parameterization)
        self.latent, self.parameterization = latent, parameterization
        self.trunk = ConvTrunk(width)
        self.fc_mu = nn.Linear(self.trunk.n_features, latent)
        self.fc_logvar = nn.Linear(self.trunk.n_features, latent)
        self.decoder = ConvDecoder(latent, width)
        self.head = ContinuousBernoulliHead(cb_clamp)

    # ------------------------------------------------------------------------------------- parts
    def encode(self, x: Tensor) -> tuple[Tensor, Tensor]:
        """(μ, s) of q(z | x), each (B, d)."""
        h = self.trunk(x)
        return self.fc_mu(h), self.fc_logvar(h)

    def sample(self, mu: Tensor, log_var: Tensor, n: int) -> Tensor:
        """n reparameterized samples, shape (n, *μ.shape)."""
        eps = torch.randn((n, *mu.shape), dtype=mu.dtype, device=mu.device)
        return mu + posterior_std(log_var, self.parameterization) * eps

    def log_q(self, z: Tensor, mu: Tensor, log_var: Tensor) -> Tensor:
        return gaussian_log_q(z, mu, log_var, self.parameterization)

    decode_rows: int = DECODE_ROWS

    def log_likelihood(self, z: Tensor, x: Tensor) -> Tensor:
        """log p(x | z) for z of shape (..., B, d) and x (B, 784) → (..., B) (:func:`bounded_log_likelihood`)."""
        return bounded_log_likelihood(self.decoder, self.head, z, x, self.decode_rows)

    def decode_image(self, z: Tensor) -> Tensor:
        """λ(z) ∈ [1e-4, 1 − 1e-4]^784, the decoded mean image."""
        return self.head.parameter(self.decoder(z))

    # ----------------------------------------------------------------------------- the protocol
    def terms(self, x: Tensor, n_samples: int) -> LatentTerms:
        mu, log_var = self.encode(x)
        z = self.sample(mu, log_var, n_samples)                            # (K, B, d)
        raw = self.decoder(z)
        kl = gaussian_kl(mu, log_var) if self.parameterization == "consistent" else None
        return LatentTerms(self.head.log_prob(raw, x), standard_normal_log_prob(z), self.log_q(z, mu, log_var), kl,
                           decode_mean=lambda: self.head.parameter(raw.detach()))

    def hierarchical_terms(self, x: Tensor, n_u: int, n_z: int, bayes: bool = False,
                           n_cross: int = 0) -> HierarchicalTerms:
        """The explicit posterior as a one-component mixture: ``n_u`` × ``n_z`` samples, all from q(z|x)."""
        require(not bayes, "objective", "a semi-implicit model for a Bayes posterior r", "explicit ConvVAE")
        shape = (n_u, n_z, x.shape[0])
        if torch.is_grad_enabled():
            t = self.terms(x, n_u * n_z)
            return HierarchicalTerms(t.log_likelihood.reshape(shape), t.log_prior.reshape(shape),
                                     t.log_q.reshape(shape))
        mu, log_var = self.encode(x)            # the draws of ``terms``, decoded in bounded slices
        z = self.sample(mu, log_var, n_u * n_z)
        return HierarchicalTerms(self.log_likelihood(z, x).reshape(shape), standard_normal_log_prob(z).reshape(shape),
                                 self.log_q(z, mu, log_var).reshape(shape))


class FrozenDecoderVAE(ConvVAE):
    """frac Table 7's model: an encoder trained against a fixed decoder (``freeze_decoder``: no gradients, and
    BatchNorm in inference mode whatever the model's mode), so only q(z|x) moves."""

    def freeze_decoder(self) -> "FrozenDecoderVAE":
        for p in self.decoder.parameters():
            p.requires_grad_(False)
        self.decoder.eval()
        return self

    def train(self, mode: bool = True):
        super().train(mode)
        self.decoder.eval()
        return self


def inverse_cdf_grid(n: int) -> Tensor:
    """(n², 2) latents: the coordinate-wise standard-normal inverse CDF of the midpoints (i + ½)/n of an n × n
    grid of the unit square (frac Figures 1, 3, 7), rows top (high z₂) to bottom, columns left to right."""
    u = (torch.arange(n, dtype=torch.float64) + 0.5) / n
    z = torch.distributions.Normal(0.0, 1.0).icdf(u)
    z2, z1 = torch.meshgrid(z.flip(0), z, indexing="ij")
    return torch.stack([z1.reshape(-1), z2.reshape(-1)], -1)
