"""Provenance that can be checked (fyexp/provenance/source.py): the module tree of an experiment, its code hash, stale
rows after an edit of an imported module, and the refusal of a dirty tree for --profile paper."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fyexp.provenance import source as prov
from fyexp.errors import FyexpError


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git checkout holding a miniature fyexp package: an experiment importing a model importing a map."""
    root = tmp_path / "checkout"
    files = {
        "fyexp/__init__.py": "",
        "fyexp/experiments/__init__.py": "",
        "fyexp/experiments/toy.py": "from fyexp.models import net\nfrom fyexp.results import store\n"
                                    "def report():\n    from fyexp.report import figures\n",
        "fyexp/models/__init__.py": "",
        "fyexp/models/net.py": "from ..maps.entmax import f\nVALUE = 1\n",
        "fyexp/maps/__init__.py": "",
        "fyexp/maps/entmax.py": "def f(x):\n    return x\n",
        "fyexp/unrelated.py": "X = 0\n",
        "fyexp/results.py": "def store():\n    pass\n",
        "fyexp/report/__init__.py": "", "fyexp/report/figures.py": "",
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    _git(root, "init", "-q")
    _git(root, "-c", "user.name=t", "-c", "user.email=t@t", "add", ".")
    _git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one")
    return root


def test_module_tree_follows_imports_and_skips_bookkeeping(repo):
    tree = [p.as_posix() for p in prov.module_tree("fyexp.experiments.toy", repo)]
    assert tree == ["fyexp/__init__.py", "fyexp/experiments/__init__.py", "fyexp/experiments/toy.py",
                    "fyexp/maps/__init__.py", "fyexp/maps/entmax.py", "fyexp/models/__init__.py",
                    "fyexp/models/net.py"]


def test_modified_module_makes_rows_stale(repo):
    module = "fyexp.experiments.toy"
    recorded, commit = prov.code_hash(module, repo), _git(repo, "rev-parse", "--short=12", "HEAD")
    assert prov.files_freshness(commit, recorded, module, repo) == "fresh"
    assert prov.files_freshness(commit, None, module, repo) == "fresh"  # older rows: git diff <commit> HEAD
    (repo / "fyexp/unrelated.py").write_text("X = 1\n")  # not imported: nothing goes stale
    (repo / "fyexp/results.py").write_text("def store():\n    return 1\n")  # bookkeeping: nothing goes stale
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "two")
    prov.head_tree.cache_clear()
    prov.changed_since.cache_clear()
    assert prov.files_freshness(commit, recorded, module, repo) == "fresh"
    assert prov.files_freshness(commit, None, module, repo) == "fresh"
    (repo / "fyexp/maps/entmax.py").write_text("def f(x):\n    return 2 * x\n")  # imported two levels down
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "three")
    prov.head_tree.cache_clear()
    prov.changed_since.cache_clear()
    assert prov.files_freshness(commit, recorded, module, repo) == "stale"
    assert prov.files_freshness(commit, None, module, repo) == "stale"
    assert prov.files_freshness("unknown", None, module, repo) == "unknown"


def test_dirty_tree_is_refused_unless_allowed(repo):
    prov.require_clean_tree(False, "fyexp.experiments.toy", root=repo)  # clean: fine
    assert not prov.git_commit(repo).endswith("+dirty")
    (repo / "fyexp/maps/entmax.py").write_text("def f(x):\n    return -x\n")
    with pytest.raises(FyexpError, match="uncommitted changes .*fyexp/maps/entmax.py.*--allow-dirty"):
        prov.require_clean_tree(False, "fyexp.experiments.toy", root=repo)
    prov.require_clean_tree(True, "fyexp.experiments.toy", root=repo)  # --allow-dirty
    prov.git_commit.cache_clear()
    assert prov.git_commit(repo).endswith("+dirty")  # ... and the rows say so
    prov.git_commit.cache_clear()
    prov.require_clean_tree(False, "tests.toy_experiment", root=repo)  # a runner outside the package: not checked


def test_cli_refuses_paper_profile_on_dirty_tree(monkeypatch, tmp_path):
    from fyexp.cli import app

    monkeypatch.setattr(prov, "dirty_files", lambda root=prov.SOURCE_ROOT: ["fyexp/em/estep.py"])
    result = CliRunner().invoke(app, ["run", "gmm-clustering", "--profile", "paper", "--results-dir", str(tmp_path)])
    assert isinstance(result.exception, FyexpError) and "--allow-dirty" in str(result.exception)
    assert not (tmp_path / "gmm-clustering").exists()  # refused before anything ran
