"""A report written to any folder has working relative links (to its own files and to fyexp's reference data)."""

from __future__ import annotations

import re
import shutil

import pytest

from fyexp.report.index import package_path, relink
from tests.conftest import ROOT, run_cli

LINK = re.compile(r"\]\(([^)\s]+)\)")


def broken_links(folder):
    """``file: link`` for every relative Markdown link under ``folder`` whose target does not exist."""
    broken = []
    for page in folder.rglob("*.md"):
        for link in LINK.findall(page.read_text(encoding="utf-8")):
            target = link.split("#", 1)[0]
            if target and not re.match(r"[a-z]+://", target) and not (page.parent / target).exists():
                broken.append(f"{page.relative_to(folder)}: {link}")
    return broken


def test_links_to_fyexp_files_are_relative_to_where_the_report_is():
    assert relink("see [x](PKG/fyexp/reference/claims.yaml)", ROOT / "results") == \
        "see [x](../fyexp/reference/claims.yaml)"  # a checkout's own results/: as committed
    assert package_path(ROOT / "results" / "claims") == "../.."
    assert (ROOT / "results" / package_path(ROOT / "results") / "fyexp" / "spec" / "plots.py").is_file()


@pytest.mark.slow
def test_installed_report_in_another_folder_has_no_broken_link(tmp_path):
    results = tmp_path / "deep" / "er" / "out"
    (results / "tvem-bsc").mkdir(parents=True)
    shutil.copy(ROOT / "results" / "tvem-bsc" / "results.csv", results / "tvem-bsc" / "results.csv")
    done = run_cli("report", "tvem-bsc", "--results-dir", str(results))
    assert done.returncode == 0, done.stderr
    index = (results / "README.md").read_text(encoding="utf-8")
    assert "](../fyexp/" not in index and "reference/paper_tables.csv)" in index
    assert (results / "claims" / "tvem.md").is_file()  # the claims tables link claims.yaml too
    assert broken_links(results) == []
