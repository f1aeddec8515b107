"""The semi-implicit posterior of frac App. C.4: q̃(z | x) = ∫ q̃(z | x, u) q(u | x) du (and r(z | x, u) for L^bh).

The implicit distribution q(u | x) (Yin & Zhou's SIVI network with the paper's changes): three layers with noise
injected at each (dimensions 15, 10, 5; noise N(0.5, 1), the gray-level analogue of SIVI's Bernoulli noise),
hidden sizes 28, 14, 2, leaky ReLU, and a sigmoid output, so u ∈ (0, 1)² (frac Figure 6):

    h₁ = lrelu(W₁ [x, ε₁]),  h₂ = lrelu(W₂ [h₁, ε₂]),  u = sigmoid(W₃ [h₂, ε₃]),   ε_l ∼ N(0.5, 1).

The explicit conditional q̃(z | x, u) = N(μ, diag e^s) with (μ, s) = linear heads on [conv features of x, u]
(the conv trunk of :class:`~fyexp.models.conv_vae.ConvVAE`, run once per image).  The paper does not say where
u enters the explicit encoder; this is fyexp's reading (documented in ``results/frac-vae/NOTES.md``).  With
``bayes=True`` a second pair of heads gives r(z | x, u), sharing q(u | x) (§2.3.2).
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from fyexp.core.errors import require
from fyexp.models.base import LatentVariableModel
from fyexp.models.conv_vae import (DECODE_ROWS, PARAMETERIZATIONS, PIXELS, ContinuousBernoulliHead, ConvDecoder,
                                   ConvTrunk, ConvVAE, DecoderSplit, Parameterization, bounded_log_likelihood,
                                   gaussian_log_q, posterior_std, standard_normal_log_prob)
from fyexp.models.latent import HierarchicalTerms
from fyexp.models.latent import LatentTerms


class ImplicitMixer(nn.Module):
    """u = T(x, ε₁, ε₂, ε₃) ∈ (0, 1)^{hidden[-1]}, the implicit sampler of q(u | x)."""

    def __init__(self, n_in: int = PIXELS, noise: tuple[int, ...] = (15, 10, 5), hidden: tuple[int, ...] = (28, 14, 2),
                 noise_mean: float = 0.5, noise_std: float = 1.0, slope: float = 0.01):
        super().__init__()
        require(len(noise) == len(hidden), "implicit_noise", f"{len(hidden)} noise sizes (one per layer)", noise)
        self.noise, self.noise_mean, self.noise_std, self.slope = tuple(noise), noise_mean, noise_std, slope
        sizes = [n_in, *hidden]
        self.layers = nn.ModuleList(nn.Linear(sizes[l] + noise[l], sizes[l + 1]) for l in range(len(hidden)))

    @property
    def dim(self) -> int:
        return self.layers[-1].out_features

    def forward(self, x: Tensor, n: int) -> Tensor:
        """n samples u per data point, shape (n, B, dim)."""
        h = x.unsqueeze(0).expand(n, *x.shape)
        for l, layer in enumerate(self.layers):
            eps = self.noise_mean + self.noise_std * torch.randn((n, x.shape[0], self.noise[l]), dtype=x.dtype,
                                                                 device=x.device)
            h = layer(torch.cat([h, eps], -1))
            h = torch.sigmoid(h) if l == len(self.layers) - 1 else nn.functional.leaky_relu(h, self.slope)
        return h


class SemiImplicitVAE(DecoderSplit, LatentVariableModel):
    """Conv VAE whose encoder is semi-implicit; ``bayes`` adds the Bayes posterior r(z | x, u) of L^bh.

    ``terms(x, K)`` (the generic protocol) draws ``n_implicit`` u's and K / ``n_implicit`` z's per u and returns
    log q̃(z | u) as ``log_q``: the objectives then compute L^h_γ (see :mod:`fyexp.objectives.semi_implicit`).
    """

    def __init__(self, latent: int = 2, width: int = 32, parameterization: Parameterization = "consistent",
                 cb_clamp: float | None = 1e-4, bayes: bool = False, noise: tuple[int, ...] = (15, 10, 5),
                 hidden: tuple[int, ...] = (28, 14, 2), noise_mean: float = 0.5, noise_std: float = 1.0,
                 n_implicit: int = 10):
        super().__init__()
        require(parameterization in PARAMETERIZATIONS, "parameterization", f"one of {PARAMETERIZATIONS}",
                parameterization)
        self.latent, self.parameterization, self.bayes, self.n_implicit = latent, parameterization, bayes, n_implicit
        self.trunk = ConvTrunk(width)
        self.mixer = ImplicitMixer(PIXELS, noise, hidden, noise_mean, noise_std)
        n_feat = self.trunk.n_features + self.mixer.dim
        self.q_head = nn.Linear(n_feat, 2 * latent)
        self.r_head = nn.Linear(n_feat, 2 * latent) if bayes else None
        self.decoder = ConvDecoder(latent, width)
        self.head = ContinuousBernoulliHead(cb_clamp)


    # ------------------------------------------------------------------------------------------ parts
    def implicit(self, x: Tensor, n: int) -> Tensor:
        """n implicit samples u ∼ q(u | x), shape (n, B, 2) in (0, 1)²."""
        return self.mixer(x, n)

    def conditionals(self, x: Tensor, n_u: int) -> tuple[Tensor, tuple[Tensor, Tensor], tuple[Tensor, Tensor] | None]:
        """u (N′, B, 2), (μ, s) of q̃(z | x, u) and, with ``bayes``, of r(z | x, u), each (N′, B, d)."""
        features = self.trunk(x)
        u = self.implicit(x, n_u)
        joint = torch.cat([features.unsqueeze(0).expand(n_u, *features.shape), u], -1)
        q = self.q_head(joint).chunk(2, -1)
        r = self.r_head(joint).chunk(2, -1) if self.bayes else None
        return u, q, r

    def _sample(self, mu: Tensor, log_var: Tensor, n_z: int) -> Tensor:
        """(N′, M, B, d) samples of N(μ, ·) for μ of shape (N′, B, d)."""
        eps = torch.randn((mu.shape[0], n_z, *mu.shape[1:]), dtype=mu.dtype, device=mu.device)
        return mu.unsqueeze(1) + posterior_std(log_var, self.parameterization).unsqueeze(1) * eps

    def _log_q(self, z: Tensor, mu: Tensor, log_var: Tensor) -> Tensor:
        return gaussian_log_q(z, mu.unsqueeze(1), log_var.unsqueeze(1), self.parameterization)

    decode_rows: int = DECODE_ROWS

    def log_likelihood(self, z: Tensor, x: Tensor) -> Tensor:
        return bounded_log_likelihood(self.decoder, self.head, z, x, self.decode_rows)

    def decode_image(self, z: Tensor) -> Tensor:
        return self.head.parameter(self.decoder(z))

    # ---------------------------------------------------------------------------------- the protocol
    def hierarchical_terms(self, x: Tensor, n_u: int, n_z: int, bayes: bool = False,
                           n_cross: int = 0) -> HierarchicalTerms:
        """Terms of N′ = ``n_u`` mixing samples × M = ``n_z`` latent samples (see :class:`HierarchicalTerms`).

        Without ``bayes`` the decoder sees z ∼ q̃(z|u); with it, z′ ∼ r(z|u) (the data term of L^bh), while
        z ∼ q̃(z|u) enter only the Rényi term (no decoding).  ``n_cross`` ≥ 1 adds log q̃(z′|u_{i+s}), s ≤ n_cross.
        """
        require(not bayes or self.bayes, "objective", "a model built with bayes=True for L^bh", "bayes=False")
        _, (mu_q, lv_q), r = self.conditionals(x, n_u)
        z = self._sample(mu_q, lv_q, n_z)
        log_q, log_prior = self._log_q(z, mu_q, lv_q), standard_normal_log_prob(z)
        if not bayes:
            return HierarchicalTerms(self.log_likelihood(z, x), log_prior, log_q)
        mu_r, lv_r = r
        z_r = self._sample(mu_r, lv_r, n_z)
        cross = torch.stack([self._log_q(z_r, mu_q.roll(-s, 0), lv_q.roll(-s, 0)) for s in range(n_cross + 1)])
        return HierarchicalTerms(self.log_likelihood(z_r, x), log_prior, log_q, log_r=self._log_q(z_r, mu_r, lv_r),
                                 log_prior_r=standard_normal_log_prob(z_r), log_q_cross=cross)

    def terms(self, x: Tensor, n_samples: int) -> LatentTerms:
        n_u = min(self.n_implicit, n_samples)
        require(n_samples % n_u == 0, "n_samples", f"a multiple of n_implicit = {n_u}", n_samples)
        t = self.hierarchical_terms(x, n_u, n_samples // n_u)
        return LatentTerms(t.flat("log_likelihood"), t.flat("log_prior"), t.flat("log_q"))

    def posterior_samples(self, x: Tensor, which: str = "q") -> Tensor:
        """One z per data point from the semi-implicit q̃(z|x) (or r(z|x)): u ∼ q(u|x), then z ∼ ·(z|x,u); (B, d)."""
        _, q, r = self.conditionals(x, 1)
        mu, lv = q if which == "q" else r
        return self._sample(mu, lv, 1)[0, 0]


def build_conv_vae(latent: int, width: int, parameterization: Parameterization, cb_clamp: float | None, *,
                   semi_implicit: bool = False, bayes: bool = False, n_implicit: int = 10) -> nn.Module:
    """The frac VAE of one posterior family: the explicit Gaussian :class:`~fyexp.models.conv_vae.ConvVAE`, or the
    :class:`SemiImplicitVAE` (``bayes``: with the Bayes posterior r) drawing ``n_implicit`` u's per image."""
    if semi_implicit:
        return SemiImplicitVAE(latent, width, parameterization, cb_clamp, bayes=bayes, n_implicit=n_implicit)
    return ConvVAE(latent, width, parameterization, cb_clamp)
