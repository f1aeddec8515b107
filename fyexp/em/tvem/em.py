r"""The outer loop of Lücke 2019, Alg. 1 — partial TV-EM (eq. 37/39) for binary sparse coding — and exact EM.

One iteration at :math:`(\mathcal{K}^{\rm old}, \Theta^{\rm old})`:

1. TV-E-step: :class:`~fyexp.em.tvem.search.StateSearch` changes :math:`\mathcal{K}` so that the free energy (18)
   :math:`\mathcal{F}(\mathcal{K}, \Theta^{\rm old})` does not decrease;
2. TV-M-step: :math:`\Theta^{\rm new} = \arg\max Q(\Theta)` with the truncated expectations (eq. 4) under
   :math:`q^{(n)}(\vec s; \mathcal{K}^{\rm new}, \Theta^{\rm old})` (:func:`fyexp.em.bsc.m_step`).

Prop. 4–5 give :math:`\mathcal{F}(\mathcal{K}^{\rm new}, \Theta^{\rm new}) \ge \mathcal{F}(\mathcal{K}^{\rm new},
\Theta^{\rm old}, \Theta^{\rm new}) \ge \mathcal{F}(\mathcal{K}^{\rm new}, \Theta^{\rm old}) \ge
\mathcal{F}(\mathcal{K}^{\rm old}, \Theta^{\rm old})`: the free energy never decreases, after either half-step.

Without a search (``search=None``) and with the shared set of all :math:`2^H` states, the same loop is exact EM and
the free energy is the log-likelihood (2).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from fyexp.em.bsc import BSCParams, all_states, log_joint, m_step
from fyexp.em.tvem.search import StateSearch, init_states
from fyexp.em.tvem.truncation import free_energy, truncated_posterior

__all__ = ["TVEMResult", "TVEM", "log_likelihood"]


@dataclass(frozen=True)
class TVEMResult:
    """Outcome of :meth:`TVEM.fit`.

    Attributes
    ----------
    params : BSCParams
        After the last M-step.
    states : ndarray
        The final :math:`\\mathcal{K}`: (N, |K|, H), or (2^H, H) shared by every point for exact EM.
    log_joint : ndarray
        Log-joints of ``states`` under ``params``, (N, |K|) or (N, 2^H).
    free_energy : ndarray, shape (n_iter + 1,)
        Eq. 18 at :math:`(\\mathcal{K}_t, \\Theta_t)`: before the first iteration, then after each M-step.
    free_energy_estep : ndarray, shape (n_iter,)
        Eq. 18 at :math:`(\\mathcal{K}_{t}, \\Theta_{t-1})`, after each E-step (equal to the previous entry of
        ``free_energy`` for exact EM).
    accepted : ndarray, shape (n_iter,)
        States replaced in each E-step, summed over data points.
    """

    params: BSCParams
    states: np.ndarray
    log_joint: np.ndarray
    free_energy: np.ndarray
    free_energy_estep: np.ndarray
    accepted: np.ndarray

    @property
    def posterior(self) -> np.ndarray:
        """The truncated posterior :math:`q^{(n)}` (eq. 3) on ``states``, rows on the simplex."""
        return truncated_posterior(self.log_joint)[0]


def log_likelihood(Y: np.ndarray, params: BSCParams) -> float:
    r"""Exact :math:`\mathcal{L}(\Theta) = \sum_n \log \sum_{\vec s} p(\vec s, \vec y^{(n)} \mid \Theta)` (eq. 2),
    summing over all :math:`2^H` states (small :math:`H`)."""
    return free_energy(log_joint(Y, all_states(params.n_latents), params))


class TVEM:
    r"""Partial TV-EM (Alg. 1) with :math:`|\mathcal{K}^{(n)}|` = ``n_states`` for BSC, or exact EM (``n_states=None``).

    Parameters
    ----------
    n_states : int or None
        :math:`|\mathcal{K}|`; ``None`` for exact EM over the :math:`2^H` states.
    search : StateSearch
        The TV-E-step (ignored by exact EM).
    n_iter : int
        Number of EM iterations.
    """

    def __init__(self, n_states: int | None, search: StateSearch | None = None, n_iter: int = 100):
        if n_states is not None and n_states < 1:
            raise ValueError(f"n_states must be >= 1 or None (exact), got {n_states!r}")
        if n_iter < 1:
            raise ValueError(f"n_iter must be >= 1, got {n_iter!r}")
        self.n_states, self.search, self.n_iter = n_states, search or StateSearch(), n_iter

    @property
    def exact(self) -> bool:
        return self.n_states is None

    def initial_states(self, n_points: int, n_latents: int, rng: np.random.Generator) -> np.ndarray:
        """:math:`\\mathcal{K}_0`: all states (exact) or ``n_states`` distinct uniform states per data point."""
        if self.exact:
            return all_states(n_latents)
        return init_states(n_points, n_latents, self.n_states, rng)

    def fit(self, Y: np.ndarray, init: BSCParams, rng: np.random.Generator, states: np.ndarray | None = None,
            callback: Callable[[int], None] | None = None) -> TVEMResult:
        """Run ``n_iter`` iterations from ``init`` on ``Y`` (N, D); ``states`` overrides :math:`\\mathcal{K}_0`."""
        Y = np.asarray(Y, dtype=np.float64)
        params = init
        states = self.initial_states(Y.shape[0], init.n_latents, rng) if states is None else states
        joint = log_joint(Y, states, params)
        q, log_z = truncated_posterior(joint)
        energies, energies_e, accepted = [float(log_z.sum())], [], []
        for iteration in range(self.n_iter):
            replaced = 0
            if not self.exact:
                states, joint, replaced = self.search(states, joint, lambda s, p=params: log_joint(Y, s, p),
                                                      params.pi, rng)
                q, log_z = truncated_posterior(joint)
            accepted.append(int(np.sum(replaced)))
            energies_e.append(float(log_z.sum()))
            params = m_step(Y, q, states, params)
            joint = log_joint(Y, states, params)
            q, log_z = truncated_posterior(joint)
            energies.append(float(log_z.sum()))
            if callback is not None:
                callback(iteration)
        return TVEMResult(params=params, states=states, log_joint=joint, free_energy=np.asarray(energies),
                          free_energy_estep=np.asarray(energies_e), accepted=np.asarray(accepted))
