"""The rules that fit the papers' sentences (issue 46), each on both sides of its threshold with values unlike the
papers': non-inferiority with a margin, the best of a group against the best of the others, coverage by an exact
binomial interval over replicas, statements judged per run, the paper's printed ± in the magnitude test, and the
kinds ``theorem_check`` and ``table_reading``.

Paired rows as in tests/claims/test_claims_rules.py: differences m + s·(−1, +1, −1, +1), s = 0.1, have the 95% interval
m ± HALF (HALF ≈ 0.1837).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from fyexp.claims.render import short_lines, summary_line, tally
from fyexp.claims.verdicts import (DIRECTION_ONLY, MISSING, NOT_SUPPORTED, REVERSED, SUPPORTED, UNRESOLVED,
                                   coverage_counts, judge)
from fyexp.core.errors import FyexpError
from tests.claims.test_claims_rules import BASE, HALF, JITTER, claim_of, frames, verdict_of

MARGIN = 0.37   # no paper's margin


def noninferior(tmp_path, better="greater", extra=""):
    return claim_of(tmp_path, f"    direction: noninferior\n    better: {better}\n    margin: {MARGIN}\n"
                              f"    a: {{method: x}}\n    b: {{method: y}}\n{extra}")


# ---- noninferior ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("better, sign", [("greater", 1), ("less", -1)])
@pytest.mark.parametrize("m, expected", [
    (-MARGIN + HALF + 0.005, SUPPORTED),      # the interval just above -margin, though its estimate is worse
    (-MARGIN + HALF - 0.005, UNRESOLVED),     # reaches just below -margin
    (-MARGIN - HALF - 0.005, REVERSED),       # wholly below -margin
    (-MARGIN - HALF + 0.005, UNRESOLVED),     # reaches just above it
    (0.8, SUPPORTED)])                        # better outright
def test_noninferior_holds_when_the_interval_lies_above_minus_the_margin(tmp_path, better, sign, m, expected):
    v = verdict_of(noninferior(tmp_path, better), {"x": BASE + sign * (m + JITTER), "y": BASE})
    assert v.verdict == expected, (m, v.ours)
    assert v.estimate == pytest.approx(sign * m) and f"(margin {MARGIN:.4g})" in v.ours


@pytest.mark.parametrize("diff, expected", [(-MARGIN + 0.01, SUPPORTED), (-MARGIN - 0.01, REVERSED)])
def test_noninferior_with_one_value_per_side_reads_the_difference(tmp_path, diff, expected):
    v = verdict_of(noninferior(tmp_path), {"x": np.array([2.0 + diff]), "y": np.array([2.0])})
    assert v.verdict == expected and "n = 1, sign only" in v.notes


def test_noninferior_against_a_constant(tmp_path):
    claim = claim_of(tmp_path, f"    direction: noninferior\n    better: less\n    margin: {MARGIN}\n"
                               "    a: {method: x}\n    than: 5.0\n")
    assert verdict_of(claim, {"x": 5.0 + MARGIN - HALF - 0.005 + JITTER}).verdict == SUPPORTED
    assert verdict_of(claim, {"x": 5.0 + MARGIN + HALF + 0.005 + JITTER}).verdict == REVERSED


@pytest.mark.parametrize("body, message", [
    ("    better: greater\n    a: {method: x}\n    b: {method: y}\n", "margin: expected set for direction"),
    ("    better: greater\n    margin: 0\n    a: {method: x}\n    b: {method: y}\n", "margin: expected a positive"),
    (f"    margin: {MARGIN}\n    a: {{method: x}}\n    b: {{method: y}}\n", "better: expected set for direction")])
def test_noninferior_needs_a_positive_margin_and_a_better_side(tmp_path, body, message):
    with pytest.raises(FyexpError, match=message):
        claim_of(tmp_path, "    direction: noninferior\n" + body)


# ---- group_best ----------------------------------------------------------------------------------------------
def group_best(tmp_path, better="greater", extra=""):
    return claim_of(tmp_path, f"    direction: group_best\n    better: {better}\n"
                              "    group: [{method: x}, {method: z}]\n    others: [{method: y}, {method: w}]\n"
                              + extra)


@pytest.mark.parametrize("better, sign", [("greater", 1), ("less", -1)])
@pytest.mark.parametrize("m, expected", [(HALF + 0.005, SUPPORTED), (HALF - 0.005, NOT_SUPPORTED),
                                         (-(HALF + 0.005), REVERSED)])
def test_group_best_compares_the_best_member_with_the_best_other(tmp_path, better, sign, m, expected):
    best_other = BASE + sign * 0.6
    sides = {"x": BASE - sign * 1.0,             # the group's weaker member: worse than every other side
             "z": best_other + sign * (m + JITTER), "y": best_other, "w": BASE}
    v = verdict_of(group_best(tmp_path, better), sides)
    assert v.verdict == expected
    assert "best of group gmm-clustering:adjusted_mi[method=z]" in v.ours and "[method=y]" in v.ours
    assert v.estimate == pytest.approx(sign * m)


def test_group_best_checks_the_printed_margin(tmp_path):
    sides = {"x": BASE, "z": BASE + 1.0 + JITTER, "y": BASE, "w": BASE - 1}
    assert verdict_of(group_best(tmp_path, extra="    magnitude: 1.1\n"), sides).verdict == SUPPORTED
    outside = 1.0 + HALF + 0.01
    assert verdict_of(group_best(tmp_path, extra=f"    magnitude: {outside}\n"), sides).verdict == DIRECTION_ONLY


def test_group_best_needs_a_group_and_others(tmp_path):
    with pytest.raises(FyexpError, match="group: expected set for direction 'group_best'"):
        claim_of(tmp_path, "    direction: group_best\n    better: less\n    others: [{method: y}]\n")
    with pytest.raises(FyexpError, match="group: expected at least one selector"):
        claim_of(tmp_path, "    direction: group_best\n    better: less\n    group: []\n    others: [{method: y}]\n")
    one = claim_of(tmp_path, "    direction: group_best\n    better: less\n    group: [{method: x}]\n"
                             "    others: [{method: y}]\n")   # one side is a group too: the bar is one, not two
    assert [s.method for s in one.group] == ["x"]


# ---- coverage ------------------------------------------------------------------------------------------------
NOMINAL, REPLICAS = 0.83, 700   # no paper's level or count


def exact(k: int, n: int) -> tuple[float, float]:
    ci = stats.binomtest(k, n).proportion_ci(0.95, method="exact")
    return ci.low, ci.high


def boundaries(n: int, nominal: float) -> tuple[int, int]:
    """The least k whose exact interval lies above ``nominal`` and the greatest whose interval lies below it."""
    above = min(k for k in range(n + 1) if exact(k, n)[0] > nominal)
    below = max(k for k in range(n + 1) if exact(k, n)[1] < nominal)
    return above, below


def coverage_claim(tmp_path, side="conservative", extra=""):
    return claim_of(tmp_path, f"    direction: coverage\n    nominal: {NOMINAL}\n    side: {side}\n"
                              f"    a: {{method: x}}\n{extra}")


def share_rows(k: int, n: int = REPLICAS) -> dict:
    f = frames({"x": np.array([k / n])})
    f["gmm-clustering"]["replicas"] = n
    return f


def top(claim, f):
    v, = [v for v in judge(claim, f) if v.headline]
    return v


@pytest.mark.slow
@pytest.mark.parametrize("side", ["conservative", "overconfident"])
def test_coverage_is_judged_by_the_exact_interval_over_the_replicas(tmp_path, side):
    above, below = boundaries(REPLICAS, NOMINAL)
    claim = coverage_claim(tmp_path, side)
    holds, other = (SUPPORTED, REVERSED) if side == "conservative" else (REVERSED, SUPPORTED)
    assert top(claim, share_rows(above)).verdict == holds
    assert top(claim, share_rows(above - 1)).verdict == NOT_SUPPORTED    # the interval holds the nominal level
    assert top(claim, share_rows(below)).verdict == other
    assert top(claim, share_rows(below + 1)).verdict == NOT_SUPPORTED
    v = top(claim, share_rows(above))
    assert (v.low, v.high) == pytest.approx(exact(above, REPLICAS), abs=1e-9)
    assert v.n == f"{REPLICAS} replicas" and f"({above} of {REPLICAS})" in v.ours


@pytest.mark.slow
def test_coverage_tie_holding_the_printed_coverage_is_unresolved(tmp_path):
    above, _ = boundaries(REPLICAS, NOMINAL)
    claim = coverage_claim(tmp_path, extra=f"    magnitude: {NOMINAL + 0.001}\n")
    assert top(claim, share_rows(above - 1)).verdict == UNRESOLVED


def test_coverage_counts_read_zero_one_rows_shares_and_the_spec_replicas():
    ones = pd.DataFrame({"value": [1.0, 0.0, 1.0, 1.0]})
    assert coverage_counts(ones, None) == (3, 4)
    shares = pd.DataFrame({"value": [0.5, 0.25]})
    assert coverage_counts(shares, 40) == (30, 80)            # 20 of 40 and 10 of 40
    assert coverage_counts(shares.assign(replicas=[8, 4]), 40) == (5, 12)   # the rows' own count first
    assert coverage_counts(shares, None) is None


def test_coverage_without_a_replica_count_is_data_missing(tmp_path):
    v = top(coverage_claim(tmp_path), frames({"x": np.array([0.9])}))
    assert v.verdict == MISSING and "number of replicas" in v.notes[0]


@pytest.mark.parametrize("body, message", [
    ("    nominal: 1.0\n    side: conservative\n", r"nominal: expected a number in \(0, 1\)"),
    ("    nominal: 0.9\n    side: cautious\n", "side: expected one of conservative, overconfident"),
    ("    nominal: 0.9\n    side: conservative\n    per_run: true\n", "per_run: expected false for direction")])
def test_coverage_refuses_a_bad_level_or_side(tmp_path, body, message):
    with pytest.raises(FyexpError, match=message):
        claim_of(tmp_path, "    direction: coverage\n    a: {method: x}\n" + body)


# ---- per_run -------------------------------------------------------------------------------------------------
def runs(diffs) -> dict:
    diffs = np.asarray(diffs, dtype=float)
    return frames({"x": 7.0 + diffs, "y": np.full(len(diffs), 7.0)})


def per_run(tmp_path, extra=""):
    return claim_of(tmp_path, "    direction: greater\n    per_run: true\n    a: {method: x}\n    b: {method: y}\n"
                    + extra)


@pytest.mark.parametrize("diffs, expected", [([0.2, 0.1, 0.3, 0.05], SUPPORTED),
                                             ([0.2, 0.1, -0.3, 0.05], NOT_SUPPORTED),
                                             ([-0.2, -0.1, -0.3, -0.05], REVERSED)])
def test_a_per_run_statement_of_every_run_holds_only_when_each_run_does(tmp_path, diffs, expected):
    v = top(per_run(tmp_path), runs(diffs))
    k = sum(d > 0 for d in diffs)
    assert v.verdict == expected and v.ours.startswith(f"holds in {k} of 4 runs") and v.n == "4 runs"
    assert (v.low, v.high) == pytest.approx(exact(k, 4), abs=1e-9)
    assert ("seed=2" in " ".join(v.notes)) == (expected != SUPPORTED)   # the failing runs named


def test_the_mean_and_the_runs_can_disagree(tmp_path):
    diffs = [2.0, -0.1, -0.1, -0.1]    # the mean is positive, three runs of four say otherwise
    assert top(per_run(tmp_path), runs(diffs)).verdict == NOT_SUPPORTED
    plain = claim_of(tmp_path, "    direction: greater\n    a: {method: x}\n    b: {method: y}\n", name="plain")
    assert top(plain, runs(diffs)).estimate > 0


def test_a_per_run_share_with_at_least_uses_its_exact_interval(tmp_path):
    n, bar = 30, 0.6
    least = min(k for k in range(n + 1) if exact(k, n)[0] > bar)
    most = max(k for k in range(n + 1) if exact(k, n)[1] < bar)
    claim = per_run(tmp_path, f"    at_least: {bar}\n")

    def share(k):
        return top(claim, runs([0.1] * k + [-0.1] * (n - k))).verdict

    assert (share(least), share(least - 1), share(most), share(most + 1)) == (
        SUPPORTED, NOT_SUPPORTED, REVERSED, NOT_SUPPORTED)


def test_per_run_against_a_constant_and_the_magnitude_set_aside(tmp_path):
    claim = claim_of(tmp_path, "    direction: less\n    per_run: true\n    magnitude: 40\n    a: {method: x}\n"
                               "    than: 0.5\n")
    assert top(claim, frames({"x": np.array([0.1, 0.2, 0.4])})).verdict == SUPPORTED   # 40 never tested per run
    assert top(claim, frames({"x": np.array([0.1, 0.6, 0.4])})).verdict == NOT_SUPPORTED


# ---- the paper's printed ± beside ours ------------------------------------------------------------------------
OUTSIDE = HALF + 0.05                                       # the paper's magnitude this far from our estimate
NEEDED = math.sqrt(OUTSIDE ** 2 - HALF ** 2) / 2            # the u at which sqrt(HALF² + (2u)²) reaches it


@pytest.mark.parametrize("u, expected", [(None, DIRECTION_ONLY), (NEEDED - 0.002, DIRECTION_ONLY),
                                         (NEEDED + 0.002, SUPPORTED)])
def test_the_printed_uncertainty_widens_the_magnitude_test(tmp_path, u, expected):
    m = 1.0
    extra = f"    magnitude: {m + OUTSIDE}\n" + (f"    uncertainty: {u}\n" if u is not None else "")
    claim = claim_of(tmp_path, f"    direction: greater\n    a: {{method: x}}\n    b: {{method: y}}\n{extra}")
    assert verdict_of(claim, {"x": BASE + m + JITTER, "y": BASE}).verdict == expected


def test_single_values_within_twice_the_printed_uncertainty_match(tmp_path):
    body = "    direction: greater\n    a: {method: x}\n    b: {method: y}\n    magnitude: 3.0\n"
    one = {"x": np.array([1.2]), "y": np.array([0.0])}            # 1.2 is not within a factor of 2 of 3
    assert verdict_of(claim_of(tmp_path, body), one).verdict == DIRECTION_ONLY
    assert verdict_of(claim_of(tmp_path, body + "    uncertainty: 0.9\n"), one).verdict == SUPPORTED
    assert verdict_of(claim_of(tmp_path, body + "    uncertainty: 0.89\n"), one).verdict == DIRECTION_ONLY


def test_an_uncertainty_needs_a_magnitude(tmp_path):
    with pytest.raises(FyexpError, match="uncertainty: expected the paper's printed"):
        claim_of(tmp_path, "    direction: greater\n    a: {method: x}\n    b: {method: y}\n    uncertainty: 0.1\n")


# ---- kinds ---------------------------------------------------------------------------------------------------
def kind_claim(tmp_path, name, kind):
    return claim_of(tmp_path, f"    kind: {kind}\n    direction: greater\n    a: {{method: x}}\n    b: {{method: y}}\n",
                    name=name)


def test_theorem_checks_count_apart_and_table_readings_count_labelled(tmp_path):
    claims = [kind_claim(tmp_path, "c", "claim"), kind_claim(tmp_path, "t", "theorem_check"),
              kind_claim(tmp_path, "r", "table_reading")]
    f = frames({"x": BASE + 1 + JITTER, "y": BASE})
    verdicts = [v for c in claims for v in judge(c, f)]
    n, counts, checks, _, _ = tally(verdicts, "fyvi")
    assert (n, dict(counts), checks) == (2, {SUPPORTED: 2}, 0)
    assert summary_line(verdicts, "fyvi") == ("fyvi: 2 claims (2 supported; all at paper), 1 of them table "
                                              "readings; 1 theorem check (1 supported; all at paper)")
    text = [line for line, _ in short_lines(verdicts, 100)]
    assert any("[table reading]: toy" in line for line in text)
    title = text.index("Checks of the paper's theorems (counted apart from its claims)")
    assert text[title + 1].startswith("t ") and not any(line.startswith("t ") for line in text[:title])


def test_a_theorem_check_quotes_the_paper(tmp_path):
    from fyexp.claims.model import load_claims

    path = tmp_path / "theorem.yaml"
    path.write_text("claims:\n  - id: t\n    paper: tvem\n    kind: theorem_check\n    direction: greater\n"
                    "    rows: {experiment: gmm-clustering, metric: adjusted_mi}\n    a: {method: x}\n"
                    "    b: {method: y}\n")
    with pytest.raises(FyexpError, match="quote: expected the paper's words .* for a theorem_check"):
        load_claims(path)


# ---- output --------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("values", [np.zeros(4), np.array([0.0, 1e-30, 0.0, 2e-30]), np.array([3e-12, 0, 0, 0])])
def test_a_claim_against_a_tiny_constant_prints_an_interval_that_holds_its_own_estimate(tmp_path, values):
    claim = claim_of(tmp_path, "    direction: less\n    a: {method: x}\n    than: 1.0e-9\n")
    v = verdict_of(claim, {"x": values})
    shown = v.ours.split(" vs ")[0]
    estimate, interval = shown.split(" [")
    low, high = (float(x) for x in interval.rstrip("]").split(", "))
    assert low <= float(estimate) <= high, v.ours
    assert v.verdict == SUPPORTED


def test_a_long_note_several_claims_share_is_printed_once_after_the_table(tmp_path):
    from fyexp.claims.render import SHARED_NOTE
    from fyexp.claims.verdicts import Verdict

    long, short = "x" * SHARED_NOTE, "y" * (SHARED_NOTE - 1)
    claims = [kind_claim(tmp_path, name, "claim") for name in ("c1", "c2", "c3")]
    verdicts = [Verdict(claims[0], "paper", MISSING, notes=[long, short], headline=True),
                Verdict(claims[1], "paper", MISSING, notes=[long, short], headline=True),
                Verdict(claims[2], "paper", MISSING, notes=["z" * 200], headline=True)]
    text = [line for line, _ in short_lines(verdicts, 300)]
    assert sum(long in line for line in text) == 1 and f"[note 1] {long}" in text
    assert text.count(f"    [note 1]; {short}") == 2     # the shorter one stays inline, each time
    assert sum("z" * 200 in line for line in text) == 1 and not any(line.startswith("[note 2]") for line in text)
