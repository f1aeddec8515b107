"""Reference fits beside the one EM loop: scikit-learn's ``GaussianMixture`` (full covariances, its own k-means
initialisation, at most ``n_iter`` EM iterations), and a one-thread context for these small problems."""

from __future__ import annotations

import contextlib
import warnings

import numpy as np

from fyexp.em.gaussian import MixtureParams

__all__ = ["sklearn_mixture", "single_threaded"]


def sklearn_mixture(X: np.ndarray, n_components: int, n_iter: int, reg_covar: float,
                    seed: int) -> tuple[MixtureParams, np.ndarray, np.ndarray]:
    """``(params, responsibilities, [total log-likelihood])`` of scikit-learn's EM on ``X`` (convergence warnings
    silenced: a fixed iteration budget is the protocol)."""
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.mixture import GaussianMixture

    model = GaussianMixture(n_components, covariance_type="full", reg_covar=reg_covar, max_iter=n_iter,
                            random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(X)
    params = MixtureParams(model.weights_, model.means_, model.covariances_)
    return params, model.predict_proba(X), np.array([model.score(X) * len(X)])


@contextlib.contextmanager
def single_threaded():
    """Run torch and BLAS on one thread: at these sizes (1,100 × 4) threads cost more than they save."""
    import torch
    from threadpoolctl import threadpool_limits

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with threadpool_limits(1):
            yield
    finally:
        torch.set_num_threads(threads)
