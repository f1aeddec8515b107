"""When is our number the paper's?  One rule for every table.

A published cell ``paper`` (the mean of n_p runs, printed with a ± that the paper states as a standard
deviation s_p, three of them, or a standard error) and ours (the mean of n_o seeds with sample standard
deviation s_o, ``ddof=1``) agree when

    |ours − paper| ≤ 2·sqrt(se_p² + se_o²),   se_p = s_p / sqrt(n_p) (or the printed standard error),
                                              se_o = s_o / sqrt(n_o),

i.e. the difference of two independent means lies within two standard errors of the difference.  A side without a
spread contributes nothing: one seed (n_o = 1) has no spread of its own, and a within-run standard error that an
experiment may declare (a test-set or Monte-Carlo error of one run, the ``tolerance`` column) does not stand in for
it, because it does not measure how the number moves between runs.  When neither side has a spread the band is the
printed precision, half a unit of the last printed digit; a cell within that of the paper is ``exact``.

A cell that is outside the band but within the declared within-run error of a single run is flagged
(``own_error_only``), so that a reader sees it is close, without it counting as reproduced.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from fyexp.claims.verdicts import NOT_RUN   # no rows of ours: a claim's verdict and a cell's status alike

EXACT, WITHIN, OUTSIDE, NOT_SCORED = "exact", "within", "outside", "not scored"
MARKS = {EXACT: "✓ exact", WITHIN: "✓ within", OUTSIDE: "✗", NOT_RUN: "— not run", NOT_SCORED: ""}


@dataclass(frozen=True)
class CellJudgement:
    """The status of one published cell against ours (``exact``, ``within``, ``outside``, ``not run``, ``not
    scored``), the band it was judged with and which spreads made the band.  Not a claim's verdict
    (:class:`fyexp.claims.verdicts.Verdict`, which weighs a claim's rows): this compares one number with one."""

    status: str
    band: float = float("nan")
    spreads: str = ""  # "paper", "ours", "paper+ours" or "precision"
    own_error_only: bool = False

    @property
    def agrees(self) -> bool:
        return self.status in (EXACT, WITHIN)

    @property
    def mark(self) -> str:
        return MARKS[self.status] + ("†" if self.own_error_only else "")


def _finite(x) -> bool:
    try:
        return x is not None and math.isfinite(float(x))
    except (TypeError, ValueError):
        return False


def judge(ours: float, paper: float, *, unit: float, paper_se: float = float("nan"), ours_std: float = float("nan"),
          n_ours: int = 0, own_tolerance: float = float("nan")) -> CellJudgement:
    """Judge one cell.

    Parameters
    ----------
    ours, paper : our mean over seeds and the published number (NaN: not run / not numeric).
    unit : one unit of the paper's last printed digit (``0.606`` → 0.001).
    paper_se : standard error of the paper's mean implied by its printed ± (NaN when it prints none).
    ours_std, n_ours : sample standard deviation (``ddof=1``) of our seeds and their number.
    own_tolerance : an experiment's declared within-run tolerance (twice a test-set or Monte-Carlo standard error
        of one run); never enough on its own, reported through ``own_error_only``.
    """
    if not _finite(paper):
        return CellJudgement(NOT_SCORED)
    if not _finite(ours) or n_ours < 1:
        return CellJudgement(NOT_RUN)
    half_unit = 0.5 * unit if _finite(unit) and unit > 0 else 0.0
    diff = abs(float(ours) - float(paper))
    terms, used = 0.0, []
    if _finite(paper_se) and paper_se > 0:
        terms += float(paper_se) ** 2
        used.append("paper")
    if n_ours >= 2 and _finite(ours_std) and ours_std > 0:
        terms += float(ours_std) ** 2 / n_ours
        used.append("ours")
    band = max(2.0 * math.sqrt(terms), half_unit) if used else half_unit
    spreads = "+".join(used) if used else "precision"
    slack = 1e-9 * max(1.0, abs(float(paper)))
    if diff <= half_unit + slack:
        return CellJudgement(EXACT, band, spreads)
    if diff <= band + slack:
        return CellJudgement(WITHIN, band, spreads)
    own = _finite(own_tolerance) and diff <= float(own_tolerance) + slack
    return CellJudgement(OUTSIDE, band, spreads, own_error_only=bool(own))
