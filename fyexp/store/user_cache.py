"""A cache of what fyexp derives from files that do not change between commands, kept outside the results folder.

``fyexp report`` reads some 450 cell files and parses about a hundred of fyexp's own modules each time it runs; what
that gives depends only on the bytes read (and on the code that reads them).  This module keeps such derived values
on disk between processes, in one folder per user:

* ``$FYEXP_CACHE_DIR`` when it is set (empty, ``0`` or ``off``: no cache at all);
* else ``$XDG_CACHE_HOME/fyexp``, else ``~/.cache/fyexp``.

Nothing in it is evidence: every entry is keyed by what it was derived from (a file's stat signature or a text's
SHA-256) and by the version of the code that derived it (:func:`code_key`), and an entry that cannot be read is
simply derived again.  Deleting the folder is always safe; the results folder is never written here.

An entry is a pickle, and unpickling runs whatever the file names, so an entry is never unpickled unless it is
this user's own: each file starts with an HMAC-SHA256 of its pickle under a secret key of this user
(:func:`secret_key`: 32 random bytes in ``$FYEXP_CACHE_KEY_FILE``, else ``$XDG_CONFIG_HOME/fyexp/cache-key`` or
``~/.config/fyexp/cache-key``, created with mode 0600 and kept *outside* the cache folder, so a shared, copied or
downloaded ``FYEXP_CACHE_DIR`` carries no key).  An entry whose tag does not verify (written by someone else, by
fyexp before tags, or altered) is a miss: derived again and overwritten, never loaded.  A key file that is not a
regular file of 32 bytes owned by this user and unreadable to others switches the cache off (nothing is read).
"""

from __future__ import annotations

import hashlib
import hmac
import os
import pickle
import stat
import tempfile
from pathlib import Path
from typing import Any, Callable

__all__ = ["cache_dir", "code_key", "file_signature", "key_path", "load_entry", "remembered", "save_entry",
           "secret_key"]

OFF = {"", "0", "off", "no", "false"}
MAGIC = b"fyexp-cache-hmac-sha256\n"   # then the 32-byte tag, then the pickle
KEY_BYTES = 32


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


def key_path() -> Path:
    """Where this user's secret key lives (module docstring): never inside the cache folder."""
    chosen = os.environ.get("FYEXP_CACHE_KEY_FILE")
    if chosen:
        return Path(chosen).expanduser()
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "fyexp" / "cache-key"


def secret_key(create: bool = False) -> bytes | None:
    """This user's cache key (created when absent and ``create``), or ``None``: absent, or not a regular file of
    :data:`KEY_BYTES` bytes owned by this user with no permission for group or others (a key others can read or
    replace signs nothing)."""
    path = key_path()
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        if not create:
            return None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600), "wb") as out:
                out.write(os.urandom(KEY_BYTES))
        except FileExistsError:  # another process made it meanwhile: read below
            pass
        except OSError:
            return None
        return secret_key(create=False)
    except OSError:
        return None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077 or st.st_size != KEY_BYTES:
        os.close(fd)
        return None
    with os.fdopen(fd, "rb") as handle:
        key = handle.read(KEY_BYTES + 1)
    return key if len(key) == KEY_BYTES else None


def _tag(key: bytes, payload: bytes) -> bytes:
    return hmac.new(key, payload, hashlib.sha256).digest()


def _path(kind: str, name: str) -> Path | None:
    folder = cache_dir()
    return None if folder is None else folder / kind / f"{hashlib.sha256(name.encode()).hexdigest()[:24]}.pkl"


def load_entry(kind: str, name: str, key: Any) -> Any | None:
    """The value saved under ``(kind, name)`` when it was saved with an equal ``key``, else ``None`` (no cache, no
    entry, another key, or an entry that cannot be read: each means "derive it again")."""
    path = _path(kind, name)
    if path is None or not path.is_file() or (secret := secret_key()) is None:
        return None
    try:
        data = path.read_bytes()
        head = len(MAGIC) + hashlib.sha256().digest_size
        if not data.startswith(MAGIC) or not hmac.compare_digest(data[len(MAGIC):head], _tag(secret, data[head:])):
            return None  # not this user's entry: never unpickled
        saved_name, saved_key, value = pickle.loads(data[head:])
    except Exception:  # noqa: BLE001 - a damaged or foreign cache entry is a miss, never an error
        return None
    return value if saved_name == name and saved_key == key else None


def save_entry(kind: str, name: str, key: Any, value: Any) -> None:
    """Save ``value`` under ``(kind, name)`` with its ``key``, atomically; a cache that cannot be written (read-only
    home, full disk) is skipped without a word: it only ever saves time."""
    path = _path(kind, name)
    secret = None if path is None else secret_key(create=True)
    if path is None or secret is None:
        return
    try:
        payload = pickle.dumps((name, key, value), protocol=pickle.HIGHEST_PROTOCOL)
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temp = tempfile.mkstemp(dir=path.parent, prefix=".", suffix=".tmp")
    except Exception:  # noqa: BLE001 - a value that cannot be pickled, a folder that cannot be made: no entry
        return
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(MAGIC + _tag(secret, payload) + payload)
        os.replace(temp, path)
    except Exception:  # noqa: BLE001 - a full disk: no entry, no error
        Path(temp).unlink(missing_ok=True)


def remembered(kind: str, name: str, key: Any, derive: Callable[[], Any]) -> Any:
    """The value saved under ``(kind, name)`` with this ``key`` (:func:`load_entry`), else ``derive()``'s, saved for
    the next process (:func:`save_entry`).  ``derive`` must not return ``None`` (it reads as a miss)."""
    value = load_entry(kind, name, key)
    if value is None:
        value = derive()
        save_entry(kind, name, key, value)
    return value
