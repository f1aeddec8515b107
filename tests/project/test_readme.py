"""The README a researcher reads first: short, the main job early, its findings generated from the results."""

from __future__ import annotations

import re
import shutil

import pytest

from fyexp.report.findings import END, START, claim_outcome, findings_table, rewrite_block
from tests.conftest import ROOT, run_cli

TEST_COMMAND = "pip install --no-deps -r requirements-test.lock && pip install --no-deps -e . && python -m pytest -q -n auto --dist loadfile"


def test_readme_is_short_with_the_main_job_first_and_links_that_resolve():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    words = text.split()
    assert len(words) <= 800
    first = " ".join(words[:150])
    assert "pip install --no-deps -r requirements.lock" in first and "fyexp run gmm-clustering" in first
    assert TEST_COMMAND in text
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()[-1]
    assert ci == TEST_COMMAND.replace("pip install ", "pip install -q "), ci  # CI runs it verbatim, quietly
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
    pages = sorted((ROOT / "docs").rglob("*.md"))
    assert ROOT / "docs" / "contributing" / "mutation.md" in pages  # the contributors' pages are checked too
    for page in pages:
        for link in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", page.read_text(encoding="utf-8")):
            if not link.startswith("http"):
                assert (page.parent / link).exists(), f"{page.relative_to(ROOT)}: {link}"


def test_contributor_material_is_apart_from_the_user_docs():
    """The GPU-lease kit and mutation testing are for contributors: under docs/contributing/, linked from there."""
    user_pages = {p.name for p in (ROOT / "docs").glob("*.md")}
    assert not user_pages & {"gpu-lease.md", "mutation.md"}, user_pages
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "docs/contributing/mutation.md" in readme and "docs/contributing/gpu-lease.md" in readme


class _Claim:
    def __init__(self, cid, paper, kind="claim"):
        self.id, self.paper, self.kind = cid, paper, kind


class _Verdict:
    def __init__(self, claim, profile, verdict):
        self.claim, self.profile, self.verdict = claim, profile, verdict


def test_a_claim_counts_by_its_headline_verdict_with_its_profile_said():
    from fyexp.claims.model import Claim, Selector
    from fyexp.claims.verdicts import Verdict

    def claim(cid, paper, kind="claim"):
        side = Selector("gmm-clustering", "adjusted_mi")
        return Claim(cid, paper, "T", cid, "greater", {"a": side, "b": side}, kind=kind, quote="q", line=1, note="n")

    a, b, c = claim("a", "vr"), claim("b", "vr"), claim("c", "frac")
    ours = claim("ours", "frac", kind="check")  # a check of ours: never tallied, whatever its verdict
    verdicts = [_Verdict(a, "quick", "supported"), _Verdict(a, "paper", "reversed"),
                _Verdict(b, "quick", "supported"),  # supported at a reduced profile only
                _Verdict(c, "paper", "supported in direction, not in magnitude"),
                _Verdict(ours, "paper", "supported")]
    assert claim_outcome(verdicts[:2]) == "reversed"
    assert claim_outcome(verdicts[2:3]) == "not yet run at paper"
    assert claim_outcome([_Verdict(a, "paper", "supported")]) == "supported"
    heads = [Verdict(v.claim, v.profile, v.verdict, headline=True) for i, v in enumerate(verdicts) if i != 0]
    lines = findings_table(heads, {"vr": "Rényi"})   # the counts `fyexp claims` gives: headlines, profiles said
    assert lines[2:4] == ["| `vr` | 2 | 1 | 0 | 0 | 0 | 1 | 0 | 0 | paper 1, reduced quick 1 |",
                          "| `frac` | 1 | 0 | 1 | 0 | 0 | 0 | 0 | 0 | paper 1 |"]


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
    # the committed tvem-bsc rows, records and traces at `paper`: tvem states theorems, so no claim row; its 5 theorem
    # checks on a line of their own (its 3 checks of ours not counted), as in the project's README; the other papers'
    # experiments are absent: their claims not run (vr: 34 claims and 6 table readings)
    assert rows["tvem"] == "`tvem`: 5 theorem checks (5 supported; all at paper), counted apart from the " \
        "claims."
    assert rows["vr"] == "| `vr` | 40 | 0 | 0 | 0 | 0 | 0 | 40 | 0 | — |"
    shutil.rmtree(results / "tvem-bsc")
    run_cli("report", "tvem-bsc", "--results-dir", str(results))
    assert "`tvem`: 5 theorem checks (5 not run), counted apart from the claims." in readme.read_text(encoding="utf-8")
    other = tmp_path / "my-results"  # a folder of another name leaves the README beside it alone
    before = readme.read_text(encoding="utf-8")
    run_cli("report", "tvem-bsc", "--results-dir", str(other))
    assert readme.read_text(encoding="utf-8") == before


def test_the_readme_says_which_experiments_need_which_data():
    """Every experiment is named in the README's data paragraph: with the folders it reads, or as making its own."""
    from fyexp.spec.specs import available_specs

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    data = text[text.index("**Data.**"):].split("\n\n", 1)[0]
    assert "--data-dir DIR" in data and "FYEXP_DATA_DIR=DIR" in data
    for name in available_specs():
        assert f"`{name}`" in data, name
    for folder in ("MNIST/raw/", "FashionMNIST/raw/", "FreyFace/", "Caltech101Silhouettes/", "20newsgroups/", "UCI/"):
        assert folder in data, folder
