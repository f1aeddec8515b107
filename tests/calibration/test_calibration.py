"""Mathematics of the fractional-posterior calibration study (fyexp.calibration): closed forms, limits,
fixed points, and Monte Carlo estimators against exact answers.  Tiny synthetic data only."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import integrate, optimize
from scipy.special import logsumexp
from scipy.stats import multivariate_normal, norm

from fyexp.calibration import cavi, importance, intervals, strategies
from fyexp.calibration.data import MixtureSetting, simulate
from fyexp.calibration.gaussian import (kl_to_centred_normal, normal_logpdf, renyi_to_centred_normal,
                                        tempered_likelihood_term)

PRIOR_VAR = 9.0


def _small_data(B=4, n=25, means=(-1.5, 1.5), seed=0):
    return simulate(MixtureSetting(n, means, (-1.0, 1.0)), B, seed).x


def _textbook_elbo(x, m, s2, phi):
    """ELBO of Blei et al. (2017, eq. 21) for one data set: E log p(x|c,u) + E log p(c) − E log q(c) − KL(q(u)||p(u))."""
    K = len(m)
    expected_loglik = -0.5 * (np.log(2 * np.pi) + (x[None, :] - m[:, None]) ** 2 + s2[:, None])   # (K, n)
    entropy_terms = np.where(phi > 0, phi * np.log(np.where(phi > 0, phi, 1.0)), 0.0)
    return ((phi * expected_loglik).sum() - np.log(K) * phi.sum() - entropy_terms.sum()
            - kl_to_centred_normal(m, s2, PRIOR_VAR).sum())


# --- Gaussian identities --------------------------------------------------------------------------------

@pytest.mark.parametrize("gamma", [0.1, 0.5, 0.93])
def test_tempered_likelihood_term_matches_quadrature(gamma):
    x, m, s2, w = 0.7, -0.4, 0.3, 0.6
    power = 1.0 - gamma
    integral, _ = integrate.quad(lambda u: norm.pdf(u, m, np.sqrt(s2)) * norm.pdf(x, u, 1.0) ** (power * w),
                                 -30, 30, epsabs=1e-13)
    assert tempered_likelihood_term(x, m, s2, w, power) == pytest.approx(np.log(integral) / power, rel=1e-9)


@pytest.mark.parametrize("alpha", [1.25, 2.0, 10.0])
def test_renyi_divergence_matches_quadrature(alpha):
    m, s2 = 0.8, 0.5
    def integrand(u):
        return np.exp(alpha * norm.logpdf(u, m, np.sqrt(s2)) + (1 - alpha) * norm.logpdf(u, 0, np.sqrt(PRIOR_VAR)))
    integral, _ = integrate.quad(integrand, -12, 12, epsabs=1e-14, limit=200)
    assert renyi_to_centred_normal(m, s2, PRIOR_VAR, alpha) == pytest.approx(np.log(integral) / (alpha - 1), rel=1e-9)


def test_renyi_divergence_tends_to_kl():
    m, s2 = np.array([0.3, -2.0]), np.array([0.01, 2.0])
    for alpha in (1 + 1e-6, 1 + 1e-9):
        np.testing.assert_allclose(renyi_to_centred_normal(m, s2, PRIOR_VAR, alpha),
                                   kl_to_centred_normal(m, s2, PRIOR_VAR), rtol=1e-5)
    np.testing.assert_allclose(renyi_to_centred_normal(m, s2, PRIOR_VAR, 1.0), kl_to_centred_normal(m, s2, PRIOR_VAR))


# --- CAVI ----------------------------------------------------------------------------------------------

def test_gamma_one_sweep_is_blei_cavi():
    """At γ = 1 a sweep is Blei et al.'s CAVI: φ ∝ exp(E[u_k] x_i − E[u_k²]/2), then conjugate q(u_k)."""
    x = _small_data()
    post = cavi.initial_posterior(x, (-0.5, 0.7), 2.0)
    post = cavi.Posterior(post.m + [0.3, -0.2], post.s2 * [1.0, 0.5], post.phi, post.log_phi)
    step = cavi.cavi_step(x, post, np.ones(len(x)), PRIOR_VAR)
    logits = x[:, None, :] * post.m[:, :, None] - 0.5 * (post.m ** 2 + post.s2)[:, :, None]
    phi = np.exp(logits - logsumexp(logits, axis=1, keepdims=True))
    s2 = 1.0 / (1.0 / PRIOR_VAR + phi.sum(axis=2))
    m = (phi * x[:, None, :]).sum(axis=2) * s2
    np.testing.assert_allclose(step.phi, phi, rtol=1e-12)
    np.testing.assert_allclose(step.s2, s2, rtol=1e-12)
    np.testing.assert_allclose(step.m, m, rtol=1e-12)


def test_bound_at_gamma_one_is_the_elbo_and_its_limit():
    x = _small_data(B=3)
    post = cavi.fit(x, 1.0, prior_var=PRIOR_VAR, m_init=(-1.0, 1.0), s2_init=5.0, keep_phi=True)
    posterior = cavi.Posterior(post.m, post.s2, post.phi, cavi.safe_log(post.phi))
    elbo = cavi.bound(x, posterior, np.ones(3), PRIOR_VAR)
    for b in range(3):
        assert elbo[b] == pytest.approx(_textbook_elbo(x[b], post.m[b], post.s2[b], post.phi[b]), rel=1e-12)
    near_one = cavi.bound(x, posterior, np.full(3, 1 - 1e-7), PRIOR_VAR)
    np.testing.assert_allclose(near_one, elbo, rtol=0, atol=1e-4)


def test_bound_conventions_differ_by_half_log_variance_ratio():
    x = _small_data(B=2)
    post = cavi.initial_posterior(x, (-1.0, 1.0), 3.0)
    gamma = np.array([0.3, 1.0])
    difference = cavi.bound(x, post, gamma, PRIOR_VAR, "eq7") - cavi.bound(x, post, gamma, PRIOR_VAR, "authors")
    np.testing.assert_allclose(difference, 0.5 * np.log(PRIOR_VAR / post.s2).sum(axis=1))


def _half_sweeps(x, gamma, setting, n_sweeps):
    """Bound changes of the assignment half-sweep (φ) and of the component half-sweep (q(u)), each (sweeps, B)."""
    g = np.full(len(x), gamma)
    post = cavi.initial_posterior(x, setting.init_means, setting.init_var)
    phi_rises, q_rises = [], []
    for _ in range(n_sweeps):
        before = cavi.bound(x, post, g, PRIOR_VAR)
        per_point = cavi.leave_fraction_in(x, post, g) if gamma < 1 else (post.m, post.s2)
        log_phi = cavi.log_responsibilities(x, *per_point)
        post = cavi.Posterior(post.m, post.s2, np.exp(log_phi), log_phi)
        middle = cavi.bound(x, post, g, PRIOR_VAR)
        post = cavi.Posterior(*cavi.component_update(x, post.phi, g, PRIOR_VAR), post.phi, log_phi)
        with np.errstate(invalid="ignore"):    # the initial q(u) (variance n/K) can have D_(1/γ) = ∞
            phi_rises.append(middle - before)
        q_rises.append(cavi.bound(x, post, g, PRIOR_VAR) - middle)
    return np.array(phi_rises), np.array(q_rises)


HARD = [MixtureSetting(30, (-2.0, 2.0), (-1.0, 1.0)), MixtureSetting(200, (-2.0, -0.5, 0.5, 2.0), (-1.0, -0.25, 0.25, 1.0))]


@pytest.mark.parametrize("setting", HARD, ids=["n30", "K4"])
def test_elbo_sweeps_never_decrease_the_bound(setting):
    """γ = 1: both half-sweeps are exact coordinate ascent on the ELBO."""
    x = simulate(setting, 40, 23).x
    phi_rises, q_rises = _half_sweeps(x, 1.0, setting, 40)
    assert min(phi_rises[1:].min(), q_rises.min()) >= -1e-9


@pytest.mark.parametrize("gamma", [0.1, 0.3, 0.7])
@pytest.mark.parametrize("setting", HARD, ids=["n30", "K4"])
def test_fractional_sweeps_and_where_they_may_lower_the_bound(gamma, setting):
    """γ < 1: the assignment update of §3.1.3 never lowers eq. (7); the component update
    q(u_k) ∝ p(u_k) Π_i p(x_i|u_k)^{γφ_ik} is the optimum of the unfactorized bound, not of eq. (7) (whose data
    term is a sum over points of separate log-integrals), so it can lower eq. (7) slightly — by at most
    ~1e-2 nats here.  The fitted bound still rises overall."""
    x = simulate(setting, 40, 23).x
    phi_rises, q_rises = _half_sweeps(x, gamma, setting, 40)
    assert phi_rises[1:].min() >= -1e-9
    assert q_rises.min() >= -0.02
    assert (phi_rises + q_rises)[1:].sum(axis=0).min() > 0


def test_single_component_fit_is_the_exact_fractional_posterior():
    """K = 1: q(u) ∝ p(u) p(x|u)^γ, precision 1/σ² + γn and mean γΣx·s² (§3.1.1 for a normal mean)."""
    x = _small_data(B=3, n=12, means=(0.8,))
    for gamma in (0.2, 0.7, 1.0):
        fitted = cavi.fit(x, gamma, prior_var=PRIOR_VAR, m_init=(0.0,), s2_init=1.0)
        s2 = 1.0 / (1.0 / PRIOR_VAR + gamma * x.shape[1])
        np.testing.assert_allclose(fitted.s2[:, 0], s2, rtol=1e-12)
        np.testing.assert_allclose(fitted.m[:, 0], gamma * x.sum(axis=1) * s2, rtol=1e-10)


def _exact_conjugate_bound(params, x, gamma):
    """L_γ of eq. (1) for x_i ~ N(u, 1), u ~ N(0, σ²), q = N(m, s²), in closed form (no mean-field step)."""
    m, log_s2 = params
    s2, n, beta = np.exp(log_s2), len(x), 1.0 - gamma
    xbar, sxx = x.mean(), ((x - x.mean()) ** 2).sum()
    log_zd = (-0.5 * n * beta * np.log(2 * np.pi) - 0.5 * beta * sxx - 0.5 * np.log1p(beta * n * s2)
              - beta * n * (xbar - m) ** 2 / (2 * (1 + beta * n * s2)))
    return log_zd / beta - renyi_to_centred_normal(m, s2, PRIOR_VAR, 1.0 / gamma)


@pytest.mark.parametrize("gamma", [0.25, 0.6, 0.9])
def test_exponential_family_optimum_and_tightness(gamma):
    """§3.1.1 and §2.1: the maximizer of L_γ has natural parameters μ = ν + γΣt(x_i), λ = κ + γn, and L_γ* = log p(x)."""
    x = np.random.default_rng(1).normal(1.3, 1.0, 15)
    best = optimize.minimize(lambda p: -_exact_conjugate_bound(p, x, gamma), x0=[0.0, 0.0], method="Nelder-Mead",
                             options={"xatol": 1e-10, "fatol": 1e-13, "maxiter": 4000})
    m, s2 = best.x[0], np.exp(best.x[1])
    assert 1.0 / s2 == pytest.approx(1.0 / PRIOR_VAR + gamma * len(x), rel=1e-5)      # precision: κ + γn
    assert m / s2 == pytest.approx(gamma * x.sum(), rel=1e-5)                          # mean × precision: ν + γΣx
    evidence = multivariate_normal(np.zeros(len(x)), np.eye(len(x)) + PRIOR_VAR).logpdf(x)
    assert -best.fun == pytest.approx(evidence, abs=1e-7)


def test_vectorized_fit_equals_loop_over_rows():
    x = _small_data(B=7, n=30, means=(-0.6, 0.9), seed=5)
    gamma = np.array([0.1, 0.35, 0.5, 0.77, 0.9, 1.0, 0.6])
    batched = cavi.fit(x, gamma, prior_var=PRIOR_VAR, m_init=(-1.0, 1.0), s2_init=15.0, block_elements=2 * 30 * 3)
    for b in range(len(x)):
        alone = cavi.fit(x[b:b + 1], gamma[b], prior_var=PRIOR_VAR, m_init=(-1.0, 1.0), s2_init=15.0)
        assert alone.n_iter[0] == batched.n_iter[b]
        np.testing.assert_allclose(alone.m[0], batched.m[b], rtol=1e-13)
        np.testing.assert_allclose(alone.s2[0], batched.s2[b], rtol=1e-13)
        np.testing.assert_allclose(alone.bound[0], batched.bound[b], rtol=1e-13)


def test_stopping_rule_and_extra_sweeps():
    x = _small_data(B=3)
    plain = cavi.fit(x, 0.5, prior_var=PRIOR_VAR, m_init=(-1.0, 1.0), s2_init=5.0, min_iter=3)
    later = cavi.fit(x, 0.5, prior_var=PRIOR_VAR, m_init=(-1.0, 1.0), s2_init=5.0, min_iter=3, extra_sweeps=2)
    assert plain.converged.all() and (plain.n_iter >= 3).all()
    np.testing.assert_array_equal(later.n_iter, plain.n_iter + 2)
    capped = cavi.fit(x, 0.5, prior_var=PRIOR_VAR, m_init=(-1.0, 1.0), s2_init=5.0, tol=-1.0, max_iter=4)
    assert not capped.converged.any() and (capped.n_iter == 4).all()


# --- intervals and strategies --------------------------------------------------------------------------

def test_exact_posterior_intervals_have_nominal_bayesian_coverage():
    """Truth drawn from the prior, exact conjugate posterior: coverage is 1 − α in expectation, length 2z·s."""
    rng = np.random.default_rng(2)
    R, n, alpha = 40000, 5, 0.1
    truth = rng.normal(0.0, np.sqrt(PRIOR_VAR), R)
    x = truth[:, None] + rng.standard_normal((R, n))
    s2 = np.full((R, 1), 1.0 / (1.0 / PRIOR_VAR + n))
    m = x.sum(axis=1, keepdims=True) * s2
    hits = intervals.covers(m, s2, truth[:, None], alpha)
    se = intervals.coverage_standard_error(1 - alpha, R)
    assert abs(hits.mean() - (1 - alpha)) < 4 * se
    np.testing.assert_allclose(intervals.interval_lengths(s2, alpha), 2 * norm.ppf(1 - alpha / 2) * np.sqrt(s2))


def test_calibration_sorts_components_and_counts_hits():
    s2 = np.full((3, 2), 0.25)                     # half-width z·0.5 ≈ 0.98
    m = np.array([[2.0, -2.0], [-2.5, 2.0], [-2.0, 4.0]])
    kappa, ell = intervals.calibration(m, s2, (-2.0, 2.0), 0.05)
    np.testing.assert_allclose(kappa, [1.0, 2 / 3])
    np.testing.assert_allclose(ell, 2 * 1.959963984540054 * 0.5)
    assert strategies.ideal_length(400, 2, 0.05) == pytest.approx(0.2771808, abs=1e-7)


def test_regressions_recover_linear_relations_and_clip():
    gammas = np.linspace(0.1, 1.0, 10)
    lengths = np.stack([0.5 - 0.3 * gammas, 0.6 - 0.3 * gammas], axis=-1)[:, None, :]   # (G, 1, K)
    target = 0.5 - 0.3 * 0.42
    # component 1 gives exactly 0.42; component 2 gives 0.42 + 1/3, averaged
    assert strategies.gamma_from_lengths(gammas, lengths, target)[0] == pytest.approx(0.42 + 1 / 6)
    assert strategies.gamma_from_lengths(gammas, lengths, 5.0)[0] == 0.0
    precision = 3.0 + 40.0 * gammas                        # ℓ⁻² linear in γ: R_ℓ⁻² is exact
    ell = (precision ** -0.5)[:, None, None]
    assert strategies.gamma_from_lengths(gammas, ell, (3.0 + 40 * 0.63) ** -0.5, inverse_square=True)[0] == pytest.approx(0.63)
    coverage = np.stack([1.2 - 0.4 * gammas, 1.1 - 0.3 * gammas], axis=-1)
    expected = np.mean([(1.2 - 0.95) / 0.4, (1.1 - 0.95) / 0.3])
    assert strategies.gamma_from_coverage(gammas, coverage, 0.95) == pytest.approx(expected)
    np.testing.assert_allclose(strategies.interpolated_precision(PRIOR_VAR, 0.01, np.array([0.0, 1.0])),
                               [1 / PRIOR_VAR, 100.0])


# --- importance sampling ---------------------------------------------------------------------------------

def _exact_gmm_log_evidence(x, K):
    """log p(x) by summing over all K^n assignments; given c each component's points are jointly normal."""
    terms = []
    for c in itertools.product(range(K), repeat=len(x)):
        c = np.array(c)
        log_p = -len(x) * np.log(K)
        for k in range(K):
            pts = x[c == k]
            if len(pts):
                log_p += multivariate_normal(np.zeros(len(pts)), np.eye(len(pts)) + PRIOR_VAR).logpdf(pts)
        terms.append(log_p)
    return logsumexp(terms)


def test_importance_sampling_matches_exact_mixture_evidence():
    """A label-symmetric, broad proposal: the estimate converges to the exact log-evidence (within 5 SE).

    (A fitted mean-field q sits in one of the K! label-permuted modes; for separated components its estimate
    is then about log K! below the evidence, which the next test checks.)"""
    x = np.array([[-2.1, -1.4, 0.2, 1.7, 2.5, -0.3, 1.1]])
    exact = _exact_gmm_log_evidence(x[0], 2)
    S = 200_000
    log_w = importance.log_weights(x, np.zeros((1, 2)), np.full((1, 2), 4.0), np.full((1, 2, 7), 0.5), S,
                                   np.random.default_rng(0), PRIOR_VAR, block_elements=2 ** 18)
    est = importance.summarize(log_w)
    assert abs(est.log_evidence[0] - exact) < 5 * est.cv[0] / np.sqrt(S)


def test_importance_sampling_from_one_mode_misses_the_label_swapped_mass():
    x = np.array([[-3.1, -2.4, -3.5, 2.7, 3.5, 2.9]])
    exact = _exact_gmm_log_evidence(x[0], 2)
    fitted = cavi.fit(x, 1.0, prior_var=PRIOR_VAR, m_init=(-1.0, 1.0), s2_init=3.0, keep_phi=True)
    log_w = importance.log_weights(x, fitted.m, fitted.s2, fitted.phi, 100_000, np.random.default_rng(1), PRIOR_VAR)
    assert importance.summarize(log_w).log_evidence[0] == pytest.approx(exact - np.log(2), abs=0.02)


def test_importance_weights_are_constant_for_the_exact_posterior():
    """K = 1 and q = the exact posterior: every weight equals the evidence (zero variance)."""
    rng = np.random.default_rng(4)
    x = rng.normal(0.5, 1.0, (2, 9))
    s2 = np.full((2, 1), 1.0 / (1.0 / PRIOR_VAR + 9))
    m = x.sum(axis=1, keepdims=True) * s2
    log_w = importance.log_weights(x, m, s2, np.ones((2, 1, 9)), 50, rng, PRIOR_VAR)
    evidence = [multivariate_normal(np.zeros(9), np.eye(9) + PRIOR_VAR).logpdf(row) for row in x]
    np.testing.assert_allclose(log_w, np.repeat(np.array(evidence)[:, None], 50, axis=1), atol=1e-9)
    est = importance.summarize(log_w)
    np.testing.assert_allclose(est.log_evidence, evidence, atol=1e-9)
    np.testing.assert_allclose(est.cv, 0.0, atol=1e-6)


def test_importance_weight_formula_for_one_draw():
    """A block with one sample and K = 2 reproduces log p(x, u, c) − log q(u, c) term by term."""
    x = np.array([[0.3, -1.2, 2.0]])
    m, s2 = np.array([[-1.0, 1.5]]), np.array([[0.2, 0.4]])
    phi = np.array([[[0.7, 0.1, 0.4], [0.3, 0.9, 0.6]]])
    rng = np.random.default_rng(9)
    log_w = importance.log_weights(x, m, s2, phi, 1, np.random.default_rng(9), PRIOR_VAR)[0, 0]
    u = m[0] + np.sqrt(s2[0]) * rng.standard_normal((1, 1, 2))[0, 0]
    c = (rng.random((1, 1, 1, 3))[0, 0, 0] >= phi[0, 0]).astype(int)
    expected = (normal_logpdf(x[0], u[c], 1.0).sum() + 3 * np.log(0.5) - np.log(phi[0, c, np.arange(3)]).sum()
                + (normal_logpdf(u, 0.0, PRIOR_VAR) - normal_logpdf(u, m[0], s2[0])).sum())
    assert log_w == pytest.approx(expected, rel=1e-12)


def test_simulation_shares_one_assignment_vector_and_nests():
    setting = MixtureSetting(50, (-2.0, 2.0), (-1.0, 1.0))
    small, large = simulate(setting, 3, 23), simulate(setting, 10, 23)
    np.testing.assert_array_equal(small.assignments, large.assignments)
    np.testing.assert_array_equal(small.x, large.x[:3])
