"""The interval behind a verdict: a 95% t interval of a mean difference, paired where the rows pair.

Two sides *pair* when they have the same keys (the columns of :data:`PAIR_COLUMNS` present in both: seed, split,
fold), each key once per side, and at least two keys in common: the interval is then the one-sample t interval of
the differences d_i = a_i − b_i (``scipy.stats.ttest_1samp(d).confidence_interval``).  Otherwise it is Welch's
interval for mean(a) − mean(b) (``scipy.stats.ttest_ind(a, b, equal_var=False).confidence_interval``).  With one
value on a side (or one pair) there is no interval: ``low``/``high`` are ``None`` and a verdict says so.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

PAIR_COLUMNS = ("seed", "split", "fold")
LEVEL = 0.95


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


def _keys(frame: pd.DataFrame, columns: list[str]) -> pd.Series:
    """Per row, its pairing columns as text joined by ``|`` (``seed|split|fold``)."""
    if not columns:
        return pd.Series(dtype=str)
    text = frame[columns].astype(str)
    if text.empty or len(columns) == 1:
        return text.agg("|".join, axis=1)
    return text[columns[0]].str.cat([text[c] for c in columns[1:]], sep="|")


def difference(a: pd.DataFrame, b: pd.DataFrame) -> Difference:
    """``a`` and ``b`` are result rows (a ``value`` column, and the pairing columns where they exist)."""
    with warnings.catch_warnings():  # nearly equal values: scipy warns of precision loss; the interval stands
        warnings.simplefilter("ignore", RuntimeWarning)
        return _difference(a, b)


def _difference(a: pd.DataFrame, b: pd.DataFrame) -> Difference:
    columns = [c for c in PAIR_COLUMNS if c in a and c in b and a[c].notna().any() and b[c].notna().any()]
    ka, kb = _keys(a, columns), _keys(b, columns)
    common = sorted(set(ka) & set(kb))
    paired = bool(columns) and ka.is_unique and kb.is_unique and len(common) >= 2
    va, vb = a["value"].to_numpy(float), b["value"].to_numpy(float)
    if paired:
        sa = pd.Series(va, index=ka.to_numpy())[common].to_numpy()
        sb = pd.Series(vb, index=kb.to_numpy())[common].to_numpy()
        d = sa - sb
        ci = stats.ttest_1samp(d, 0.0).confidence_interval(LEVEL) if np.ptp(d) > 0 else _point(d.mean())
        return Difference(float(d.mean()), float(ci.low), float(ci.high), len(d), len(d), True,
                          float(sa.mean()), float(sb.mean()))
    mean = float(va.mean() - vb.mean())
    if len(va) < 2 or len(vb) < 2:
        return Difference(mean, None, None, len(va), len(vb), False, float(va.mean()), float(vb.mean()))
    if np.ptp(va) == 0 and np.ptp(vb) == 0:
        ci = _point(mean)
    else:
        ci = stats.ttest_ind(va, vb, equal_var=False).confidence_interval(LEVEL)
    return Difference(mean, float(ci.low), float(ci.high), len(va), len(vb), False, float(va.mean()),
                      float(vb.mean()))


class _point:
    """A degenerate interval (no spread at all on either side): the difference itself."""

    def __init__(self, value: float):
        self.low = self.high = float(value)


def share_interval(values: np.ndarray) -> tuple[float, float, float]:
    """Share of ones among 0/1 values with its exact (Clopper–Pearson) 95% interval (``scipy.stats.binomtest``)."""
    k, n = int(np.round(values).sum()), len(values)
    ci = stats.binomtest(k, n).proportion_ci(LEVEL, method="exact")
    return k / n, float(ci.low), float(ci.high)
