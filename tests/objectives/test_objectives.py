"""Each bound of fyexp.objectives against a closed form, a limit, a theorem or a reference library (Pyro)."""

from __future__ import annotations

import math

import pytest
import torch

from fyexp.models.linear_gaussian import LinearGaussian
from fyexp.objectives import (ELBO, VR, Fractional, IWAE, VRMax, elbo_mc, fractional_bound, iwae_bound,
                              make_objective, mc_log_likelihood, minibatch_log_weights, vr_bound, vr_max_bound)
from fyexp.core.errors import ConfigValueError



# closed forms are compared in float64 (conftest.py's fixture restores the default after each test)
pytestmark = pytest.mark.usefixtures("float64_default")


def _toy(dim_x=3, dim_z=2, seed=0, noise=0.7):
    g = torch.Generator().manual_seed(seed)
    model = LinearGaussian(torch.randn(dim_x, dim_z, generator=g), torch.randn(dim_x, generator=g), noise)
    with torch.no_grad():  # a deliberately imperfect amortized posterior
        model.enc_weight.copy_(0.3 * torch.randn(dim_z, dim_x, generator=g))
        model.enc_bias.copy_(0.2 * torch.randn(dim_z, generator=g))
        model.enc_log_scale.fill_(-0.4)
    return model


# ------------------------------------------------------------------------------------- Pyro's RenyiELBO
@pytest.mark.parametrize("alpha", [0.0, 0.5, 2.0])
def test_vr_bound_equals_pyro_renyi_elbo(alpha):
    pyro = pytest.importorskip("pyro")
    import pyro.distributions as dist
    from pyro.infer import RenyiELBO

    model = _toy()
    x = torch.randn(1, 3, generator=torch.Generator().manual_seed(5))
    K = 7

    def p_model():
        z = pyro.sample("z", dist.Normal(torch.zeros(2), 1.0).to_event(1))
        pyro.sample("x", dist.Normal(z @ model.weight.T + model.bias, model.log_noise.exp()).to_event(1), obs=x[0])

    def guide():
        q = model.posterior(x)
        pyro.sample("z", dist.Normal(q.loc[0], q.scale[0]).to_event(1))

    for seed in range(3):
        torch.manual_seed(seed)
        ours = vr_bound(model.log_weights(x, K), alpha)
        torch.manual_seed(seed)
        theirs = -RenyiELBO(alpha=alpha, num_particles=K, vectorize_particles=True, max_plate_nesting=0).loss(
            p_model, guide)
        assert ours.item() == pytest.approx(theirs, abs=1e-8, rel=1e-8)


# ---------------------------------------------------------------------------------------------- VR-max
def test_vr_max_gradient_is_the_max_weight_samples_log_weight_gradient():
    model = _toy()
    x = torch.randn(4, 3, generator=torch.Generator().manual_seed(1))
    torch.manual_seed(2)
    log_w = model.log_weights(x, 6)
    params = [p for p in model.parameters()]
    grad_max = torch.autograd.grad(vr_max_bound(log_w).sum(), params, retain_graph=True)
    best = log_w.argmax(0)
    chosen = log_w.gather(0, best[None]).sum()
    grad_chosen = torch.autograd.grad(chosen, params, retain_graph=True)
    for a, b in zip(grad_max, grad_chosen):
        torch.testing.assert_close(a, b)
    # and it is not the IWAE gradient (which weights every sample)
    grad_iwae = torch.autograd.grad(iwae_bound(log_w).sum(), params)
    assert any(not torch.allclose(a, b) for a, b in zip(grad_max, grad_iwae))
    assert torch.equal(vr_bound(log_w, -math.inf), vr_max_bound(log_w))


def test_alpha_to_one_tends_to_the_elbo():
    log_w = _toy().log_weights(torch.randn(5, 3, generator=torch.Generator().manual_seed(3)), 10).detach()
    elbo = elbo_mc(log_w)
    assert torch.equal(vr_bound(log_w, 1.0), elbo)
    # first order in ε = 1 − α: L̂_α = mean_k log w_k + (ε/2) var_k log w_k + O(ε²), from either side
    half_var = 0.5 * log_w.var(0, unbiased=False)
    for eps in (1e-3, -1e-3, 1e-5, -1e-5):
        slope = (vr_bound(log_w, 1.0 - eps) - elbo) / eps
        torch.testing.assert_close(slope, half_var, rtol=50 * abs(eps), atol=1e-6)


# ------------------------------------------------------------------------ Theorems 1 and 2 (conjugate toy)
def _conjugate_log_weights(z, x, q_loc, q_scale, noise):
    """z ∼ N(0, 1), x | z ∼ N(z, σ²); q = N(q_loc, q_scale²); log w(z) for a (K,) grid of z."""
    normal = torch.distributions.Normal
    return (normal(z, noise).log_prob(x) + normal(0.0, 1.0).log_prob(z)
            - normal(q_loc, q_scale).log_prob(z))


def test_theorem1_exact_vr_bound_is_non_increasing_in_alpha_from_log_evidence_to_elbo():
    x, noise, q_loc, q_scale = 1.3, 0.8, 0.2, 0.9  # q is not the posterior N(0.79, 0.61²)
    K = 400_000  # z at the quantiles of q: (1/K) Σ_k f(z_k) → E_q f to ~1e-6
    u = (torch.arange(K) + 0.5) / K
    z = q_loc + q_scale * torch.distributions.Normal(0.0, 1.0).icdf(u)
    log_w = _conjugate_log_weights(z, torch.tensor(x), q_loc, q_scale, noise)
    alphas = [-0.5, 0.0, 0.25, 0.5, 0.75, 0.99, 1.0, 1.5, 2.0]
    exact = [float(vr_bound(log_w, a)) for a in alphas]
    assert all(b <= a + 1e-9 for a, b in zip(exact, exact[1:])), exact
    log_evidence = float(torch.distributions.Normal(0.0, math.sqrt(1 + noise ** 2)).log_prob(torch.tensor(x)))
    assert exact[1] == pytest.approx(log_evidence, abs=1e-6)  # L_0 = log p(x)
    # L_1 = the ELBO in closed form: E_q log N(x; z, σ²) − KL(q ‖ N(0, 1))
    e_loglik = -0.5 * math.log(2 * math.pi * noise ** 2) - ((x - q_loc) ** 2 + q_scale ** 2) / (2 * noise ** 2)
    kl = 0.5 * (q_loc ** 2 + q_scale ** 2 - 1 - 2 * math.log(q_scale))
    assert exact[alphas.index(1.0)] == pytest.approx(e_loglik - kl, abs=1e-5)
    assert exact[0] > log_evidence  # α < 0: an upper bound


@pytest.mark.slow
def test_theorem2_expected_mc_bound_is_non_decreasing_in_k():
    x, noise, q_loc, q_scale = 1.3, 0.8, -0.3, 1.1
    torch.manual_seed(0)
    R = 20_000
    for alpha in (0.0, 0.5):
        means, ses = [], []
        for K in (1, 2, 5, 20, 100):
            z = q_loc + q_scale * torch.randn(K, R)
            est = vr_bound(_conjugate_log_weights(z, torch.tensor(x), q_loc, q_scale, noise), alpha)
            means.append(float(est.mean()))
            ses.append(float(est.std()) / math.sqrt(R))
        for (m1, s1), (m2, s2) in zip(zip(means, ses), zip(means[1:], ses[1:])):
            assert m2 > m1 - 3 * math.hypot(s1, s2), (alpha, means)
        assert means[-1] - means[0] > 10 * math.hypot(ses[0], ses[-1])  # strictly better with K


# ---------------------------------------------------------------------- Monte Carlo test log-likelihood
def test_mc_log_likelihood_converges_to_the_exact_log_evidence():
    model = _toy(dim_x=4, dim_z=2)
    x = torch.randn(6, 4, generator=torch.Generator().manual_seed(7)) * 2
    exact = model.log_evidence(x)
    model.set_exact_posterior()  # the posterior's mean and marginal variances, then perturbed: a fair amortized q
    with torch.no_grad():
        model.enc_bias.add_(0.1)
        model.enc_log_scale.add_(0.05)
    torch.manual_seed(0)
    few = mc_log_likelihood(model, x, n_samples=2, chunk=2)
    many = mc_log_likelihood(model, x, n_samples=5000, chunk=333, batch_size=4)
    assert many.shape == (6,)
    assert torch.allclose(many, exact, atol=0.02), (many - exact)
    assert (exact - many).abs().mean() < (exact - few).abs().mean()
    with torch.no_grad():  # q = p(z|x) exactly (W with orthogonal columns keeps M diagonal): every weight is p(x)
        model.weight.copy_(torch.tensor([[1.0, 0.0], [0.0, 2.0], [0.0, 0.0], [0.0, 0.0]]))
    model.set_exact_posterior()
    torch.testing.assert_close(mc_log_likelihood(model, x, n_samples=7, chunk=3), model.log_evidence(x))


# ------------------------------------------------------------------------------------------ fractional
@pytest.mark.slow
def test_fractional_bound_is_tight_at_the_fractional_posterior_and_elbo_at_gamma_one():
    model = _toy(dim_x=3, dim_z=2)
    with torch.no_grad():
        model.weight.copy_(torch.tensor([[1.5, 0.0], [0.0, 0.5], [0.0, 0.0]]))
    x = torch.randn(3, 3, generator=torch.Generator().manual_seed(4))
    torch.manual_seed(0)
    terms = model.terms(x, 20)
    assert torch.equal(fractional_bound(terms.log_likelihood, terms.log_prior, terms.log_q, 1.0),
                       elbo_mc(terms.log_weights()))
    for gamma in (0.3, 0.7):
        model.set_exact_posterior(likelihood_power=gamma)
        terms = model.terms(x, 200_000)
        tight = fractional_bound(terms.log_likelihood, terms.log_prior, terms.log_q, gamma)
        assert torch.allclose(tight, model.log_evidence(x), atol=5e-3), tight - model.log_evidence(x)
        model.set_exact_posterior(likelihood_power=1.0)  # the Bayes posterior is not L_γ's optimum
        terms = model.terms(x, 200_000)
        loose = fractional_bound(terms.log_likelihood, terms.log_prior, terms.log_q, gamma)
        assert (loose < model.log_evidence(x) - 1e-2).all()


# ----------------------------------------------------------------------------------------- eq. 23
def test_minibatch_form_is_the_full_joint_at_m_equals_n_and_unbiased_for_the_elbo():
    torch.manual_seed(0)
    K, N = 5, 8
    log_prior, log_q = torch.randn(K), torch.randn(K)
    log_lik = torch.randn(K, N)
    full = minibatch_log_weights(log_prior, log_lik, log_q, N)
    torch.testing.assert_close(full, log_prior + log_lik.sum(-1) - log_q)
    singles = torch.stack([minibatch_log_weights(log_prior, log_lik[:, [n]], log_q, N) for n in range(N)])
    torch.testing.assert_close(vr_bound(singles.T, 1.0).mean(), vr_bound(full, 1.0))


# ----------------------------------------------------------------------------------------- objectives
def test_objectives_apply_their_bound_and_the_analytic_elbo_matches_the_mc_one_in_expectation():
    model = _toy()
    x = torch.randn(5, 3, generator=torch.Generator().manual_seed(9))
    for objective, fn in ((VR(alpha=0.5, n_samples=4), lambda t: vr_bound(t.log_weights(), 0.5)),
                          (IWAE(n_samples=4), lambda t: iwae_bound(t.log_weights())),
                          (VRMax(n_samples=4), lambda t: vr_max_bound(t.log_weights())),
                          (Fractional(gamma=0.5, n_samples=4),
                           lambda t: fractional_bound(t.log_likelihood, t.log_prior, t.log_q, 0.5))):
        torch.manual_seed(1)
        value, _ = objective(model, x)
        torch.manual_seed(1)
        torch.testing.assert_close(value, fn(model.terms(x, 4)))
    torch.manual_seed(2)
    analytic, parts = ELBO(n_samples=20_000)(model, x)
    torch.manual_seed(2)
    mc, _ = ELBO(n_samples=20_000, analytic=False)(model, x)
    assert torch.allclose(analytic, mc, atol=0.05) and set(parts) == {"reconstruction", "divergence"}


def test_make_objective_from_spec_values():
    assert make_objective("vr", alpha=0.5, n_samples=5) == VR(alpha=0.5, n_samples=5)
    assert make_objective("vr", alpha="-inf", n_samples=5) == VRMax(n_samples=5)
    assert make_objective("iwae", n_samples=50) == IWAE(n_samples=50)
    with pytest.raises(ConfigValueError, match="objective.name"):
        make_objective("elbow")
    with pytest.raises(ConfigValueError, match="objective.gama"):
        make_objective("fractional", gama=0.5)
    with pytest.raises(ConfigValueError, match="gamma"):
        make_objective("fractional", gamma=1.5)
    with pytest.raises(ConfigValueError, match="n_samples"):
        make_objective("iwae", n_samples=0)
