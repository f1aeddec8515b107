"""The intervals behind a verdict, written with scipy.special alone, give scipy.stats' numbers.

:mod:`fyexp.claims.stats` computes the one-sample t, Welch and Clopper–Pearson intervals from their formulas (so that
``fyexp report`` does not import :mod:`scipy.stats`, about a second); here each is compared with the
:mod:`scipy.stats` call it stands for over many random inputs and the edge cases (two values, ties, one side without
spread, k = 0, k = n), and the exact interval with its defining equations at 50 digits.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from fyexp.claims.stats import clopper_pearson, difference, share_interval, t_interval, welch_interval

RTOL = 1e-12
BRENTQ_XTOL = 2e-12  # scipy's binomtest finds the exact interval's ends with brentq to this absolute tolerance


def _close(got: tuple[float, float], want, rtol: float = RTOL, atol: float = 0.0) -> bool:
    return bool(np.allclose(got, (want.low, want.high), rtol=rtol, atol=atol))


def _samples(rng: np.random.Generator, n: int) -> np.ndarray:
    """Values of one side: any scale, ties (rounded values) now and then."""
    scale = 10 ** rng.uniform(-4, 3)
    x = rng.normal(rng.normal() * scale, scale, n)
    return np.round(x / scale, 1) * scale if rng.random() < 0.3 else x


def test_the_one_sample_interval_is_scipys_ttest_1samp_interval():
    rng = np.random.default_rng(11)
    cases = [np.array([1.0, 4.0]), np.array([0.3, 0.3, 0.7]), np.array([-2.0, 2.0]), np.array([5.0, 5.0, 5.0, 6.0])]
    cases += [_samples(rng, int(rng.integers(2, 40))) for _ in range(400)]
    checked = 0
    for d in cases:
        if np.ptp(d) == 0:
            continue
        want = stats.ttest_1samp(d, 0.0).confidence_interval(0.95)
        assert _close(t_interval(d), want), (d, t_interval(d), want)
        checked += 1
    assert checked > 350


@pytest.mark.filterwarnings("ignore:Precision loss")  # scipy, on ties at a large scale
def test_welchs_interval_is_scipys_ttest_ind_interval_with_unequal_variances():
    rng = np.random.default_rng(12)
    cases = [([1.0, 2.0], [4.0, 6.0]), ([2.5, 2.5, 2.5], [1.0, 1.5]), ([1.0, 3.0], [2.0, 2.0, 2.0, 2.0]),
             ([1.0, 1.0, 2.0], [1.0, 2.0, 2.0]), ([0.1, 0.2], [10.0, 30.0, 50.0, 70.0, 90.0]),
             ([2.0, 2.0], [1.0, 1.0, 1.0])]  # no spread on either side: 0/0 degrees of freedom, the point 1.0
    for _ in range(400):
        a, b = _samples(rng, int(rng.integers(2, 30))), _samples(rng, int(rng.integers(2, 30)))
        if rng.random() < 0.15:  # no spread on one side
            a = np.full(len(a), a[0])
        cases.append((a, b))
    for a, b in cases:
        want = stats.ttest_ind(a, b, equal_var=False).confidence_interval(0.95)
        assert _close(welch_interval(np.asarray(a), np.asarray(b)), want), (a, b)


def test_welchs_degrees_of_freedom_matter_the_pooled_interval_differs():
    """Unequal sizes and spreads: the pooled (equal-variance) interval is another interval, so a formula that pooled
    the variances, or used n_a + n_b − 2 degrees of freedom, would fail the comparison above."""
    a, b = np.array([0.1, 0.2, 0.15]), np.array([10.0, 30.0, 50.0, 70.0, 90.0, 20.0])
    welch = welch_interval(a, b)
    pooled = stats.ttest_ind(a, b, equal_var=True).confidence_interval(0.95)
    assert not _close(welch, pooled, rtol=1e-3)
    assert _close(welch, stats.ttest_ind(a, b, equal_var=False).confidence_interval(0.95))


def test_the_exact_interval_is_scipys_binomtest_interval_for_every_k():
    rng = np.random.default_rng(13)
    cases = [(k, n) for n in range(1, 21) for k in range(n + 1)]
    cases += [(int(rng.integers(0, n + 1)), n) for n in rng.integers(21, 3000, 80)]
    cases += [(0, 500), (500, 500), (1, 2000), (1999, 2000)]
    for k, n in cases:
        want = stats.binomtest(k, n).proportion_ci(0.95, method="exact")
        got = clopper_pearson(k, n)
        assert _close(got, want, atol=BRENTQ_XTOL), (k, n, got, want)
    assert clopper_pearson(0, 7)[0] == 0.0 and clopper_pearson(7, 7)[1] == 1.0
    assert 0.0 < clopper_pearson(1, 7)[0] and clopper_pearson(6, 7)[1] < 1.0


def test_the_exact_interval_solves_its_defining_equations_to_the_last_digits():
    """P(X ≥ k | low) = 0.025 and P(X ≤ k | high) = 0.025 for X ~ Binomial(n, p), summed at 50 digits: the ends are
    the exact roots (scipy's brentq stops within 2e-12 of them; these are far closer)."""
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 50

    def tail(k: int, n: int, p: float, upper: bool):
        p = mpmath.mpf(p)
        terms = range(k, n + 1) if upper else range(0, k + 1)
        return sum(mpmath.binomial(n, i) * p ** i * (1 - p) ** (n - i) for i in terms)

    for k, n in ((1, 2), (1, 10), (3, 10), (9, 10), (17, 60), (1, 250), (240, 250)):
        low, high = clopper_pearson(k, n)
        # the derivative of each tail in p, to turn the residual into an error of the end
        step = mpmath.mpf("1e-20")
        for end, upper in ((low, True), (high, False)):
            residual = tail(k, n, end, upper) - mpmath.mpf(0.025)
            slope = (tail(k, n, end + step, upper) - tail(k, n, end - step, upper)) / (2 * step)
            assert abs(residual / slope) < 1e-13 * end, (k, n, end, upper)


def test_share_interval_counts_the_ones_and_gives_the_exact_interval():
    values = np.array([1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0])  # 5 of 7
    share, low, high = share_interval(values)
    want = stats.binomtest(5, 7).proportion_ci(0.95, method="exact")
    assert share == 5 / 7 and _close((low, high), want, atol=BRENTQ_XTOL)
    assert share_interval(np.zeros(4))[:2] == (0.0, 0.0) and share_interval(np.ones(4))[::2] == (1.0, 1.0)
    with pytest.raises(ValueError, match="k <= n"):
        clopper_pearson(3, 2)


def test_difference_pairs_through_the_t_interval_and_otherwise_welchs():
    a = pd.DataFrame({"value": [3.0, 5.0, 4.2], "seed": [0, 1, 2]})
    b = pd.DataFrame({"value": [1.0, 2.5, 2.0], "seed": [2, 0, 1]})
    d = difference(a, b)  # pairs by seed: 3 − 2.5, 5 − 2, 4.2 − 1
    want = stats.ttest_1samp([0.5, 3.0, 3.2], 0.0).confidence_interval(0.95)
    assert d.paired and _close((d.low, d.high), want)
    d = difference(a.drop(columns="seed"), b.drop(columns="seed"))
    want = stats.ttest_ind(a["value"], b["value"], equal_var=False).confidence_interval(0.95)
    assert not d.paired and _close((d.low, d.high), want)


def test_judging_claims_does_not_import_scipy_stats():
    """The point of the module: importing the report and the verdicts leaves scipy.stats out (about a second)."""
    code = ("import sys, fyexp.report, fyexp.claims.verdicts, numpy as np; "
            "from fyexp.claims.stats import t_interval; t_interval(np.array([1.0, 2.0, 4.0])); "
            "print('scipy.stats' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_a_missing_pairing_value_pairs_as_nan_and_does_not_raise():
    """A pairing column with a missing value (a row without its seed) keys it ``nan``: the rows still pair (pandas
    3's string dtype kept NaN missing through astype(str), and joining the keys raised a TypeError)."""
    import numpy as np
    import pandas as pd

    from fyexp.claims.stats import _keys, difference

    a = pd.DataFrame({"seed": [0, 1, np.nan], "value": [1.0, 2.0, 3.0]})
    b = a.assign(value=[1.5, 2.5, 3.75])
    assert list(_keys(a, ["seed"])) == ["0.0", "1.0", "nan"]
    d = difference(a, b)
    assert d.paired and d.n_a == 3 and d.mean == pytest.approx(-0.5833333333333334)
    mixed = pd.DataFrame({"seed": [0, 1], "split": [2.5, 3.0], "fold": ["x", None], "value": [0.0, 1.0]})
    assert list(_keys(mixed, ["seed", "split", "fold"])) == ["0|2.5|x", "1|3.0|nan"]
    assert list(_keys(mixed, [])) == []
