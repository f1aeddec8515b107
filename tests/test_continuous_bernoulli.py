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


def test_authors_clamp():
    """λ is clamped to [1e-4, 1 − 1e-4]: the per-pixel density at x = 0 is then bounded by C(1e-4)(1 − 1e-4)."""
    eta = clamp_logits(torch.tensor([-50.0, 50.0, 0.3], dtype=torch.float64), 1e-4)
    lam = torch.sigmoid(eta)
    assert float(lam[0]) == pytest.approx(1e-4, rel=1e-9) and float(lam[1]) == pytest.approx(1 - 1e-4, rel=1e-9)
    assert float(eta[2]) == 0.3
    bound = math.log(2 * math.atanh(1 - 2e-4) / (1 - 2e-4)) + math.log(1 - 1e-4)
    assert float(log_prob_logits(eta[:1], torch.zeros(1, dtype=torch.float64))) == pytest.approx(bound, abs=1e-9)
