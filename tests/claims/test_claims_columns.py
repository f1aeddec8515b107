"""A side selected by a result column (``columns``: a grid's axis a cell writes as a column, VR Figure 2(b)'s alpha
and Figure 4's evaluation K) and a per-run statement over such a column (``per``), each on both sides: the rows a
value or a list of values selects and those it leaves, the refusals at load, each column value judged as a run of
its own, and the VR Figure 2(b) / Figure 4 claims on the committed rows."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fyexp.claims.model import Selector, load_claims
from fyexp.claims.verdicts import MISSING, NOT_SUPPORTED, REVERSED, SUPPORTED, judge, select
from fyexp.core.errors import FyexpError
from tests.claims.test_claims_rules import claim_of


def table(values: dict, column: str = "rho") -> pd.DataFrame:
    """gmm-clustering rows of ``adjusted_mi``, one per (method, column value), seed 0."""
    rows = [{"experiment": "gmm-clustering", "profile": "paper", "method": m, "metric": "adjusted_mi", "value": v,
             "seed": 0, "params": "{}", "status": "ok", "git_commit": "abc", "cell": f"{m}{x}", "freshness": "fresh",
             column: x}
            for m, by in values.items() for x, v in by.items()]
    return pd.DataFrame(rows)


# ---- select --------------------------------------------------------------------------------------------------
def test_a_column_value_selects_its_rows_whatever_their_spelling():
    frame = pd.DataFrame({"metric": "m", "value": [1.0, 2.0, 3.0, 4.0], "rho": [0.5, 1.0, "1", 2]})
    one = Selector("e", "m", columns=(("rho", ("1",)),))
    assert select(frame, one)["value"].tolist() == [2.0, 3.0]          # 1.0 and '1' are 1; 0.5 and 2 are not
    two = Selector("e", "m", columns=(("rho", ("0.5", "2.0")),))
    assert select(frame, two)["value"].tolist() == [1.0, 4.0]          # any of a list
    assert select(frame, Selector("e", "m", columns=(("rho", ("3",)),))).empty
    assert select(frame, Selector("e", "m", columns=(("alpha", ("1",)),))).empty   # a column the rows lack: none
    both = Selector("e", "m", columns=(("rho", ("1", "2")), ("k", ("5",))))
    assert select(frame.assign(k=[5, 5, 6, 5]), both)["value"].tolist() == [2.0, 4.0]   # every column must match


def test_a_side_names_its_columns_and_overrides_the_rows(tmp_path):
    claim = claim_of(tmp_path, "    direction: greater\n    a: {method: x, columns: {rho: [1.5, 2]}}\n"
                               "    b: {method: y}\n".replace("rows:", "rows:"))
    a, b = claim.sides["a"], claim.sides["b"]
    assert a.columns == (("rho", ("1.5", "2")),) and b.columns == ()
    assert a.describe() == "gmm-clustering:adjusted_mi[method=x, rho=1.5|2]"


@pytest.mark.parametrize("columns, message", [
    ("{value: 1}", "a.columns.value: expected a result column other than experiment, metric"),
    ("{setting: x}", "a.columns.setting: expected a result column other than"),
    ("{setting: x}", "(name those by their own key), got 'setting'"),   # the line ends with what the file gave
    ("{rho: []}", "a.columns.rho: expected a value or a non-empty list of values"),
    ("{rho: []}", "a value or a non-empty list of values (numbers or text), got []"),
    ("{rho: true}", "a.columns: expected a mapping of result columns"),     # a bool is no value
    ("{rho: [1, {x: 2}]}", "a.columns.rho: expected a value or a non-empty list of values"),
    ("[rho]", "a.columns: expected a mapping of result columns to a value or a list of values"),
    ("{zzz_no_such_column: 1}", "experiment 'gmm-clustering' writes no column 'zzz_no_such_column'")])
def test_a_bad_column_selector_is_refused_in_one_line(tmp_path, columns, message):
    with pytest.raises(FyexpError) as caught:
        claim_of(tmp_path, f"    direction: greater\n    a: {{method: x, columns: {columns}}}\n    b: {{method: y}}\n")
    text = str(caught.value)
    assert message in text and "\n" not in text and "claim 'toy'" in text


def test_a_column_the_experiment_writes_loads():
    """The shipped claims on VR Figure 2(b) and Figure 4 select by ``K`` and ``alpha``: both load."""
    claims = {c.id: c for c in load_claims().claims}
    under = claims["vr-f2b-underestimates"]
    assert dict(under.sides["a"].columns) == {"K": ("10", "100"), "alpha": ("-1", "-0.5", "0", "0.25", "0.5", "0.75")}
    assert under.per == ("K", "alpha") and under.per_run


# ---- per: each column value a run ----------------------------------------------------------------------------
def per_claim(tmp_path, extra="    per: [rho]\n"):
    return claim_of(tmp_path, "    direction: greater\n    per_run: true\n" + extra +
                    "    a: {method: x}\n    b: {method: y}\n")


def headline(claim, frame):
    top, = [v for v in judge(claim, {"gmm-clustering": frame}) if v.headline]
    return top


@pytest.mark.parametrize("gaps, expected", [((0.1, 0.2, 0.3), SUPPORTED), ((0.1, -0.2, 0.3), NOT_SUPPORTED),
                                            ((-0.1, -0.2, -0.3), REVERSED)])
def test_per_judges_each_column_value_as_a_run(tmp_path, gaps, expected):
    rhos = (1.0, 1.5, 2.0)
    frame = table({"x": {r: 5.0 + g for r, g in zip(rhos, gaps)}, "y": {r: 5.0 for r in rhos}})
    v = headline(per_claim(tmp_path), frame)
    k = sum(g > 0 for g in gaps)
    assert v.verdict == expected and v.ours.startswith(f"holds in {k} of 3 runs") and v.n == "3 runs"
    assert ("rho=1.5" in " ".join(v.notes)) == (gaps[1] < 0)          # the failing value named


def test_without_per_the_column_values_of_one_seed_are_one_run(tmp_path):
    """The same rows without ``per``: one seed, so one run, whose six rho values are judged together (mean 5.25 vs
    5.0, its interval above 0) although one rho of six goes the other way."""
    rhos = (1.0, 1.2, 1.4, 1.6, 1.8, 2.0)
    frame = table({"x": dict(zip(rhos, (5.3, 5.3, 4.99, 5.3, 5.3, 5.3))), "y": {r: 5.0 for r in rhos}})
    each = headline(per_claim(tmp_path), frame)
    assert each.verdict == NOT_SUPPORTED and each.ours.startswith("holds in 5 of 6 runs")
    plain = headline(per_claim(tmp_path, extra=""), frame)
    assert plain.verdict == SUPPORTED and plain.ours.startswith("holds in 1 of 1 runs")


def test_per_naming_a_column_a_side_lacks_is_data_missing(tmp_path):
    frame = table({"x": {1.0: 5.5}, "y": {1.0: 5.0}})
    claim = per_claim(tmp_path, extra="    per: [rho, alpha]\n")
    v = headline(claim, frame)
    assert (v.claim, v.profile, v.verdict) == (claim, "paper", MISSING)
    assert v.notes == ["per run: a side lacks the column alpha (per)"]
    half = frame.assign(rho=[1.0, np.nan])                             # a side with the column empty lacks it too
    assert headline(per_claim(tmp_path), half).verdict == MISSING


def test_per_needs_per_run(tmp_path):
    with pytest.raises(FyexpError, match="claim 'toy': per: expected per_run: true beside it"):
        claim_of(tmp_path, "    direction: greater\n    per: [rho]\n    a: {method: x}\n    b: {method: y}\n")


# ---- on the committed rows -----------------------------------------------------------------------------------
@pytest.mark.slow
def test_vr_figure_2b_and_4_on_the_committed_rows():
    """VR Figure 2(b) at ``paper`` (one 200-repetition mean per K and alpha): K = 1 estimates -KL at each of the
    nine alphas but two (by the 95% interval of each 200-repetition mean, its spread: the claims' ``spread``); the
    bias of alpha < 1 falls from K = 10 to 100 at each alpha but 0.75 (a step inside the noise); the under-estimate
    holds in 8 of 12 runs, not at K = 100, alpha = 0.25 (+0.009, inside its spread); Figure 4's bias falls with
    alpha at K = 5 and 50."""
    from fyexp.claims.verdicts import judge_all, load_frames
    from tests.conftest import ROOT

    ids = ("vr-s41-k1-is-kl", "vr-f2b-underestimates", "vr-f2b-bias-falls-with-k", "vr-f4-bias-falls-with-alpha-k5",
           "vr-f4-bias-falls-with-alpha-k50", "vr-f4-bias-falls-with-k", "vr-f4-variance-negligible")
    claims = [c for c in load_claims().claims if c.id in ids]
    frames, specs = load_frames(ROOT / "results", names=["vr-renyi-gaussians", "vr-vae"])
    heads = {v.claim.id: v for v in judge_all(claims, frames, specs) if v.headline}
    assert heads["vr-s41-k1-is-kl"].ours.startswith("holds in 7 of 9 runs")   # alpha 0.75, 1.5: past the margin
    assert heads["vr-f2b-bias-falls-with-k"].ours.startswith("holds in 5 of 6 runs")   # alpha 0.75: in the noise
    under = heads["vr-f2b-underestimates"]
    assert under.verdict == NOT_SUPPORTED and under.ours.startswith("holds in 8 of 12 runs")
    assert "K=100, alpha=0.25" in " ".join(under.notes)
    for cid in ids[3:]:
        assert heads[cid].verdict == SUPPORTED and heads[cid].profile == "paper", (cid, heads[cid].label)


# ---- data missing at every profile: which declared cells would supply the rows ------------------------------
def test_supplying_cells_counts_each_profiles_declared_cells_of_the_sides_method_and_params():
    """frac-vae's Table 9 cells with a 4-D latent are declared at paper (both parameterizations, ten seeds) and
    cpu; at claims only at gamma 1 and 1e-3 (three seeds), so gamma 1e-5 is declared at neither claims nor quick;
    the 2-D ones at claims too; a side naming neither method nor params cannot be told."""
    from fyexp.claims.progress import supplying_cells
    from fyexp.spec.specs import load_spec

    spec = load_spec("frac-vae")
    four = Selector("frac-vae", "fid", method="L", table="9", params=(("latent", 4), ("value", 1.0)))
    assert supplying_cells(four, spec) == [
        "its cells (frac-vae: method=L, table=9, latent=4, value=1.0): 20 at paper, 1 at cpu, 3 at claims declared; "
        "none at quick"]
    four_small = Selector("frac-vae", "fid", method="L", table="9", params=(("latent", 4), ("value", 1e-5)))
    assert supplying_cells(four_small, spec) == [
        "its cells (frac-vae: method=L, table=9, latent=4, value=1e-05): 20 at paper, 1 at cpu declared; none at "
        "claims, quick"]
    two = Selector("frac-vae", "fid", method="L", table="9", params=(("latent", 2), ("value", "0.001")))
    assert "3 at claims" in supplying_cells(two, spec)[0]
    nowhere = Selector("frac-vae", "fid", method="L", params=(("latent", 8),))
    assert supplying_cells(nowhere, spec) == ["its cells (frac-vae: method=L, latent=8): declared at no profile"]
    other_table = Selector("frac-vae", "fid", method="L", table="2", params=(("latent", 4),))
    assert supplying_cells(other_table, spec)[0].endswith("declared at no profile")
    assert supplying_cells(Selector("frac-vae", "fid", paper_row="L_1.0"), spec) == []
    assert supplying_cells(four, None) == []
    every = Selector("frac-vae", "fid", method="L", params=(("latent", 2), ("value", "0.001")))
    assert supplying_cells(every, spec) == [   # declared at every profile: no "none at"
        "its cells (frac-vae: method=L, latent=2, value=0.001): 20 at paper, 1 at cpu, 3 at claims, 1 at quick "
        "declared"]
    assert supplying_cells(Selector("frac-vae", "fid", params=(("latent", 4),)), spec) == [   # no method: not named
        "its cells (frac-vae: latent=4): 60 at paper, 3 at cpu, 6 at claims, 1 at quick declared"]
    import dataclasses

    broken = dataclasses.replace(spec, profiles={"broken": {"set": {"no_such_setting": 1}}, **spec.profiles})
    assert supplying_cells(four, broken) == supplying_cells(four, spec)   # a profile that does not resolve: skipped


def test_a_side_no_profile_has_names_its_cells_or_every_runs_progress(tmp_path):
    """gmm-clustering rows of other methods only: a method no profile declares is said so; a side named by its paper
    row alone gets how far each profile's run has got."""
    frame = table({"x": {1.0: 5.5}, "y": {1.0: 5.0}}).assign(cell=["standard__seed=0", "hard__seed=0"])
    from fyexp.spec.specs import load_spec

    specs = {"gmm-clustering": load_spec("gmm-clustering")}
    claim = claim_of(tmp_path, "    direction: greater\n    a: {method: zzz}\n    b: {method: qqq}\n")
    v, = [v for v in judge(claim, {"gmm-clustering": frame}, specs) if v.headline]
    assert v.verdict == MISSING and v.profile is None
    assert v.notes == ["no rows for gmm-clustering:adjusted_mi[method=zzz]",
                       "its cells (gmm-clustering: method=zzz): declared at no profile"]
    claim = claim_of(tmp_path, "    direction: greater\n    a: {paper_row: Sparse EM}\n    b: {method: qqq}\n", "row")
    v, = [v for v in judge(claim, {"gmm-clustering": frame}, specs) if v.headline]
    assert v.notes == ["no rows for gmm-clustering:adjusted_mi[paper_row=Sparse EM]",
                       "gmm-clustering at paper: 2 of 60 cells have rows",
                       "gmm-clustering at paper-text: 0 of 60 cells have rows",
                       "gmm-clustering at quick: 0 of 12 cells have rows"]


@pytest.mark.slow
def test_topic_coherence_is_judged_at_each_k_and_seed_on_the_committed_rows():
    """FYVI App. D / FYVL Sec. 4.3 "consistently ... across varying values of k": each seed at each k (5 to 25) is a
    run of its own, FY-NVDM within the 0.005 margin of NVDM or above in all ten at ``cpu`` (its smallest gap,
    -0.0008 at seed 0, k = 15, within it)."""
    from fyexp.claims.verdicts import judge_all, load_frames
    from tests.conftest import ROOT

    claims = [c for c in load_claims().claims if c.id in ("fyvi-f3-topic-coherence", "fyvl-f2-topic-coherence")]
    assert all(c.per == ("k",) and c.per_run for c in claims)
    frames, specs = load_frames(ROOT / "results", names=["fy-nvdm", "nvdm"])
    heads = [v for v in judge_all(claims, frames, specs) if v.headline]
    assert [(v.verdict, v.profile, v.ours[:22]) for v in heads] == [(SUPPORTED, "cpu", "holds in 10 of 10 runs")] * 2


def test_a_per_run_claim_on_rows_without_a_run_column_is_data_missing_at_its_profile(tmp_path):
    """Rows with no seed, split or fold filled: no run to judge; the verdict names the claim, its profile and why."""
    frame = table({"x": {1.0: 5.5}, "y": {1.0: 5.0}}).assign(seed=np.nan)
    claim = per_claim(tmp_path)
    v = headline(claim, frame)
    assert (v.claim, v.profile, v.verdict) == (claim, "paper", MISSING)
    assert v.notes == ["per run: the sides share no run column (seed, split, fold)"]


def test_per_run_sides_without_a_common_run_are_data_missing(tmp_path):
    frame = table({"x": {1.0: 5.5}, "y": {1.0: 5.0}}).assign(seed=[0, 1])   # x ran seed 0 only, y seed 1 only
    claim = per_claim(tmp_path)
    v = headline(claim, frame)
    assert (v.claim, v.profile, v.verdict, v.notes) == (claim, "paper", MISSING,
                                                       ["per run: no run has rows on every side"])


def test_the_failing_runs_are_named_in_the_order_of_their_keys_as_text(tmp_path):
    """Runs are ordered by their keys as text (seed 10 before seed 2), so that keys of mixed types still order."""
    seeds = [2, 10, 3]
    frame = pd.concat([table({"x": {1.0: 4.0}, "y": {1.0: 5.0}}).assign(seed=s, cell=f"c{s}") for s in seeds],
                      ignore_index=True)
    v = headline(per_claim(tmp_path), frame)
    assert v.verdict == REVERSED and v.notes == ["fails in 3 run(s): seed=10, rho=1.0; seed=2, rho=1.0; seed=3, rho=1.0"]


def test_a_per_run_share_on_the_edge_of_at_least_is_not_decided(tmp_path):
    """With every run holding, the exact interval's top is 1: against at_least 1 it is not below (never reversed)
    nor above it; with none holding its bottom is 0: against at_least 0 not above it (never supported)."""
    rhos = (1.0, 1.5, 2.0)
    holding = table({"x": {r: 6.0 for r in rhos}, "y": {r: 5.0 for r in rhos}})
    failing = table({"x": {r: 4.0 for r in rhos}, "y": {r: 5.0 for r in rhos}})
    assert headline(per_claim(tmp_path, "    per: [rho]\n    at_least: 1.0\n"), holding).verdict == NOT_SUPPORTED
    assert headline(per_claim(tmp_path, "    per: [rho]\n    at_least: 0.0\n"), failing).verdict == NOT_SUPPORTED
    assert headline(per_claim(tmp_path, "    per: [rho]\n    at_least: 0.0\n"), holding).verdict == SUPPORTED


@pytest.mark.parametrize("failing", [0, 3, 4])
def test_the_per_run_verdict_names_at_most_three_failing_runs_and_carries_its_share(tmp_path, failing):
    """Three failing runs named in full, a fourth as "…"; none: no note; the verdict is the claim's at its profile,
    its estimate the share of runs that hold."""
    rhos = (1.0, 1.25, 1.5, 1.75, 2.0)
    frame = table({"x": {r: (4.0 if i < failing else 6.0) for i, r in enumerate(rhos)}, "y": {r: 5.0 for r in rhos}})
    claim = per_claim(tmp_path)
    v = headline(claim, frame)
    assert (v.claim, v.profile, v.estimate) == (claim, "paper", pytest.approx((5 - failing) / 5))
    named = "; ".join(f"seed=0, rho={r}" for r in rhos[:min(failing, 3)])
    assert v.notes == ([] if not failing else [f"fails in {failing} run(s): {named}" + ("; …" if failing > 3 else "")])
