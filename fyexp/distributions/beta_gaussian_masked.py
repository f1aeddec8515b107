"""The β-Gaussian as the authors' FY β-VAE sampled it: spcdist's diagonal class, which drops tiny scales.

The FYVI authors' ``fy-vae-image/mvb.py`` (github.com/deep-spin/fy-vi) draws its β-Gaussian posteriors with
``spcdist.torch.MultivariateBetaGaussianDiag(μ, exp(log σ²), alpha)`` (github.com/deep-spin/
sparse_continuous_distributions, ``spcdist/torch.py`` at commit 60bb5ae: lines 23–33 and 99–111 for the cut-off,
279–304 for the draw; ``mvb.py`` line 86 for the call).  That class keeps only the diagonal entries of Σ above
scipy's eigenvalue cut-off,

    kept_i  ⇔  Σ_ii > c · max_j Σ_jj,        c = 10³ · ε_float32 ≈ 1.19 · 10⁻⁴    (``_eigvalsh_to_eps``),

and treats the distribution as one of rank n′ = #kept on the kept coordinates: the radius R, the threshold τ, the
shrink factor |Σ|^{−1/(2n′ + 4/(α−1))} and the radial draw r² ~ Beta(n′/2, α/(α−1)) all use n′ and the
log-determinant over the kept entries, and a dropped coordinate of a sample is its location μ_i (no noise).  With
every entry kept this is :class:`~fyexp.distributions.beta_gaussian.BetaGaussian` exactly (tested).

This module reproduces that behaviour for the ``regularizer: authors`` cells of fy-vae, whose aim is the authors'
code as executed; the FY cells use the exact distribution.
"""

from __future__ import annotations

import math

import torch

from fyexp.distributions.beta_gaussian import BetaGaussian, log_radius_of_rank

__all__ = ["RankMaskedBetaGaussian", "SPCDIST_CUTOFF"]

#: spcdist's relative cut-off for float32 scales: 10³ machine epsilons (scipy's ``_eigvalsh_to_eps`` rule).
SPCDIST_CUTOFF = 1e3 * torch.finfo(torch.float32).eps


class RankMaskedBetaGaussian(BetaGaussian):
    """β-Gaussian(μ, diag scale², α > 1) restricted, per batch row, to the coordinates whose Σ_ii exceeds
    ``cutoff`` × the row's largest Σ_jj (spcdist's rule); the rank n′ of each row replaces n everywhere."""

    def __init__(self, loc: torch.Tensor, scale: torch.Tensor, alpha: float, cutoff: float = SPCDIST_CUTOFF,
                 validate_args: bool | None = None):
        if alpha <= 1:
            raise ValueError(f"RankMaskedBetaGaussian needs alpha > 1, got {alpha}")
        super().__init__(loc, scale, alpha, validate_args=validate_args)
        self.cutoff = float(cutoff)

    @property
    def kept(self) -> torch.Tensor:
        """Boolean mask of the kept coordinates, shape (..., n) (a constant of the graph, like spcdist's)."""
        sigma = self.scale.detach().pow(2)
        return sigma > self.cutoff * sigma.amax(-1, keepdim=True)

    @property
    def rank(self) -> torch.Tensor:
        """n′, the number of kept coordinates per row, as a float tensor of shape (...)."""
        return self.kept.sum(-1).to(self.loc.dtype)

    @property
    def log_det_sigma(self) -> torch.Tensor:
        """log |Σ| over the kept coordinates, shape (...)."""
        return torch.where(self.kept, 2.0 * self.scale.log(), torch.zeros_like(self.scale)).sum(-1)

    @property
    def tau(self) -> torch.Tensor:
        n, am1 = self.rank, self.alpha - 1.0
        return -0.5 * torch.exp(2 * log_radius_of_rank(self.alpha, n) - self.log_det_sigma / (n + 2.0 / am1))

    @property
    def _variance_factor(self) -> torch.Tensor:
        a = self.alpha / (self.alpha - 1.0)
        return (-2.0 * self.tau / (self.rank + 2 * a)).unsqueeze(-1) * self.kept

    def entropy(self) -> torch.Tensor:
        a, D = self.alpha, 2 * self.alpha + self.rank * (self.alpha - 1)
        return 1.0 / (a * (a - 1)) + 2.0 * self.tau / D

    def log_prob(self, value: torch.Tensor) -> torch.Tensor:
        """log density on the kept coordinates (the rank-n′ β-Gaussian's; dropped coordinates are ignored)."""
        maha = (((value - self.loc) / self.scale).pow(2) * self.kept).sum(-1)
        am1 = self.alpha - 1.0
        inner = am1 * (-self.tau - 0.5 * maha)
        return torch.where(inner > 0, inner.clamp_min(torch.finfo(inner.dtype).tiny).log() / am1,
                           torch.full_like(inner, -math.inf))

    def rsample(self, sample_shape: torch.Size = torch.Size()) -> torch.Tensor:
        """spcdist's draw: u uniform on the kept coordinates' sphere, r² ~ Beta(n′/2, α/(α−1)), then
        μ + |Σ|^{−1/(2n′ + 4/(α−1))} Σ^{½} R √r² u (R and |Σ| of rank n′); dropped coordinates stay at μ."""
        shape = self._extended_shape(sample_shape)
        kept = self.kept.expand(shape)
        eps = torch.randn(shape, dtype=self.loc.dtype, device=self.loc.device) * kept
        u = eps / eps.norm(dim=-1, keepdim=True)
        am1 = self.alpha - 1.0
        n = self.rank.expand(shape[:-1])
        conc = torch.stack([n / 2.0, torch.full_like(n, self.alpha / am1)], -1)
        r2 = torch._sample_dirichlet(conc).select(-1, 0).unsqueeze(-1)
        z = log_radius_of_rank(self.alpha, n).exp().unsqueeze(-1) * r2.sqrt() * u
        shrink = torch.exp(-self.log_det_sigma / (2 * self.rank + 4.0 / am1)).unsqueeze(-1)
        return self.loc + shrink * self.scale * z

    def expand(self, batch_shape, _instance=None):
        shape = torch.Size(batch_shape) + self.event_shape
        return RankMaskedBetaGaussian(self.loc.expand(shape), self.scale.expand(shape), self.alpha, self.cutoff)
