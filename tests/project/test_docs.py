"""The project stands alone: no tracked file cites a file outside the repository, and the docs it links exist."""

from __future__ import annotations

import re
import subprocess

import pytest

from tests.conftest import ROOT

ANCHORS, SHARED, WORK_SHARED = "anchors" + ".md", ".." + "/shared", "/work" + "/shared"  # not written whole: this
OUTSIDE = (ANCHORS, SHARED, WORK_SHARED)  # file is tracked too


def tracked_files() -> list[str]:
    try:
        listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout: the tracked files cannot be listed")
    return listed.stdout.splitlines()


def outside_references(paths: list[str]) -> list[str]:
    """``path:line: text`` of every line of a text file among ``paths`` that cites a file outside the repository.

    Result rows (``results/**.csv``) are records of what a run wrote (a data path in a failure message), not
    citations, and are left out."""
    found = []
    for name in paths:
        if name.startswith("results/") and name.endswith(".csv"):
            continue
        path = ROOT / name
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue  # binary (figures, databases) or absent in this checkout
        for number, line in enumerate(text.splitlines(), 1):
            if any(word in line for word in OUTSIDE):
                found.append(f"{name}:{number}: {line.strip()[:100]}")
    return found


@pytest.mark.slow
def test_no_tracked_file_cites_a_file_outside_the_repository():
    assert outside_references(tracked_files()) == []


def test_the_check_finds_a_citation(tmp_path, monkeypatch):
    """The scan itself: a line citing either outside file is found; a result row's data path is not."""
    import tests.project.test_docs as module

    (tmp_path / "a.py").write_text(f'"""fine"""\nx = 1  # see {ANCHORS}\n', encoding="utf-8")
    (tmp_path / "b.md").write_text(f"see [the paper]({SHARED}/papers/x.pdf)\n", encoding="utf-8")
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "r.csv").write_text(f"a,not found: {WORK_SHARED}/data/UCI\n", encoding="utf-8")
    monkeypatch.setattr(module, "ROOT", tmp_path)
    found = outside_references(["a.py", "b.md", "results/r.csv"])
    assert found == [f"a.py:2: x = 1  # see {ANCHORS}", f"b.md:1: see [the paper]({SHARED}/papers/x.pdf)"]


def test_protocols_page_cites_public_sources_for_every_section():
    """docs/protocols.md: each section names a public repository, and the code's citations of it resolve."""
    page = (ROOT / "docs" / "protocols.md").read_text(encoding="utf-8")
    sections = re.split(r"^## ", page, flags=re.M)[1:]
    assert len(sections) >= 10
    for section in sections[:-1]:  # the last (offline weights) is about libraries, not the authors' code
        assert re.search(r"[\w-]+/[\w.-]+", section) and "line" in section, section.splitlines()[0]
