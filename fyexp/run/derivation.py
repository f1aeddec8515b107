"""What a derived answer (a reproduce plan, the claims' verdicts) is derived from, as one cache key.

:func:`derivation_inputs` keys the user cache (:func:`fyexp.store.user_cache.remembered`) on the results' file times;
:func:`content_key`, which survives a clone, keys the answers kept inside a results folder (:data:`KEPT`) on its
files' bytes.  Both are ``None`` (do not cache) where a spec's runner is a module outside fyexp: its code is not
among the files hashed.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path


KEPT = (Path("claims") / "verdicts.json", Path("summaries.json"))   # answers kept inside a results folder


def tree_signature(folder: Path) -> tuple:
    """Every file under ``folder`` but :data:`KEPT` (:func:`_entries`) with its size, modification time, inode and
    change time (an atomic rewrite is a new inode, ``touch -d`` a new change time), a link by ``lstat``; a file
    removed meanwhile left out."""
    found = []
    for name, entry in _entries(os.path.normpath(str(folder))):
        with contextlib.suppress(FileNotFoundError):   # removed since the walk listed it
            st = entry.stat(follow_symlinks=False)
            found.append((name, st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns))
    return tuple(found)


@functools.cache
def _installed(name: str) -> str:
    try:
        return version(name)
    except PackageNotFoundError:
        return ""


def code_digest(experiments_dir: Path | None) -> str | None:
    """SHA-256 of fyexp's version, every file of the package and every spec file; ``None`` where a spec names a
    runner outside fyexp (a dotted module name)."""
    from fyexp import __version__
    from fyexp.spec.specs import experiments_dir as default_experiments_dir

    package = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256(__version__.encode())
    for path in sorted(package.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            digest.update(path.relative_to(package).as_posix().encode() + b"\0" + path.read_bytes())
    for path in sorted(Path(experiments_dir or default_experiments_dir()).glob("*.yaml")):
        text = path.read_bytes()
        if any(b"." in line[len(b"runner:"):] for line in text.splitlines() if line.startswith(b"runner:")):
            return None
        digest.update(path.name.encode() + b"\0" + text)
    return digest.hexdigest()


def environment() -> tuple[str, str, str]:
    """Python's, torch's and numpy's versions: the cells' environment, part of their freshness."""
    return sys.version, _installed("torch"), _installed("numpy")


def derivation_inputs(results_folders: list[Path], experiments_dir: Path | None) -> tuple | None:
    """The key of an answer derived from fyexp's code, the specs and ``results_folders``: :func:`code_digest`, the git
    commit (rows are judged against it), :func:`environment` and each :func:`tree_signature`."""
    from fyexp.store.gitinfo import head_commit

    digest = code_digest(experiments_dir)
    if digest is None:
        return None
    folders = dict.fromkeys(Path(f).resolve() for f in results_folders)
    return (digest, head_commit(Path(__file__).resolve().parents[2]), *environment(),
            tuple((str(f), tree_signature(f)) for f in folders))


def content_key(results_dir: Path, experiments_dir: Path | None, salt: object) -> str | None:
    """SHA-256 over ``salt`` (the kept file's format), :func:`code_digest`, :func:`environment` and every file of
    ``results_dir`` but :data:`KEPT` (so writing a kept answer never makes another stale), by its path and the
    SHA-256 of its bytes (a link by its target, never followed; a FIFO or socket by its name, never opened)."""
    code = code_digest(experiments_dir)
    if code is None:
        return None
    digest = hashlib.sha256(json.dumps([salt, code, *environment()]).encode())
    for name, entry in _entries(os.path.normpath(str(results_dir))):
        digest.update(os.fsencode(name) + b"\0")   # the path inside the folder
        if entry.is_symlink():
            digest.update(b"link\0" + os.readlink(os.fsencode(entry.path)))
        elif not entry.is_file(follow_symlinks=False):
            digest.update(b"other\0")
        else:
            digest.update(hashlib.sha256(Path(entry.path).read_bytes()).digest())
    return digest.hexdigest()


def _entries(root: str) -> list[tuple[str, os.DirEntry]]:
    """Every entry under the folder ``root`` but its folders (a link to a folder is an entry, never entered) and
    :data:`KEPT`, as (its path inside ``root``, the entry), in the order of those paths' bytes."""
    def walk(folder: str) -> list[os.DirEntry]:
        try:
            with os.scandir(folder) as listing:
                return [e for entry in listing for e in (walk(entry.path) if entry.is_dir(follow_symlinks=False)
                                                         else [entry])]
        except (FileNotFoundError, NotADirectoryError):   # no such folder (yet), or removed meanwhile
            return []
    kept = {os.path.join(*k.parts) for k in KEPT}
    found = ((e.path[len(root) + 1:], e) for e in walk(root))
    return sorted(((name, e) for name, e in found if name not in kept), key=lambda f: os.fsencode(f[0]))
