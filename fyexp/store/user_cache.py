"""A per-user cache of what fyexp derives from unchanged files (``fyexp report`` reads ~450 cell files and parses
~100 of fyexp's modules), outside the results folder: every entry is keyed by what it was derived from (a file's stat
signature, a text's SHA-256) and by the code deriving it (:func:`code_key`); an unreadable entry is derived again.

An entry is a pickle, and unpickling runs code, so it is unpickled only when its HMAC-SHA256 tag verifies under this
user's key (:func:`secret_key`), kept outside the cache folder: a shared or copied cache's entries are misses.
``joblib.Memory`` unpickles entries unverified, hence this module (``hmac`` signs, :mod:`fyexp.store.io` writes).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import hmac
import os
import pickle
import stat
from pathlib import Path
from typing import Any, Callable

from fyexp.store.io import atomic_write

OFF = {"", "0", "off", "no", "false"}
MAGIC = b"fyexp-cache-hmac-sha256\n"   # then the 32-byte tag, then the pickle
KEY_BYTES = 32
_tag = functools.partial(hmac.digest, digest="sha256")   # _tag(key, payload): the 32-byte HMAC-SHA256


def cache_dir() -> Path | None:
    """``$FYEXP_CACHE_DIR`` (``None``: empty, ``0``, ``off``...), else ``$XDG_CACHE_HOME`` or ``~/.cache`` /fyexp."""
    chosen = os.environ.get("FYEXP_CACHE_DIR")
    if chosen is None:
        return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "fyexp"
    return None if chosen.strip().lower() in OFF else Path(chosen).expanduser()


def code_key(*files: str | Path) -> str:
    """A digest of the source of the modules deriving a cached value (their ``__file__``) and of pandas' version."""
    import pandas

    sources = b"".join(Path(path).read_bytes() for path in files)
    return hashlib.sha256(pandas.__version__.encode() + sources).hexdigest()[:16]


def file_signature(path: str | Path) -> tuple[int, int, int, int]:
    """A file's inode, size, modification and change times: a rewrite, a rename over it or a copy changes one."""
    st = os.stat(path)
    return st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


def secret_key(create: bool = False) -> bytes | None:
    """This user's key (random, made with mode 0600 when absent and ``create``), or ``None`` (the cache is off):
    absent, or not a regular file of :data:`KEY_BYTES` bytes owned by this user and closed to others.  It lies in
    ``$FYEXP_CACHE_KEY_FILE``, else ``$XDG_CONFIG_HOME`` or ``~/.config``, ``/fyexp/cache-key``."""
    chosen = os.environ.get("FYEXP_CACHE_KEY_FILE")
    path = Path(chosen).expanduser() if chosen else Path(
        os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config") / "fyexp" / "cache-key"
    if create and not os.path.lexists(path):
        with contextlib.suppress(OSError):  # made meanwhile by another process (read below), or not makeable
            path.parent.mkdir(parents=True, exist_ok=True)
            with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600), "wb") as out:
                out.write(os.urandom(KEY_BYTES))
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077 or st.st_size != KEY_BYTES:
        os.close(fd)
        return None
    with os.fdopen(fd, "rb") as handle:
        key = handle.read(KEY_BYTES + 1)
    return key if len(key) == KEY_BYTES else None


def _path(kind: str, name: str) -> Path | None:
    name_hash = hashlib.sha256(name.encode()).hexdigest()[:24]
    return None if (folder := cache_dir()) is None else folder / kind / f"{name_hash}.pkl"


def load_entry(kind: str, name: str, key: Any) -> Any | None:
    """The value saved under ``(kind, name)`` with an equal ``key``, else ``None`` (an unsigned entry is never
    unpickled)."""
    path = _path(kind, name)
    if path is None or not path.is_file() or (secret := secret_key()) is None:
        return None
    try:
        data = path.read_bytes()
        head = len(MAGIC) + KEY_BYTES
        if not data.startswith(MAGIC) or not hmac.compare_digest(data[len(MAGIC):head], _tag(secret, data[head:])):
            return None
        saved_name, saved_key, value = pickle.loads(data[head:])
    except Exception:  # noqa: BLE001 - a damaged or foreign cache entry is a miss, never an error
        return None
    return value if saved_name == name and saved_key == key else None


def save_entry(kind: str, name: str, key: Any, value: Any) -> None:
    """Save ``value`` under ``(kind, name)`` with its ``key``, readable to this user only; no error, ever."""
    path = _path(kind, name)
    if path is None or (secret := secret_key(create=True)) is None:
        return
    with contextlib.suppress(Exception):  # unpicklable, unwritable, a full disk: the cache only ever saves time
        payload = pickle.dumps((name, key, value), protocol=pickle.HIGHEST_PROTOCOL)
        atomic_write(path, MAGIC + _tag(secret, payload) + payload, mode=0o600)


def remembered(kind: str, name: str, key: Any, derive: Callable[[], Any]) -> Any:
    """The value saved under ``(kind, name)`` with this ``key``, else ``derive()``'s (never ``None``), saved."""
    value = load_entry(kind, name, key)
    if value is None:
        save_entry(kind, name, key, value := derive())
    return value
