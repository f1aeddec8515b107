r"""Truncated posteriors (Lücke 2019, eq. 3–4) and the truncated free energy (eq. 6/18), shared by the top-C′ E-step
of the Gaussian mixture (:class:`fyexp.em.TruncatedEStep`, Alg. 2) and the multiple-cause TV-EM of Alg. 1.

Both work on an array of log-joints :math:`\log p(\vec s, \vec y^{(n)} \mid \Theta)`, one row per data point and
one column per state of :math:`\mathcal{K}^{(n)}`; a state outside :math:`\mathcal{K}^{(n)}` is a column at
:math:`-\infty`.
"""

from __future__ import annotations

import numpy as np

__all__ = ["top_indices", "keep_top", "truncated_posterior", "free_energy"]


def top_indices(scores: np.ndarray, n_keep: int) -> np.ndarray:
    r"""Column indices of the ``n_keep`` largest entries of each row of ``scores`` (N, M), shape (N, n_keep), in no
    particular order (a partial sort, Lücke §6.1: "efficient partial sorting")."""
    n_columns = scores.shape[1]
    if n_keep >= n_columns:
        return np.broadcast_to(np.arange(n_columns), scores.shape).copy()
    return np.argpartition(scores, n_columns - n_keep, axis=1)[:, n_columns - n_keep:]


def keep_top(log_joint: np.ndarray, n_keep: int) -> np.ndarray:
    r"""``log_joint`` with every entry outside the ``n_keep`` largest of its row set to :math:`-\infty`: the
    optimal :math:`\mathcal{K}^{(n)}` of size ``n_keep`` among the columns (Lücke Prop. 7, Fig. 1)."""
    n_columns = log_joint.shape[1]
    if n_keep >= n_columns:
        return log_joint
    dropped = np.argpartition(log_joint, n_columns - n_keep, axis=1)[:, : n_columns - n_keep]
    kept = log_joint.copy()
    np.put_along_axis(kept, dropped, -np.inf, axis=1)
    return kept


def truncated_posterior(log_joint: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r"""The truncated posterior (eq. 3) and the per-point log-normaliser.

    .. math::

        q^{(n)}(\vec s) = \frac{p(\vec s, \vec y^{(n)})}{\sum_{\vec s' \in \mathcal{K}^{(n)}} p(\vec s', \vec y^{(n)})},
        \qquad \log Z^{(n)} = \log \sum_{\vec s \in \mathcal{K}^{(n)}} p(\vec s, \vec y^{(n)}).

    Parameters
    ----------
    log_joint : ndarray, shape (N, K)
        Log-joints of the states of each :math:`\mathcal{K}^{(n)}` (:math:`-\infty` for states left out); every row
        needs one finite entry.

    Returns
    -------
    q : ndarray, shape (N, K)
        Rows on the simplex, exactly 0 where ``log_joint`` is :math:`-\infty`.
    log_z : ndarray, shape (N,)
    """
    top = log_joint.max(axis=1, keepdims=True)
    q = np.exp(log_joint - top)
    total = q.sum(axis=1, keepdims=True)
    q /= total
    return q, top[:, 0] + np.log(total[:, 0])


def free_energy(log_joint: np.ndarray) -> float:
    r"""The truncated free energy, eq. 18: :math:`\mathcal{F}(\mathcal{K}, \Theta) = \sum_n \log
    \sum_{\vec s \in \mathcal{K}^{(n)}} p(\vec s, \vec y^{(n)} \mid \Theta)` (the log-likelihood when every
    :math:`\mathcal{K}^{(n)}` holds all states)."""
    return float(truncated_posterior(log_joint)[1].sum())
