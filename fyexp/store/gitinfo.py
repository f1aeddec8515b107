"""The one module of fyexp that talks to git: every ``git`` subprocess of the package is started here.

Each function returns ``None`` (or an empty list) where git cannot answer (no ``git``, not a checkout, an unknown
commit, a timeout); git never raises through here.  Only :func:`toplevel` is cached: HEAD and the working tree move
under a running process, and the callers cache what they may (:mod:`fyexp.store.provenance.source`).
"""

from __future__ import annotations

import functools
import subprocess
from pathlib import Path


def run_git(root: Path, *args: str, text: bool = True, timeout: float = 30) -> subprocess.CompletedProcess | None:
    """``git ARGS`` in the folder ``root``; ``None`` when git cannot be started or runs past ``timeout``."""
    try:
        return subprocess.run(["git", *args], cwd=root, capture_output=True, text=text, timeout=timeout)
    except (OSError, subprocess.SubprocessError):
        return None


def _stdout(root: Path, *args: str, **run: object) -> str | bytes | None:
    """The standard output of a successful :func:`run_git`, else ``None``."""
    done = run_git(Path(root), *args, **run)
    return done.stdout if done is not None and done.returncode == 0 else None


@functools.lru_cache(maxsize=None)
def toplevel(folder: Path) -> Path | None:
    """The root of the checkout holding ``folder`` (resolved), ``None`` outside one."""
    out = _stdout(folder, "rev-parse", "--show-toplevel")
    return Path(out.strip()).resolve() if out else None


def is_checkout_root(root: Path) -> bool:
    """Whether ``root`` is the top-level folder of a git checkout (not merely inside one)."""
    return toplevel(Path(root)) == Path(root).resolve()


def head_commit(root: Path, short: int = 12) -> str | None:
    """HEAD's commit hash in the checkout ``root`` (``short`` hex digits), ``None`` where git cannot say."""
    return (_stdout(root, "rev-parse", f"--short={short}", "HEAD") or "").strip() or None


def dirty_files(root: Path, paths: tuple[str, ...] = ()) -> list[str]:
    """Uncommitted changes under ``paths`` of the checkout ``root`` (tracked or untracked, ignored files excepted):
    the paths ``git status --porcelain`` lists; empty where git cannot say."""
    out = _stdout(root, "status", "--porcelain", "--untracked-files=all", "--", *paths)
    return [line[3:] for line in (out or "").splitlines() if line.strip()]


def archive(root: Path, treeish: str, *paths: str) -> bytes | None:
    """``git archive <treeish> PATHS`` (a tar stream), ``None`` on failure."""
    return _stdout(root, "archive", treeish, *paths, text=False, timeout=60)
