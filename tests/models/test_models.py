"""fyexp.models: the protocol's terms against torch.distributions computed by hand, heads against closed forms."""

from __future__ import annotations

import math

import pytest
import torch
from torch.distributions import Bernoulli as TorchBernoulli, Multinomial, Normal, kl_divergence

from fyexp.distributions.beta_gaussian import BetaGaussian, fy_regularizer
from fyexp.models import ModelConfig, build_nvdm, build_vae
from fyexp.models.heads import Bernoulli, BinaryEntmax, Gaussian, Multinomial as MultinomialHead
from fyexp.core.errors import ConfigValueError


def test_one_layer_gaussian_vae_terms_are_the_log_densities_of_its_samples():
    torch.manual_seed(0)
    model = build_vae(ModelConfig(latent=[3], encoder_hidden=[[8]], decoder_hidden=[[8]], activation="tanh"), 6)
    x = (torch.rand(5, 6) > 0.5).float()
    torch.manual_seed(1)
    terms = model.terms(x, 4)
    torch.manual_seed(1)
    mu, log_var = model.encoder(x)
    q = Normal(mu, (0.5 * log_var).exp())
    z = q.rsample((4,))
    expected_lik = TorchBernoulli(logits=model.decoder(z)).log_prob(x).sum(-1)
    torch.testing.assert_close(terms.log_likelihood, expected_lik)
    torch.testing.assert_close(terms.log_prior, Normal(0.0, 1.0).log_prob(z).sum(-1))
    torch.testing.assert_close(terms.log_q, q.log_prob(z).sum(-1))
    torch.testing.assert_close(terms.divergence, kl_divergence(q, Normal(0.0, 1.0)).sum(-1))
    assert terms.decode_mean().shape == (4, 5, 6)


def test_two_layer_vae_log_weights_by_hand():
    torch.manual_seed(0)
    model = build_vae(ModelConfig(latent=[4, 2], encoder_hidden=[[8, 8], [5]], decoder_hidden=[[5], [8, 8]],
                                  activation="tanh"), 6)
    x = (torch.rand(3, 6) > 0.5).float()
    torch.manual_seed(2)
    log_w = model.log_weights(x, 5)
    torch.manual_seed(2)
    mu1, lv1 = model.encoders[0](x)
    q1 = Normal(mu1, (0.5 * lv1).exp())
    h1 = q1.rsample((5,))
    mu2, lv2 = model.encoders[1](h1)
    q2 = Normal(mu2, (0.5 * lv2).exp())
    h2 = q2.rsample()
    pm, plv = model.decoders[1](h2)
    expected = (TorchBernoulli(logits=model.decoders[0](h1)).log_prob(x).sum(-1)
                + Normal(pm, (0.5 * plv).exp()).log_prob(h1).sum(-1) + Normal(0.0, 1.0).log_prob(h2).sum(-1)
                - q1.log_prob(h1).sum(-1) - q2.log_prob(h2).sum(-1))
    assert log_w.shape == (5, 3)
    torch.testing.assert_close(log_w, expected)
    assert model.terms(x, 1).divergence is None


def test_beta_gaussian_posterior_uses_the_fy_regularizer():
    torch.manual_seed(0)
    model = build_vae(ModelConfig(latent=[3], encoder_hidden=[[8]], decoder_hidden=[[8]], posterior="beta_gaussian",
                                  posterior_rho=2.0, observation="binary_entmax", observation_rho=2.0), 6)
    x = torch.rand(4, 6)
    mu, log_var = model.encoder(x)
    expected = fy_regularizer(BetaGaussian(mu, (0.5 * log_var).exp(), 2.0))
    torch.testing.assert_close(model.terms(x, 2).divergence, expected)


def test_heads_against_closed_forms():
    torch.manual_seed(0)
    scores, x = torch.randn(2, 3, 5), (torch.rand(3, 5) > 0.5).float()
    torch.testing.assert_close(Bernoulli().log_prob(scores, x), TorchBernoulli(logits=scores).log_prob(x).sum(-1))
    gray = torch.rand(3, 5)  # ρ′ = 1: the Bernoulli log-likelihood plus the binary entropy of the gray level
    entropy = -(torch.xlogy(gray, gray) + torch.xlogy(1 - gray, 1 - gray)).sum(-1)
    torch.testing.assert_close(BinaryEntmax(1.0).log_prob(scores, gray), Bernoulli().log_prob(scores, gray) + entropy,
                               atol=1e-5, rtol=1e-5)
    both = torch.randn(2, 3, 10)
    mu, log_var = both.chunk(2, -1)
    torch.testing.assert_close(Gaussian().log_prob(both, x), Normal(mu, (0.5 * log_var).exp()).log_prob(x).sum(-1))
    counts = torch.randint(0, 4, (3, 5)).float()
    n = counts.sum(-1)
    log_coef = torch.lgamma(n + 1) - torch.lgamma(counts + 1).sum(-1)
    expected = torch.stack([Multinomial(int(n[i]), logits=scores[:, i]).log_prob(counts[i]) for i in range(3)], 1)
    torch.testing.assert_close(MultinomialHead().log_prob(scores, counts) + log_coef, expected)


def test_nvdm_layout_and_kl():
    torch.manual_seed(0)
    model = build_nvdm(20, n_topics=4, hidden=7)
    assert torch.count_nonzero(model.encoder.scale.weight) == 0  # NVDM's log σ layer starts at zero
    counts = torch.randint(0, 3, (5, 20)).float()
    mu, log_sigma = model.encode(counts + torch.rand(5, 20))
    q = Normal(mu, log_sigma.exp())
    torch.testing.assert_close(model.family.divergence(q, mu, log_sigma), kl_divergence(q, Normal(0.0, 1.0)).sum(-1))
    assert model.terms(counts, 3).log_likelihood.shape == (3, 5)


def test_config_errors_name_the_key():
    with pytest.raises(ConfigValueError, match="encoder_hidden"):
        ModelConfig(latent=[4, 2], encoder_hidden=[[8]], decoder_hidden=[[8], [8]])
    with pytest.raises(ConfigValueError, match="latent"):
        ModelConfig(latent=[4, 2, 1])
