"""Mathematics of the EM loop (fyexp.em): Gaussian log-density and M-step, agreement with scikit-learn, the
limits of truncated EM (C′ = K: standard, C′ = 1: hard), and monotone objectives."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from scipy.stats import multivariate_normal
from sklearn.exceptions import ConvergenceWarning
from sklearn.mixture import GaussianMixture

from fyexp.em import (GaussianMixtureEM, HardEStep, MixtureParams, SparseEStep, StandardEStep, TruncatedEStep,
                      authors_torch_init, gaussian_m_step, log_gaussian_density)


@pytest.fixture(scope="module")
def blobs() -> np.ndarray:
    """300 points from three well-separated 2-D Gaussians plus a little uniform noise."""
    rng = np.random.default_rng(0)
    centres = np.array([[0.0, 0.0], [3.0, 0.5], [-1.0, 3.0]])
    X = np.concatenate([rng.normal(c, s, size=(90, 2)) for c, s in zip(centres, (0.5, 0.8, 0.6))])
    return np.concatenate([X, rng.uniform(-3, 5, size=(30, 2))])


def init_for(X: np.ndarray, k: int = 3, seed: int = 1) -> MixtureParams:
    rng = np.random.default_rng(seed)
    a = rng.uniform(0.2, 0.6, size=(k, 2, 2))
    return MixtureParams(weights=np.full(k, 1 / k), means=X[rng.choice(len(X), k, replace=False)],
                         covariances=a @ a.transpose(0, 2, 1) + 0.5 * np.eye(2))


def test_log_density_matches_scipy(blobs):
    init = init_for(blobs)
    ours = log_gaussian_density(blobs, init.means, init.covariances)
    for k in range(3):
        np.testing.assert_allclose(ours[:, k], multivariate_normal(init.means[k], init.covariances[k]).logpdf(blobs),
                                   rtol=1e-12, atol=1e-12)


def test_m_step_is_weighted_maximum_likelihood(blobs):
    resp = np.random.default_rng(2).dirichlet(np.ones(3), size=len(blobs))
    params = gaussian_m_step(blobs, resp, init_for(blobs), reg_covar=1e-3)
    np.testing.assert_allclose(params.weights, resp.mean(axis=0))
    for k in range(3):
        np.testing.assert_allclose(params.means[k], np.average(blobs, axis=0, weights=resp[:, k]))
        cov = np.cov(blobs.T, aweights=resp[:, k], bias=True) + 1e-3 * np.eye(2)
        np.testing.assert_allclose(params.covariances[k], cov, rtol=1e-12, atol=1e-14)


def test_empty_component_keeps_its_parameters(blobs):
    resp = np.zeros((len(blobs), 3))
    resp[:, 0], resp[::2, 0], resp[::2, 1] = 1.0, 0.0, 1.0
    previous = init_for(blobs)
    params = gaussian_m_step(blobs, resp, previous, reg_covar=1e-6)
    assert params.weights[2] == 0
    np.testing.assert_array_equal(params.means[2], previous.means[2])
    np.testing.assert_array_equal(params.covariances[2], previous.covariances[2])


@pytest.mark.parametrize("n_iter", [1, 25])
def test_standard_em_agrees_with_sklearn(blobs, n_iter):
    """Same initial (weights, means, covariances), same ridge, tol = 0, a fixed number of iterations."""
    init = init_for(blobs)
    ours = GaussianMixtureEM(StandardEStep(), n_iter=n_iter, reg_covar=1e-6).fit(blobs, init).params
    reference = GaussianMixture(3, covariance_type="full", reg_covar=1e-6, tol=0, max_iter=n_iter,
                                init_params="random_from_data", weights_init=init.weights, means_init=init.means,
                                precisions_init=np.linalg.inv(init.covariances), random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        reference.fit(blobs)
    np.testing.assert_allclose(ours.weights, reference.weights_, atol=1e-6)
    np.testing.assert_allclose(ours.means, reference.means_, atol=1e-6)
    np.testing.assert_allclose(ours.covariances, reference.covariances_, atol=1e-6)


def test_truncated_with_all_components_is_standard_em(blobs):
    init = init_for(blobs)
    standard = GaussianMixtureEM(StandardEStep(), n_iter=30).fit(blobs, init)
    truncated = GaussianMixtureEM(TruncatedEStep(3), n_iter=30).fit(blobs, init)
    np.testing.assert_allclose(truncated.resp, standard.resp, atol=1e-12)
    np.testing.assert_allclose(truncated.params.covariances, standard.params.covariances, atol=1e-12)
    np.testing.assert_allclose(truncated.objective, standard.objective, rtol=1e-12)


def test_truncated_with_one_component_is_hard_em(blobs):
    """Lücke Prop. 8 (no ties in continuous data)."""
    init = init_for(blobs)
    hard = GaussianMixtureEM(HardEStep(), n_iter=30).fit(blobs, init)
    truncated = GaussianMixtureEM(TruncatedEStep(1), n_iter=30).fit(blobs, init)
    np.testing.assert_array_equal(truncated.resp, hard.resp)
    np.testing.assert_allclose(truncated.params.means, hard.params.means, atol=1e-12)
    np.testing.assert_allclose(truncated.objective, hard.objective, rtol=1e-12)


@pytest.mark.parametrize("e_step", [StandardEStep(), HardEStep(), TruncatedEStep(1), TruncatedEStep(2),
                                    SparseEStep(2.0, "tsallis"), SparseEStep(1.5, "tsallis")],
                         ids=["standard", "hard", "truncated1", "truncated2", "sparse2", "sparse1.5"])
def test_objective_never_decreases(blobs, e_step):
    """Log-likelihood (standard), truncated free energy (Lücke eq. 6, Prop. 5), and the FY evidence lower bound
    of sparse EM with the eq. 15 prior update (block coordinate ascent) are monotone.  No ridge, so that the
    M-step is the exact maximiser."""
    result = GaussianMixtureEM(e_step, n_iter=60, reg_covar=0.0).fit(blobs, init_for(blobs))
    assert (np.diff(result.objective) >= -1e-9 * np.abs(result.objective[1:])).all()


def test_truncated_free_energy_is_between_hard_and_standard(blobs):
    """log max_k ≤ log Σ_{top C′} ≤ log Σ_k, at the same parameters."""
    log_density = log_gaussian_density(blobs, init_for(blobs).means, init_for(blobs).covariances)
    weights = np.array([0.2, 0.3, 0.5])
    values = [TruncatedEStep(c)(log_density, weights).objective for c in (1, 2, 3)]
    assert HardEStep()(log_density, weights).objective == pytest.approx(values[0])
    assert values[0] <= values[1] <= values[2]
    assert StandardEStep()(log_density, weights).objective == pytest.approx(values[2])


def test_sparse_at_rho_one_is_standard(blobs):
    init = init_for(blobs)
    standard = GaussianMixtureEM(StandardEStep(), n_iter=20).fit(blobs, init)
    for prior_term in ("log", "tsallis"):
        sparse = GaussianMixtureEM(SparseEStep(1.0, prior_term), n_iter=20).fit(blobs, init)
        np.testing.assert_allclose(sparse.params.means, standard.params.means, atol=1e-10)
        np.testing.assert_allclose(sparse.objective, standard.objective, rtol=1e-10)


def test_sparse_e_step_has_zeros_and_full_support_below_one(blobs):
    init = init_for(blobs)
    log_density = log_gaussian_density(blobs, init.means, init.covariances)
    assert (SparseEStep(2.0)(log_density, init.weights).resp == 0).any()
    assert (SparseEStep(0.5)(log_density, init.weights).resp > 0).all()


def test_hard_e_step_splits_ties():
    log_density = np.array([[0.0, 0.0, -1.0], [-2.0, 1.0, 1.0], [5.0, 5.0, 5.0]])
    resp = HardEStep()(log_density, np.full(3, 1 / 3)).resp
    np.testing.assert_array_equal(resp, [[0.5, 0.5, 0], [0, 0.5, 0.5], [1 / 3, 1 / 3, 1 / 3]])


def test_authors_init_draws():
    torch.manual_seed(123)
    expected_next = torch.rand(1)
    torch.manual_seed(123)
    init = authors_torch_init(0, 4, 2)
    assert torch.rand(1) == expected_next, "the global torch generator must be left as it was"
    torch.manual_seed(0)
    means = (torch.rand(4, 2) * 0.1).double().numpy()
    np.testing.assert_array_equal(init.means, means)
    assert (np.linalg.eigvalsh(init.covariances) >= 1 - 1e-6).all()
    assert not np.array_equal(authors_torch_init(0, 4, 2, skip=1).means, init.means)


def test_standard_e_step_is_the_closed_form_posterior_and_log_evidence():
    """q_nk = π_k N_nk / Σ_j π_j N_nj and the objective Σ_n log Σ_k π_k N_nk (scipy's logsumexp underneath), against
    the plain formula in float64 where it does not overflow, and finite where it would (scores of −1000)."""
    rng = np.random.default_rng(3)
    log_density, weights = rng.normal(size=(7, 4)) * 3, np.array([0.1, 0.2, 0.3, 0.4])
    joint = np.exp(log_density) * weights
    out = StandardEStep()(log_density, weights)
    assert np.allclose(out.resp, joint / joint.sum(1, keepdims=True), rtol=1e-12, atol=0)
    assert out.objective == pytest.approx(np.log(joint.sum(1)).sum(), rel=1e-12)
    shifted = StandardEStep()(log_density - 1000.0, weights)   # exp underflows to 0: the plain formula gives -inf
    assert np.allclose(shifted.resp, out.resp, rtol=1e-12) and shifted.objective == pytest.approx(out.objective - 7000)
    with_zero = StandardEStep()(log_density, np.array([0.0, 0.2, 0.3, 0.5]))  # a component of weight 0 (log 0 = -inf)
    assert (with_zero.resp[:, 0] == 0).all() and np.isfinite(with_zero.objective)
