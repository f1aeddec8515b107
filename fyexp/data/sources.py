"""Where a data set comes from when the data root lacks it: the remedy every loader's message names, and downloads
that give up quickly offline.

Every message of a missing or damaged data set ends in :func:`supply`: the files to get and where they go under
a data root ``DIR``, and the two ways to name it (``--data-dir DIR`` or ``FYEXP_DATA_DIR=DIR``).  A loader that can
download (torchvision's MNIST-like sets, scikit-learn's 20 Newsgroups) first asks :func:`reachable` whether the
host answers within :data:`CONNECT_TIMEOUT_S` seconds, and downloads under :func:`socket_timeout`: offline, the
answer is a line within seconds, not a minute of retries.
"""

from __future__ import annotations

import socket
import textwrap
from contextlib import contextmanager
from pathlib import PurePosixPath
from typing import Iterator
from urllib.parse import urlsplit

CONNECT_TIMEOUT_S = 3.0   # a host that does not accept a connection within this is taken as unreachable
READ_TIMEOUT_S = 30.0     # a download whose socket stays silent this long fails
DATA_ROOT = "pass --data-dir DIR or set FYEXP_DATA_DIR=DIR"


def supply(files: str, folder: str | PurePosixPath) -> str:
    """The remedy of a missing or damaged data set: ``put <files> into DIR/<folder>/ and pass --data-dir DIR or
    set FYEXP_DATA_DIR=DIR``."""
    return f"put {files} into DIR/{str(folder).strip('/')}/ and {DATA_ROOT}"


def reachable(url: str, timeout: float = CONNECT_TIMEOUT_S) -> bool:
    """Whether the host of ``url`` accepts a TCP connection (on the URL's port, else 443 / 80) within ``timeout``
    seconds; a name that does not resolve is unreachable."""
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        with socket.create_connection((parts.hostname or "", port), timeout=timeout):
            return True
    except (OSError, ValueError):
        return False


def host(url: str) -> str:
    """The host name of ``url`` (for messages)."""
    return urlsplit(url).hostname or url


@contextmanager
def socket_timeout(seconds: float = READ_TIMEOUT_S) -> Iterator[None]:
    """Sockets opened inside (urllib's, which torchvision and scikit-learn download with) time out after
    ``seconds`` of silence instead of never; the previous default is restored after."""
    previous = socket.getdefaulttimeout()
    socket.setdefaulttimeout(seconds)
    try:
        yield
    finally:
        socket.setdefaulttimeout(previous)


def short(exc: BaseException, width: int = 160) -> str:
    """An exception as one line of at most ``width`` characters, shortened at a word boundary (a URL is never cut
    mid-word: it is kept whole or left out)."""
    text = " ".join(str(exc).split())
    name = type(exc).__name__
    return textwrap.shorten(f"{name}: {text}" if text else name, width=width, placeholder=" ...",
                            break_on_hyphens=False, break_long_words=False)


__all__ = ["CONNECT_TIMEOUT_S", "READ_TIMEOUT_S", "DATA_ROOT", "supply", "reachable", "host", "socket_timeout",
           "short"]
