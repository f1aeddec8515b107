"""The β-Gaussian (Martins et al. 2022; FYVI's (2−ρ)-Gaussian) with a diagonal scale, and its FY regularizer.

For α > 1 (FYVI's ρ; α = 3/2 biweight, α = 2 Epanechnikov), dimension n and a = α/(α−1), the β-Gaussian with
location μ and scale matrix Σ = diag(scale²) is the Tsallis-α entmax of the quadratic score
−½(x−μ)ᵀΣ⁻¹(x−μ) (FYVI §3.1):

    p(x) = [(α−1)(−τ − ½ (x−μ)ᵀ Σ⁻¹ (x−μ))]₊^{1/(α−1)},      support  ½‖x−μ‖²_Σ ≤ −τ,

    R = [Γ(n/2 + a) / (Γ(a) π^{n/2}) · (2/(α−1))^{1/(α−1)}]^{(α−1)/(2+(α−1)n)},
    τ = −(R²/2) |Σ|^{−1/(n + 2/(α−1))},        Cov = −2τ/(n + 2a) · Σ,
    H_α(p) = (1 − ∫p^α)/(α(α−1)) = 1/(α(α−1)) + 2τ/D,        D = 2α + n(α−1).

A reparameterized sample is x = μ + |Σ|^{−1/(2n + 4/(α−1))} Σ^{½} R √r² u with u uniform on the unit sphere and
r² ~ Beta(n/2, a).  At α = 1 the class is the exact Gaussian N(μ, Σ) with the Shannon entropy (the limit
α → 1; the authors' code approximated it with α = 1.00001).

The regularizer of the FY β-VAE (FYVI §4.2) is the FY loss of the Tsallis negentropy Ω_α against the
standard-normal score η(z) = −½‖z‖²:

    L_Ω(η; q) = Ω*(η) + Ω(q) − ⟨η, q⟩ = Ω*(η) − H_α(q) + ½ E_q‖z‖²,

with Ω*(η) = H_α(q*) + E_{q*}η attained at q* = β-Gaussian(0, I) (the Tsallis entmax of η).  So L ≥ 0, with
equality iff q = q*; at α = 1, Ω*(η) = (n/2) log 2π and L = KL(q ‖ N(0, I)).  :func:`authors_regularizer` is
what the authors' code computed instead (``docs/protocols.md``, "The FY regulariser and the authors' formula"):
½‖μ‖² − τ(α−1)(tr Σ − n)/D with a floored float32 determinant inside τ, which lacks the entropy term −2τ/D and
is minimised by shrinking Σ.
"""

from __future__ import annotations

import math

import torch
from torch.distributions import Distribution, constraints

__all__ = ["BetaGaussian", "fy_regularizer", "authors_regularizer", "log_radius", "log_radius_of_rank"]


def log_radius(alpha: float, n: int) -> float:
    """log R, the radius of the support of β-Gaussian(0, I) in the standardized coordinates (α > 1)."""
    am1 = alpha - 1.0
    a = alpha / am1
    inner = (math.lgamma(n / 2 + a) - math.lgamma(a) - (n / 2) * math.log(math.pi)
             + math.log(2.0 / am1) / am1)
    return am1 / (2.0 + am1 * n) * inner


def log_radius_of_rank(alpha: float, n: torch.Tensor) -> torch.Tensor:
    """log R (:func:`log_radius`) for a tensor of dimensions ``n``, elementwise."""
    am1 = alpha - 1.0
    a = alpha / am1
    inner = torch.lgamma(n / 2 + a) - math.lgamma(a) - (n / 2) * math.log(math.pi) + math.log(2.0 / am1) / am1
    return am1 / (2.0 + am1 * n) * inner


class BetaGaussian(Distribution):
    """β-Gaussian with location ``loc`` and diagonal scale matrix Σ = diag(scale²); the Gaussian at α = 1.

    Parameters
    ----------
    loc : Tensor, shape (..., n)
    scale : Tensor, shape (..., n)
        Square root of the diagonal of Σ (Σ is the *scale* matrix; the covariance is ``variance``).
    alpha : float
        Tsallis index α = ρ ≥ 1 (1 Gaussian, 3/2 biweight, 2 Epanechnikov).
    """

    arg_constraints = {"loc": constraints.real_vector, "scale": constraints.independent(constraints.positive, 1)}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc: torch.Tensor, scale: torch.Tensor, alpha: float, validate_args: bool | None = None):
        if alpha < 1:
            raise ValueError(f"BetaGaussian needs alpha >= 1, got {alpha}")
        self.loc, self.scale = torch.broadcast_tensors(loc, scale)
        self.alpha = float(alpha)
        self.n = self.loc.shape[-1]
        super().__init__(self.loc.shape[:-1], self.loc.shape[-1:], validate_args=validate_args)

    @property
    def gaussian(self) -> bool:
        return self.alpha == 1.0

    # ---------------------------------------------------------------------------------- parameters
    @property
    def rank(self) -> torch.Tensor:
        """The dimension n as a float tensor of shape (...) (a rank-masked subclass makes it vary per row)."""
        return torch.full(self.batch_shape, float(self.n), dtype=self.loc.dtype, device=self.loc.device)

    @property
    def log_det_sigma(self) -> torch.Tensor:
        """log |Σ| = Σ_i log scale_i², shape (...)."""
        return 2.0 * self.scale.log().sum(-1)

    @property
    def tau(self) -> torch.Tensor:
        """The threshold τ < 0 of the density, shape (...) (α > 1 only)."""
        am1 = self.alpha - 1.0
        return -0.5 * torch.exp(2 * log_radius(self.alpha, self.n) - self.log_det_sigma / (self.n + 2.0 / am1))

    @property
    def _variance_factor(self) -> torch.Tensor:
        """c with Cov = c Σ, shape (..., 1): c = −2τ/(n + 2a), and 1 for the Gaussian."""
        if self.gaussian:
            return torch.ones_like(self.loc[..., :1])
        a = self.alpha / (self.alpha - 1.0)
        return (-2.0 * self.tau / (self.n + 2 * a)).unsqueeze(-1)

    @property
    def mean(self) -> torch.Tensor:
        return self.loc

    @property
    def mode(self) -> torch.Tensor:
        return self.loc

    @property
    def variance(self) -> torch.Tensor:
        """Diagonal of the covariance, shape (..., n)."""
        return self._variance_factor * self.scale.pow(2)

    # ------------------------------------------------------------------------------------- density
    def log_prob(self, value: torch.Tensor) -> torch.Tensor:
        """log p(value), −inf outside the support; shape (...)."""
        maha = ((value - self.loc) / self.scale).pow(2).sum(-1)
        if self.gaussian:
            return -0.5 * (maha + self.n * math.log(2 * math.pi) + self.log_det_sigma)
        am1 = self.alpha - 1.0
        inner = am1 * (-self.tau - 0.5 * maha)
        return torch.where(inner > 0, inner.clamp_min(torch.finfo(inner.dtype).tiny).log() / am1,
                           torch.full_like(inner, -math.inf))

    def entropy(self) -> torch.Tensor:
        """Tsallis-α entropy H_α(q) (Shannon's at α = 1), shape (...)."""
        if self.gaussian:
            return 0.5 * self.n * (1 + math.log(2 * math.pi)) + 0.5 * self.log_det_sigma
        a, D = self.alpha, 2 * self.alpha + self.n * (self.alpha - 1)
        return 1.0 / (a * (a - 1)) + 2.0 * self.tau / D

    # ------------------------------------------------------------------------------------- samples
    def rsample(self, sample_shape: torch.Size = torch.Size()) -> torch.Tensor:
        """Reparameterized samples, shape ``sample_shape + batch_shape + (n,)``; all inside the support."""
        shape = self._extended_shape(sample_shape)
        eps = torch.randn(shape, dtype=self.loc.dtype, device=self.loc.device)
        if self.gaussian:
            return self.loc + self.scale * eps
        am1 = self.alpha - 1.0
        u = eps / eps.norm(dim=-1, keepdim=True)
        conc = torch.tensor([self.n / 2.0, self.alpha / am1], dtype=self.loc.dtype, device=self.loc.device)
        # r² ~ Beta(n/2, α/(α−1)), drawn as torch.distributions.Beta draws it (the first coordinate of a
        # Dirichlet(n/2, α/(α−1)) sample: the same numbers from the same RNG state), but through the plain torch
        # function, which the ensemble's vmap can draw once per member; Beta.sample's autograd.Function cannot.
        r2 = torch._sample_dirichlet(conc.expand(*shape[:-1], 2)).select(-1, 0).unsqueeze(-1)
        z = math.exp(log_radius(self.alpha, self.n)) * r2.sqrt() * u
        shrink = torch.exp(-self.log_det_sigma / (2 * self.n + 4.0 / am1)).unsqueeze(-1)
        return self.loc + shrink * self.scale * z

    def expand(self, batch_shape, _instance=None):
        shape = torch.Size(batch_shape) + self.event_shape
        return BetaGaussian(self.loc.expand(shape), self.scale.expand(shape), self.alpha)


def _half_second_moment(q: BetaGaussian) -> torch.Tensor:
    """½ E_q‖z‖² = ½‖μ‖² + ½ tr Cov, shape (...)."""
    return 0.5 * (q.loc.pow(2).sum(-1) + q.variance.sum(-1))


def fy_regularizer(q: BetaGaussian) -> torch.Tensor:
    """The FY loss L_Ω_α(η; q) against η(z) = −½‖z‖², including Ω*(η): ≥ 0, zero iff q = β-Gaussian(0, I).

    = [H_α(q*) − ½E_{q*}‖z‖²] − H_α(q) + ½E_q‖z‖², q* = β-Gaussian(0, I); equals KL(q ‖ N(0, I)) at α = 1.
    Shape (...).
    """
    prior = BetaGaussian(torch.zeros_like(q.loc[..., :1]).expand(q.loc.shape),
                         torch.ones_like(q.scale[..., :1]).expand(q.scale.shape), q.alpha)
    conjugate = prior.entropy() - _half_second_moment(prior)
    return conjugate - q.entropy() + _half_second_moment(q)


def authors_regularizer(q: BetaGaussian, det_floor: float = 1e-8) -> torch.Tensor:
    """The regularizer of the authors' code as it executes (github.com/deep-spin/fy-vi ``fy-vae-image/mvb.py``
    lines 152–166 at commit 27bd093, the ``KLD`` of its β-Gaussian branch); NOT the FY loss.  Shape (...).

        ½‖μ‖² + (R²/D) (∏_i σ_i² + 10⁻⁸)^{−1/(n + 2/(α−1))} [(1 + ½(α−1) Σ_i σ_i²) − (1 + ½ n (α−1))],

    D = 2α + n(α−1), with n and R of the posterior's rank (spcdist's, :attr:`BetaGaussian.rank`) and the product
    taken in float32, as the authors' GPU run took it.  With the exact |Σ| this would be
    ½‖μ‖² − τ(α−1)(tr Σ − n)/D, unbounded below as Σ → 0 (training diverges; our earlier reading).  As executed,
    the product of 256 variances below 1 underflows to 0 within the first steps, the floor 10⁻⁸ then fixes the
    factor at 10^{8/(n + 2/(α−1))} (≈ 1.07 at n = 256, α = 3/2), and the term is ½‖μ‖² plus a constant times
    (tr Σ − n): linear in the variances, bounded below, still minimised by shrinking Σ (it has no entropy term).
    """
    if q.gaussian:
        raise ValueError("the authors' regularizer is defined for alpha > 1 only (use the KL at alpha = 1)")
    alpha, n = q.alpha, q.rank
    sigma2 = q.scale.pow(2)
    r2 = log_radius_of_rank(alpha, n).exp() ** 2
    denominator = 2 * alpha + n * (alpha - 1)
    determinant = torch.prod(sigma2.to(torch.float32), dim=-1).to(sigma2.dtype)
    exponent = -1 / (n + 2 / (alpha - 1))
    coefficient = 0.5 * (alpha - 1)
    second = (r2 / denominator) * (determinant + det_floor) ** exponent * (
        (1 + coefficient * sigma2.sum(-1)) - (1 + 0.5 * n * (alpha - 1)))
    return 0.5 * q.loc.pow(2).sum(-1) + second
