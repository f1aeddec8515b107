"""spcdist's rank-masked β-Gaussian (the authors' sampler): equal to the exact one when nothing is dropped, and of
rank n′ on the kept coordinates otherwise."""

from __future__ import annotations

import math

import pytest
import torch

from fyexp.distributions.beta_gaussian import BetaGaussian, authors_regularizer, log_radius
from fyexp.distributions.beta_gaussian_masked import SPCDIST_CUTOFF, RankMaskedBetaGaussian
from fyexp.models.heads import BetaGaussianPosterior


def _pair(scale, alpha=1.5, n=5):
    loc = torch.linspace(-1, 1, n, dtype=torch.float64)
    scale = torch.as_tensor(scale, dtype=torch.float64)
    return BetaGaussian(loc, scale, alpha), RankMaskedBetaGaussian(loc, scale, alpha)


def test_cutoff_is_spcdists_thousand_float32_epsilons():
    assert SPCDIST_CUTOFF == pytest.approx(1e3 * 1.1920929e-07, rel=1e-6)


@pytest.mark.parametrize("alpha", [1.5, 2.0])
def test_equals_the_exact_beta_gaussian_when_every_scale_is_kept(alpha):
    exact, masked = _pair([0.3, 1.0, 2.0, 0.7, 1.3], alpha)
    assert bool(masked.kept.all()) and float(masked.rank) == 5
    assert float(masked.tau) == pytest.approx(float(exact.tau), rel=1e-12)
    assert float(masked.entropy()) == pytest.approx(float(exact.entropy()), rel=1e-12)
    torch.testing.assert_close(masked.variance, exact.variance)
    torch.manual_seed(3)
    a = exact.rsample((4,))
    torch.manual_seed(3)
    b = masked.rsample((4,))
    torch.testing.assert_close(a, b)
    assert float(authors_regularizer(masked)) == pytest.approx(float(authors_regularizer(exact)), rel=1e-12)


def test_a_scale_below_the_cutoff_is_dropped_and_the_rest_is_a_rank_n_minus_one_beta_gaussian():
    big, tiny = 1.0, math.sqrt(0.5 * SPCDIST_CUTOFF)  # Σ_ii = cutoff/2 × max: dropped
    just_kept = math.sqrt(2.0 * SPCDIST_CUTOFF)      # 2 × cutoff: kept
    _, masked = _pair([big, tiny, big, just_kept, big], 2.0)
    assert masked.kept.tolist() == [True, False, True, True, True] and float(masked.rank) == 4
    sub = BetaGaussian(masked.loc[[0, 2, 3, 4]], masked.scale[[0, 2, 3, 4]], 2.0)
    assert float(masked.tau) == pytest.approx(float(sub.tau), rel=1e-12)
    assert float(masked.entropy()) == pytest.approx(float(sub.entropy()), rel=1e-12)
    torch.manual_seed(0)
    z = masked.rsample((2000,))
    assert torch.equal(z[:, 1], masked.loc[1].expand(2000))  # a dropped coordinate carries no noise
    kept = z[:, [0, 2, 3, 4]]
    maha = 0.5 * ((kept - sub.loc) / sub.scale).pow(2).sum(-1)
    assert float(maha.max()) <= -float(sub.tau) * (1 + 1e-9)  # inside the rank-4 support
    assert float(maha.max()) > 0.9 * -float(sub.tau)            # and filling it
    var = kept.var(0)
    torch.testing.assert_close(var, sub.variance, rtol=0.12, atol=0.0)


def test_rank_enters_the_radius_per_row():
    scales = torch.tensor([[1.0, 1.0, 1.0], [1.0, 1e-4, 1.0]], dtype=torch.float64)
    q = RankMaskedBetaGaussian(torch.zeros(2, 3, dtype=torch.float64), scales, 1.5)
    assert q.rank.tolist() == [3.0, 2.0]
    expected = [-0.5 * math.exp(2 * log_radius(1.5, 3)), -0.5 * math.exp(2 * log_radius(1.5, 2))]
    torch.testing.assert_close(q.tau, torch.tensor(expected, dtype=torch.float64))


def test_log_prob_is_the_rank_n_minus_one_density_of_the_kept_coordinates():
    _, masked = _pair([1.0, 1e-4, 0.5, 2.0, 1.0], 2.0)
    keep = [0, 2, 3, 4]
    sub = BetaGaussian(masked.loc[keep], masked.scale[keep], 2.0)
    torch.manual_seed(1)
    z = masked.rsample((5,))
    z[:, 1] += 7.0  # a dropped coordinate does not enter
    torch.testing.assert_close(masked.log_prob(z), sub.log_prob(z[:, keep]))


def test_the_authors_posterior_head_uses_the_masked_sampler_and_fy_the_exact_one():
    mu, s = torch.zeros(2, 3), torch.zeros(2, 3)
    assert isinstance(BetaGaussianPosterior(1.5, "authors").posterior(mu, s), RankMaskedBetaGaussian)
    assert not isinstance(BetaGaussianPosterior(1.5, "fy").posterior(mu, s), RankMaskedBetaGaussian)
