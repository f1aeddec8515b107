"""What a derived answer (a reproduce plan, the claims' verdicts) is derived from, as one cache key.

:func:`derivation_inputs` gathers fyexp's version and every file of the package (its code and reference data:
``claims.yaml``, ``readings.yaml``, the published tables), the git commit of the source tree (rows are judged
against it), Python's, torch's and numpy's versions (the cells' environment, part of their freshness), every spec
file, and every file of the given results folders by path, size, modification time, inode and change time.  Two
calls that return the same tuple derive the same answer, so it may be read from the user cache
(:func:`fyexp.store.user_cache.remembered`) instead of judged again.  ``None`` (do not cache) where a spec's runner is a
module outside fyexp: its code is not among the files hashed.

:func:`content_key` is the key that survives a clone: the same code digest and versions, and every file of a results
folder by its path and the SHA-256 of its bytes (not its times).  Answers kept *inside* the results folder under it
(:data:`KEPT`: the claims' verdicts, ``list``'s and ``show``'s summaries) are read back after ``git clone``; no
content key covers a kept answer, so writing one never makes another stale.
"""

from __future__ import annotations

import functools
import hashlib
import os
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path


KEPT = (Path("claims") / "verdicts.json", Path("summaries.json"))   # answers kept inside a results folder


def tree_signature(folder: Path) -> tuple:
    """Every file under ``folder`` with its size, modification time, inode and change time (``()`` for no folder):
    :func:`fyexp.store.user_cache.file_signature`'s, so that a file rewritten at the same size within one tick of the
    clock (an atomic write is a new inode) or given back its old modification time (``touch -d``: a new change
    time) is a changed file.  Each file's path relative to ``folder`` is its folder's (one ``relpath`` per folder,
    not per file: ``fyexp list`` keys its summaries on this walk of the ~1,700 files of the results).  A symbolic
    link is signed as the link (``lstat``; a dangling one too), never followed, as :func:`content_key` names it by
    its target; a file removed while the folder is walked (a writer's temporary) is left out.  The answers kept in
    the folder (:data:`KEPT`) are left out, as :func:`content_key` leaves them out."""
    found = []
    kept = {os.path.join(*k.parts) for k in KEPT}
    for root, _, files in os.walk(folder):
        rel = os.path.relpath(root, folder)
        for f in files:
            name = f if rel == os.curdir else os.path.join(rel, f)
            if name in kept:   # an answer kept in the folder is derived from the rest: writing it changes nothing
                continue
            try:
                st = os.lstat(os.path.join(root, f))
            except FileNotFoundError:   # removed since the walk listed it
                continue
            found.append((name, st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns))
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
    from fyexp.spec.specs import experiments_dir as default_experiments_dir

    package = Path(__file__).resolve().parents[1]
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
    from fyexp.store.gitinfo import head_commit

    digest = code_digest(experiments_dir)
    if digest is None:
        return None
    folders = dict.fromkeys(Path(f).resolve() for f in results_folders)
    return (digest, head_commit(Path(__file__).resolve().parents[2]), *environment(),
            tuple((str(f), tree_signature(f)) for f in folders))


def content_key(results_dir: Path, experiments_dir: Path | None, salt: object) -> str | None:
    """SHA-256 over ``salt`` (the kept file's format), :func:`code_digest`, :func:`environment` and every file of
    ``results_dir`` but the :data:`KEPT` answers, each by its path inside the folder and the SHA-256 of its bytes
    (a link by its target, never followed; a FIFO or socket by its name, never opened); ``None`` where a spec names
    a runner outside fyexp."""
    import json

    code = code_digest(experiments_dir)
    if code is None:
        return None
    digest = hashlib.sha256(json.dumps([salt, code, *environment()]).encode())
    root = os.path.normpath(str(results_dir))
    skip = {os.path.join(root, *kept.parts) for kept in KEPT}
    for entry in sorted(_entries(root), key=lambda e: os.fsencode(e.path)):
        if entry.path in skip:
            continue
        digest.update(os.fsencode(entry.path[len(root) + 1:]) + b"\0")   # the path inside the folder
        if entry.is_symlink():   # named with its target, never followed
            digest.update(b"link\0" + os.readlink(os.fsencode(entry.path)))
        elif not entry.is_file(follow_symlinks=False):   # a FIFO, a socket: named, never opened
            digest.update(b"other\0")
        else:
            with open(entry.path, "rb", buffering=0) as handle:
                digest.update(hashlib.sha256(handle.read()).digest())
    return digest.hexdigest()


def _entries(folder: str) -> list[os.DirEntry]:
    """Every entry under ``folder`` but its folders (a link to a folder is an entry, never entered)."""
    found = []
    with os.scandir(folder) as listing:
        for entry in listing:
            if entry.is_dir(follow_symlinks=False):
                found += _entries(entry.path)
            else:
                found.append(entry)
    return found
