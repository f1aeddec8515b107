r"""The TV-E-step of Lücke 2019, Alg. 1 (§6.1): variational states, new states suggested by sampling from the prior
and by bit-flip variation of the current states, accepted by Proposition 6.

For each data point the set :math:`\mathcal{K}^{(n)}` holds :math:`|\mathcal{K}|` distinct binary states, stored as
one array ``states`` (N, |K|, H) with their log-joints ``log_joint`` (N, |K|).  One search step

1. suggests :math:`\tilde{\mathcal{K}}^{(n)}`: ``n_prior`` states drawn from :math:`p(\vec s \mid \Theta)` and
   ``n_bitflips`` states made by flipping one uniformly chosen bit of a uniformly chosen state of
   :math:`\mathcal{K}^{(n)}` (§6.1, "Blind search" — random variations of the old states — and "Combination with
   sampling" — samples from the prior);
2. keeps the :math:`|\mathcal{K}|` states of largest joint among :math:`\mathcal{K}^{(n)} \cup
   \tilde{\mathcal{K}}^{(n)}` (duplicates removed).  By Prop. 6 this is what repeated single replacements — "a new
   state replaces the state of lowest joint iff its joint is higher" — converge to, done "in a bunch" with a partial
   sort as §6.1 suggests; the free energy (18) at fixed :math:`\Theta` never decreases.

Everything is vectorised over data points and states; states are compared through integer codes
:math:`\sum_h s_h 2^h`, so :math:`H \le 62`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from fyexp.em.tvem.truncation import top_indices

__all__ = ["MAX_LATENTS", "state_codes", "init_states", "propose", "merge", "StateSearch"]

MAX_LATENTS = 62


def state_codes(states: np.ndarray) -> np.ndarray:
    r"""Integer code :math:`\sum_h s_h 2^h` of each state, shape ``states.shape[:-1]``, int64."""
    n_latents = states.shape[-1]
    if n_latents > MAX_LATENTS:
        raise ValueError(f"at most {MAX_LATENTS} latents can be coded, got {n_latents}")
    return states.astype(np.int64) @ (np.int64(1) << np.arange(n_latents, dtype=np.int64))


def _decode(codes: np.ndarray, n_latents: int) -> np.ndarray:
    return ((codes[..., None] >> np.arange(n_latents)) & 1).astype(np.uint8)


def init_states(n_points: int, n_latents: int, n_states: int, rng: np.random.Generator) -> np.ndarray:
    r""":math:`\mathcal{K}^{(n)}_0`: ``n_states`` distinct states per data point, uniform over :math:`\{0,1\}^H`
    (without replacement), shape (N, |K|, H), uint8.

    With :math:`|\mathcal{K}| = 2^H` every row holds every state (a random order): TV-EM is then exact EM.
    """
    n_all = 2.0 ** n_latents
    if not 1 <= n_states <= n_all:
        raise ValueError(f"n_states must be in [1, 2^H = {int(n_all)}], got {n_states}")
    if 2 * n_states >= n_all:  # dense: a random permutation of all codes per row
        keys = rng.random((n_points, 2 ** n_latents))
        return _decode(top_indices(keys, n_states).astype(np.int64), n_latents)
    codes = rng.integers(0, 2 ** n_latents, size=(n_points, n_states), dtype=np.int64)
    while True:  # redraw repeated codes (rare when |K| << 2^H); loops over attempts, not over points
        order = np.argsort(codes, axis=1, kind="stable")
        ranked = np.take_along_axis(codes, order, axis=1)
        repeated = np.zeros_like(codes, dtype=bool)
        np.put_along_axis(repeated, order[:, 1:], ranked[:, 1:] == ranked[:, :-1], axis=1)
        if not repeated.any():
            return _decode(codes, n_latents)
        codes[repeated] = rng.integers(0, 2 ** n_latents, size=int(repeated.sum()), dtype=np.int64)


def propose(states: np.ndarray, pi: float, n_prior: int, n_bitflips: int, rng: np.random.Generator) -> np.ndarray:
    r"""Suggested states :math:`\tilde{\mathcal{K}}^{(n)}`, shape (N, n_prior + n_bitflips, H): prior samples
    :math:`s_h \sim \mathrm{Bernoulli}(\pi)`, then one-bit flips of uniformly drawn parents in :math:`\mathcal{K}^{(n)}`."""
    n_points, n_states, n_latents = states.shape
    prior = (rng.random((n_points, n_prior, n_latents)) < pi).astype(np.uint8)
    parent = rng.integers(0, n_states, size=(n_points, n_bitflips))
    parents = np.take_along_axis(states, parent[:, :, None], axis=1)
    bit = rng.integers(0, n_latents, size=(n_points, n_bitflips))
    flipped = parents ^ (np.arange(n_latents) == bit[:, :, None]).astype(np.uint8)
    return np.concatenate([prior, flipped], axis=1)


def merge(states: np.ndarray, log_joint: np.ndarray, proposals: np.ndarray,
          proposal_log_joint: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""Prop. 6 in a bunch: the :math:`|\mathcal{K}|` distinct states of largest joint among old and suggested.

    Parameters
    ----------
    states : ndarray, shape (N, K, H)
        :math:`\mathcal{K}^{(n)}`, distinct states in each row.
    log_joint : ndarray, shape (N, K)
    proposals : ndarray, shape (N, P, H)
    proposal_log_joint : ndarray, shape (N, P)

    Returns
    -------
    states, log_joint : the new sets, shapes (N, K, H) and (N, K)
    accepted : ndarray, shape (N,)
        How many states of :math:`\mathcal{K}^{(n)}` were replaced.

    A suggested state already in :math:`\mathcal{K}^{(n)}`, or suggested twice, counts once (its first copy, the old
    state where there is one): the sets stay sets, so eq. 18 never counts a state twice.  Among equal joints an old
    state and a new one may trade places (the free energy is the same either way).
    """
    n_states = states.shape[1]
    union = np.concatenate([states, proposals], axis=1)
    scores = np.concatenate([log_joint, proposal_log_joint], axis=1)
    codes = state_codes(union)
    order = np.argsort(codes, axis=1, kind="stable")  # old states come first among equal codes
    ranked = np.take_along_axis(codes, order, axis=1)
    repeated = np.zeros(codes.shape, dtype=bool)
    np.put_along_axis(repeated, order[:, 1:], ranked[:, 1:] == ranked[:, :-1], axis=1)
    # rank by joint; distinct states (at least |K| per row: the old set) always before repeats, even at -inf joints
    finite_floor = np.finfo(float).min
    ranking = np.where(repeated, -np.inf, np.maximum(scores, finite_floor))
    keep = top_indices(ranking, n_states)
    new_states = np.take_along_axis(union, keep[:, :, None], axis=1)
    new_log_joint = np.take_along_axis(scores, keep, axis=1)
    return new_states, new_log_joint, (keep >= n_states).sum(axis=1)


@dataclass(frozen=True)
class StateSearch:
    r"""One partial TV-E-step (the inner loop of Alg. 1), repeated ``n_sweeps`` times at fixed :math:`\Theta`.

    ``log_joint_fn(states (N, P, H)) -> (N, P)`` evaluates the model's log-joints of suggested states for the data
    at the current parameters; ``pi`` is the prior used to sample suggestions.
    """

    n_prior: int = 10
    n_bitflips: int = 10
    n_sweeps: int = 1

    def __post_init__(self):
        if self.n_prior < 0 or self.n_bitflips < 0 or self.n_prior + self.n_bitflips < 1:
            raise ValueError(f"need n_prior, n_bitflips >= 0 with at least one suggestion, got "
                             f"{self.n_prior}, {self.n_bitflips}")
        if self.n_sweeps < 1:
            raise ValueError(f"n_sweeps must be >= 1, got {self.n_sweeps}")

    def __call__(self, states: np.ndarray, log_joint: np.ndarray, log_joint_fn: Callable[[np.ndarray], np.ndarray],
                 pi: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Return the new ``states``, their ``log_joint`` and the number of replaced states per data point."""
        accepted = np.zeros(states.shape[0], dtype=np.int64)
        for _ in range(self.n_sweeps):
            proposals = propose(states, pi, self.n_prior, self.n_bitflips, rng)
            states, log_joint, replaced = merge(states, log_joint, proposals, log_joint_fn(proposals))
            accepted += replaced
        return states, log_joint, accepted
