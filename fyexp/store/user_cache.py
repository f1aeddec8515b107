"""A cache of what fyexp derives from files that do not change between commands, kept outside the results folder.

``fyexp report`` reads some 450 cell files and parses about a hundred of fyexp's own modules each time it runs; what
that gives depends only on the bytes read and on the code reading them, so it is kept on disk in one folder per user:
``$FYEXP_CACHE_DIR`` when set (empty, ``0`` or ``off``: no cache), else ``$XDG_CACHE_HOME/fyexp`` or
``~/.cache/fyexp``.  Every entry is keyed by what it was derived from (a file's stat signature, a text's SHA-256) and
by the code that derived it (:func:`code_key`); an entry that cannot be read is derived again, so deleting the folder
is always safe.

An entry is a pickle, and unpickling runs whatever the file names, so an entry is unpickled only when its HMAC-SHA256
tag verifies under this user's secret key (:func:`secret_key`), kept *outside* the cache folder: a shared, copied or
downloaded cache carries no key, and its entries are misses, derived again and overwritten.  ``joblib.Memory`` would
unpickle such entries unverified, hence this module: ``hmac`` signs, :func:`fyexp.store.io.atomic_write` writes.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import os
import pickle
import stat
from pathlib import Path
from typing import Any, Callable

from fyexp.store.io import atomic_write

__all__ = ["cache_dir", "code_key", "file_signature", "key_path", "load_entry", "remembered", "save_entry",
           "secret_key"]

OFF = {"", "0", "off", "no", "false"}
MAGIC = b"fyexp-cache-hmac-sha256\n"   # then the 32-byte tag, then the pickle
KEY_BYTES = 32
_tag = functools.partial(hmac.digest, digest="sha256")   # _tag(key, payload): the 32-byte HMAC-SHA256


def cache_dir() -> Path | None:
    """The cache folder (created on first write), or ``None`` when ``FYEXP_CACHE_DIR`` switches caching off."""
    chosen = os.environ.get("FYEXP_CACHE_DIR")
    if chosen is None:
        return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "fyexp"
    return None if chosen.strip().lower() in OFF else Path(chosen).expanduser()


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


def key_path() -> Path:
    """Where this user's secret key lives: ``$FYEXP_CACHE_KEY_FILE``, else ``$XDG_CONFIG_HOME/fyexp/cache-key`` or
    ``~/.config/fyexp/cache-key`` (never inside the cache folder)."""
    chosen = os.environ.get("FYEXP_CACHE_KEY_FILE")
    return Path(chosen).expanduser() if chosen else Path(
        os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config") / "fyexp" / "cache-key"


def secret_key(create: bool = False) -> bytes | None:
    """This user's cache key (32 random bytes, created with mode 0600 when absent and ``create``), or ``None``:
    absent, or not a regular file of :data:`KEY_BYTES` bytes owned by this user with no permission for group or
    others (a key others can read or replace signs nothing: the cache is off)."""
    path = key_path()
    if create and not os.path.lexists(path):
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600), "wb") as out:
                out.write(os.urandom(KEY_BYTES))
        except OSError:  # made meanwhile by another process (read below), or not makeable (the read fails)
            pass
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
    folder = cache_dir()
    return None if folder is None else folder / kind / f"{hashlib.sha256(name.encode()).hexdigest()[:24]}.pkl"


def load_entry(kind: str, name: str, key: Any) -> Any | None:
    """The value saved under ``(kind, name)`` when it was saved with an equal ``key``, else ``None`` (no cache, no
    entry, another key, or an entry that cannot be read or is not signed by this user's key: never unpickled)."""
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
    """Save ``value`` under ``(kind, name)`` with its ``key``, atomically and readable to this user only; a value
    that cannot be pickled or a cache that cannot be written (read-only home, full disk) is skipped without a word."""
    path = _path(kind, name)
    if path is None or (secret := secret_key(create=True)) is None:
        return
    try:
        payload = pickle.dumps((name, key, value), protocol=pickle.HIGHEST_PROTOCOL)
        atomic_write(path, MAGIC + _tag(secret, payload) + payload, mode=0o600)
    except Exception:  # noqa: BLE001 - the cache only ever saves time: no entry, no error
        pass


def remembered(kind: str, name: str, key: Any, derive: Callable[[], Any]) -> Any:
    """The value saved under ``(kind, name)`` with this ``key``, else ``derive()``'s, saved for the next process.
    ``derive`` must not return ``None`` (it reads as a miss)."""
    value = load_entry(kind, name, key)
    if value is None:
        save_entry(kind, name, key, value := derive())
    return value
