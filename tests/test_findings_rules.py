"""The README's findings block (fyexp/report/findings.py) in process: a verdict outside the five columns, a claim
without a kind, the block's header, where the block is found, each claim judged once per command, and the rewrite
of a README from the evidence a report kept or from the rows.

Written from the survivors of a mutation run (docs/mutation.md, "fyexp/report/findings.py"): the rewrite was
reached only through the installed `fyexp report` (tests/test_readme.py), in a subprocess no mutant reaches.
"""

from __future__ import annotations

import os

import pytest

from fyexp.report import findings
from fyexp.report.findings import (COLUMNS, END, START, Evidence, claim_outcome, findings_table, keep_evidence,
                                   rewrite_block, update_findings)


class _Claim:
    def __init__(self, cid, paper):
        self.id, self.paper = cid, paper       # no `kind`: a claim as the claims file's default


class _Verdict:
    def __init__(self, claim, profile, verdict):
        self.claim, self.profile, self.verdict = claim, profile, verdict


@pytest.mark.parametrize("verdict", ["not run", "data missing", "something new"])
def test_a_paper_verdict_outside_the_five_columns_is_not_yet_run_at_paper(verdict):
    assert claim_outcome([_Verdict(_Claim("a", "vr"), "paper", verdict)]) == "not yet run at paper"


def test_a_claim_without_a_kind_is_tallied_and_the_header_names_every_column():
    lines = findings_table([_Verdict(_Claim("a", "tvem"), "paper", "supported")], {"tvem": "Truncated EM"})
    assert lines == [
        "| paper | claims | supported | in direction only | not resolved at this n | not supported | reversed | "
        "not yet run at paper |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
        "| Truncated EM (`tvem`) | 1 | 1 | 0 | 0 | 0 | 0 | 0 |"]
    assert len(COLUMNS) == 6


def test_the_block_is_the_first_start_to_the_first_end_after_it():
    block = f"{START}\nold\n{END}"
    assert rewrite_block(block + "\n", ["a", "b"]) == f"{START}\na\nb\n{END}\n"          # at the very start
    twice = f"intro\n{block}\nmiddle\n{block}\nend\n"
    assert rewrite_block(twice, ["new"]) == f"intro\n{START}\nnew\n{END}\nmiddle\n{block}\nend\n"
    assert rewrite_block(f"{END}\n{START}\n", ["new"]) is None                            # the end before the start
    assert rewrite_block(f"{START} alone\n", ["new"]) is None


def test_evidence_judges_each_claim_once_and_answers_in_the_order_asked(monkeypatch):
    calls = []
    a, b, c, silent = _Claim("a", "vr"), _Claim("b", "vr"), _Claim("c", "frac"), _Claim("silent", "frac")

    def judge_all(claims, frames, specs):
        calls.append(([x.id for x in claims], frames, specs))
        return [_Verdict(x, p, "supported") for x in claims if x is not silent for p in ("cpu", "paper")]

    monkeypatch.setattr("fyexp.claims.verdicts.judge_all", judge_all)
    evidence = Evidence({"rows": 1}, {"specs": 2})
    first = evidence.verdicts([b, a])
    assert [(v.claim.id, v.profile) for v in first] == [("b", "cpu"), ("b", "paper"), ("a", "cpu"), ("a", "paper")]
    assert calls == [(["b", "a"], {"rows": 1}, {"specs": 2})]
    second = evidence.verdicts([c, a, silent])      # a is judged already; a claim with no verdict gives none
    assert [v.claim.id for v in second] == ["c", "c", "a", "a"]
    assert calls[1][0] == ["c", "silent"]
    evidence.verdicts([a, c])
    assert len(calls) == 2                          # nothing left to judge: judge_all not called at all


def _readme(tmp_path, body="written by hand"):
    path = tmp_path / "README.md"
    path.write_text(f"# mine\n\n{START}\n{body}\n{END}\n\nafter\n", encoding="utf-8")
    return path


def test_the_readme_is_rewritten_from_the_evidence_a_report_kept_and_only_once(tmp_path, monkeypatch):
    results = tmp_path / "results"
    results.mkdir()

    class Kept:
        def verdicts(self, claims):
            assert claims and all(hasattr(c, "paper") for c in claims)    # the project's claims, as loaded
            return [_Verdict(_Claim("x", "tvem"), "paper", "reversed")]

    keep_evidence(results, None, Kept())
    readme = _readme(tmp_path)
    assert update_findings(readme, results) is True
    text = readme.read_text(encoding="utf-8")
    assert text.startswith(f"# mine\n\n{START}\n| paper | claims |") and text.endswith(f"{END}\n\nafter\n")
    assert "| Truncated Variational Expectation Maximization (`tvem`) | 1 | 0 | 0 | 0 | 0 | 1 | 0 |" in text
    assert (results.resolve(), None) not in findings._KEPT     # taken: the next rewrite judges the rows again

    # without kept evidence: the verdicts `fyexp claims` gives for the rows under results/ (every paper, every
    # profile) and the experiments folder asked
    asked = []

    def verdicts_for(results_dir, paper, profile, experiments):
        asked.append((results_dir, paper, profile, experiments))
        return None, [_Verdict(_Claim("y", "vr"), "paper", "supported")]

    monkeypatch.setattr("fyexp.claims.command.verdicts_for", verdicts_for)
    mine = tmp_path / "experiments"
    assert update_findings(readme, results, mine) is True
    assert asked == [(results, None, None, mine)]
    assert "| Variational Inference with Rényi Divergence (`vr`) | 1 | 1 | 0 | 0 | 0 | 0 | 0 |" in \
        readme.read_text(encoding="utf-8")


def test_kept_evidence_is_asked_about_the_claims_checked_against_the_experiments_folder(tmp_path, monkeypatch):
    from fyexp.claims import model

    loaded, real = [], model.load_claims
    monkeypatch.setattr(model, "load_claims", lambda **kw: loaded.append(kw) or real())
    mine = tmp_path / "experiments"

    class Kept:
        def verdicts(self, claims):
            return []

    keep_evidence(tmp_path, mine, Kept())
    assert update_findings(_readme(tmp_path), tmp_path, mine) is True
    assert loaded == [{"experiments_dir": mine}]


def test_a_readme_without_a_block_or_without_change_is_left_alone(tmp_path, monkeypatch):
    monkeypatch.setattr("fyexp.claims.command.verdicts_for", lambda *args: (None, []))
    assert update_findings(tmp_path / "missing.md", tmp_path) is False
    plain = tmp_path / "plain.md"
    plain.write_text("no block\n", encoding="utf-8")
    assert update_findings(plain, tmp_path) is False and plain.read_text(encoding="utf-8") == "no block\n"
    broken = tmp_path / "broken.md"
    broken.write_text(f"{END}\n{START}\n", encoding="utf-8")
    assert update_findings(broken, tmp_path) is False
    readme = _readme(tmp_path, body="\n".join(findings_table([], {})))
    os.utime(readme, (1_000_000_000, 1_000_000_000))
    assert update_findings(readme, tmp_path) is True
    assert readme.stat().st_mtime == 1_000_000_000   # the same block: not written again
