"""FY-NVDM's observation loss and NVDM's pieces: closed forms, the α → 1 limit, gradients, the RE metric."""

import math

import pytest
import torch

from fyexp.losses.fy_multinomial import (fy_multinomial_loss, l1_reconstruction_error, multinomial_nll,
                                         observation_probs, sparse_negentropy)
from fyexp.maps.tsallis import tsallis_negentropy
from fyexp.models.nvdm import NVDM, gaussian_kl, nvdm_objective, reconstruction_error


def _counts(n=6, v=12, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.poisson(torch.rand(n, v, generator=g, dtype=torch.float64) * 2, generator=g)
    x[:, 0] += 1  # no empty document
    return x


def _log_multinomial_coefficient(x):
    return torch.lgamma(x.sum(-1) + 1) - torch.lgamma(x + 1).sum(-1)


def test_alpha_one_is_multinomial_nll_up_to_a_constant():
    x = _counts()
    theta = torch.randn(6, 12, dtype=torch.float64)
    y = x / x.sum(-1, keepdim=True)
    log_lik = torch.stack([torch.distributions.Multinomial(int(n), logits=t).log_prob(row)
                           for n, t, row in zip(x.sum(-1), theta, x)])
    const = x.sum(-1) * torch.special.xlogy(y, y).sum(-1) + _log_multinomial_coefficient(x)
    assert torch.allclose(fy_multinomial_loss(theta, x, 1.0), -log_lik + const)
    # the constant does not depend on θ: two different θ give the same difference
    other = torch.randn(6, 12, dtype=torch.float64)
    d1 = fy_multinomial_loss(theta, x, 1.0) - multinomial_nll(theta, x)
    d2 = fy_multinomial_loss(other, x, 1.0) - multinomial_nll(other, x)
    assert torch.allclose(d1, d2)


def test_tsallis_loss_tends_to_the_shannon_one():
    x = _counts(seed=1)
    theta = torch.randn(6, 12, dtype=torch.float64)
    assert torch.allclose(fy_multinomial_loss(theta, x, 1.0 + 1e-6), fy_multinomial_loss(theta, x, 1.0), rtol=1e-4)


@pytest.mark.parametrize("alpha", [1.0, 1.314, 1.5, 2.0])
def test_nonnegative_and_zero_at_the_target(alpha):
    x = _counts(seed=2)
    theta = torch.randn(6, 12, dtype=torch.float64) * 3
    assert (fy_multinomial_loss(theta, x, alpha) >= -1e-12).all()
    y = x / x.sum(-1, keepdim=True)
    # θ = Ω'(y) realises y exactly: (α−1)θ = y^(α−1) (α > 1), θ = log y (α = 1) on the support of y
    x_full = x + 1.0
    y_full = x_full / x_full.sum(-1, keepdim=True)
    theta_star = torch.log(y_full) if alpha == 1.0 else y_full.pow(alpha - 1) / (alpha - 1)
    assert torch.allclose(observation_probs(theta_star, alpha), y_full, atol=1e-10)
    assert torch.allclose(fy_multinomial_loss(theta_star, x_full, alpha), torch.zeros(6, dtype=torch.float64), atol=1e-9)
    del y


@pytest.mark.parametrize("alpha", [1.0, 1.314, 2.0])
def test_gradient_is_length_times_residual_and_passes_gradcheck(alpha):
    x = _counts(seed=3)
    theta = torch.randn(6, 12, dtype=torch.float64, requires_grad=True)
    fy_multinomial_loss(theta, x, alpha).sum().backward()
    p = observation_probs(theta.detach(), alpha)
    expected = x.sum(-1, keepdim=True) * p - x
    assert torch.allclose(theta.grad, expected, atol=1e-10)
    assert torch.autograd.gradcheck(lambda t: fy_multinomial_loss(t, x, alpha), (theta.detach().requires_grad_(),),
                                    eps=1e-6, atol=1e-5)


def test_l1_reconstruction_error_on_toy_distributions():
    counts = torch.tensor([[2.0, 2.0, 0.0], [0.0, 0.0, 5.0]])
    probs = torch.tensor([[0.5, 0.5, 0.0], [1.0, 0.0, 0.0]])
    assert torch.allclose(l1_reconstruction_error(probs, counts), torch.tensor([0.0, 2.0]))
    uniform = torch.full((1, 4), 0.25)
    assert torch.allclose(l1_reconstruction_error(uniform, torch.tensor([[1.0, 0, 0, 0]])), torch.tensor([1.5]))


def test_gaussian_kl_closed_form():
    mean = torch.tensor([[0.0, 1.0]], dtype=torch.float64)
    log_sigma = torch.tensor([[0.0, math.log(2.0)]], dtype=torch.float64)
    q = torch.distributions.Normal(mean, log_sigma.exp())
    p = torch.distributions.Normal(torch.zeros_like(mean), torch.ones_like(mean))
    assert torch.allclose(gaussian_kl(mean, log_sigma), torch.distributions.kl_divergence(q, p).sum(-1))


def test_nvdm_shapes_and_objective_parts():
    torch.manual_seed(0)
    model = NVDM(vocab_size=12, n_topics=3, hidden=8).double()
    x = _counts()
    out = nvdm_objective(model, x, alpha=1.5, beta=0.01)
    assert out["objective"].shape == (6,)
    assert torch.allclose(out["objective"], out["reconstruction"] + 0.01 * out["kl"])
    mean, log_sigma = model.encode(x)
    assert torch.equal(log_sigma, torch.zeros_like(log_sigma))  # NVDM initializes log σ at zero
    re = reconstruction_error(model, x, 1.5)
    assert re.shape == (6,) and ((re >= 0) & (re <= 2)).all()


@pytest.mark.parametrize("alpha", [1.0, 1.05, 1.314, 1.5, 2.0])
def test_sparse_negentropy_is_the_dense_one(alpha):
    """Ω over the non-zero entries only equals tsallis_negentropy, for sparse rows, an empty row and 3-D input."""
    torch.manual_seed(9)
    p = torch.rand(3, 6, 40) * (torch.rand(3, 6, 40) < 0.2)
    p[0, 0] = 0.0
    p = p / p.sum(-1, keepdim=True).clamp_min(1e-12)
    scale = 1.0 if alpha == 1.0 else alpha * (alpha - 1.0)  # compare Σ p^α: Ω divides its round-off by this
    dense = tsallis_negentropy(p, alpha) * scale
    assert torch.allclose(sparse_negentropy(p, alpha) * scale, dense, rtol=1e-6, atol=1e-7)
    assert torch.allclose(sparse_negentropy(p[1], alpha) * scale, dense[1], rtol=1e-6, atol=1e-7)
