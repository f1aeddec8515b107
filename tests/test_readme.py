"""The README a researcher reads first: short, the main job early, its findings generated from the results."""

from __future__ import annotations

import re
import shutil

import pytest

from fyexp.report.findings import END, START, claim_outcome, findings_table, rewrite_block
from tests.conftest import ROOT, run_cli

TEST_COMMAND = "pip install -r requirements-test.lock && pip install --no-deps -e . && python -m pytest -q"


def test_readme_is_short_with_the_main_job_first_and_links_that_resolve():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    words = text.split()
    assert len(words) <= 800
    first = " ".join(words[:150])
    assert "pip install -r requirements.lock" in first and "fyexp run gmm-clustering" in first
    assert TEST_COMMAND in text  # CI runs it verbatim
    assert START in text and END in text
    for command in ("fyexp claims", "fyexp reproduce", "--dry-run", "fyexp run", "--set"):
        assert command in text
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text)
    for page in ("docs/protocols.md", "docs/profiles.md", "docs/claims.md", "docs/provenance.md",
                 "docs/executors.md", "docs/errors.md", "docs/layout.md"):
        assert page in links, page
    for link in links:
        if not link.startswith("http"):
            assert (ROOT / link).exists(), link


def test_docs_links_resolve():
    for page in (ROOT / "docs").glob("*.md"):
        for link in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", page.read_text(encoding="utf-8")):
            if not link.startswith("http"):
                assert (page.parent / link).exists(), f"{page.name}: {link}"


class _Claim:
    def __init__(self, cid, paper, kind="claim"):
        self.id, self.paper, self.kind = cid, paper, kind


class _Verdict:
    def __init__(self, claim, profile, verdict):
        self.claim, self.profile, self.verdict = claim, profile, verdict


def test_a_claim_counts_by_its_verdict_at_the_paper_profile_only():
    a, b, c = _Claim("a", "vr"), _Claim("b", "vr"), _Claim("c", "frac")
    ours = _Claim("ours", "frac", kind="check")  # a check of ours: never tallied, whatever its verdict
    verdicts = [_Verdict(a, "quick", "supported"), _Verdict(a, "paper", "reversed"),
                _Verdict(b, "quick", "supported"),  # supported at a reduced profile only: not yet run at paper
                _Verdict(c, "paper", "supported in direction, not in magnitude"),
                _Verdict(ours, "paper", "supported")]
    assert claim_outcome(verdicts[:2]) == "reversed"
    assert claim_outcome(verdicts[2:3]) == "not yet run at paper"
    assert claim_outcome([_Verdict(a, "paper", "supported")]) == "supported"
    assert claim_outcome([_Verdict(a, "paper", "not supported")]) == "not supported"
    assert claim_outcome([_Verdict(a, "paper", "not resolved at this n")]) == "not resolved at this n"
    lines = findings_table(verdicts, {"vr": "Rényi"})
    assert lines[2:] == ["| Rényi (`vr`) | 2 | 0 | 0 | 0 | 0 | 1 | 1 |",
                         "| frac (`frac`) | 1 | 0 | 1 | 0 | 0 | 0 | 0 |"]


def test_rewrite_block_keeps_the_text_around_it():
    text = f"intro\n{START}\nold line\n{END}\noutro\n"
    assert rewrite_block(text, ["new"]) == f"intro\n{START}\nnew\n{END}\noutro\n"
    assert rewrite_block("no block here", ["new"]) is None


@pytest.mark.slow
def test_installed_report_rewrites_the_findings_block_from_the_rows(tmp_path):
    """`fyexp report` rewrites the README beside `results/` from the rows there, and again when they change."""
    results = tmp_path / "results"
    (results / "tvem-bsc").mkdir(parents=True)
    # the rows with their run records (cells/): rows whose records are missing have unknown provenance, never evidence
    for part in ("results.csv", "cells", "artifacts"):
        source = ROOT / "results" / "tvem-bsc" / part
        (shutil.copytree if source.is_dir() else shutil.copy)(source, results / "tvem-bsc" / part)
    readme = tmp_path / "README.md"
    readme.write_text(f"# mine\n\n{START}\nwritten by hand, stale\n{END}\n\nafter\n", encoding="utf-8")
    done = run_cli("report", "tvem-bsc", "--results-dir", str(results))
    assert done.returncode == 0, done.stderr
    text = readme.read_text(encoding="utf-8")
    assert "written by hand" not in text and text.startswith("# mine\n") and text.endswith("\nafter\n")
    rows = {line.split("`")[1]: line for line in text.splitlines() if line.count("`") == 2}
    # the committed tvem-bsc rows, records and traces at `paper`: its 5 claims supported (its 3 checks of ours are
    # not counted), as in the project's README; the other papers' experiments are absent
    assert rows["tvem"].endswith("| 5 | 5 | 0 | 0 | 0 | 0 | 0 |") and rows["vr"].endswith("| 0 | 0 | 0 | 0 | 0 | 18 |")
    shutil.rmtree(results / "tvem-bsc")
    run_cli("report", "tvem-bsc", "--results-dir", str(results))
    assert "| 5 | 0 | 0 | 0 | 0 | 0 | 5 |" in readme.read_text(encoding="utf-8")
    other = tmp_path / "my-results"  # a folder of another name leaves the README beside it alone
    before = readme.read_text(encoding="utf-8")
    run_cli("report", "tvem-bsc", "--results-dir", str(other))
    assert readme.read_text(encoding="utf-8") == before
