"""A cache of what fyexp derives from files that do not change between commands, kept outside the results folder.

``fyexp report`` reads some 450 cell files and parses about a hundred of fyexp's own modules each time it runs; what
that gives depends only on the bytes read (and on the code that reads them).  This module keeps such derived values
on disk between processes, in one folder per user:

* ``$FYEXP_CACHE_DIR`` when it is set (empty, ``0`` or ``off``: no cache at all);
* else ``$XDG_CACHE_HOME/fyexp``, else ``~/.cache/fyexp``.

Nothing in it is evidence: every entry is keyed by what it was derived from (a file's stat signature or a text's
SHA-256) and by the version of the code that derived it (:func:`code_key`), and an entry that cannot be read is
simply derived again.  Deleting the folder is always safe; the results folder is never written here.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import tempfile
from pathlib import Path
from typing import Any, Callable

__all__ = ["cache_dir", "code_key", "file_signature", "load_entry", "remembered", "save_entry"]

OFF = {"", "0", "off", "no", "false"}


def cache_dir() -> Path | None:
    """The cache folder (created on first write), or ``None`` when ``FYEXP_CACHE_DIR`` switches caching off."""
    chosen = os.environ.get("FYEXP_CACHE_DIR")
    if chosen is not None:
        return None if chosen.strip().lower() in OFF else Path(chosen).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "fyexp"


def code_key(*files: str | Path) -> str:
    """A short digest of the source of the modules that derive a cached value (pass their ``__file__``) and of the
    library versions they lean on: an entry made by other code is never reused."""
    import pandas

    digest = hashlib.sha256(pandas.__version__.encode())
    for path in files:
        digest.update(Path(path).read_bytes())
    return digest.hexdigest()[:16]


def file_signature(path: str | Path) -> tuple[int, int, int, int]:
    """What tells a file's bytes unchanged without reading them: its inode, size, modification and change times
    (a rewrite, a rename over it or a copy changes at least one)."""
    st = os.stat(path)
    return st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


def _path(kind: str, name: str) -> Path | None:
    folder = cache_dir()
    return None if folder is None else folder / kind / f"{hashlib.sha256(name.encode()).hexdigest()[:24]}.pkl"


def load_entry(kind: str, name: str, key: Any) -> Any | None:
    """The value saved under ``(kind, name)`` when it was saved with an equal ``key``, else ``None`` (no cache, no
    entry, another key, or an entry that cannot be read: each means "derive it again")."""
    path = _path(kind, name)
    if path is None or not path.is_file():
        return None
    try:
        with path.open("rb") as handle:
            saved_name, saved_key, value = pickle.load(handle)
    except Exception:  # noqa: BLE001 - a damaged or foreign cache entry is a miss, never an error
        return None
    return value if saved_name == name and saved_key == key else None


def save_entry(kind: str, name: str, key: Any, value: Any) -> None:
    """Save ``value`` under ``(kind, name)`` with its ``key``, atomically; a cache that cannot be written (read-only
    home, full disk) is skipped without a word: it only ever saves time."""
    path = _path(kind, name)
    if path is None:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temp = tempfile.mkstemp(dir=path.parent, prefix=".", suffix=".tmp")
    except OSError:
        return
    try:
        with os.fdopen(handle, "wb") as out:
            pickle.dump((name, key, value), out, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(temp, path)
    except Exception:  # noqa: BLE001 - a value that cannot be pickled, a full disk: no entry, no error
        Path(temp).unlink(missing_ok=True)


def remembered(kind: str, name: str, key: Any, derive: Callable[[], Any]) -> Any:
    """The value saved under ``(kind, name)`` with this ``key`` (:func:`load_entry`), else ``derive()``'s, saved for
    the next process (:func:`save_entry`).  ``derive`` must not return ``None`` (it reads as a miss)."""
    value = load_entry(kind, name, key)
    if value is None:
        value = derive()
        save_entry(kind, name, key, value)
    return value
