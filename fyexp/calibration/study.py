r"""One setting of the calibration study (Chai & Bonilla §5.1, §C.1): every row of Tables 1 and 4.

For replicated data sets ``x`` ``(R, n)`` this fits :math:`q_\gamma` on a grid of γ's (all replicas and all
γ's as one flattened batch), and summarizes, per row of the paper's tables, the coverage κ and mean length
ℓ of each component's interval and the mean bound:

* ``L_γ``   the fractional posteriors (γ = 1: the ELBO);
* ``C_γ``   conflated models: the ELBO's means and responsibilities with the variances of :math:`q_\gamma`,
  their bound being the ELBO at those parameters;
* ``R_l``, ``R_l-2``, ``R_kappa``  the calibration strategies of :mod:`fyexp.calibration.strategies`,
  each refitted at its γ*.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from fyexp.calibration import cavi, intervals, strategies
from fyexp.calibration.cavi import Fit


@dataclass(frozen=True)
class FitOptions:
    """How every posterior is fitted: prior variance σ², stopping rule, and which bound drives it."""

    prior_var: float = 9.0
    tol: float = 1e-5
    min_iter: int = 3
    max_iter: int = 10_000
    extra_sweeps: int = 0
    convention: str = "eq7"

    def fit(self, x: np.ndarray, gamma, m_init, s2_init: float, keep_phi: bool = False, progress=None) -> Fit:
        return cavi.fit(x, gamma, prior_var=self.prior_var, m_init=m_init, s2_init=s2_init, tol=self.tol,
                        min_iter=self.min_iter, max_iter=self.max_iter, extra_sweeps=self.extra_sweeps,
                        convention=self.convention, keep_phi=keep_phi, progress=progress)

    def both_bounds(self, fit: Fit) -> tuple[np.ndarray, np.ndarray]:
        """The fitted rows' bounds as ``(eq7, authors)``, whichever convention stopped the fit."""
        offset = cavi.authors_offset(fit.s2, self.prior_var)
        if self.convention == "eq7":
            return fit.bound, fit.bound - offset
        return fit.bound + offset, fit.bound


@dataclass
class RowResult:
    """One table row: ``coverage`` and ``length`` per component ``(K,)``, mean bounds, and its γ.

    ``gamma`` is the row's γ (the mean of the per-replica γ* for ``R_l`` and ``R_l-2``).
    """

    row: str
    gamma: float
    coverage: np.ndarray
    length: np.ndarray
    bound: float
    bound_authors: float


@dataclass
class StudyResult:
    rows: list[RowResult]
    n_replicas: int
    ideal_length: float
    sweeps_max: int
    sweeps_mean: float
    not_converged: int
    gamma_star: dict[str, np.ndarray] = field(default_factory=dict)   # per-replica γ* of R_l and R_l-2


def _label(prefix: str, gamma: float) -> str:
    return f"{prefix}_{gamma:.1f}"


def run_study(x: np.ndarray, truth, m_init, s2_init: float, gammas, conflated, alpha: float,
              options: FitOptions, progress=None) -> StudyResult:
    """All rows of one setting.  ``gammas`` must contain 1.0 (the ELBO, for ``C_γ``); ``conflated`` ⊂ ``gammas``.

    ``progress(n)`` is called with the number of data sets fitted, for a progress bar over
    ``(len(gammas) + 3) * R`` fits.
    """
    gammas = np.asarray(sorted(gammas), dtype=float)
    if not np.any(gammas == 1.0) or not set(conflated) <= set(gammas.tolist()):
        raise ValueError("gammas must contain 1.0 and every conflated γ")
    R, n = x.shape
    K = len(truth)
    G = len(gammas)
    grid = options.fit(np.broadcast_to(x, (G, R, n)).reshape(G * R, n), np.repeat(gammas, R), m_init, s2_init,
                       progress=progress)
    m, s2 = grid.m.reshape(G, R, K), grid.s2.reshape(G, R, K)
    eq7, authors = (b.reshape(G, R) for b in options.both_bounds(grid))
    fits = [grid]
    rows: list[RowResult] = []
    coverage = np.empty((G, K))
    lengths = np.empty((G, R, K))
    for g, gamma in enumerate(gammas):
        coverage[g], _ = intervals.calibration(m[g], s2[g], truth, alpha)
        lengths[g] = intervals.interval_lengths(intervals.sort_components(m[g], s2[g])[1], alpha)
        rows.append(RowResult(_label("L", gamma), float(gamma), coverage[g], lengths[g].mean(axis=0),
                              float(eq7[g].mean()), float(authors[g].mean())))

    # conflated models: ELBO means and responsibilities, fractional variances, scored by the ELBO
    elbo = options.fit(x, 1.0, m_init, s2_init, keep_phi=True)
    fits.append(elbo)
    ones = np.ones(R)
    for gamma in conflated:
        s2_frac = s2[int(np.flatnonzero(gammas == gamma)[0])]
        kappa, ell = intervals.calibration(elbo.m, s2_frac, truth, alpha)
        post = cavi.Posterior(elbo.m, s2_frac, elbo.phi, cavi.safe_log(elbo.phi))
        b_eq7 = cavi.bound(x, post, ones, options.prior_var, "eq7")
        b_authors = cavi.bound(x, post, ones, options.prior_var, "authors")
        rows.append(RowResult(_label("C", gamma), float(gamma), kappa, ell, float(b_eq7.mean()),
                              float(b_authors.mean())))

    # calibration strategies
    target = strategies.ideal_length(n, K, alpha)
    gamma_star = {
        "R_l": strategies.gamma_from_lengths(gammas, lengths, target),
        "R_l-2": strategies.gamma_from_lengths(gammas, lengths, target, inverse_square=True),
        "R_kappa": np.full(R, strategies.gamma_from_coverage(gammas, coverage, 1.0 - alpha)),
    }
    for name, gamma in gamma_star.items():
        refit = options.fit(x, gamma, m_init, s2_init, progress=progress)
        fits.append(refit)
        kappa, ell = intervals.calibration(refit.m, refit.s2, truth, alpha)
        b_eq7, b_authors = options.both_bounds(refit)
        rows.append(RowResult(name, float(gamma.mean()), kappa, ell, float(b_eq7.mean()), float(b_authors.mean())))

    sweeps = np.concatenate([f.n_iter for f in fits])
    return StudyResult(rows=rows, n_replicas=R, ideal_length=target, sweeps_max=int(sweeps.max()),
                       sweeps_mean=float(sweeps.mean()), not_converged=int(sum((~f.converged).sum() for f in fits)),
                       gamma_star={k: v for k, v in gamma_star.items() if k != "R_kappa"})
