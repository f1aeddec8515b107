"""The interval behind a verdict: a 95% t interval of a mean difference, paired where the rows pair.

Two sides *pair* when they have the same keys (the columns of :data:`PAIR_COLUMNS` present in both: seed, split,
fold), each key once per side, and at least two keys in common: the interval is then the one-sample t interval of
the differences d_i = a_i − b_i.  Otherwise it is Welch's interval for mean(a) − mean(b).  With one value on a side
(or one pair) there is no interval: ``low``/``high`` are ``None`` and a verdict says so — unless that one value is
itself a mean of n draws whose standard deviation the results record (a claim's ``spread``: the columns
:data:`SPREAD_SD` and :data:`SPREAD_N` beside ``value``), when the interval is Welch's from those summaries
(:func:`summary_welch_interval`; a side without them is a constant, variance 0).

The intervals are written out with :mod:`scipy.special` alone (importing :mod:`scipy.stats` costs about a second
of every ``fyexp report``); each gives the numbers of the :mod:`scipy.stats` call it stands for, computed in the
same order (tests/claims/test_claims_stats.py compares them over random inputs):

* :func:`t_interval` — ``scipy.stats.ttest_1samp(d, 0).confidence_interval(0.95)``;
* :func:`welch_interval` — ``scipy.stats.ttest_ind(a, b, equal_var=False).confidence_interval(0.95)``;
* :func:`summary_welch_interval` — the same from each side's mean, standard deviation and n (a constant side:
  ``ttest_1samp(a − c, 0)``'s interval);
* :func:`clopper_pearson` — ``scipy.stats.binomtest(k, n).proportion_ci(0.95, method="exact")`` (to the
  tolerance of scipy's root finder, 2e-12: the closed form here is the exact root).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import special

PAIR_COLUMNS = ("seed", "split", "fold")
LEVEL = 0.95
#: a row's value is the mean of SPREAD_N draws with sample standard deviation SPREAD_SD (a claim's ``spread``)
SPREAD_SD, SPREAD_N = "spread_sd", "spread_n"


@dataclass(frozen=True)
class Difference:
    mean: float  # mean(a) - mean(b) (paired: mean of the differences)
    low: float | None
    high: float | None
    n_a: int
    n_b: int
    paired: bool
    mean_a: float
    mean_b: float

    @property
    def has_interval(self) -> bool:
        return self.low is not None and np.isfinite(self.low) and np.isfinite(self.high)

    def n_text(self) -> str:
        return f"{self.n_a} pairs" if self.paired else f"{self.n_a} vs {self.n_b}"


def _key_text(value: object) -> str:
    """One pairing value as text: ``str`` of the Python value (``0``, ``0.0``, ``'a'``), ``nan`` when missing."""
    return "nan" if value is None or value is pd.NA or (isinstance(value, float) and value != value) else str(value)


def _keys(frame: pd.DataFrame, columns: list[str]) -> pd.Series:
    """Per row, its pairing columns as text joined by ``|`` (``seed|split|fold``); a missing value reads ``nan``.

    Plain Python over the columns' values (``tolist``): a verdict pairs a few dozen rows, where pandas' string
    operations cost milliseconds per call, and pandas 3's string dtype keeps a missing value missing through
    ``astype(str)``, which ``"|".join`` could not join (a pairing column with a NaN made ``difference`` raise)."""
    if not columns:
        return pd.Series(dtype=str)
    values = zip(*(frame[c].tolist() for c in columns))
    return pd.Series(["|".join(_key_text(v) for v in row) for row in values], index=frame.index, dtype=object)


def difference(a: pd.DataFrame, b: pd.DataFrame) -> Difference:
    """``a`` and ``b`` are result rows (a ``value`` column, and the pairing columns where they exist)."""
    columns = [c for c in PAIR_COLUMNS if c in a and c in b and a[c].notna().any() and b[c].notna().any()]
    ka, kb = _keys(a, columns), _keys(b, columns)
    common = sorted(set(ka) & set(kb))
    paired = bool(columns) and ka.is_unique and kb.is_unique and len(common) >= 2
    va, vb = a["value"].to_numpy(float), b["value"].to_numpy(float)
    if paired:
        sa = pd.Series(va, index=ka.to_numpy())[common].to_numpy()
        sb = pd.Series(vb, index=kb.to_numpy())[common].to_numpy()
        d = sa - sb
        low, high = t_interval(d) if np.ptp(d) > 0 else (d.mean(), d.mean())
        return Difference(float(d.mean()), float(low), float(high), len(d), len(d), True,
                          float(sa.mean()), float(sb.mean()))
    mean = float(va.mean() - vb.mean())
    if len(va) < 2 or len(vb) < 2:
        summaries = _summary(a) if len(va) == 1 else None, _summary(b) if len(vb) == 1 else None
        if len(va) == 1 and len(vb) == 1 and any(summaries):
            (sd_a, n_a), (sd_b, n_b) = (x or (0.0, 1) for x in summaries)
            low, high = summary_welch_interval(va[0], sd_a, n_a, vb[0], sd_b, n_b)
            return Difference(mean, float(low), float(high), 1, 1, False, float(va[0]), float(vb[0]))
        return Difference(mean, None, None, len(va), len(vb), False, float(va.mean()), float(vb.mean()))
    if np.ptp(va) == 0 and np.ptp(vb) == 0:  # no spread at all on either side: the difference itself
        low = high = mean
    else:
        low, high = welch_interval(va, vb)
    return Difference(mean, float(low), float(high), len(va), len(vb), False, float(va.mean()),
                      float(vb.mean()))


def _summary(frame: pd.DataFrame) -> tuple[float, int] | None:
    """(sd, n) of the one row of ``frame`` where it records them (:data:`SPREAD_SD`, :data:`SPREAD_N`: finite, sd
    ≥ 0, n ≥ 2), else None (its value is then a constant)."""
    if SPREAD_SD not in frame or SPREAD_N not in frame:
        return None
    sd = pd.to_numeric(frame[SPREAD_SD], errors="coerce").to_numpy(float)[0]
    n = pd.to_numeric(frame[SPREAD_N], errors="coerce").to_numpy(float)[0]
    return (float(sd), int(n)) if np.isfinite(sd) and np.isfinite(n) and sd >= 0 and n >= 2 else None


# ---- the intervals, with scipy.special alone --------------------------------------------------------------------
def _tails(level: float) -> np.ndarray:
    """The two-sided t quantiles' probabilities ``(1 − level)/2`` and ``1 − (1 − level)/2``, in scipy's order of
    operations (so that the quantiles are scipy's to the last bit)."""
    tail = (1 - np.float64(level)) / 2
    return np.array([tail, 1 - tail])


def _variance(x: np.ndarray) -> float:
    """The unbiased sample variance s² = n/(n−1) · mean((x − x̄)²), computed as ``scipy.stats`` does."""
    n = len(x)
    return np.mean((x - np.mean(x)) ** 2) * (n / (n - 1))


def _scaled(df: float, se: float, estimate: float, level: float) -> tuple[float, float]:
    """``estimate + t_{df}^{-1}(p) · se`` at both tails: ``scipy.special.stdtrit`` is the Student-t quantile."""
    low, high = special.stdtrit(df, _tails(level))
    return low * se + estimate, high * se + estimate


def t_interval(d: np.ndarray, level: float = LEVEL) -> tuple[float, float]:
    """The one-sample t interval of the mean of ``d`` (n ≥ 2):  d̄ ± t_{n−1}^{-1}(1 − α/2) · s/√n,  α = 1 − level,
    s² the unbiased variance (Student's t interval; scipy's ``ttest_1samp(d, 0).confidence_interval(level)``)."""
    d = np.asarray(d, dtype=float)
    n = len(d)
    return _scaled(n - 1, np.sqrt(_variance(d) / n), np.mean(d), level)


def welch_interval(a: np.ndarray, b: np.ndarray, level: float = LEVEL) -> tuple[float, float]:
    """Welch's interval of mean(a) − mean(b) (each side n ≥ 2):  (ā − b̄) ± t_ν^{-1}(1 − α/2) · √(s_a²/n_a + s_b²/n_b)
    with the Welch–Satterthwaite degrees of freedom  ν = (v_a + v_b)² / (v_a²/(n_a − 1) + v_b²/(n_b − 1)),
    v = s²/n (ν = 1 where both variances are zero and it is 0/0; the interval is then the point ā − b̄) — scipy's
    ``ttest_ind(a, b, equal_var=False).confidence_interval(level)``."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    na, nb = len(a), len(b)
    va, vb = _variance(a) / na, _variance(b) / nb
    with np.errstate(divide="ignore", invalid="ignore"):
        df = (va + vb) ** 2 / (va ** 2 / (na - 1) + vb ** 2 / (nb - 1))
    df = 1.0 if np.isnan(df) else df
    return _scaled(df, np.sqrt(va + vb), np.mean(a) - np.mean(b), level)


def summary_welch_interval(mean_a: float, sd_a: float, n_a: int, mean_b: float, sd_b: float, n_b: int,
                           level: float = LEVEL) -> tuple[float, float]:
    """Welch's interval of mean_a − mean_b from summaries: each side the mean of n draws with sample standard
    deviation sd (ddof 1), v = sd²/n, ν as in :func:`welch_interval`; a side with sd = 0 is a constant and adds
    nothing to ν (against a constant c it is the one-sample t interval of a − c, ν = n_a − 1).  Both constant: the
    point mean_a − mean_b."""
    va, vb = sd_a ** 2 / n_a, sd_b ** 2 / n_b
    if va + vb == 0:
        return mean_a - mean_b, mean_a - mean_b
    df = (va + vb) ** 2 / sum(v ** 2 / (n - 1) for v, n in ((va, n_a), (vb, n_b)) if v > 0)
    return _scaled(df, np.sqrt(va + vb), mean_a - mean_b, level)


def clopper_pearson(k: int, n: int, level: float = LEVEL) -> tuple[float, float]:
    """The exact (Clopper–Pearson) interval of a binomial proportion, k successes in n trials, α = (1 − level)/2 a
    tail: the lower end solves P(X ≥ k | p) = α, the upper P(X ≤ k | p) = α.  With P(X ≥ k | p) = I_p(k, n − k + 1)
    (the regularised incomplete beta function) these are the beta quantiles

        low = I^{-1}(α; k, n − k + 1)  (0 when k = 0),    high = I^{-1}(1 − α; k + 1, n − k)  (1 when k = n),

    ``scipy.special.betaincinv`` (Clopper & Pearson 1934; scipy's ``binomtest(k, n).proportion_ci(level,
    method="exact")`` finds the same roots with ``brentq``, to its tolerance 2e-12)."""
    if not 0 <= k <= n or n < 1:
        raise ValueError(f"clopper_pearson: need 0 <= k <= n and n >= 1, got k={k}, n={n}")
    alpha = (1 - level) / 2
    low = 0.0 if k == 0 else float(special.betaincinv(k, n - k + 1, alpha))
    high = 1.0 if k == n else float(special.betaincinv(k + 1, n - k, 1 - alpha))
    return low, high


def share_interval(values: np.ndarray) -> tuple[float, float, float]:
    """Share of ones among 0/1 values with its exact (Clopper–Pearson) 95% interval (:func:`clopper_pearson`)."""
    k, n = int(np.round(values).sum()), len(values)
    low, high = clopper_pearson(k, n)
    return k / n, low, high
