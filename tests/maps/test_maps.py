"""Mathematics of the Tsallis ρ-entmax maps (fyexp.maps.tsallis): simplex, shift invariance, limits, optimality,
agreement with the entmax package, conjugate gradients and the inverse link."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from entmax import entmax15, entmax_bisect, sparsemax

from fyexp.maps import tsallis_bisect, tsallis_conjugate, tsallis_entmax, tsallis_log, tsallis_negentropy

RHOS = [0.1, 0.5, 0.9, 1.0, 1.1, 1.5, 2.0, 3.0]


def scores(n: int = 64, k: int = 5, scale: float = 2.0, seed: int = 0) -> torch.Tensor:
    return torch.randn(n, k, dtype=torch.float64, generator=torch.Generator().manual_seed(seed)) * scale


def objective(p: torch.Tensor, z: torch.Tensor, rho: float) -> torch.Tensor:
    """⟨p, z⟩ − Ω_ρ(p), the quantity the map maximises over the simplex."""
    return (p * z).sum(-1) - tsallis_negentropy(p, rho)


@pytest.mark.parametrize("rho", RHOS)
def test_output_is_on_the_simplex(rho):
    p = tsallis_entmax(scores(), rho)
    assert (p >= 0).all()
    torch.testing.assert_close(p.sum(-1), torch.ones(64, dtype=torch.float64), atol=1e-12, rtol=0)


@pytest.mark.parametrize("rho", RHOS)
def test_shift_invariance(rho):
    z = scores()
    torch.testing.assert_close(tsallis_entmax(z + 7.3, rho), tsallis_entmax(z, rho), atol=1e-10, rtol=0)


@pytest.mark.parametrize("rho", RHOS)
def test_maximises_the_regularised_objective(rho):
    """p* beats every other point of the simplex (here: 2,000 Dirichlet draws and the vertices)."""
    z = scores(n=8, k=4)
    p = tsallis_entmax(z, rho)
    others = torch.distributions.Dirichlet(torch.ones(4, dtype=torch.float64)).sample((2000,))
    others = torch.cat([others, torch.eye(4, dtype=torch.float64)])
    best = objective(p, z, rho)
    for row in range(z.shape[0]):
        assert (objective(others, z[row].expand_as(others), rho) <= best[row] + 1e-10).all()


@pytest.mark.parametrize("h", [1e-2, 1e-3, 1e-4])
@pytest.mark.parametrize("sign", [-1, 1])
def test_continuous_at_rho_one(h, sign):
    """ρ-entmax → softmax as ρ → 1, with an error of order |ρ − 1|."""
    z = scores(scale=1.0)
    err = (tsallis_entmax(z, 1 + sign * h) - torch.softmax(z, -1)).abs().max().item()
    assert err < 2 * h


def test_sparsemax_is_the_euclidean_projection_onto_the_simplex():
    """p = Proj_Δ(z) iff ⟨z − p, y − p⟩ ≤ 0 for every y in the simplex (it suffices to check the vertices)."""
    z = scores(n=200, k=6)
    p = tsallis_entmax(z, 2.0)
    gaps = (z - p) @ torch.eye(6, dtype=torch.float64) - ((z - p) * p).sum(-1, keepdim=True)
    assert (gaps <= 1e-12).all()
    assert (p == 0).any(), "sparsemax of spread-out scores should have zeros"


@pytest.mark.parametrize("rho", [1.25, 1.5, 2.0, 2.5, 3.0])
def test_bisection_agrees_with_entmax_package(rho):
    z = scores(n=128, k=7)
    ours = tsallis_bisect(z, rho)
    torch.testing.assert_close(ours, entmax_bisect(z, alpha=rho, n_iter=100), atol=1e-10, rtol=0)
    exact = {1.5: entmax15, 2.0: sparsemax}.get(rho)
    if exact is not None:
        torch.testing.assert_close(ours, exact(z, dim=-1), atol=1e-10, rtol=0)
        torch.testing.assert_close(tsallis_entmax(z, rho), exact(z, dim=-1), atol=0, rtol=0)


@pytest.mark.parametrize("rho", [0.1, 0.5, 0.9])
def test_rho_below_one_is_dense_and_satisfies_stationarity(rho):
    """For ρ < 1 every p_k > 0, and p_k^{ρ−1}/(ρ−1) − z_k is the same for all k (KKT with full support)."""
    z = scores(n=32, k=5)
    p = tsallis_entmax(z, rho)
    assert (p > 0).all()
    stationarity = p ** (rho - 1) / (rho - 1) - z
    torch.testing.assert_close(stationarity - stationarity.mean(-1, keepdim=True), torch.zeros_like(z),
                               atol=1e-8, rtol=0)


def test_rho_orders_the_entropy():
    """Smaller ρ gives denser outputs: the Shannon entropy of ρ-entmax decreases with ρ."""
    z = scores(n=32, k=5)
    entropy = [-tsallis_negentropy(tsallis_entmax(z, rho), 1.0) for rho in RHOS]
    for lower, higher in zip(entropy, entropy[1:]):
        assert (lower >= higher - 1e-12).all()


def test_rho_to_zero_is_the_log_barrier_map():
    """As ρ → 0, Ω_ρ(p) = −Σ_k log p_k + const + O(ρ) (Burg entropy): the map solves z_k + 1/p_k = λ."""
    z = scores(n=32, k=5, scale=1.0)
    p = tsallis_entmax(z, 1e-4)
    burg = z + 1 / p
    assert (burg - burg.mean(-1, keepdim=True)).abs().max() < 1e-2


@pytest.mark.parametrize("rho", [0.5, 1.3, 2.5])
def test_bisection_gradient(rho):
    z = scores(n=4, k=5, scale=0.5).requires_grad_()
    assert torch.autograd.gradcheck(lambda x: tsallis_bisect(x, rho), (z,), eps=1e-6, atol=1e-5)


@pytest.mark.parametrize("rho", RHOS)
def test_conjugate_gradient_is_the_map(rho):
    """∇Ω*(θ) = Π_Ω(θ) (Danskin), checked by central finite differences."""
    z = scores(n=3, k=4)
    p = tsallis_entmax(z, rho)
    eps = 1e-6
    for k in range(4):
        step = torch.zeros_like(z)
        step[:, k] = eps
        fd = (tsallis_conjugate(z + step, rho) - tsallis_conjugate(z - step, rho)) / (2 * eps)
        torch.testing.assert_close(fd, p[:, k], atol=1e-6, rtol=0)


def test_conjugate_of_shannon_is_logsumexp():
    z = scores()
    torch.testing.assert_close(tsallis_conjugate(z, 1.0), torch.logsumexp(z, -1))


@pytest.mark.parametrize("rho", RHOS)
def test_tsallis_log_is_the_inverse_link(rho):
    """FYVI eq. 15: η = ln_{2−ρ}(q̄) satisfies Π_Ω(η) = q̄ for a full-support q̄."""
    q = torch.tensor([0.1, 0.2, 0.3, 0.4], dtype=torch.float64)
    torch.testing.assert_close(tsallis_entmax(tsallis_log(q, rho), rho), q, atol=1e-10, rtol=0)


def test_negentropy_limits():
    p = torch.tensor([0.1, 0.2, 0.7], dtype=torch.float64)
    shannon = (p * p.log()).sum()
    assert abs(tsallis_negentropy(p, 1.0 + 1e-6) - shannon) < 1e-5
    assert abs(tsallis_negentropy(p, 2.0) - 0.5 * ((p ** 2).sum() - 1)) < 1e-15


@pytest.mark.parametrize("rho", [0.5, 1.5, 2.0, 3.0])
def test_peaked_and_infinite_scores_are_safe(rho):
    z = torch.tensor([[1000.0, 0.0, -1000.0, 3.0], [0.0, -math.inf, 1.0, -math.inf]], dtype=torch.float64)
    p = tsallis_entmax(z, rho)
    assert torch.isfinite(p).all()
    torch.testing.assert_close(p.sum(-1), torch.ones(2, dtype=torch.float64))
    assert p[1, 1] == 0 and p[1, 3] == 0
    assert np.isfinite(tsallis_conjugate(z, rho).numpy()).all()


@pytest.mark.parametrize("rho", [0.5, 1.25, 3.0])
def test_float32_is_supported(rho):
    """float32 to its precision; for ρ > 2, p = [u − τ]^{1/(ρ−1)} is steep at the support's edge, so an error
    δ in τ moves entries there by up to δ^{1/(ρ−1)} (about 1e-3 at ρ = 3)."""
    z = scores().float()
    p = tsallis_entmax(z, rho)
    assert p.dtype == torch.float32
    atol = 2e-3 if rho > 2 else 1e-5
    torch.testing.assert_close(p.double(), tsallis_entmax(z.double(), rho), atol=atol, rtol=0)


def test_rejects_bad_rho():
    with pytest.raises(ValueError):
        tsallis_entmax(scores(), 0.0)
    with pytest.raises(ValueError):
        tsallis_bisect(scores(), 1.0)
