"""Every verdict rule on both sides of its threshold, in both directions, and the labels (reduced, variant, stale,
n = 1), on small synthetic frames whose values are not the papers'.

Paired rows with differences d_i = m + s·(−1, +1, −1, +1) have a 95% interval m ± t(0.975, 3)·s·sqrt(4/3)/2: with
s = 0.1 its half-width is :data:`HALF` ≈ 0.1837, so m = HALF ± 0.005 puts the interval just above 0 or just over it.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from fyexp.claims.model import load_claims
from fyexp.claims.render import long_lines, short_lines, summary_line, tally
from fyexp.claims.verdicts import (DIRECTION_ONLY, LOAD_NOTE, MISSING, NOT_SUPPORTED, REVERSED, SIGN_ONLY, SUPPORTED,
                                   UNRESOLVED, headline, judge, judge_all, n_to_resolve, profile_kind)
from fyexp.claims.stats import clopper_pearson, difference

SPREAD = 0.1
HALF = stats.t.ppf(0.975, 3) * SPREAD * math.sqrt(4 / 3) / 2
JITTER = np.array([-1.0, 1.0, -1.0, 1.0]) * SPREAD
BASE = np.array([3.0, 3.2, 2.9, 3.1])  # side b; side a = b + d


def claim_of(tmp_path, body: str, name: str = "toy"):
    """One claim on gmm-clustering's adjusted_mi rows, sides by method."""
    text = f"""
claims:
  - id: {name}
    paper: fyvi
    where: Table 9
    line: 12
    quote: "a toy sentence"
    claim: toy
    rows: {{experiment: gmm-clustering, metric: adjusted_mi}}
{body}
"""
    path = tmp_path / f"{name}.yaml"
    path.write_text(text)
    return load_claims(path).claims[0]


def frames(sides: dict[str, np.ndarray], profile: str = "paper", freshness: str = "fresh") -> dict:
    rows = [{"experiment": "gmm-clustering", "profile": profile, "method": m, "metric": "adjusted_mi", "value": v,
             "seed": i, "params": "{}", "status": "ok", "git_commit": "abc", "cell": f"{m}{i}",
             "freshness": freshness}
            for m, values in sides.items() for i, v in enumerate(np.atleast_1d(values))]
    return {"gmm-clustering": pd.DataFrame(rows)}


def verdict_of(claim, sides, **kw):
    top, = [v for v in judge(claim, frames(sides, **kw)) if v.headline]
    return top


PAIR = "    direction: {d}\n    a: {{method: x}}\n    b: {{method: y}}\n"


def pair(tmp_path, direction="greater", extra=""):
    return claim_of(tmp_path, PAIR.format(d=direction) + extra)


def test_half_width_is_what_the_module_docstring_says():
    d = difference(pd.DataFrame({"value": BASE + 0.5 + JITTER, "seed": range(4)}),
                   pd.DataFrame({"value": BASE, "seed": range(4)}))
    assert d.paired and (d.high - d.low) / 2 == pytest.approx(HALF)


# ---- greater / less ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("direction, sign", [("greater", 1), ("less", -1)])
@pytest.mark.parametrize("m, expected", [(HALF + 0.005, SUPPORTED), (HALF - 0.005, NOT_SUPPORTED),
                                         (-(HALF + 0.005), REVERSED), (-(HALF - 0.005), NOT_SUPPORTED)])
def test_pairwise_interval_against_zero(tmp_path, direction, sign, m, expected):
    v = verdict_of(pair(tmp_path, direction), {"x": BASE + sign * (m + JITTER), "y": BASE})
    assert v.verdict == expected and v.n == "4 pairs"


@pytest.mark.parametrize("offset, expected", [(-0.01, SUPPORTED), (0.01, DIRECTION_ONLY)])
def test_magnitude_just_inside_or_outside_either_end(tmp_path, offset, expected):
    m = 1.0  # interval [1 - HALF, 1 + HALF]
    for end, sign in ((1 + HALF, 1), (1 - HALF, -1)):  # the paper's magnitude at each end of the interval
        magnitude = end + sign * offset
        claim = pair(tmp_path, extra=f"    magnitude: {magnitude}\n")
        assert verdict_of(claim, {"x": BASE + m + JITTER, "y": BASE}).verdict == expected


def test_less_with_a_magnitude_mirrors(tmp_path):
    sides = {"x": BASE - 1.0 - JITTER, "y": BASE}
    assert verdict_of(pair(tmp_path, "less", "    magnitude: -1.1\n"), sides).verdict == SUPPORTED
    assert verdict_of(pair(tmp_path, "less", f"    magnitude: {-1 - HALF - 0.01}\n"), sides).verdict == DIRECTION_ONLY


def test_relative_magnitude_scales_by_b(tmp_path):
    # d = 0.5 ± HALF on b ≈ 3.05: in percent 100·[0.5 - HALF, 0.5 + HALF]/3.05
    low, high = 100 * (0.5 - HALF) / BASE.mean(), 100 * (0.5 + HALF) / BASE.mean()
    sides = {"x": BASE + 0.5 + JITTER, "y": BASE}
    for magnitude, expected in ((low + 0.1, SUPPORTED), (low - 0.1, DIRECTION_ONLY), (high - 0.1, SUPPORTED),
                                (high + 0.1, DIRECTION_ONLY)):
        claim = pair(tmp_path, extra=f"    magnitude: {magnitude}\n    magnitude_kind: relative\n")
        assert verdict_of(claim, sides).verdict == expected, magnitude
    assert "(+16.4%)" in verdict_of(claim, sides).ours


def test_a_tie_holding_the_papers_magnitude_is_unresolved_and_says_which_n(tmp_path):
    sides = {"x": BASE + 0.1 + JITTER, "y": BASE}  # interval 0.1 ± 0.184: holds 0
    unresolved = verdict_of(pair(tmp_path, extra="    magnitude: 0.2\n"), sides)
    assert unresolved.verdict == UNRESOLVED
    assert unresolved.n_to_resolve == math.ceil(4 * (HALF / 0.2) ** 2)  # 4 runs would still not do: 4·0.84 → 4
    assert f"about n = {unresolved.n_to_resolve}" in unresolved.label
    outside = verdict_of(pair(tmp_path, extra="    magnitude: 0.5\n"), sides)
    assert outside.verdict == NOT_SUPPORTED and outside.n_to_resolve == math.ceil(4 * (HALF / 0.1) ** 2)
    assert verdict_of(pair(tmp_path), sides).verdict == NOT_SUPPORTED  # no magnitude printed: not supported


def test_n_to_resolve_scales_with_the_square_of_the_ratio():
    d = difference(pd.DataFrame({"value": BASE + 0.1 + JITTER, "seed": range(4)}),
                   pd.DataFrame({"value": BASE, "seed": range(4)}))
    assert n_to_resolve(d, 0.05) == math.ceil(4 * (HALF / 0.05) ** 2) and n_to_resolve(d, 0.0) is None
    assert n_to_resolve(d, 10.0) == 4  # never fewer runs than we have


def test_n_to_resolve_beyond_a_thousand_runs_says_so(tmp_path):
    v = verdict_of(pair(tmp_path, extra="    magnitude: 0.002\n"), {"x": BASE + 0.001 + JITTER, "y": BASE})
    assert v.verdict == UNRESOLVED and "even 1000 runs would not resolve it" in v.label


@pytest.mark.parametrize("a, expected", [(0.7, SUPPORTED), (0.3, REVERSED), (0.5, NOT_SUPPORTED)])
def test_single_values_decide_by_sign(tmp_path, a, expected):
    v = verdict_of(pair(tmp_path), {"x": np.array([a]), "y": np.array([0.5])})
    assert v.verdict == expected and SIGN_ONLY in v.label and v.n == "1 vs 1"


@pytest.mark.parametrize("magnitude, expected", [(0.125, SUPPORTED), (0.5, SUPPORTED), (0.124, DIRECTION_ONLY),
                                                 (0.501, DIRECTION_ONLY)])
def test_single_values_match_a_magnitude_within_a_factor_of_two(tmp_path, magnitude, expected):
    v = verdict_of(pair(tmp_path, extra=f"    magnitude: {magnitude}\n"), {"x": np.array([0.75]), "y": np.array([0.5])})
    assert v.verdict == expected  # ours is 0.25: 0.125 and 0.5 are the factor-2 ends


@pytest.mark.parametrize("than, expected", [(2.8, SUPPORTED), (3.1, NOT_SUPPORTED), (3.3, REVERSED)])
def test_against_a_constant(tmp_path, than, expected):
    claim = claim_of(tmp_path, f"    direction: greater\n    than: {than}\n    a: {{method: x}}\n")
    v = verdict_of(claim, {"x": BASE})  # mean 3.05, interval ± 0.205
    assert v.verdict == expected and v.n == "4"


# ---- approx ----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("sign", [1, -1])
@pytest.mark.parametrize("delta, expected", [(0.3 + HALF + 0.005, SUPPORTED), (0.3 + HALF - 0.005, UNRESOLVED),
                                             (0.3 - HALF + 0.005, UNRESOLVED), (0.3 - HALF - 0.005, NOT_SUPPORTED)])
def test_approx_is_an_equivalence_test(tmp_path, sign, delta, expected):
    """The interval 0.3 ± HALF (mirrored with the sign): within ±delta when delta passes its far end, wholly beyond
    when delta stays below its near end, undecided between."""
    claim = claim_of(tmp_path, f"    direction: approx\n    delta: {delta}\n    a: {{method: x}}\n    b: {{method: y}}\n")
    assert verdict_of(claim, {"x": BASE + sign * (0.3 + JITTER), "y": BASE}).verdict == expected


def test_approx_with_one_value_uses_the_difference(tmp_path):
    claim = claim_of(tmp_path, "    direction: approx\n    delta: 0.2\n    a: {method: x}\n    b: {method: y}\n")
    assert verdict_of(claim, {"x": np.array([0.69]), "y": np.array([0.5])}).verdict == SUPPORTED
    assert verdict_of(claim, {"x": np.array([0.71]), "y": np.array([0.5])}).verdict == NOT_SUPPORTED
    assert verdict_of(claim, {"x": np.array([0.29]), "y": np.array([0.5])}).verdict == NOT_SUPPORTED


def test_approx_against_a_constant(tmp_path):
    claim = claim_of(tmp_path, "    direction: approx\n    delta: 0.3\n    than: 3.0\n    a: {method: x}\n")
    assert verdict_of(claim, {"x": BASE}).verdict == SUPPORTED  # 0.05 ± 0.24 within ± 0.3
    claim = claim_of(tmp_path, "    direction: approx\n    delta: 0.2\n    than: 3.0\n    a: {method: x}\n")
    assert verdict_of(claim, {"x": BASE}).verdict == UNRESOLVED         # 0.05 ± 0.24 reaches past 0.2
    claim = claim_of(tmp_path, "    direction: approx\n    delta: 0.2\n    than: 2.5\n    a: {method: x}\n")
    assert verdict_of(claim, {"x": BASE}).verdict == NOT_SUPPORTED      # 0.55 ± 0.24: wholly beyond 0.2


# ---- best of -----------------------------------------------------------------------------------------------------
BEST = "    direction: best_of\n    better: {b}\n    a: {{method: x}}\n    others: [{{method: y}}, {{method: z}}]\n{extra}"


@pytest.mark.parametrize("better, sign", [("greater", 1), ("less", -1)])
def test_best_of_needs_every_comparison(tmp_path, better, sign):
    claim = claim_of(tmp_path, BEST.format(b=better, extra=""))
    far = BASE - sign * 1.0
    assert verdict_of(claim, {"x": BASE + sign * (HALF + 0.005 + JITTER), "y": BASE, "z": far}).verdict == SUPPORTED
    tie = {"x": BASE + sign * (HALF - 0.005 + JITTER), "y": BASE, "z": far}
    assert verdict_of(claim, tie).verdict == NOT_SUPPORTED
    lost = {"x": BASE - sign * (HALF + 0.005 + JITTER), "y": BASE, "z": far}
    assert verdict_of(claim, lost).verdict == REVERSED


@pytest.mark.parametrize("better, sign", [("greater", 1), ("less", -1)])
def test_best_of_checks_the_printed_margin_against_the_runner_up(tmp_path, better, sign):
    sides = {"x": BASE + sign * (1.0 + JITTER), "y": BASE, "z": BASE - sign * 2.0}  # runner-up y: margin 1 ± HALF
    inside = claim_of(tmp_path, BEST.format(b=better, extra=f"    magnitude: {sign * (1 + HALF - 0.01)}\n"))
    outside = claim_of(tmp_path, BEST.format(b=better, extra=f"    magnitude: {sign * (1 + HALF + 0.01)}\n"))
    v = verdict_of(inside, sides)
    assert v.verdict == SUPPORTED and "best other" in v.ours and v.estimate == pytest.approx(sign * 1.0)
    assert verdict_of(outside, sides).verdict == DIRECTION_ONLY


# ---- monotone ----------------------------------------------------------------------------------------------------
MONO = "    direction: monotone\n    trend: {t}\n    series: [{{method: x}}, {{method: y}}, {{method: z}}]\n"


@pytest.mark.parametrize("trend, sign", [("increasing", 1), ("decreasing", -1)])
def test_monotone_each_step_in_the_trend(tmp_path, trend, sign):
    claim = claim_of(tmp_path, MONO.format(t=trend))
    step = HALF + 0.005
    up = {"x": BASE, "y": BASE + sign * (step + JITTER), "z": BASE + sign * (2 * step + 2 * JITTER)}
    assert verdict_of(claim, up).verdict == SUPPORTED
    flat = {"x": BASE, "y": BASE + sign * (step + JITTER), "z": BASE + sign * (2 * step - 0.01 + 2 * JITTER)}
    assert verdict_of(claim, flat).verdict == NOT_SUPPORTED  # second step only HALF - 0.005
    down = {"x": BASE, "y": BASE - sign * (step + JITTER), "z": BASE - sign * (2 * step + 2 * JITTER)}
    assert verdict_of(claim, down).verdict == REVERSED
    mixed = {"x": BASE, "y": BASE + sign * (step + JITTER), "z": BASE}
    assert verdict_of(claim, mixed).verdict == NOT_SUPPORTED  # one step with, one against: not all against


# ---- fraction ----------------------------------------------------------------------------------------------------
def fraction(tmp_path, at_least=0.5, magnitude=None):
    extra = "" if magnitude is None else f"    magnitude: {magnitude}\n"
    return claim_of(tmp_path, f"    direction: fraction\n    at_least: {at_least}\n    a: {{method: x}}\n" + extra)


@pytest.mark.parametrize("k, expected", [(10, NOT_SUPPORTED), (14, NOT_SUPPORTED), (15, SUPPORTED),
                                         (6, NOT_SUPPORTED), (5, REVERSED)])
def test_most_runs_means_the_interval_is_above_half(tmp_path, k, expected):
    # Clopper–Pearson at n = 20: 14/20 → [0.457, 0.881] (holds 0.5), 15/20 → [0.509, 0.913] (above);
    # 6/20 → [0.119, 0.543] (holds 0.5), 5/20 → [0.087, 0.491] (below)
    share = np.array([1.0] * k + [0.0] * (20 - k))
    v = verdict_of(fraction(tmp_path), {"x": share})
    ci = stats.binomtest(k, 20).proportion_ci(0.95, method="exact")
    state = SUPPORTED if ci.low > 0.5 else REVERSED if ci.high < 0.5 else NOT_SUPPORTED
    assert v.verdict == state == expected and v.n == "20" and v.low == pytest.approx(ci.low)


def test_ten_of_twenty_is_not_most_runs(tmp_path):
    v = verdict_of(fraction(tmp_path), {"x": np.array([1.0, 0.0] * 10)})
    assert v.verdict == NOT_SUPPORTED and "not above 50%" in v.label


def test_fraction_magnitude_inside_or_outside_the_interval(tmp_path):
    share = np.array([1.0] * 17 + [0.0] * 3)  # [0.621, 0.968]
    assert verdict_of(fraction(tmp_path, magnitude=0.63), {"x": share}).verdict == SUPPORTED
    assert verdict_of(fraction(tmp_path, magnitude=0.61), {"x": share}).verdict == DIRECTION_ONLY
    assert verdict_of(fraction(tmp_path, magnitude=0.96), {"x": share}).verdict == SUPPORTED
    assert verdict_of(fraction(tmp_path, magnitude=0.97), {"x": share}).verdict == DIRECTION_ONLY


# ---- ratio -------------------------------------------------------------------------------------------------------
def ratio(tmp_path, direction="ratio_below", threshold=1.0, magnitude=None):
    extra = "" if magnitude is None else f"    magnitude: {magnitude}\n"
    return claim_of(tmp_path, f"    direction: {direction}\n    threshold: {threshold}\n    a: {{method: x}}\n"
                              f"    b: {{method: y}}\n" + extra)


def _ratio_sides(log_mean: float) -> dict:
    """a = b·exp(log_mean + jitter): the interval of the log ratio is log_mean ± HALF."""
    return {"x": BASE * np.exp(log_mean + JITTER), "y": BASE}


@pytest.mark.parametrize("direction, sign", [("ratio_below", -1), ("ratio_above", 1)])
def test_ratio_interval_against_the_threshold(tmp_path, direction, sign):
    for log_mean, expected in ((sign * (HALF + 0.005), SUPPORTED), (sign * (HALF - 0.005), NOT_SUPPORTED),
                               (-sign * (HALF + 0.005), REVERSED)):
        assert verdict_of(ratio(tmp_path, direction), _ratio_sides(log_mean)).verdict == expected, log_mean


def test_ratio_threshold_other_than_one(tmp_path):
    sides = _ratio_sides(math.log(2.0) - HALF - 0.005)  # the interval's top just below log 2
    assert verdict_of(ratio(tmp_path, threshold=2.0), sides).verdict == SUPPORTED
    sides = _ratio_sides(math.log(2.0) - HALF + 0.005)
    assert verdict_of(ratio(tmp_path, threshold=2.0), sides).verdict == NOT_SUPPORTED


def test_ratio_magnitude_inside_or_outside(tmp_path):
    sides = _ratio_sides(-0.5)  # geometric-mean ratio interval exp(-0.5 ± HALF) = [0.505, 0.730]
    top = math.exp(-0.5 + HALF)
    assert verdict_of(ratio(tmp_path, magnitude=top - 0.005), sides).verdict == SUPPORTED
    assert verdict_of(ratio(tmp_path, magnitude=top + 0.005), sides).verdict == DIRECTION_ONLY


def test_ratio_of_single_values_by_sign_and_factor_two(tmp_path):
    sides = {"x": np.array([1.0]), "y": np.array([4.0])}  # ratio 0.25
    assert verdict_of(ratio(tmp_path, magnitude=0.5), sides).verdict == SUPPORTED
    assert verdict_of(ratio(tmp_path, magnitude=0.51), sides).verdict == DIRECTION_ONLY
    assert verdict_of(ratio(tmp_path, magnitude=0.125), sides).verdict == SUPPORTED
    assert verdict_of(ratio(tmp_path, magnitude=0.12), sides).verdict == DIRECTION_ONLY


def _timing_ratio(tmp_path, metric="train_time_s", magnitude=0.42):
    path = tmp_path / "timing.yaml"
    path.write_text(f"""
claims:
  - id: timing
    paper: vr
    where: Sec. 5.1
    line: 276
    quote: "a toy sentence"
    claim: toy
    direction: ratio_below
    threshold: 1
    magnitude: {magnitude}
    rows: {{experiment: vr-vae, metric: {metric}}}
    a: {{method: x}}
    b: {{method: y}}
""")
    return load_claims(path).claims[0]


def _timing_frames(sides: dict, metric: str) -> dict:
    frame = frames(sides)["gmm-clustering"]
    return {"vr-vae": frame.assign(metric=metric, experiment="vr-vae")}


@pytest.mark.parametrize("x", [0.3, 0.42, 1.11, 3.0])
def test_a_ratio_of_single_wall_times_is_not_resolved_whatever_its_sign(tmp_path, x):
    """One wall time per side, from separate runs, moves with the machine's load (vr-vae's cpu VR-max / IWAE read
    0.775 and 1.11 from identical cells): at n = 1 the verdict is unresolved and says why; the same single values of
    a metric that is no wall time are judged by their sign, as before."""
    sides = {"x": np.array([x]), "y": np.array([1.0])}
    top, = [v for v in judge(_timing_ratio(tmp_path), _timing_frames(sides, "train_time_s")) if v.headline]
    assert top.verdict == UNRESOLVED and top.notes == [LOAD_NOTE]
    top, = [v for v in judge(_timing_ratio(tmp_path, "test_loglik"), _timing_frames(sides, "test_loglik"))
            if v.headline]
    assert top.verdict == (SUPPORTED if x < 0.84 else DIRECTION_ONLY if x < 1 else REVERSED)
    assert top.notes == [SIGN_ONLY]


def test_wall_times_with_an_interval_are_judged_as_any_ratio(tmp_path):
    """n >= 2 per side: the interval carries the runs' spread, load included, and decides as for any ratio."""
    below = _ratio_sides(-(HALF + 0.005))
    top, = [v for v in judge(_timing_ratio(tmp_path, "epoch_time_s", magnitude=0.8), _timing_frames(below, "epoch_time_s"))
            if v.headline]
    assert top.verdict == SUPPORTED and LOAD_NOTE not in top.notes
    tie = _ratio_sides(-(HALF - 0.005))
    top, = [v for v in judge(_timing_ratio(tmp_path, "epoch_time_s", magnitude=0.8), _timing_frames(tie, "epoch_time_s"))
            if v.headline]
    assert top.verdict in (NOT_SUPPORTED, UNRESOLVED) and LOAD_NOTE not in top.notes


# ---- profiles, headline and labels ---------------------------------------------------------------------------
def test_profile_kinds():
    assert [profile_kind(p) for p in ("paper", "paper+lr=1e-4", "paper-lr1e-4", "paper~superseded-ab12", "cpu",
                                      None)] == ["paper", "variant", "variant", "variant", "reduced", "paper"]


def _many(*parts) -> dict:
    return {"gmm-clustering": pd.concat([f["gmm-clustering"] for f in parts], ignore_index=True)}


def test_headline_is_the_paper_profile_and_variants_never_are(tmp_path):
    claim = pair(tmp_path)
    win = {"x": BASE + 1 + JITTER, "y": BASE}
    loss = {"x": BASE - 1 + JITTER, "y": BASE}
    everything = judge(claim, _many(frames(loss, "paper+lr=1"), frames(win, "paper"), frames(loss, "cpu")))
    top, = [v for v in everything if v.headline]
    assert top.profile == "paper" and top.verdict == SUPPORTED and len(everything) == 3
    variant = next(v for v in everything if v.profile == "paper+lr=1")
    assert variant.variant and "(variant paper+lr=1)" in variant.label


def test_without_the_paper_profile_the_reduced_one_with_most_rows_is_the_headline(tmp_path):
    claim = pair(tmp_path)
    few = frames({"x": BASE[:2] - 1, "y": BASE[:2]}, "quick")
    many = frames({"x": BASE + 1 + JITTER, "y": BASE}, "cpu")
    top = headline(judge(claim, _many(few, many, frames({"x": BASE - 1, "y": BASE}, "paper-lr1e-4"))))
    assert top.profile == "cpu" and top.reduced and "(reduced profile cpu)" in top.label
    top = headline(judge(claim, _many(many, few)))  # order of appearance does not matter
    assert top.profile == "cpu"


def test_a_paper_profile_missing_a_side_falls_back_to_a_reduced_one(tmp_path):
    claim = pair(tmp_path)
    half = frames({"x": BASE}, "paper")
    top = headline(judge(claim, _many(half, frames({"x": BASE + 1 + JITTER, "y": BASE}, "cpu"))))
    assert top.profile == "cpu" and top.verdict == SUPPORTED
    top = headline(judge(claim, half))
    assert top.verdict == MISSING and top.profile == "paper"


def test_only_variants_make_no_headline_verdict(tmp_path):
    verdicts = judge(pair(tmp_path), frames({"x": BASE + 1 + JITTER, "y": BASE}, "paper+lr=1"))
    top, = [v for v in verdicts if v.headline]
    assert top.verdict == MISSING and "only variants ran (paper+lr=1)" in top.label
    assert len(verdicts) == 2  # the variant's own verdict stays, not as the headline


def test_stale_rows_are_counted_once_per_paper(tmp_path):
    one, two = pair(tmp_path), claim_of(tmp_path, PAIR.format(d="greater"), name="toy-two")
    data = frames({"x": BASE + 1 + JITTER, "y": BASE}, freshness="stale")
    verdicts = judge_all([one, two], data)
    assert [len(v.stale) for v in verdicts] == [8, 8] and all("stale" not in v.label for v in verdicts)
    assert tally(verdicts, "fyvi")[3] == 8  # the same 8 rows behind both claims: 8, not 16
    assert "8 stale rows behind these verdicts" in summary_line(verdicts, "fyvi")
    fresh = judge_all([one], frames({"x": BASE + 1 + JITTER, "y": BASE}))
    assert tally(fresh, "fyvi")[3] == 0 and "stale" not in summary_line(fresh, "fyvi")


def test_dirty_rows_are_counted(tmp_path):
    data = frames({"x": BASE + 1 + JITTER, "y": BASE})
    data["gmm-clustering"].loc[:1, "git_commit"] = "abc+dirty"
    v, = judge(pair(tmp_path), data, {"gmm-clustering": object()})
    assert len(v.dirty) == 2 and "2 dirty" in summary_line([v], "fyvi")


def test_tallies_count_claims_not_judgements_and_never_checks(tmp_path):
    claim = pair(tmp_path)
    check = claim_of(tmp_path, PAIR.format(d="greater") + "    kind: check\n    note: ours\n", name="ours")
    data = _many(frames({"x": BASE + 1 + JITTER, "y": BASE}, "paper"), frames({"x": BASE - 1, "y": BASE}, "cpu"),
                 frames({"x": BASE - 1, "y": BASE}, "quick"))
    verdicts = judge_all([claim, check], data)
    assert len(verdicts) == 6
    claims, counts, checks, _, _ = tally(verdicts, "fyvi")
    assert (claims, dict(counts), checks) == (1, {SUPPORTED: 1}, 1)
    assert summary_line(verdicts, "fyvi").startswith("fyvi: 1 claim (1 supported; all at paper); 1 check of ours")


def test_default_view_shows_the_headline_and_wraps_without_cutting(tmp_path):
    numbers = "1677.2 ± 3.4, 1672.8 ± 5.9, 1639.3 ± 4.5, 1583.2 ± 14.6 " * 3
    claim = claim_of(tmp_path, PAIR.format(d="greater") + f'    paper_numbers: "{numbers}"\n',
                     name="toy-" + "-".join(f"word{i}" for i in range(10)))
    verdicts = judge(claim, _many(frames({"x": BASE + 1 + JITTER, "y": BASE}, "paper"),
                                  frames({"x": BASE - 1, "y": BASE}, "cpu")))
    short = [line for line, _ in short_lines(verdicts, 100)]
    assert max(len(line) for line in short) <= 100 and claim.id in short  # a long id: whole, on its own line
    joined = " ".join(line.strip() for line in short)
    assert numbers.strip() in joined and "…" not in joined
    assert "cpu" not in joined  # the other profile only with all_profiles
    shown = " ".join(line for line, _ in short_lines(verdicts, 100, all_profiles=True))
    assert "also at" in shown and "cpu*" in shown and "reversed" in shown


def test_long_view_never_cuts_a_field(tmp_path):
    quote = "a sentence of the paper " * 12
    claim = load_claims_text(tmp_path, quote)
    v, = judge(claim, frames({"x": BASE + 1 + JITTER, "y": BASE}))
    v.notes.append("a long note " * 15)
    lines = [line for line, _ in long_lines([v], 80)]
    joined = " ".join(line.strip() for line in lines)
    assert " ".join(quote.split()) in " ".join(joined.split()) and ("a long note " * 15).strip() in joined
    assert claim.id in joined and f"[{v.low:.4g}, {v.high:.4g}]" in joined and "…" not in joined


def load_claims_text(tmp_path, quote):
    path = tmp_path / "long.yaml"
    path.write_text(f"""
claims:
  - id: toy-{'x' * 120}
    paper: fyvi
    where: Table 9
    line: 12
    quote: "{quote}"
    claim: toy
    rows: {{experiment: gmm-clustering, metric: adjusted_mi}}
{PAIR.format(d='greater')}""")
    return load_claims(path).claims[0]


# ---- rows a verdict may read -----------------------------------------------------------------------------------
def test_rows_at_old_settings_never_feed_a_verdict(monkeypatch):
    import fyexp.run.spec_freshness
    import fyexp.store.provenance.freshness as fr
    from fyexp.claims.verdicts import current_rows

    frame = frames({"x": BASE})["gmm-clustering"]
    monkeypatch.setattr(fyexp.run.spec_freshness, "row_freshness", lambda spec, f, folder, code: pd.Series(
        [fr.Freshness("k", "r", None, old) for old in (True, False, None, True)][:len(f)], index=f.index, dtype=object))
    kept = current_rows(None, frame, None)
    assert list(kept["seed"]) == [1, 2]  # changed: dropped; unchanged or cannot tell: kept
    assert current_rows(None, frame.iloc[:0], None).empty


def test_derived_tvem_rows_read_the_saved_trace_and_the_rows(tmp_path):
    import json

    from fyexp.claims.derived import GAP, LARGEST_DROP, largest_drop, with_derived

    assert largest_drop([1.0, 2.0, 1.5, 3.0]) == 0.5 and largest_drop([1.0, 2.0, 2.0]) == 0.0
    assert largest_drop([1.0, 0.75, 0.7]) == 0.25 and math.isnan(largest_drop([1.0]))
    rows = pd.DataFrame([{"experiment": "tvem-bsc", "profile": "paper", "cell": c, "metric": m, "value": v,
                          "seed": s, "git_commit": "abc", "freshness": "stale"}
                         for c, s in (("tvem__n_states=5__seed=0", 0), ("tvem__n_states=5__seed=1", 1))
                         for m, v in (("free_energy", -60.0 - s), ("log_likelihood", -59.5 - s))])
    fits = tmp_path / "artifacts" / "paper" / "fits"
    fits.mkdir(parents=True)
    (fits / "tvem__n_states=5__seed=0.json").write_text(json.dumps({"free_energy": [-70.0, -65.0, -65.25, -60.0]}))
    out = with_derived("tvem-bsc", rows, tmp_path)
    gap = out[out["metric"] == GAP]
    assert list(gap["value"]) == [0.5, 0.5] and set(gap["source_metric"]) == {"free_energy"}
    drop = out[out["metric"] == LARGEST_DROP]
    assert list(drop["value"]) == [0.25] and list(drop["seed"]) == [0]  # seed 1 saved no trace: no row
    assert list(drop["freshness"]) == ["stale"]  # as stale as the run it reads
    assert with_derived("gmm-clustering", rows, tmp_path) is rows


def test_a_derived_row_and_its_source_count_as_one_stale_row():
    from fyexp.claims.verdicts import _freshness

    source = frames({"x": BASE}, freshness="stale")["gmm-clustering"]
    derived = source.assign(metric="free_energy_gap", source_metric="adjusted_mi")
    stale, dirty = _freshness({"a": source, "b": derived, "others": [], "series": []}, {})
    assert len(stale) == 4 and not dirty
    stale, _ = _freshness({"a": source, "b": derived.drop(columns="source_metric"), "others": [], "series": []}, {})
    assert len(stale) == 8  # without its source named, a derived row would count again


# ---- exact edges (the mutation run's survivors: each test kills a flipped comparison or a dropped text) ---------
def test_approx_edges_are_inside(tmp_path):
    claim = claim_of(tmp_path, "    direction: approx\n    delta: 0.25\n    a: {method: x}\n    b: {method: y}\n")
    for a, b in ((0.5, 0.75), (0.75, 0.5)):  # the difference exactly ∓delta: within
        v = verdict_of(claim, {"x": np.array([a]), "y": np.array([b])})
        assert v.verdict == SUPPORTED and v.ours.endswith("(δ = 0.25)") and v.n == "1 vs 1"


def test_fraction_edges_and_texts(tmp_path):
    share = np.array([1.0] * 17 + [0.0] * 3)
    # the verdict's own interval, to the last bit (scipy.stats' brentq ends differ from it by ~1e-14,
    # tests/claims/test_claims_stats.py)
    ci = SimpleNamespace(**dict(zip(("low", "high"), clopper_pearson(17, 20))))
    for edge in (ci.low, ci.high):  # the paper's share exactly at an end of the interval: inside
        v = verdict_of(fraction(tmp_path, magnitude=repr(float(edge))), {"x": share})
        assert v.verdict == SUPPORTED and v.notes == [] and v.estimate == 0.85
    assert v.ours == f"85% of runs [{ci.low:.0%}, {ci.high:.0%}]" and (v.low, v.high) == (ci.low, ci.high)
    edge = verdict_of(fraction(tmp_path, at_least=repr(float(ci.low))), {"x": share})
    assert edge.verdict == NOT_SUPPORTED  # the interval's bottom exactly at at_least: not above it
    top = verdict_of(fraction(tmp_path, at_least=repr(float(ci.high))), {"x": share})
    assert top.verdict == NOT_SUPPORTED  # its top exactly at at_least: not below it either


def test_monotone_compares_each_neighbour(tmp_path):
    claim = claim_of(tmp_path, MONO.format(t="increasing"))
    dip = {"x": BASE, "y": BASE - 1 + JITTER, "z": BASE + 1 + JITTER}  # x → z rises, x → y falls
    v = verdict_of(claim, dip)
    assert v.verdict == NOT_SUPPORTED and v.ours == "3.05 → 2.05 → 4.05" and v.n == "4+" and v.notes == []
    single = verdict_of(claim, {"x": np.array([1.0]), "y": np.array([2.0]), "z": np.array([3.0])})
    assert single.verdict == SUPPORTED and single.notes == [SIGN_ONLY]


def test_a_tie_at_a_printed_magnitude_of_zero_names_no_n(tmp_path):
    v = verdict_of(pair(tmp_path, extra="    magnitude: 0\n"), {"x": BASE + 0.1 + JITTER, "y": BASE})
    assert v.verdict == UNRESOLVED and v.n_to_resolve is None and "about n" not in v.label
    assert "the interval holds 0 and the paper's 0" in v.label


def test_largest_drop_of_two_values():
    from fyexp.claims.derived import largest_drop

    assert largest_drop([2.0, 1.5]) == 0.5 and largest_drop([1, 3]) == -2.0


# ---- every field of a verdict, per rule (a dropped or swapped field is a wrong report even when the word is right)
def _fields(v):
    return (v.claim.id, v.profile, v.verdict, v.ours, v.n, v.notes,
            None if v.low is None else round(v.low, 4), None if v.high is None else round(v.high, 4),
            None if v.estimate is None else round(v.estimate, 4))


def test_fields_of_a_pairwise_verdict(tmp_path):
    v = verdict_of(pair(tmp_path), {"x": BASE + 1 + JITTER, "y": BASE})
    low, high = round(1 - HALF, 4), round(1 + HALF, 4)
    assert _fields(v) == ("toy", "paper", SUPPORTED, f"4.05 vs 3.05; diff 1 [{1 - HALF:.4g}, {1 + HALF:.4g}]",
                          "4 pairs", [], low, high, 1.0)


def test_fields_of_an_approx_verdict(tmp_path):
    claim = claim_of(tmp_path, "    direction: approx\n    delta: 2\n    a: {method: x}\n    b: {method: y}\n")
    v = verdict_of(claim, {"x": BASE + 1 + JITTER, "y": BASE})
    assert _fields(v) == ("toy", "paper", SUPPORTED, f"4.05 vs 3.05; diff 1 [{1 - HALF:.4g}, {1 + HALF:.4g}] (δ = 2)",
                          "4 pairs", [], round(1 - HALF, 4), round(1 + HALF, 4), 1.0)
    one = verdict_of(claim, {"x": np.array([1.0]), "y": np.array([0.5])})
    assert _fields(one) == ("toy", "paper", SUPPORTED, "1 vs 0.5 (δ = 2)", "1 vs 1", [SIGN_ONLY], None, None, 0.5)


def test_fields_of_a_monotone_verdict(tmp_path):
    claim = claim_of(tmp_path, MONO.format(t="decreasing"))
    v = verdict_of(claim, {"x": BASE + 2, "y": BASE[:3] + 1, "z": BASE})
    assert _fields(v) == ("toy", "paper", SUPPORTED, "5.05 → 4.033 → 3.05", "3+", [], None, None, None)
    one = verdict_of(claim, {"x": np.array([3.0]), "y": np.array([2.0]), "z": np.array([1.0])})
    assert _fields(one) == ("toy", "paper", SUPPORTED, "3 → 2 → 1", "1+", [SIGN_ONLY], None, None, None)


def test_fields_of_a_best_of_verdict(tmp_path):
    claim = claim_of(tmp_path, BEST.format(b="less", extra="    magnitude: -1\n"))
    v = verdict_of(claim, {"x": BASE - 1 + JITTER, "y": BASE, "z": BASE + 2})
    assert _fields(v) == ("toy", "paper", SUPPORTED,
                          f"2.05 vs best other 3.05; margin -1 [{-1 - HALF:.4g}, {-1 + HALF:.4g}]", "4+", [],
                          round(-1 - HALF, 4), round(-1 + HALF, 4), -1.0)
    one = verdict_of(claim, {"x": np.array([1.0]), "y": np.array([2.0]), "z": np.array([4.0])})
    assert _fields(one) == ("toy", "paper", SUPPORTED, "1 vs best other 2; margin -1", "1+", [SIGN_ONLY],
                            None, None, -1.0)


def test_fields_of_a_ratio_verdict(tmp_path):
    v = verdict_of(ratio(tmp_path), _ratio_sides(-1.0))
    low, high = math.exp(-1 - HALF), math.exp(-1 + HALF)
    assert _fields(v)[:5] == ("toy", "paper", SUPPORTED, f"ratio {v.estimate:.3g} [{low:.3g}, {high:.3g}]", "4 pairs")
    assert (v.low, v.high) == (pytest.approx(low), pytest.approx(high)) and v.notes == []
    assert v.estimate == pytest.approx((BASE * np.exp(-1 + JITTER)).mean() / BASE.mean())
    one = verdict_of(ratio(tmp_path), {"x": np.array([1.0]), "y": np.array([4.0])})
    assert _fields(one) == ("toy", "paper", SUPPORTED, "ratio 0.25", "1 vs 1", [SIGN_ONLY], None, None, 0.25)


def test_fields_of_a_fraction_verdict(tmp_path):
    v = verdict_of(fraction(tmp_path), {"x": np.array([1.0] * 17 + [0.0] * 3)})
    ci = stats.binomtest(17, 20).proportion_ci(0.95, method="exact")
    assert _fields(v) == ("toy", "paper", SUPPORTED, "85% of runs [62%, 97%]", "20", [], round(ci.low, 4),
                          round(ci.high, 4), 0.85)


def test_a_fraction_tie_holding_the_papers_share_is_unresolved(tmp_path):
    share = np.array([1.0, 0.0] * 10)  # [27%, 73%]
    assert verdict_of(fraction(tmp_path, magnitude=0.6), {"x": share}).verdict == UNRESOLVED
    assert verdict_of(fraction(tmp_path, magnitude=0.8), {"x": share}).verdict == NOT_SUPPORTED


def test_ratio_edges_zero_values_and_single_values_against_another_threshold(tmp_path):
    sides = _ratio_sides(-0.5)
    first = verdict_of(ratio(tmp_path), sides)
    for edge in (first.low, first.high):  # the paper's ratio exactly at an end of the interval: inside
        assert verdict_of(ratio(tmp_path, magnitude=repr(edge)), sides).verdict == SUPPORTED
    tie = _ratio_sides(-0.1)  # exp(-0.1 ± HALF) holds 1 and 0.95
    assert verdict_of(ratio(tmp_path, magnitude=0.95), tie).verdict == UNRESOLVED
    assert verdict_of(ratio(tmp_path, magnitude=0.5), tie).verdict == NOT_SUPPORTED
    one = {"x": np.array([1.0]), "y": np.array([1.0])}  # ratio 1 against a threshold of 2: below it
    assert verdict_of(ratio(tmp_path, threshold=2.0), one).verdict == SUPPORTED
    assert verdict_of(ratio(tmp_path, "ratio_above", threshold=2.0), one).verdict == REVERSED
    zero = verdict_of(ratio(tmp_path), {"x": np.array([0.0, 0.0, 0.0, 0.0]), "y": BASE})
    assert zero.verdict == SUPPORTED and zero.estimate == 0.0 and zero.notes == []  # an interval, not -inf


# ---- the edges mutation testing found untested (fyexp/claims/MUTATION.md) -----------------------------------
def test_a_magnitude_exactly_at_an_end_of_the_interval_is_inside(tmp_path):
    sides = {"x": BASE + 0.7 + JITTER, "y": BASE}  # interval 0.7 ± HALF, above 0
    first = verdict_of(pair(tmp_path), sides)
    for end, outward in ((first.low, -1), (first.high, 1)):
        assert verdict_of(pair(tmp_path, extra=f"    magnitude: {end!r}\n"), sides).verdict == SUPPORTED
        beyond = end + outward * 1e-9
        assert verdict_of(pair(tmp_path, extra=f"    magnitude: {beyond!r}\n"), sides).verdict == DIRECTION_ONLY


@pytest.mark.parametrize("a, expected", [(0.5, UNRESOLVED), (0.75, DIRECTION_ONLY), (1.5, DIRECTION_ONLY),
                                         (0.25, REVERSED)])
def test_single_values_against_a_printed_magnitude_of_zero(tmp_path, a, expected):
    # no factor of 2 around 0: only a difference of exactly 0 matches it (then a tie holding the paper's 0)
    v = verdict_of(pair(tmp_path, extra="    magnitude: 0\n"), {"x": np.array([a]), "y": np.array([0.5])})
    assert v.verdict == expected and SIGN_ONLY in v.notes


@pytest.mark.parametrize("magnitude, expected", [(25, SUPPORTED), (24.9, DIRECTION_ONLY), (100, SUPPORTED),
                                                 (100.5, DIRECTION_ONLY)])
def test_single_values_match_a_relative_magnitude_within_a_factor_of_two(tmp_path, magnitude, expected):
    claim = pair(tmp_path, extra=f"    magnitude: {magnitude}\n    magnitude_kind: relative\n")
    v = verdict_of(claim, {"x": np.array([0.75]), "y": np.array([0.5])})  # ours: +50% of b
    assert v.verdict == expected and "(+50.0%)" in v.ours


def test_an_unresolved_relative_magnitude_names_the_n_for_the_papers_difference_in_bs_units(tmp_path):
    sides = {"x": BASE + 0.05 + JITTER, "y": BASE}  # 0.05 ± HALF: in percent of b ≈ 3.05, [-4.4%, 7.7%]
    claim = pair(tmp_path, extra="    magnitude: 4\n    magnitude_kind: relative\n")
    v = verdict_of(claim, sides)
    target = 4 * BASE.mean() / 100  # the paper's +4% as a difference: 0.122
    assert v.verdict == UNRESOLVED and v.n_to_resolve == math.ceil(4 * (HALF / target) ** 2) == 10
    assert v.label.endswith("the interval holds 0 and the paper's 4; about n = 10 would resolve it")


def test_a_difference_of_exactly_zero_is_a_tie_that_names_no_n(tmp_path):
    values = np.array([1.0, 2.0, 3.0, 4.0])
    for direction in ("greater", "less"):
        same = verdict_of(pair(tmp_path, direction), {"x": values, "y": values})  # the interval [0, 0]
        assert (same.verdict, same.low, same.high, same.notes, same.n_to_resolve) == (NOT_SUPPORTED, 0.0, 0.0, [], None)
        around = verdict_of(pair(tmp_path, direction), {"x": values + [0.5, -0.5, 0.5, -0.5], "y": values})
        assert around.estimate == 0.0 and around.low < 0 < around.high
        assert (around.verdict, around.notes, around.n_to_resolve) == (NOT_SUPPORTED, [], None)
        one = verdict_of(pair(tmp_path, direction), {"x": np.array([2.0]), "y": np.array([2.0])})
        assert (one.verdict, one.notes, one.n_to_resolve) == (NOT_SUPPORTED, [SIGN_ONLY], None)
    ours = verdict_of(pair(tmp_path), {"x": BASE + 0.12 + JITTER, "y": BASE})  # a tie pointing the claim's way
    n = math.ceil(4 * (HALF / 0.12) ** 2)
    assert ours.notes == [f"our difference is inside the noise; about n = {n} would resolve it"] and n == 10


@pytest.mark.parametrize("low, high, greater, less", [(0.0, 0.4, "tie", "tie"), (1e-12, 0.4, "ok", "reversed"),
                                                      (-0.4, 0.0, "tie", "tie"), (-0.4, -1e-12, "reversed", "ok"),
                                                      (0.0, 0.0, "tie", "tie")])
def test_an_interval_ending_exactly_at_zero_is_a_tie(low, high, greater, less):
    from fyexp.claims.stats import Difference
    from fyexp.claims.verdicts import _direction

    d = Difference((low + high) / 2, low, high, 4, 4, True, 1.0, 1.0)
    assert (_direction(d, 1), _direction(d, -1)) == (greater, less)


def test_only_variants_name_each_once_sorted_at_the_paper_profile(tmp_path):
    claim = pair(tmp_path)
    sides = {"x": BASE + 1 + JITTER, "y": BASE}
    parts = [frames(sides, p) for p in ("paper~superseded-ab12", "paper-lr1e-4", "paper+lr=1", "paper-lr1e-4")]
    verdicts = judge(claim, _many(*parts))
    top = verdicts[0]
    assert top.headline and sum(v.headline for v in verdicts) == 1 and len(verdicts) == 4
    assert (top.claim, top.profile, top.verdict, top.notes) == (
        claim, "paper", MISSING, ["only variants ran (paper+lr=1, paper-lr1e-4, paper~superseded-ab12)"])
    assert top.as_dict()["profile"] == "paper" and top.as_dict()["id"] == "toy"


def test_a_reduced_profiles_own_variants_are_variants():
    assert [profile_kind(p) for p in ("cpu+x=1", "quick~superseded-ab12", "cpu+lr=1e-3", "cpu", "quick")] == [
        "variant", "variant", "variant", "reduced", "reduced"]
