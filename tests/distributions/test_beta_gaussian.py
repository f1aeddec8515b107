"""β-Gaussian: normalization, moments, support, reparameterization gradients, the Gaussian limit, FY regularizer."""

from __future__ import annotations

import math

import pytest
import torch
from torch.distributions import Normal, kl_divergence

from fyexp.distributions.beta_gaussian import BetaGaussian, authors_regularizer, fy_regularizer, log_radius

ALPHAS = [1.0, 1.5, 2.0]


# closed forms are compared in float64 (conftest.py's fixture restores the default after each test)
pytestmark = pytest.mark.usefixtures("float64_default")


def _q(mu, scale, alpha):
    return BetaGaussian(torch.tensor(mu), torch.tensor(scale), alpha)


def _grid_1d(q, half_width=8.0, m=200_001):
    x = torch.linspace(float(q.loc[0]) - half_width, float(q.loc[0]) + half_width, m)
    return x, q.log_prob(x.unsqueeze(-1)).exp(), x[1] - x[0]


def _grid_2d(q, half_width=5.0, m=801):
    t = torch.linspace(-half_width, half_width, m)
    xx, yy = torch.meshgrid(t + float(q.loc[0]), t + float(q.loc[1]), indexing="ij")
    pts = torch.stack([xx, yy], -1)
    return pts, q.log_prob(pts).exp(), (t[1] - t[0]) ** 2


@pytest.mark.parametrize("alpha", ALPHAS)
def test_density_integrates_to_one_1d_and_2d(alpha):
    _, p, dx = _grid_1d(_q([0.3], [0.7], alpha))
    assert float(p.sum() * dx) == pytest.approx(1.0, abs=1e-4)
    _, p2, da = _grid_2d(_q([0.2, -0.1], [0.8, 1.3], alpha))
    assert float(p2.sum() * da) == pytest.approx(1.0, abs=2e-3)


@pytest.mark.parametrize("alpha", ALPHAS)
def test_numerical_variance_and_tsallis_entropy_match_closed_forms_2d(alpha):
    q = _q([0.2, -0.1], [0.8, 1.3], alpha)
    pts, p, da = _grid_2d(q, half_width=7.0, m=1001)
    var = ((pts - q.loc) ** 2 * p.unsqueeze(-1)).sum((0, 1)) * da
    assert torch.allclose(var, q.variance, rtol=5e-3)
    if alpha == 1.0:
        h = -(torch.xlogy(p, p)).sum() * da
    else:
        h = (1 - (p ** alpha).sum() * da) / (alpha * (alpha - 1))
    assert float(h) == pytest.approx(float(q.entropy()), abs=5e-3)


@pytest.mark.parametrize("alpha", [1.5, 2.0])
def test_radius_is_drawn_as_torch_distributions_beta_draws_it(alpha):
    """r² ~ Beta(n/2, α/(α−1)) through torch._sample_dirichlet (so the ensemble's vmap can draw it): the same
    numbers from the same RNG state as torch.distributions.Beta, hence the same samples as before the change."""
    from torch.distributions import Beta

    n, shape = 3, (5, 4)
    q = BetaGaussian(torch.zeros(shape[1], n), torch.ones(shape[1], n), alpha)
    torch.manual_seed(7)
    x = q.rsample((shape[0],))
    torch.manual_seed(7)
    eps = torch.randn(*shape, n)
    r2 = Beta(torch.tensor(n / 2), torch.tensor(alpha / (alpha - 1))).sample(shape)
    # at μ = 0, Σ = I: x = c √r² u with c = exp(log_radius) and u = ε/‖ε‖
    assert torch.allclose(x.norm(dim=-1) / math.exp(log_radius(alpha, n)), r2.sqrt(), rtol=1e-5)
    assert torch.allclose(x / x.norm(dim=-1, keepdim=True), eps / eps.norm(dim=-1, keepdim=True), atol=1e-6)


@pytest.mark.parametrize("alpha", [1.5, 2.0])
@pytest.mark.parametrize("n", [1, 3, 20])
def test_samples_match_covariance_and_stay_in_the_support(alpha, n):
    torch.manual_seed(0)
    q = BetaGaussian(torch.linspace(-1, 1, n), torch.linspace(0.5, 2.0, n), alpha)
    x = q.rsample((200_000,))
    emp = x.var(0)
    assert torch.allclose(emp, q.variance, rtol=2e-2)
    assert torch.allclose(x.mean(0), q.loc, atol=3e-2 * float(q.variance.max().sqrt()))
    assert torch.isfinite(q.log_prob(x)).all()  # no sample outside ½‖x−μ‖²_Σ ≤ −τ
    maha = (((x - q.loc) / q.scale) ** 2).sum(-1)
    assert float(maha.max() / 2) <= float(-q.tau) * (1 + 1e-9)
    assert float(maha.max() / 2) > 0.9 * float(-q.tau)  # the support boundary is reached


@pytest.mark.parametrize("alpha", ALPHAS)
def test_rsample_gradients_by_finite_differences(alpha):
    mu = torch.tensor([0.3, -0.2, 0.1])
    log_scale = torch.tensor([-0.2, 0.1, 0.4])

    def f(m, ls):
        torch.manual_seed(11)  # the same noise for every evaluation
        z = BetaGaussian(m, ls.exp(), alpha).rsample((7,))
        return (z ** 2).sum() + z[:, 0].sin().sum()

    m, ls = mu.clone().requires_grad_(), log_scale.clone().requires_grad_()
    f(m, ls).backward()
    eps = 1e-6
    for i in range(3):
        e = torch.zeros(3)
        e[i] = eps
        fd_mu = (f(mu + e, log_scale) - f(mu - e, log_scale)) / (2 * eps)
        fd_ls = (f(mu, log_scale + e) - f(mu, log_scale - e)) / (2 * eps)
        assert float(m.grad[i]) == pytest.approx(float(fd_mu), rel=1e-5, abs=1e-7)
        assert float(ls.grad[i]) == pytest.approx(float(fd_ls), rel=1e-5, abs=1e-7)


def test_alpha_to_one_approaches_the_gaussian():
    mu, scale = torch.tensor([0.4, -0.3]), torch.tensor([0.9, 1.4])
    gauss = BetaGaussian(mu, scale, 1.0)
    x = mu + torch.tensor([[0.0, 0.0], [0.5, -0.7], [1.0, 1.0]])
    errors = []
    for alpha in [1.1, 1.01, 1.001]:
        q = BetaGaussian(mu, scale, alpha)
        errors.append(float((q.log_prob(x) - gauss.log_prob(x)).abs().max()))
        assert torch.allclose(q.variance, gauss.variance, rtol=10 * (alpha - 1))
    assert errors[0] > errors[1] > errors[2] and errors[2] < 5e-3
    ref = Normal(mu, scale)
    assert torch.allclose(gauss.log_prob(x), ref.log_prob(x).sum(-1))
    assert torch.allclose(gauss.entropy(), ref.entropy().sum(-1))


def test_fy_regularizer_is_the_kl_at_alpha_one():
    mu, scale = torch.randn(5, 4), torch.rand(5, 4) + 0.3
    kl = kl_divergence(Normal(mu, scale), Normal(torch.zeros(4), torch.ones(4))).sum(-1)
    assert torch.allclose(fy_regularizer(BetaGaussian(mu, scale, 1.0)), kl)


def test_fy_regularizer_near_one_differs_from_kl_by_a_constant():
    torch.manual_seed(1)
    mu, scale = torch.randn(6, 3), torch.rand(6, 3) + 0.3
    kl = kl_divergence(Normal(mu, scale), Normal(torch.zeros(3), torch.ones(3))).sum(-1)
    diff = fy_regularizer(BetaGaussian(mu, scale, 1.001)) - kl
    assert float(diff.max() - diff.min()) < 5e-3


@pytest.mark.parametrize("alpha", [1.5, 2.0])
def test_fy_regularizer_matches_numerical_integration_1d_2d(alpha):
    """L = Ω*(η) − H(q) + ½E_q‖z‖², Ω*(η) = max_p E_p η + H(p) evaluated numerically at q* = the entmax of η."""
    for mu, scale in [([0.4], [0.6]), ([0.2, -0.5], [0.7, 1.2])]:
        q = _q(mu, scale, alpha)
        prior = _q([0.0] * len(mu), [1.0] * len(mu), alpha)
        grid = _grid_1d if len(mu) == 1 else _grid_2d
        values = []
        for dist in (q, prior):
            pts, p, d = grid(dist) if len(mu) == 1 else grid(dist, half_width=6.0, m=1201)
            pts = pts.unsqueeze(-1) if len(mu) == 1 else pts
            tsallis = (1 - (p ** alpha).sum() * d) / (alpha * (alpha - 1))
            half_sq = 0.5 * ((pts ** 2).sum(-1) * p).sum() * d
            values.append((tsallis, half_sq))
        (h_q, m_q), (h_star, m_star) = values
        numeric = (h_star - m_star) - h_q + m_q
        assert float(fy_regularizer(q)) == pytest.approx(float(numeric), abs=5e-3)


@pytest.mark.parametrize("alpha", ALPHAS)
def test_fy_regularizer_is_nonnegative_and_minimised_at_the_identity(alpha):
    torch.manual_seed(2)
    n = 8
    mu, scale = 0.5 * torch.randn(100, n), torch.rand(100, n) * 2 + 0.05
    assert (fy_regularizer(BetaGaussian(mu, scale, alpha)) >= -1e-10).all()
    s = torch.linspace(0.3, 3.0, 271).unsqueeze(-1).expand(-1, n)  # isotropic scales, μ = 0
    values = fy_regularizer(BetaGaussian(torch.zeros(n), s, alpha))
    assert float(s[values.argmin(), 0]) == pytest.approx(1.0, abs=0.011)
    assert float(values.min()) == pytest.approx(0.0, abs=1e-8)


def test_authors_regularizer_rewards_a_collapsing_scale():
    n = 4
    s = torch.linspace(0.05, 3.0, 60).unsqueeze(-1).expand(-1, n)
    values = authors_regularizer(BetaGaussian(torch.zeros(n), s, 2.0))
    assert int(values.argmin()) == 0  # smallest scale is best: not a regularizer toward the prior
    with pytest.raises(ValueError):
        authors_regularizer(BetaGaussian(torch.zeros(n), torch.ones(n), 1.0))


def test_authors_regularizer_is_the_executed_formula_at_a_hand_computed_point():
    """n = 2, α = 2 (D = 6, exponent −1/4, R² = (Γ(3)/(Γ(2)π) · 2)^{1/2} = (4/π)^{1/2}), σ² = (0.5, 2), μ = (1, 0):
    ½ + (R²/6)(1 + 1e-8)^{−1/4} · ½ (2.5 − 2)."""
    q = BetaGaussian(torch.tensor([1.0, 0.0], dtype=torch.float64),
                     torch.tensor([0.5, 2.0], dtype=torch.float64).sqrt(), 2.0)
    r2 = math.sqrt(4 / math.pi)
    expected = 0.5 + (r2 / 6) * (1 + 1e-8) ** -0.25 * 0.5 * (2.5 - 2.0)
    assert float(authors_regularizer(q)) == pytest.approx(expected, rel=1e-12)


def test_authors_regularizer_is_bounded_below_once_its_float32_determinant_underflows():
    """As executed, ∏σ² (float32) underflows for 256 small variances and the 1e-8 floor fixes the factor: the term
    is then linear in tr Σ, with the finite infimum −(R²/D) 10^{8/(n + 2/(α−1))} ½(α−1) n at Σ → 0 (the exact
    |Σ| would send it to −∞)."""
    n, alpha = 256, 1.5
    values = [float(authors_regularizer(BetaGaussian(torch.zeros(n), torch.full((n,), s), alpha)))
              for s in (1e-1, 1e-3, 1e-6)]
    D, c = 2 * alpha + n * (alpha - 1), n + 2 / (alpha - 1)
    floor = -(math.exp(2 * log_radius(alpha, n)) / D) * 1e-8 ** (-1 / c) * 0.5 * (alpha - 1) * n
    assert values[0] > values[1] > values[2] > floor
    assert values[2] == pytest.approx(floor, rel=1e-4)
    # with the exact |Σ| inside τ (our earlier reading) the same point lies far below that floor
    q = BetaGaussian(torch.zeros(n), torch.full((n,), 1e-6), alpha)
    exact = float(-q.tau * (alpha - 1) * (q.scale.pow(2).sum() - n) / D)
    assert exact < 1e3 * floor < 0


def test_log_prob_is_minus_infinity_outside_the_support():
    q = _q([0.0], [1.0], 2.0)
    edge = math.sqrt(-2 * float(q.tau))
    lp = q.log_prob(torch.tensor([[edge * 0.99], [edge * 1.01]]))
    assert math.isfinite(float(lp[0])) and float(lp[1]) == -math.inf
