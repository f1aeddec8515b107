"""The cell-agreement rule (fyexp/report/tolerance.py, ``judge``) at its edges: which spreads make the band, the
exact boundaries of ``exact``, ``within`` and the own-error flag, and the inputs that are not a number.

Written from the survivors of a mutation run (docs/contributing/mutation.md, "fyexp/report/tolerance.py"): each test below
fails under at least one mutant that the hand-made cases of tests/report/test_report_tolerance.py let through.  The
values are ours, not the paper's: paper = 0 makes ``diff`` the very float the rule compares with, so the
boundaries are hit exactly.
"""

from __future__ import annotations

import math

import pytest

from fyexp.report.tolerance import EXACT, NOT_RUN, NOT_SCORED, OUTSIDE, WITHIN, judge

SLACK_AT_ZERO = 1e-9   # the rule's rounding slack, 1e-9 · max(1, |paper|), at |paper| ≤ 1


@pytest.mark.parametrize("paper", ["n/a", None, "—"])
def test_a_published_cell_that_is_not_a_number_is_not_scored(paper):
    assert judge(1.0, paper, unit=0.1, n_ours=3).status == NOT_SCORED


@pytest.mark.parametrize("ours", ["n/a", None, float("inf")])
def test_our_mean_that_is_not_a_number_is_not_run(ours):
    assert judge(ours, 1.0, unit=0.1, n_ours=3).status == NOT_RUN


def test_a_cell_needs_both_a_finite_mean_and_at_least_one_seed():
    assert judge(1.0, 1.0, unit=0.1).status == NOT_RUN            # n_ours defaults to none: no rows of ours
    assert judge(1.0, 1.0, unit=0.1, n_ours=0).status == NOT_RUN
    assert judge(float("nan"), 1.0, unit=0.1, n_ours=3).status == NOT_RUN
    assert judge(1.0, 1.0, unit=0.1, n_ours=1).status == EXACT


@pytest.mark.parametrize("unit", [float("nan"), -0.01, 0.0, None])
def test_a_unit_that_is_not_positive_gives_no_printed_precision(unit):
    # no half-unit: only an identical number is exact, and a cell without spreads has a band of zero
    same = judge(2.5, 2.5, unit=unit, n_ours=1)
    assert same.status == EXACT and same.band == 0.0 and same.spreads == "precision"
    off = judge(2.5 + 1e-3, 2.5, unit=unit, n_ours=1)
    assert off.status == OUTSIDE and off.band == 0.0


@pytest.mark.parametrize("paper_se", [0.0, -0.05, float("nan"), None])
def test_a_paper_spread_that_is_not_positive_is_not_a_spread(paper_se):
    verdict = judge(1.05, 1.0, unit=0.01, paper_se=paper_se, n_ours=1)
    assert verdict.status == OUTSIDE and verdict.spreads == "precision" and verdict.band == pytest.approx(0.005)


@pytest.mark.parametrize("n_ours, ours_std", [(1, 0.5), (3, 0.0), (3, float("nan")), (3, -0.2)])
def test_our_spread_counts_only_from_two_seeds_with_a_positive_standard_deviation(n_ours, ours_std):
    verdict = judge(1.09, 1.0, unit=0.01, paper_se=0.05, ours_std=ours_std, n_ours=n_ours)
    assert verdict.spreads == "paper" and verdict.band == pytest.approx(0.1) and verdict.status == WITHIN
    alone = judge(1.05, 1.0, unit=0.01, ours_std=ours_std, n_ours=n_ours)
    assert alone.spreads == "precision" and alone.status == OUTSIDE


def test_two_seeds_are_enough_for_our_spread():
    band = 2 * 0.2 / math.sqrt(2)   # 0.283
    verdict = judge(1.28, 1.0, unit=0.01, ours_std=0.2, n_ours=2)
    assert verdict.status == WITHIN and verdict.spreads == "ours" and verdict.band == pytest.approx(band)
    assert judge(1.29, 1.0, unit=0.01, ours_std=0.2, n_ours=2).status == OUTSIDE


def test_an_exact_cell_still_reports_its_band_and_spreads():
    verdict = judge(1.0, 1.0, unit=0.01, paper_se=0.03, ours_std=0.08, n_ours=4)
    assert verdict.status == EXACT and verdict.band == pytest.approx(0.1) and verdict.spreads == "paper+ours"
    assert verdict.agrees and verdict.mark == "✓ exact" and not verdict.own_error_only


def test_exact_includes_its_boundary_half_a_unit_plus_the_slack():
    unit = 0.01
    at = 0.5 * unit + SLACK_AT_ZERO                       # the same float the rule compares with
    assert judge(at, 0.0, unit=unit, n_ours=1).status == EXACT
    assert judge(at, 0.0, unit=unit, paper_se=0.05, n_ours=1).status == EXACT
    past = judge(at + 1e-12, 0.0, unit=unit, paper_se=0.05, n_ours=1)
    assert past.status == WITHIN and past.mark == "✓ within"


def test_within_includes_its_boundary_the_band_plus_the_slack():
    band = 2.0 * math.sqrt(0.05 ** 2)
    at = band + SLACK_AT_ZERO
    assert judge(at, 0.0, unit=0.01, paper_se=0.05, n_ours=1).status == WITHIN
    assert judge(band + 0.5 * SLACK_AT_ZERO, 0.0, unit=0.01, paper_se=0.05, n_ours=1).status == WITHIN
    assert judge(at + 1e-12, 0.0, unit=0.01, paper_se=0.05, n_ours=1).status == OUTSIDE


def test_the_slack_is_relative_to_the_published_number_above_one():
    # 1e-9 · |paper|: a difference of half a unit and 5e-4 is rounding at 1e6, not at 1.5
    assert judge(1e6 + 0.5 + 5e-4, 1e6, unit=1.0, n_ours=1).status == EXACT
    assert judge(1e6 + 0.5 + 2e-3, 1e6, unit=1.0, n_ours=1).status == OUTSIDE
    # at |paper| = 1.5 the slack is 1.5e-9, not the 1e-9 floor nor a floor of 2e-9
    assert judge(1.5 + 0.005 + 1.4e-9, 1.5, unit=0.01, n_ours=1).status == EXACT
    assert judge(1.5 + 0.005 + 1.75e-9, 1.5, unit=0.01, n_ours=1).status == OUTSIDE


def test_the_own_error_flag_needs_a_declared_error_and_includes_its_boundary():
    own = 0.2
    at = own + SLACK_AT_ZERO
    flagged = judge(at, 0.0, unit=0.01, n_ours=1, own_tolerance=own)
    assert flagged.status == OUTSIDE and flagged.own_error_only and flagged.mark == "✗†"
    beyond = judge(at + 1e-12, 0.0, unit=0.01, n_ours=1, own_tolerance=own)
    assert beyond.status == OUTSIDE and not beyond.own_error_only and beyond.mark == "✗"
    for undeclared in (float("nan"), None):
        verdict = judge(0.1, 0.0, unit=0.01, n_ours=1, own_tolerance=undeclared)
        assert verdict.status == OUTSIDE and not verdict.own_error_only and verdict.mark == "✗"
