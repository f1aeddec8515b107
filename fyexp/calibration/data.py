"""Replicated data sets of the calibration study (Chai & Bonilla §5.1, §C.1), drawn as the authors drew them.

The authors' generator (legacy NumPy ``RandomState``, seeded once per setting) draws ONE assignment vector
``c`` of length ``n`` and then all replicas as ``x = normal(mu[c], 1, (n_replicas, n))``: every replica shares
the assignments and differs only in the noise.  That is why the interval lengths of the two components differ
(their counts differ) and why a smaller ``n_replicas`` gives the first rows of the larger draw.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class MixtureSetting:
    """One experimental setting: ``n`` points per data set from equally weighted unit-variance components.

    ``means`` are the true component means in increasing order; ``init_means`` the initial posterior means
    (§C.1: −1, 1; K = 4: ±1, ±1/4); the initial posterior variances are ``n / K``.
    """

    n: int
    means: tuple[float, ...]
    init_means: tuple[float, ...]

    @property
    def K(self) -> int:
        return len(self.means)

    @property
    def init_var(self) -> float:
        return self.n / self.K


@dataclass(frozen=True)
class Replicas:
    """``x``: (n_replicas, n) observations; ``assignments``: (n,) the shared true components."""

    x: np.ndarray
    assignments: np.ndarray


def simulate(setting: MixtureSetting, n_replicas: int, seed: int) -> Replicas:
    """Draw ``n_replicas`` data sets with the authors' stream: ``choice`` of one ``c``, then ``normal``."""
    rng = np.random.RandomState(seed)
    K = setting.K
    assignments = rng.choice(range(K), setting.n, p=[1.0 / K] * K)
    x = rng.normal(np.asarray(setting.means)[assignments], 1.0, (n_replicas, setting.n))
    return Replicas(x=x, assignments=assignments)
