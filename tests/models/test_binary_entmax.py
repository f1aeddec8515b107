"""Binary ρ′-entmax observation models: probabilities, FY-loss properties, gradients, the Bernoulli case."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from fyexp.losses.binary_entmax import binary_entmax, binary_fy_loss, binary_tsallis_negentropy

ALPHAS = [1.0, 2.0]


@pytest.mark.parametrize("alpha", ALPHAS)
def test_probabilities_match_the_general_entmax_of_two_scores(alpha):
    theta = torch.linspace(-3, 3, 61, dtype=torch.float64)
    p = binary_entmax(theta, alpha)
    assert ((p >= 0) & (p <= 1)).all()
    if alpha == 1.0:
        ref = torch.softmax(torch.stack([theta, torch.zeros_like(theta)], -1), -1)[:, 0]
    else:
        entmax = pytest.importorskip("entmax", reason="the entmax package is the reference for sparsemax")
        ref = entmax.sparsemax(torch.stack([theta, torch.zeros_like(theta)], -1), dim=-1)[:, 0]
    assert torch.allclose(p, ref)
    if alpha == 2.0:  # sparse: exactly 0 or 1 outside [-1, 1]
        assert (p[theta <= -1] == 0).all() and (p[theta >= 1] == 1).all()


@pytest.mark.parametrize("alpha", ALPHAS)
def test_loss_is_nonnegative_and_zero_at_the_prediction(alpha):
    theta = torch.linspace(-4, 4, 81, dtype=torch.float64).unsqueeze(-1)
    x = torch.linspace(0, 1, 11, dtype=torch.float64)
    assert (binary_fy_loss(theta, x, alpha) >= -1e-12).all()
    p = binary_entmax(theta, alpha)
    assert torch.allclose(binary_fy_loss(theta, p, alpha), torch.zeros_like(p), atol=1e-12)


@pytest.mark.parametrize("alpha", ALPHAS)
def test_gradient_is_prediction_minus_target_and_passes_gradcheck(alpha):
    theta = torch.tensor([-2.5, -0.7, -0.2, 0.3, 0.9, 1.8], dtype=torch.float64, requires_grad=True)
    x = torch.tensor([0.0, 0.3, 1.0, 0.5, 0.9, 0.0], dtype=torch.float64)
    binary_fy_loss(theta, x, alpha).sum().backward()
    assert torch.allclose(theta.grad, binary_entmax(theta.detach(), alpha) - x)
    assert torch.autograd.gradcheck(lambda t: binary_fy_loss(t, x, alpha), (theta.detach().clone().requires_grad_(),))


def test_bernoulli_case_is_the_nll_up_to_a_constant():
    theta = torch.randn(50, 7, dtype=torch.float64)
    x = torch.rand(7, dtype=torch.float64)
    bce = F.binary_cross_entropy_with_logits(theta, x.expand_as(theta), reduction="none")
    diff = bce - binary_fy_loss(theta, x, 1.0)
    assert torch.allclose(diff, diff[0].expand_as(diff))              # constant in θ
    assert torch.allclose(diff[0], -binary_tsallis_negentropy(x, 1.0))  # = the entropy of x


def test_tsallis_two_negentropy_closed_form_and_unsupported_alpha():
    p = torch.rand(20, dtype=torch.float64)
    assert torch.allclose(binary_tsallis_negentropy(p, 2.0), 0.5 * (p ** 2 + (1 - p) ** 2 - 1))
    with pytest.raises(ValueError):
        binary_entmax(p, 1.5)
