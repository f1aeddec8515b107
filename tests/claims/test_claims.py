"""Claims as data: loading (a claim naming rows nobody writes fails in one line), intervals and every verdict."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from fyexp.claims.model import load_claims
from fyexp.claims.render import SHORT, VERDICT_WIDTH, long_lines, short_lines
from fyexp.claims.stats import difference
from fyexp.claims.verdicts import (DIRECTION_ONLY, MISSING, NOT_RUN, NOT_SUPPORTED, REVERSED, SUPPORTED, VERDICTS,
                                   judge)
from fyexp.core.errors import FyexpError

CLAIM = """
claims:
  - id: toy-a-above-b
    paper: fyvi
    where: Table 1
    line: 210
    quote: "a sentence of the paper"
    claim: a above b
    direction: greater
    {extra}
    rows: {{experiment: gmm-clustering, metric: adjusted_mi}}
    a: {{method: sparse}}
    b: {{method: standard}}
"""


def _claim(tmp_path, extra: str = "", text: str | None = None):
    path = tmp_path / "claims.yaml"
    path.write_text(text if text is not None else CLAIM.format(extra=extra))
    return load_claims(path).claims[0]


def _frame(a, b, profile="paper", paired=True):
    rows = [{"experiment": "gmm-clustering", "profile": profile, "method": m, "metric": "adjusted_mi",
             "value": v, "seed": i if paired else 100 * (m == "sparse") + i, "params": "{}", "status": "ok",
             "git_commit": "abc", "cell": f"{m}{i}"}
            for m, values in (("sparse", a), ("standard", b)) for i, v in enumerate(values)]
    return {"gmm-clustering": pd.DataFrame(rows)}


def test_the_shipped_claims_load_and_cover_the_five_papers():
    claims = load_claims()
    assert len(claims.claims) >= 30
    assert {c.paper for c in claims.claims} == {"fyvi", "fyvl", "vr", "tvem", "frac"}
    assert {f.claim for f in claims.findings} <= {c.id for c in claims.claims}


def test_a_claim_naming_a_metric_no_experiment_writes_fails_in_one_line(tmp_path):
    text = CLAIM.format(extra="").replace("metric: adjusted_mi", "metric: no_such_metric")
    with pytest.raises(FyexpError, match=r"claim 'toy-a-above-b': experiment 'gmm-clustering' writes no metric "
                                         r"'no_such_metric'") as info:
        _claim(tmp_path, text=text)
    assert "\n" not in str(info.value)
    with pytest.raises(FyexpError, match="experiment 'nope' does not exist"):
        _claim(tmp_path, text=CLAIM.format(extra="").replace("experiment: gmm-clustering", "experiment: nope"))


def test_paired_interval_is_scipys_one_sample_t_interval():
    a, b = np.array([1.0, 2.5, 3.1, 4.0]), np.array([0.5, 2.0, 2.0, 3.9])
    d = difference(pd.DataFrame({"value": a, "seed": range(4)}), pd.DataFrame({"value": b, "seed": range(4)}))
    ci = stats.ttest_1samp(a - b, 0).confidence_interval(0.95)
    assert d.paired and (d.low, d.high) == pytest.approx((ci.low, ci.high))


def test_unpaired_interval_is_welchs():
    a, b = np.array([1.0, 2.5, 3.1]), np.array([0.5, 2.0, 2.0, 3.9, 1.0])
    d = difference(pd.DataFrame({"value": a, "seed": [0, 1, 2]}), pd.DataFrame({"value": b, "seed": [5, 6, 7, 8, 9]}))
    ci = stats.ttest_ind(a, b, equal_var=False).confidence_interval(0.95)
    assert not d.paired and (d.low, d.high) == pytest.approx((ci.low, ci.high)) and d.n_text() == "3 vs 5"


@pytest.mark.parametrize("a, b, extra, expected", [
    ([0.9, 0.91, 0.93, 0.92], [0.5, 0.52, 0.49, 0.5], "", SUPPORTED),                      # a clear win
    ([0.9, 0.91, 0.93, 0.92], [0.5, 0.52, 0.49, 0.5], "magnitude: 0.01", DIRECTION_ONLY),  # win, not the size
    ([0.5, 0.6, 0.4, 0.5], [0.52, 0.45, 0.55, 0.5], "", NOT_SUPPORTED),                   # a tie
    ([0.1, 0.12, 0.11, 0.1], [0.5, 0.52, 0.49, 0.5], "", REVERSED),                      # a reversal
])
def test_verdicts_on_paired_rows(tmp_path, a, b, extra, expected):
    verdict, = judge(_claim(tmp_path, extra), _frame(a, b))
    assert verdict.verdict == expected and verdict.n == "4 pairs" and verdict.profile == "paper"


def test_unpaired_win_and_reduced_profile_say_so(tmp_path):
    verdict, = judge(_claim(tmp_path), _frame([0.9, 0.92, 0.91], [0.5, 0.51, 0.49, 0.5], "cpu", paired=False))
    assert verdict.verdict == SUPPORTED and verdict.n == "3 vs 4"
    assert verdict.reduced and "reduced profile cpu" in verdict.label


def test_missing_row_and_not_run(tmp_path):
    claim = _claim(tmp_path)
    frames = _frame([0.9, 0.92], [0.5, 0.5])
    frames["gmm-clustering"] = frames["gmm-clustering"].query("method == 'sparse'")
    verdict, = judge(claim, frames)
    assert verdict.verdict == MISSING and "method=standard" in verdict.label
    assert judge(claim, {})[0].verdict == NOT_RUN


def test_single_values_decide_by_sign_and_say_so(tmp_path):
    verdict, = judge(_claim(tmp_path), _frame([0.9], [0.5]))
    assert verdict.verdict == SUPPORTED and "n = 1, sign only" in verdict.label


def test_table_lines_fit_100_columns_and_long_keeps_everything(tmp_path):
    long_id = "toy-" + "-".join(f"word{i}" for i in range(10))
    text = CLAIM.format(extra="").replace("toy-a-above-b", long_id).replace("claim: a above b",
                                                                             "claim: " + "a above b " * 20)
    claim = _claim(tmp_path, text=text)
    frames = _frame([0.9, 0.91, 0.93, 0.92], [0.5, 0.52, 0.49, 0.5], "cpu")
    verdict, = judge(claim, frames)
    verdict.notes.append("a long note " * 12)
    short = [line for line, _ in short_lines([verdict])]
    assert max(len(line) for line in short) <= 100
    assert short[1] == long_id  # too long for its column: whole, on a line of its own
    word, n, pairs, profile, *ours = short[2].split()
    assert (word, n, pairs, profile) == ("supported", "4", "pairs", "cpu*")  # reduced: marked
    joined = " ".join(line.strip() for line in short)
    assert ("a long note " * 12).strip() in joined and "fyvi Table 1, line 210: a above b" in joined
    assert short[-1].startswith("* a reduced profile")
    long = [line for line, _ in long_lines([verdict])]
    assert max(len(line) for line in long) <= 100
    joined = " ".join(line.strip() for line in long)
    assert long_id in joined and claim.text in joined and f"[{verdict.low:.4g}, {verdict.high:.4g}]" in joined
    assert "a long note " * 11 in joined + " " and "a sentence of the paper" in joined


@pytest.mark.parametrize("edit, message", [
    (("    quote: \"a sentence of the paper\"\n", ""), "quote: expected the paper's words"),
    (("    line: 210\n", ""), "quote: expected the paper's words"),
    (("line: 210", "line: 0"), "line: expected an integer >= 1 or null, got 0"),
    (("line: 210", "line: ten"), "line: expected an integer >= 1 or null, got 'ten'"),
    (("    where: Table 1\n", "    where: Table 1\n    kind: ours\n"),
     "kind: expected one of claim, check, theorem_check, table_reading, got 'ours'"),
    (("    where: Table 1\n", "    where: Table 1\n    kind: check\n"), "note: expected why this check is ours"),
])
def test_a_claim_without_its_quote_and_line_or_a_check_without_its_reason_fails_in_one_line(tmp_path, edit, message):
    text = CLAIM.format(extra="").replace(*edit)
    with pytest.raises(FyexpError, match=message) as info:
        _claim(tmp_path, text=text)
    assert "\n" not in str(info.value) and "claim 'toy-a-above-b'" in str(info.value)


def test_a_check_of_ours_needs_no_quote(tmp_path):
    text = CLAIM.format(extra="kind: check\n    note: ours").replace('    quote: "a sentence of the paper"\n', "")
    claim = _claim(tmp_path, text=text)
    assert claim.kind == "check" and claim.quote == "" and claim.place == "fyvi Table 1, line 210"


def test_every_shipped_claim_quotes_its_paper_and_the_checks_are_ours():
    """Every claim, table reading and theorem check quotes its paper at a place; the claims the papers' text and
    tables state number at least 90 (issue 46), tvem's statements are theorem checks (its paper states theorems,
    not experiments), VR Table 1's caption-only entries are table readings."""
    claims = load_claims().claims
    mine = [c for c in claims if c.kind != "check"]
    assert all(c.quote and c.line and c.where for c in mine)
    assert {c.id for c in claims if c.kind == "check"} >= {"tvem-bars-recovered", "tvem-vs-exact-likelihood"}
    tallied = [c for c in claims if c.tallied]
    assert len(tallied) >= 90, len(tallied)
    per_paper = {p: sum(c.paper == p for c in tallied) for p in ("fyvi", "fyvl", "vr", "frac")}
    assert min(per_paper.values()) >= 4, per_paper
    assert {c.kind for c in claims if c.paper == "tvem"} == {"theorem_check", "check"}
    readings = {c.id for c in claims if c.kind == "table_reading"}
    assert readings and all(c.paper == "vr" and c.quote.startswith("Table 1:") for c in claims if c.id in readings)
    ids = {c.id for c in mine}  # headline claims the papers state (issue 30)
    assert {"frac-s5-fid-elbo-worst", "frac-t7-tighter-bounds", "vr-text-alpha-half-frey",
            "fyvi-t2-mnist-decoder-only", "fyvi-t2-fashion-latent-only-biweight", "tvem-free-energy-monotone",
            "tvem-lower-bound", "tvem-full-set-is-exact"} <= ids


def test_every_verdict_has_a_short_word():
    assert set(SHORT) == set(VERDICTS) and max(len(w) for w in SHORT.values()) <= VERDICT_WIDTH


def _twinned(frames):
    """Each row written twice, under fyvi's and fyvl's keys, as a cell of a table both papers print writes it."""
    frame = frames["gmm-clustering"]
    return {"gmm-clustering": pd.concat([frame.assign(paper="fyvi", table="3"), frame.assign(paper="fyvl", table="3")],
                                        ignore_index=True)}


def test_a_measurement_printed_by_two_papers_counts_once(tmp_path):
    claim = _claim(tmp_path)
    paired, = judge(claim, _twinned(_frame([0.9, 0.92, 0.91, 0.9], [0.5, 0.52, 0.49, 0.5])))
    assert paired.verdict == SUPPORTED and paired.n == "4 pairs"
    single, = judge(claim, _twinned(_frame([0.9], [0.5, 0.52, 0.49, 0.5], paired=False)))
    assert single.n == "1 vs 4" and "n = 1, sign only" in single.label
