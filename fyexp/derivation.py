"""What a derived answer (a reproduce plan, the claims' verdicts) is derived from, as one cache key.

:func:`derivation_inputs` gathers fyexp's version and every file of the package (its code and reference data:
``claims.yaml``, ``readings.yaml``, the published tables), the git commit of the source tree (rows are judged
against it), Python's, torch's and numpy's versions (the cells' environment, part of their freshness), every spec
file, and every file of the given results folders by path, size, modification time, inode and change time.  Two
calls that return the same tuple derive the same answer, so it may be read from the user cache
(:func:`fyexp.user_cache.remembered`) instead of judged again.  ``None`` (do not cache) where a spec's runner is a module outside fyexp: its code is not
among the files hashed.
"""

from __future__ import annotations

import functools
import hashlib
import os
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path


def tree_signature(folder: Path) -> tuple:
    """Every file under ``folder`` with its size, modification time, inode and change time (``()`` for no folder):
    :func:`fyexp.user_cache.file_signature`'s, so that a file rewritten at the same size within one tick of the
    clock (an atomic write is a new inode) or given back its old modification time (``touch -d``: a new change
    time) is a changed file.  Each file's path relative to ``folder`` is its folder's (one ``relpath`` per folder,
    not per file: ``fyexp list`` keys its summaries on this walk of the ~1,700 files of the results)."""
    found = []
    for root, _, files in os.walk(folder):
        rel = os.path.relpath(root, folder)
        for f in files:
            st = os.stat(os.path.join(root, f))
            found.append((f if rel == os.curdir else os.path.join(rel, f), st.st_size, st.st_mtime_ns, st.st_ino,
                          st.st_ctime_ns))
    return tuple(sorted(found))


@functools.lru_cache(maxsize=None)
def _installed(name: str) -> str:
    try:
        return version(name)
    except PackageNotFoundError:
        return ""


def code_digest(experiments_dir: Path | None) -> str | None:
    """SHA-256 of fyexp's version, every file of the package (code and reference data) and every spec file;
    ``None`` where a spec names a runner outside fyexp (its code is not among the files hashed)."""
    from fyexp import __version__
    from fyexp.specs import experiments_dir as default_experiments_dir

    package = Path(__file__).resolve().parent
    digest = hashlib.sha256(__version__.encode())
    for path in sorted(package.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            digest.update(path.relative_to(package).as_posix().encode() + b"\0" + path.read_bytes())
    specs = Path(experiments_dir or default_experiments_dir())
    for path in sorted(specs.glob("*.yaml")):
        text = path.read_bytes()
        if b"runner:" in text and any("." in line.split(b":", 1)[1].strip().decode("utf-8", "replace")
                                      for line in text.splitlines() if line.startswith(b"runner:")):
            return None
        digest.update(path.name.encode() + b"\0" + text)
    return digest.hexdigest()


def environment() -> tuple[str, str, str]:
    """Python's, torch's and numpy's versions: the cells' environment, part of their freshness."""
    return sys.version, _installed("torch"), _installed("numpy")


def derivation_inputs(results_folders: list[Path], experiments_dir: Path | None) -> tuple | None:
    """The key of an answer derived from fyexp's code and data, the specs and ``results_folders`` (module
    docstring); ``None`` where a spec names a runner outside fyexp."""
    from fyexp.gitinfo import head_commit

    digest = code_digest(experiments_dir)
    if digest is None:
        return None
    folders = dict.fromkeys(Path(f).resolve() for f in results_folders)
    return (digest, head_commit(Path(__file__).resolve().parent.parent), *environment(),
            tuple((str(f), tree_signature(f)) for f in folders))
