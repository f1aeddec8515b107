"""The one module of fyexp that talks to git: every ``git`` subprocess of the package is started here.

Each function answers one question about a checkout and returns ``None`` (or ``False``, or an empty list) where
git cannot answer (no ``git`` executable, not a checkout, an unknown commit, a timeout): callers decide what "cannot
tell" means for them, git never raises through here.

Answers that cannot change while a process runs are cached per process (:func:`functools.lru_cache`), so asking
again is free: the top-level folder of a checkout and a file at a named commit.  Files at commits are read
through one long-lived ``git cat-file --batch`` process per checkout (:func:`file_at_commit`): the report asks for
a spec or the fingerprints at each of a few dozen commits, and one process answers them all.  Answers that depend
on the working tree or on HEAD (:func:`dirty_files`, :func:`head_commit`, :func:`changed_between`,
:func:`archive`, a file at ``"HEAD"``) are not cached here: a commit moves HEAD under a running process; their
callers cache what they may (:mod:`fyexp.provenance.source` unpacks HEAD once per process).
"""

from __future__ import annotations

import atexit
import functools
import os
import subprocess
from pathlib import Path

TIMEOUT_S = 30


def run_git(root: Path, *args: str, text: bool = True,
            timeout: float = TIMEOUT_S) -> subprocess.CompletedProcess | None:
    """``git ARGS`` in the folder ``root``; ``None`` when git cannot be started or runs past ``timeout``."""
    try:
        return subprocess.run(["git", *args], cwd=root, capture_output=True, text=text, timeout=timeout)
    except (OSError, subprocess.SubprocessError):
        return None


def _stdout(root: Path, *args: str) -> str | None:
    """The standard output of a successful ``git ARGS`` in ``root``, else ``None``."""
    done = run_git(root, *args)
    return done.stdout if done is not None and done.returncode == 0 else None


@functools.lru_cache(maxsize=None)
def toplevel(folder: Path) -> Path | None:
    """The root of the checkout holding ``folder`` (resolved), ``None`` outside one."""
    out = _stdout(Path(folder), "rev-parse", "--show-toplevel")
    return Path(out.strip()).resolve() if out else None


def is_checkout_root(root: Path) -> bool:
    """Whether ``root`` is the top-level folder of a git checkout (not merely inside one)."""
    top = toplevel(Path(root))
    return top is not None and str(top) == str(Path(root).resolve())


def head_commit(root: Path, short: int = 12) -> str | None:
    """HEAD's commit hash in the checkout ``root`` (``short`` hex digits), ``None`` where git cannot say."""
    out = _stdout(Path(root), "rev-parse", f"--short={short}", "HEAD")
    return (out or "").strip() or None


def dirty_files(root: Path, paths: tuple[str, ...] = ()) -> list[str]:
    """Uncommitted changes under ``paths`` of the checkout ``root`` (tracked or untracked, ignored files excepted):
    the paths ``git status --porcelain`` lists; empty where git cannot say."""
    out = _stdout(Path(root), "status", "--porcelain", "--untracked-files=all", "--", *paths)
    return [line[3:] for line in (out or "").splitlines() if line.strip()]


def is_dirty(root: Path, paths: tuple[str, ...] = ()) -> bool:
    """Whether :func:`dirty_files` lists anything."""
    return bool(dirty_files(root, paths))


def file_at_commit(root: Path, commit: str, relative: str) -> str | None:
    """The text of ``relative`` (a path relative to the checkout's top) as committed at ``commit``; ``None`` where the
    commit or the file does not exist.  Read through one ``git cat-file --batch`` process per checkout
    (:class:`_Batch`), not a ``git show`` each; cached per named commit, ``HEAD`` is looked up each time."""
    if not commit:
        return None
    if commit == "HEAD":
        return _blob(Path(root), commit, relative)
    return _cached_blob(Path(root), commit, relative)


@functools.lru_cache(maxsize=None)
def _cached_blob(root: Path, commit: str, relative: str) -> str | None:
    return _blob(root, commit, relative)


def _blob(root: Path, commit: str, relative: str) -> str | None:
    name = f"{commit}:{relative}"
    if "\n" in name or "\r" in name:  # one request is one line
        return None
    key = (str(Path(root).resolve()), os.getpid())
    batch = _BATCHES.get(key)
    if batch is None:
        batch = _BATCHES[key] = _Batch(Path(root))
    data = batch.read(name)
    if data is None:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


class _Batch:
    """One ``git cat-file --batch`` process in a checkout: each request ``<commit>:<path>`` a line on its input,
    each answer a header (``<oid> <type> <size>``, or ``<name> missing``) and the object's bytes on its output.
    Started at the first request; stopped at exit; where it cannot be started or dies, every answer is ``None``."""

    def __init__(self, root: Path):
        self.root = root
        self.process: subprocess.Popen | None = None
        self.failed = False

    def _start(self) -> subprocess.Popen | None:
        if self.process is None and not self.failed:
            try:
                self.process = subprocess.Popen(["git", "cat-file", "--batch"], cwd=self.root, stdin=subprocess.PIPE,
                                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
            except OSError:
                self.failed = True
            else:
                atexit.register(self.close)
        return self.process

    def read(self, name: str) -> bytes | None:
        """The bytes of the blob ``name`` (``<commit>:<path>``), ``None`` where there is none."""
        process = self._start()
        if process is None:
            return None
        try:
            process.stdin.write(name.encode("utf-8") + b"\n")
            process.stdin.flush()
            header = process.stdout.readline().split()
            if len(header) != 3 or not header[2].isdigit():  # "<name> missing" / "ambiguous", or a dead process
                if not header:
                    self.close()
                return None
            data = process.stdout.read(int(header[2]))
            process.stdout.read(1)  # the newline after the object
        except (OSError, ValueError):
            self.close()
            return None
        return data if header[1] == b"blob" else None

    def close(self) -> None:
        process, self.process = self.process, None
        self.failed = True
        if process is not None:
            try:
                process.stdin.close()
                process.wait(timeout=TIMEOUT_S)
            except (OSError, subprocess.SubprocessError):
                process.kill()


_BATCHES: dict[tuple[str, int], _Batch] = {}


def changed_between(root: Path, commit: str, files: tuple[str, ...]) -> bool | None:
    """Whether ``git diff <commit> HEAD`` touches any of ``files``; ``None`` where git cannot say (unknown commit)."""
    done = run_git(Path(root), "diff", "--quiet", commit, "HEAD", "--", *files)
    if done is None or done.returncode not in (0, 1):
        return None
    return done.returncode == 1


def archive(root: Path, treeish: str, *paths: str) -> bytes | None:
    """``git archive <treeish> PATHS`` (a tar stream), ``None`` on failure."""
    done = run_git(Path(root), "archive", treeish, *paths, text=False, timeout=60)
    return done.stdout if done is not None and done.returncode == 0 else None
