"""The one atomic-write helper: readers see the old file or the whole new one, never a part.

A file is written to a temporary name in the same folder, flushed, fsynced and renamed over its final
name (``os.replace`` is atomic on POSIX within one file system).  ``tempfile.mkstemp`` creates files with mode
0600 whatever the umask; the helper sets the mode an ordinary ``open(path, "w")`` would give (0666 minus the
process's umask), so a shared or container-mounted ``results/`` stays readable to others.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Callable


def _umask() -> int:
    """The process's umask (read by setting and restoring it; there is no read-only call on POSIX)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def default_file_mode() -> int:
    """The mode ``open(path, 'w')`` gives a new file: 0666 minus the umask."""
    return 0o666 & ~_umask()


def atomic_write(path: Path, write: Callable[[object], None], *, binary: bool = False) -> None:
    """Call ``write(handle)`` on a temporary file beside ``path``, then move it over ``path`` atomically.

    On any error (including ``KeyboardInterrupt`` and a full disk) the temporary file is removed and the old
    ``path``, if any, is left untouched.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, default_file_mode())
        with os.fdopen(fd, "wb" if binary else "w", **({} if binary else {"newline": "", "encoding": "utf-8"})) as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically, with the umask's file mode."""
    atomic_write(path, lambda handle: handle.write(text))


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically, with the umask's file mode."""
    atomic_write(path, lambda handle: handle.write(data), binary=True)
