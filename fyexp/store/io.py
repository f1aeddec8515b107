"""The one atomic-write helper: readers see the old file or the whole new one, never a part.

A file is written to a temporary name in the same folder, flushed, fsynced and renamed over its final name
(``os.replace`` is atomic on POSIX within one file system), with the mode ``open(path, "w")`` would give (0666 minus
the umask; ``tempfile.mkstemp`` makes 0600), so a shared or container-mounted ``results/`` stays readable to others.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Callable


def atomic_write(path: Path, write: Callable[[object], None], *, binary: bool = False) -> None:
    """Call ``write(handle)`` on a temporary file beside ``path``, then move it over ``path`` atomically; on any
    error (``KeyboardInterrupt`` and a full disk included) the temporary file is removed, the old ``path`` kept."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        umask = os.umask(0o022)  # read by setting and restoring it: POSIX has no read-only call
        os.umask(umask)
        os.fchmod(fd, 0o666 & ~umask)
        text = {} if binary else {"newline": "", "encoding": "utf-8"}
        with os.fdopen(fd, "wb" if binary else "w", **text) as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write(path, lambda handle: handle.write(text))


def atomic_write_bytes(path: Path, data: bytes) -> None:
    atomic_write(path, lambda handle: handle.write(data), binary=True)
