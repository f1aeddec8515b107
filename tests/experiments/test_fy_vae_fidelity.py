"""Our FY β-VAE step against a hand transcription of the authors' ``fy-vae-image/mvb.py`` (github.com/deep-spin/
fy-vi): the same weights, batch and random draws must give the same loss and gradients.

The hand step is written from the formulas only (plain tensors, ``torch.distributions.Beta`` for the radial draw as
spcdist draws it, ``F.binary_cross_entropy`` on sigmoids as the script does, the loss summed over the batch as the
script sums it), so a difference in the model's composition (encoder split, sampler, regularizer, its weight, the
reduction) shows here.  The script's sum over the batch is our mean times B: Adam is invariant to that factor up to
its ε, so we compare our gradients with the hand gradients divided by B.
"""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from fyexp.distributions.beta_gaussian import log_radius
from fyexp.models.fy_vae import build_fy_vae
from fyexp.objectives import ELBO
from fyexp.train import VariationalTask

N_IN, HIDDEN, LATENT, BATCH, BETA = 12, 10, 6, 5, 0.01


def _fy_regularizer(mu, sigma2, alpha):
    """Ω*(η) − H_α(q) + ½ E_q‖z‖² per row, with every coordinate kept (FYVI §4.2 with the β-Gaussian facts)."""
    n, am1 = mu.shape[-1], alpha - 1
    R2, D, a = math.exp(2 * log_radius(alpha, n)), 2 * alpha + n * am1, alpha / am1

    def entropy_and_half_moment(loc, s2):
        tau = -0.5 * R2 * torch.exp(-s2.log().sum(-1) / (n + 2 / am1))
        return 1 / (alpha * am1) + 2 * tau / D, 0.5 * (loc.pow(2).sum(-1) + (-2 * tau / (n + 2 * a)) * s2.sum(-1))

    h_star, m_star = entropy_and_half_moment(torch.zeros_like(mu), torch.ones_like(sigma2))
    h, m = entropy_and_half_moment(mu, sigma2)
    return (h_star - m_star) - h + m


def _authors_kld(mu, sigma2, alpha, rank):
    """mvb.py's KLD of the β-Gaussian branch, term by term (r and n are spcdist's, of rank ``rank``)."""
    am1 = alpha - 1
    a = alpha / am1
    lr = am1 / (2 + am1 * rank) * (torch.lgamma(rank / 2 + a) - math.lgamma(a) - rank / 2 * math.log(math.pi)
                                   + (math.log(2) - math.log(am1)) / am1)
    r = torch.exp(lr)
    first_term = 0.5 * torch.sum(mu ** 2, dim=1)
    denominator = 2 * alpha + rank * am1
    determinant = torch.prod(sigma2.float(), dim=1).to(sigma2.dtype)
    exponent = -1 / (rank + 2 / am1)
    second_term = (r ** 2 / denominator) * (determinant + 1e-8) ** exponent * (
        (1 + 0.5 * am1 * torch.sum(sigma2, dim=1)) - (1 + 0.5 * rank * am1))
    return first_term + second_term


def _hand_step(params, x, alpha, regularizer):
    """The script's forward pass and summed loss, from plain weights; random draws in spcdist's order."""
    W1, b1, Wo, bo, W3, b3, W4, b4 = params
    h1 = F.relu(x @ W1.T + b1)
    out = h1 @ Wo.T + bo
    mu, logvar = out[:, :LATENT], out[:, LATENT:]
    sigma2 = torch.exp(logvar)
    s = sigma2.detach()
    mask = s > 1e3 * torch.finfo(torch.float32).eps * s.amax(-1, keepdim=True) if regularizer == "authors" \
        else torch.ones_like(s, dtype=torch.bool)
    rank = mask.sum(-1).to(x.dtype)
    U = torch.randn((1,) + mu.shape, dtype=x.dtype)
    U = torch.where(mask, U, torch.zeros_like(U))
    U = U / U.norm(dim=-1, keepdim=True)
    am1 = alpha - 1
    ratio = torch.distributions.Beta(rank / 2, torch.full_like(rank, alpha / am1)).expand((1, BATCH)).rsample()
    lr = am1 / (2 + am1 * rank) * (torch.lgamma(rank / 2 + alpha / am1) - math.lgamma(alpha / am1)
                                   - rank / 2 * math.log(math.pi) + math.log(2 / am1) / am1)
    Z = (torch.exp(lr) * torch.sqrt(ratio)).unsqueeze(-1) * U
    log_det = torch.where(mask, torch.log(sigma2), torch.zeros_like(sigma2)).sum(-1)
    c = torch.exp(-log_det / (2 * rank + 4 / am1)).unsqueeze(-1)
    z = (mu + c * torch.sqrt(torch.where(mask, sigma2, torch.zeros_like(sigma2))) * Z)[0]
    recon = F.relu(z @ W3.T + b3) @ W4.T + b4
    # the script's BCE; our Bernoulli head's FY loss is BCE − H_b(x), which differs by a constant of the data
    loss = F.binary_cross_entropy(torch.sigmoid(recon), x, reduction="sum")
    loss = loss + (x * x.log() + (1 - x) * (1 - x).log()).sum()
    kld = _fy_regularizer(mu, sigma2, alpha) if regularizer == "fy" else _authors_kld(mu, sigma2, alpha, rank)
    return loss + BETA * kld.sum()


@pytest.mark.parametrize("regularizer", ["fy", "authors"])
@pytest.mark.parametrize("alpha", [1.5, 2.0])
def test_our_step_equals_the_scripts_step(regularizer, alpha):
    torch.manual_seed(0)
    model = build_fy_vae(N_IN, HIDDEN, LATENT, alpha, 1.0, regularizer).double()
    if regularizer == "authors":  # one coordinate of negligible scale, which spcdist drops
        with torch.no_grad():
            model.encoder.out.bias[LATENT + 2] = -14.0
    task = VariationalTask(model, ELBO(beta=BETA))
    x = torch.rand(BATCH, N_IN, dtype=torch.float64)
    params = [p.detach().clone().requires_grad_(True) for p in
              (model.encoder.body[0].weight, model.encoder.body[0].bias, model.encoder.out.weight,
               model.encoder.out.bias, model.decoder.body[0].weight, model.decoder.body[0].bias,
               model.decoder.out.weight, model.decoder.out.bias)]
    torch.manual_seed(7)
    ours, _ = task.loss((x,))
    ours.backward()
    ours = ours.detach()
    torch.manual_seed(7)
    hand = _hand_step(params, x, alpha, regularizer)
    hand.backward()
    hand = hand.detach()
    if regularizer == "authors":
        assert float(model.posterior(x).rank.min()) == LATENT - 1  # the drop happened
    assert float(ours) == pytest.approx(float(hand) / BATCH, rel=1e-9)
    for p, q in zip(model.parameters(), params):
        torch.testing.assert_close(p.grad, q.grad / BATCH, rtol=1e-7, atol=1e-10)


def test_the_comparison_sees_a_wrong_regularizer_weight():
    """The check is not vacuous: the same comparison fails for β = 0.1 on our side."""
    torch.manual_seed(0)
    model = build_fy_vae(N_IN, HIDDEN, LATENT, 1.5, 1.0, "fy").double()
    x = torch.rand(BATCH, N_IN, dtype=torch.float64)
    params = [p.detach().clone() for p in model.parameters()]
    torch.manual_seed(7)
    with torch.no_grad():
        ours, _ = VariationalTask(model, ELBO(beta=0.1)).loss((x,))
        torch.manual_seed(7)
        hand = _hand_step(params, x, 1.5, "fy")
    assert float(ours) != pytest.approx(float(hand) / BATCH, rel=1e-6)
