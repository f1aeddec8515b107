"""The one atomic-write helper: readers see the old file or the whole new one, never a part (a temporary file beside
it, fsynced, then ``os.replace``: atomic on POSIX), by default with the mode ``open(path, "w")`` gives, not
``mkstemp``'s 0600, so a shared or container-mounted ``results/`` stays readable to others."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def atomic_write(path: Path, data: str | bytes, mode: int | None = None) -> None:
    """Write ``data`` (text as UTF-8, newlines untranslated) to ``path`` atomically, with permissions ``mode``; on any
    error (``KeyboardInterrupt`` and a full disk included) the temporary file is removed, the old ``path`` kept."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        if mode is None:
            umask = os.umask(0o022)  # read by setting and restoring it: POSIX has no read-only call
            os.umask(umask)
            mode = 0o666 & ~umask
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data.encode("utf-8") if isinstance(data, str) else data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


atomic_write_text = atomic_write_bytes = atomic_write
