"""The continuous Bernoulli likelihood (fyexp.distributions.continuous_bernoulli) against numerical integration,
torch.distributions.ContinuousBernoulli and its Taylor expansion near λ = 0.5."""

import math

import pytest
import torch

from fyexp.distributions.continuous_bernoulli import (TAYLOR_CUT, clamp_logits, log_norm_logits, log_prob_logits,
                                                      mean_logits)

GRID = torch.linspace(0.0, 1.0, 100_001, dtype=torch.float64)
# logits from saturated to λ = 0.5 exactly, with points on both sides of the Taylor cut (λ = 0.49 / 0.51)
LOGITS = [-25.0, -4.0, -0.7, -0.0401, -0.0399, -0.01, -1e-5, 0.0, 1e-5, 0.02, 0.0399, 0.0401, 1.3, 9.2]


@pytest.mark.parametrize("eta", LOGITS)
def test_density_integrates_to_one(eta):
    """∫₀¹ C(λ) λ^x (1−λ)^{1−x} dx = 1, i.e. log C is the log-normalizer, including near λ = 0.5."""
    density = torch.exp(log_prob_logits(torch.full_like(GRID, eta), GRID))
    assert float(torch.trapezoid(density, GRID)) == pytest.approx(1.0, abs=1e-8)


@pytest.mark.parametrize("eta", LOGITS)
def test_log_normalizer_against_quadrature_and_torch(eta):
    """log C(λ) = −log ∫₀¹ λ^x (1−λ)^{1−x} dx, and torch's ContinuousBernoulli gives the same log-density."""
    unnormalised = torch.exp(GRID * eta - torch.nn.functional.softplus(torch.tensor(eta, dtype=torch.float64)))
    reference = -math.log(float(torch.trapezoid(unnormalised, GRID)))
    eta_t = torch.tensor(eta, dtype=torch.float64)
    assert float(log_norm_logits(eta_t)) == pytest.approx(reference, abs=1e-8)
    x = torch.tensor([0.0, 0.3, 1.0], dtype=torch.float64)
    torch_cb = torch.distributions.ContinuousBernoulli(logits=eta_t.expand(3))
    assert torch.allclose(log_prob_logits(eta_t.expand(3), x), torch_cb.log_prob(x), atol=1e-6)


@pytest.mark.parametrize("eta", LOGITS)
def test_mean_against_quadrature(eta):
    density = torch.exp(log_prob_logits(torch.full_like(GRID, eta), GRID))
    assert float(mean_logits(torch.tensor(eta, dtype=torch.float64))) == pytest.approx(
        float(torch.trapezoid(density * GRID, GRID)), abs=1e-8)


def test_taylor_branch_is_continuous_and_differentiable():
    """Both branches agree at the cut λ = 0.5 ± 0.01 (value and slope), the gradient is finite at η = 0 and matches
    finite differences; λ = 0.5 gives log 2."""
    for sign in (-1.0, 1.0):
        inside = torch.tensor(sign * TAYLOR_CUT * (1 - 1e-9), dtype=torch.float64)
        outside = torch.tensor(sign * TAYLOR_CUT * (1 + 1e-9), dtype=torch.float64)
        assert float(log_norm_logits(inside)) == pytest.approx(float(log_norm_logits(outside)), abs=1e-11)
    assert float(log_norm_logits(torch.tensor(0.0, dtype=torch.float64))) == pytest.approx(math.log(2.0), abs=1e-15)
    eta = torch.tensor([-0.5, -0.03, 0.0, 0.01, 0.0401, 2.0], dtype=torch.float64, requires_grad=True)
    x = torch.tensor([0.1, 0.9, 0.5, 0.0, 1.0, 0.7], dtype=torch.float64)
    assert torch.autograd.gradcheck(lambda e: log_prob_logits(e, x), (eta,), eps=1e-6, atol=1e-6)


CLAMP_LOGIT = math.log((1 - 1e-4) / 1e-4)   # |η| at the clamp λ = 1e-4 / 1 − 1e-4


@pytest.mark.slow
def test_log_prob_is_torch_s_continuous_bernoulli_in_float64_over_the_clamp_range():
    """On 200,001 logits over the clamp range (and λ = 0.5 ± 0.01 densely) with random x, our log-density is
    torch.distributions.ContinuousBernoulli's to 1.5e-12 in float64 (the largest gap, 1.4e-12, is our Taylor
    series' y⁶ term at its cut |η| = 0.04)."""
    eta = torch.cat([torch.linspace(-CLAMP_LOGIT, CLAMP_LOGIT, 200_001, dtype=torch.float64),
                     torch.linspace(-2 * TAYLOR_CUT, 2 * TAYLOR_CUT, 20_001, dtype=torch.float64)])
    x = torch.rand(eta.shape, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    gap = (log_prob_logits(eta, x) - torch.distributions.ContinuousBernoulli(logits=eta).log_prob(x)).abs()
    assert float(gap.max()) < 1.5e-12
    assert torch.allclose(mean_logits(eta), torch.distributions.ContinuousBernoulli(logits=eta).mean, atol=1e-11)


def test_float32_log_prob_stays_within_2e_6_of_float64_up_to_the_clamp():
    """Why fyexp keeps its logit-space formula rather than torch's class: in float32 ours is within 2e-6 of the
    float64 value everywhere in the clamp range (measured 1.1e-6), while torch's, computed through λ and log(1 − λ),
    is 7e-5 off near λ = 1 − 1e-4 (enough to move frac-vae's fingerprint, e.g. test_elbo_data −31.775 → −31.862)."""
    eta64 = torch.linspace(-CLAMP_LOGIT, CLAMP_LOGIT, 20_001, dtype=torch.float64).float().double()
    x64 = torch.rand(eta64.shape, dtype=torch.float64, generator=torch.Generator().manual_seed(1)).float().double()
    x64[::2] = 0.0   # binarised pixels, as most MNIST pixels are
    gap = log_prob_logits(eta64.float(), x64.float()).double() - log_prob_logits(eta64, x64)
    assert float(gap.abs().max()) < 2e-6


def test_authors_clamp():
    """λ is clamped to [1e-4, 1 − 1e-4]: the per-pixel density at x = 0 is then bounded by C(1e-4)(1 − 1e-4)."""
    eta = clamp_logits(torch.tensor([-50.0, 50.0, 0.3], dtype=torch.float64), 1e-4)
    lam = torch.sigmoid(eta)
    assert float(lam[0]) == pytest.approx(1e-4, rel=1e-9) and float(lam[1]) == pytest.approx(1 - 1e-4, rel=1e-9)
    assert float(eta[2]) == 0.3
    bound = math.log(2 * math.atanh(1 - 2e-4) / (1 - 2e-4)) + math.log(1 - 1e-4)
    assert float(log_prob_logits(eta[:1], torch.zeros(1, dtype=torch.float64))) == pytest.approx(bound, abs=1e-9)
