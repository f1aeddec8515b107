"""One module talks to git (fyexp/store/gitinfo.py): its answers in a checkout and outside one, and no other module of
the package starts a ``git`` process."""

from __future__ import annotations

import ast
import subprocess
from pathlib import Path

import pytest

from fyexp.store import gitinfo
from tests.conftest import ROOT


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root, check=True,
                          capture_output=True, text=True).stdout.strip()


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "a.txt").write_text("one\n")
    (root / "b.txt").write_text("bee\n")
    _git(root, "init", "-q")
    _git(root, "add", ".")
    _git(root, "commit", "-qm", "one")
    return root


@pytest.mark.slow
def test_answers_in_a_checkout(checkout):
    first = _git(checkout, "rev-parse", "HEAD")
    assert gitinfo.toplevel(checkout / "sub") == checkout.resolve()
    assert gitinfo.is_checkout_root(checkout) and not gitinfo.is_checkout_root(checkout / "sub")
    assert gitinfo.head_commit(checkout) == first[:12] and gitinfo.head_commit(checkout, short=7) == first[:7]
    assert gitinfo.dirty_files(checkout) == []
    (checkout / "sub" / "a.txt").write_text("two\n")
    (checkout / "new.txt").write_text("untracked\n")
    assert sorted(gitinfo.dirty_files(checkout)) == ["new.txt", "sub/a.txt"]
    assert gitinfo.dirty_files(checkout, ("sub",)) == ["sub/a.txt"] and gitinfo.dirty_files(checkout, ("b.txt",)) == []
    _git(checkout, "commit", "-qam", "two")
    second = _git(checkout, "rev-parse", "HEAD")
    assert gitinfo.head_commit(checkout) == second[:12]  # HEAD is asked again, never cached
    tar = gitinfo.archive(checkout, "HEAD", "sub")
    assert tar is not None and b"sub/a.txt" in tar and b"b.txt" not in tar
    assert gitinfo.archive(checkout, "no-such-ref") is None


def test_outside_a_checkout_every_answer_is_cannot_tell(tmp_path):
    plain = tmp_path / "plain"
    plain.mkdir()
    assert gitinfo.toplevel(plain) is None and not gitinfo.is_checkout_root(plain)
    assert gitinfo.head_commit(plain) is None
    assert gitinfo.dirty_files(plain) == []
    assert gitinfo.archive(plain, "HEAD") is None


def test_no_git_executable_is_cannot_tell(checkout, monkeypatch):
    monkeypatch.setenv("PATH", str(checkout / "no-bin-here"))
    assert gitinfo.run_git(checkout, "status") is None
    assert gitinfo.head_commit(checkout) is None and gitinfo.dirty_files(checkout) == []


def _git_calls(path: Path) -> list[int]:
    """Lines of ``path`` that start a process whose argument list begins with the string ``"git"``."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], (ast.List, ast.Tuple)):
            first = node.args[0].elts[0] if node.args[0].elts else None
            if isinstance(first, ast.Constant) and first.value == "git":
                lines.append(node.lineno)
    return lines


def test_only_gitinfo_starts_git(tmp_path):
    found = {p.relative_to(ROOT).as_posix(): _git_calls(p) for p in sorted((ROOT / "fyexp").rglob("*.py"))}
    assert found.pop("fyexp/store/gitinfo.py"), "the check must see gitinfo's own call"
    assert {name: lines for name, lines in found.items() if lines} == {}
    planted = tmp_path / "planted.py"  # the check itself finds a stray call
    planted.write_text("import subprocess\nsubprocess.run(['git', 'status'])\n")
    assert _git_calls(planted) == [2]
