"""The README's findings block (fyexp/report/findings.py) in process: a verdict outside the five columns, a claim
without a kind, the block's header, where the block is found, each claim judged once per command, and the rewrite
of a README from the evidence a report kept or from the rows.

Written from the survivors of a mutation run (docs/contributing/mutation.md, "fyexp/report/findings.py"): the rewrite was
reached only through the installed `fyexp report` (tests/project/test_readme.py), in a subprocess no mutant reaches.
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


def _claim(cid, paper, kind="claim"):
    from fyexp.claims.model import Claim, Selector

    side = Selector("gmm-clustering", "adjusted_mi")
    return Claim(cid, paper, "Table 9", cid, "greater", {"a": side, "b": side}, kind=kind, quote="q", line=3,
                 note="why")


def _head(claim, profile, verdict):
    from fyexp.claims.verdicts import Verdict

    return Verdict(claim, profile, verdict, headline=True)


@pytest.mark.parametrize("verdict", ["not run", "data missing", "something new"])
def test_a_paper_verdict_outside_the_five_columns_is_not_yet_run_at_paper(verdict):
    assert claim_outcome([_Verdict(_Claim("a", "vr"), "paper", verdict)]) == "not yet run at paper"


def test_the_block_counts_headlines_per_reading_with_their_profiles_as_fyexp_claims_does():
    from fyexp.claims.render import SHORT, summary_line
    from fyexp.claims.verdicts import VERDICTS

    heads = [_head(_claim("a", "tvem"), "paper", "supported"), _head(_claim("b", "tvem"), "cpu", "reversed"),
             _head(_claim("t", "tvem", "theorem_check"), "paper", "supported"),
             _head(_claim("o", "tvem", "check"), "paper", "reversed")]
    lines = findings_table(heads, {"tvem": "Truncated EM"})
    assert lines[0] == "| paper | claims | " + " | ".join(SHORT[k] for k in VERDICTS) + " | profiles |"
    assert lines[2] == "| `tvem` | 2 | 1 | 0 | 0 | 0 | 1 | 0 | 0 | paper 1, reduced cpu 1 |"
    assert "`fyexp claims` and `results/README.md` count the same" in lines[-3] and lines[-2] == ""
    # the theorem check by its verdict, on a line of its own; the check of ours nowhere
    assert lines[-1] == "`tvem`: 1 theorem check (1 supported; all at paper), counted apart from the claims."
    assert summary_line(heads, "tvem") == ("tvem: 2 claims (1 supported, 1 reversed; 1 at paper, 1 at reduced "
                                           "profile cpu); 1 theorem check (1 supported; all at paper); 1 check of "
                                           "ours")
    assert findings_table(heads[:2], {})[-1].startswith("Each claim by its headline verdict")   # none: no line
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
            return [_head(_claim("x", "tvem"), "paper", "reversed")]

    keep_evidence(results, None, Kept())
    readme = _readme(tmp_path)
    assert update_findings(readme, results) is True
    text = readme.read_text(encoding="utf-8")
    assert text.startswith(f"# mine\n\n{START}\n| paper | claims |") and text.endswith(f"{END}\n\nafter\n")
    assert "| `tvem` | 1 | 0 | 0 | 0 | 0 | 1 | 0 | 0 | paper 1 |" in text
    assert (results.resolve(), None) not in findings._KEPT     # taken: the next rewrite judges the rows again

    # without kept evidence: the verdicts `fyexp claims` gives for the rows under results/ (every paper, every
    # profile) and the experiments folder asked
    asked = []

    def verdicts_for(results_dir, paper, profile, experiments):
        asked.append((results_dir, paper, profile, experiments))
        return None, [_head(_claim("y", "vr"), "paper", "supported")]

    monkeypatch.setattr("fyexp.claims.command.verdicts_for", verdicts_for)
    mine = tmp_path / "experiments"
    assert update_findings(readme, results, mine) is True
    assert asked == [(results, None, None, mine)]
    assert "| `vr` | 1 | 1 | 0 | 0 | 0 | 0 | 0 | 0 | paper 1 |" in readme.read_text(encoding="utf-8")


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


def test_the_block_writes_text_and_authors_counts_as_a_over_b_where_they_differ(tmp_path):
    from fyexp.claims.verdicts import Verdict

    text, authors = _head(_claim("a", "frac"), "paper", "reversed"), Verdict(_claim("a", "frac"), "paper", "supported")
    text.by_reading = {"text": text, "authors": authors}
    same = _head(_claim("b", "frac"), "claims", "supported")
    lines = findings_table([text, same], {})
    assert lines[2] == "| `frac` | 2 | 1/2 | 0 | 0 | 0 | 1/0 | 0 | 0 | paper 1, reduced claims 1 |"
