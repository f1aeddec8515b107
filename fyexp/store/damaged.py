"""Reading a record as data from someone else, the one warning of a damaged record, and leftover temporary files.

A record (a cell file, ``results.csv``, a file under ``superseded/``, a run record, a figure artifact) that fails its
check is skipped, never a crash and never silence: :func:`warn_damaged` prints one line on stderr, ``warning: <what>
<path> (<problem>); <consequence>``, once per file and problem in a process.  The rows of a cell whose run record fails
(or is missing) have *unknown provenance* (:data:`UNKNOWN_PROVENANCE_NOTE`).  An atomic write
(:func:`fyexp.store.io.atomic_write`) renames ``.<name>.<8 random characters>.tmp`` over its target milliseconds after
its last byte: one untouched for :data:`LEFTOVER_AGE_S` was left by a killed write (:func:`is_leftover`).
"""

from __future__ import annotations

import copy
import errno
import functools
import json
import os
import re
import stat
import sys
import time
from pathlib import Path
from typing import BinaryIO, Callable

from fyexp.store.user_cache import file_signature

UNKNOWN_PROVENANCE_NOTE = ("its rows have unknown provenance (never current, never a claim's evidence); "
                           "`fyexp run` redoes the cell")
TEMP_NAME = re.compile(r"^\..+\.[A-Za-z0-9_]{8}\.tmp$")   # tempfile.mkstemp(prefix=".<name>.", suffix=".tmp")
LEFTOVER_AGE_S = 600.0
_WARNED: set[tuple[str, str]] = set()
MAX_RECORD_BYTES = 16 << 20   # a record fyexp writes: at most some 100 KB (a run record with its function hashes)
MAX_TABLE_BYTES = 1 << 30     # a consolidated results.csv (the largest committed: under 1 MB)
MAX_JSON_DEPTH = 64           # nested arrays and objects (a record fyexp writes: at most 5)


def read_record_bytes(path: Path, limit: int = MAX_RECORD_BYTES) -> tuple[bytes | None, str | None]:
    """The bytes of the record file ``path`` and ``None``, or ``None`` and what is wrong (one phrase): fyexp writes
    regular files, so anything else is refused before a byte is read (:func:`open_regular`), a file over ``limit``
    bytes by its size."""
    handle, problem = open_regular(path)
    if problem is not None:
        return None, problem
    with handle:
        size = os.fstat(handle.fileno()).st_size
        if size > limit:
            return None, f"{size:,} bytes, more than the {limit:,} a record may have"
        data = handle.read(limit + 1)
    if len(data) > limit:  # grew since fstat
        return None, f"more than the {limit:,} bytes a record may have"
    return data, None


def open_regular(path: Path) -> tuple[BinaryIO | None, str | None]:
    """``path`` opened for binary reading and ``None``, or ``None`` and why not (one phrase): a symbolic link (which
    may lead out of the results folder) is not followed, and a FIFO (whose read waits forever), a device
    (``/dev/zero`` reads without end) or a folder is refused without blocking (``O_NONBLOCK``)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        return None, ("a symbolic link, not a file fyexp wrote; it is not followed" if exc.errno == errno.ELOOP
                      else f"cannot be read ({exc.strerror})")
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        return None, "not a regular file (a FIFO, a device or a folder)"
    return os.fdopen(fd, "rb"), None


def json_depth(text: str, stop: int | None = None) -> int:
    """How deeply the arrays and objects of the JSON ``text`` nest (brackets inside strings not counted), or the
    first depth past ``stop``: a linear scan, so a text too deep for the parser's recursion is told before parsing."""
    depth = deepest = 0
    for match in _JSON_TOKENS.finditer(text):
        token = match.group()
        if token in "[{":
            depth += 1
            deepest = max(deepest, depth)
            if stop is not None and deepest > stop:
                break
        elif token in "]}":
            depth -= 1
    return deepest


_JSON_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')


def parsed_once(path: Path, parse: Callable[..., tuple[object, str | None]], *args) -> tuple[object, str | None]:
    """``parse(path, *args)``: a record's value and ``None``, or ``None`` and what is wrong; once per process while
    the file's ``stat`` signature is unchanged (a command reads each cell file and run record once, issue 48)."""
    try:
        signature = file_signature(path)
    except OSError as exc:
        return None, f"cannot be read ({exc.strerror})"
    return _parsed(os.path.abspath(path), signature, parse, args)


@functools.lru_cache(maxsize=16384)
def _parsed(path: str, signature: tuple, parse: Callable, args: tuple) -> tuple[object, str | None]:
    return parse(Path(path), *args)


def read_json(path: Path, limit: int = MAX_RECORD_BYTES, member: str | None = None, *,
              shared: bool = False) -> tuple[object, str | None]:
    """A record file's JSON value and ``None``, or ``None`` and what is wrong with the file (one phrase): the
    checks of :func:`read_record_bytes`, UTF-8, at most :data:`MAX_JSON_DEPTH` nested levels, valid JSON.
    ``member``: only that member of the file's JSON object (``None`` where there is none).  Parsed once
    (:func:`parsed_once`); a copy each time, or with ``shared`` the parsed value itself (for readers that only read:
    over a hundred run records the copy costs more than the parse)."""
    value, problem = parsed_once(path, _parse_json, limit)
    if member is not None:
        value = value.get(member) if isinstance(value, dict) else None
    return (value if shared else copy.deepcopy(value)), problem


def read_record_text(path: Path, limit: int = MAX_RECORD_BYTES) -> tuple[str | None, str | None]:
    """The text of the record file ``path`` and ``None``, or ``None`` and what is wrong (one phrase): the checks of
    :func:`read_record_bytes`, then UTF-8."""
    data, problem = read_record_bytes(path, limit)
    if problem is not None:
        return None, problem
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError:
        return None, "not UTF-8 text"


def _parse_json(path: Path, limit: int) -> tuple[object, str | None]:
    text, problem = read_record_text(path, limit)
    if problem is not None:
        return None, problem
    # no text nests deeper than it has "[" and "{" (a run record has under 20): the scan only where it might
    if text.count("[") + text.count("{") > MAX_JSON_DEPTH and json_depth(text, stop=MAX_JSON_DEPTH) > MAX_JSON_DEPTH:
        return None, f"nested deeper than {MAX_JSON_DEPTH} levels"
    try:
        return json.loads(text), None
    except (ValueError, RecursionError):
        return None, "not JSON"


def is_path_part(text: str) -> bool:
    """Whether ``text``, read from a file (a row's ``cell`` or ``profile``), names one file or folder inside another
    (so a path built from it stays where it is built)."""
    return bool(text) and text not in (".", "..") and not any(c in text for c in ("/", "\\", "\x00"))


def warned() -> bool:
    """Whether this process has said any :func:`warn_damaged` line."""
    return bool(_WARNED)


def warn_damaged(path: Path, what: str, problem: str, consequence: str) -> None:
    """One line on stderr naming the damaged file ``path``, what it is and ``problem`` (once per file and problem)."""
    key = (str(path), problem)
    if key in _WARNED:
        return
    _WARNED.add(key)
    print(" ".join(f"warning: {what} {path} ({problem}); {consequence}".split()), file=sys.stderr, flush=True)


def is_leftover(path: Path, now: float | None = None) -> bool:
    """Whether ``path`` is an atomic write's temporary file (:data:`TEMP_NAME`) untouched for
    :data:`LEFTOVER_AGE_S` seconds (a write that was killed); False when it is gone meanwhile."""
    try:
        return bool(TEMP_NAME.match(Path(path).name)) and (
            (time.time() if now is None else now) - Path(path).stat().st_mtime > LEFTOVER_AGE_S)
    except OSError:  # renamed or removed meanwhile: a write in flight finished
        return False


PANEL_LEFT_OUT = "its panel is left out of the figure"   # a figure of several cells' artifacts drawn without it
MAX_ARTIFACT_BYTES = 1 << 30   # a figure artifact (.npz) fyexp writes: the largest committed is under 1 MB


def read_artifact(path: Path, keys: tuple[str, ...] = (), what: str = "figure artifact",
                  consequence: str = "its figure is not drawn") -> dict | None:
    """A cell's figure data holding every one of ``keys``, or None with one warning naming the file (``no key 'k'``,
    ``no array 'k'``); absent (no dangling link): None without a warning.  A ``.npz`` artifact's arrays: the checks
    of :func:`read_record_bytes` (at most :data:`MAX_ARTIFACT_BYTES`, also unpacked), a zip archive of arrays loaded
    with ``allow_pickle=False`` (an object array is refused, never unpickled); any other's JSON object
    (:func:`read_json`)."""
    if not os.path.lexists(path):
        return None
    npz = Path(path).suffix == ".npz"
    value, problem = (_npz_arrays if npz else _json_object)(Path(path))
    if problem is None and (missing := [key for key in keys if key not in value]):
        problem = f"no {'array' if npz else 'key'} {', '.join(map(repr, missing))}"
    if problem is not None:
        warn_damaged(path, f"skipped damaged {what}", problem, consequence)
        return None
    return value


read_artifact_json = read_npz = read_artifact   # the names the figures read them by


def _json_object(path: Path) -> tuple[dict | None, str | None]:
    value, problem = read_json(path)
    if problem is None and not isinstance(value, dict):
        return None, f"a JSON {type(value).__name__}, not an object"
    return value, problem


def _npz_arrays(path: Path) -> tuple[dict | None, str | None]:
    import io
    import zipfile
    import zlib

    import numpy as np

    data, problem = read_record_bytes(path, MAX_ARTIFACT_BYTES)
    if problem is not None or not data.startswith(b"PK"):
        return None, problem or "not a .npz archive (no zip header)"
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:   # what it unpacks to, declared before it is unpacked
            unpacked = sum(info.file_size for info in archive.infolist())
    except (zipfile.BadZipFile, ValueError, OSError, EOFError) as exc:
        return None, f"not a readable .npz archive ({type(exc).__name__})"
    if unpacked > MAX_ARTIFACT_BYTES:
        return None, f"unpacks to {unpacked:,} bytes, more than the {MAX_ARTIFACT_BYTES:,} an artifact may have"
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as saved:
            return {key: saved[key] for key in saved.files}, None
    except (zipfile.BadZipFile, ValueError, OSError, EOFError, KeyError, zlib.error) as exc:
        return None, ("holds an object array, which is never unpickled" if "allow_pickle" in str(exc) else
                      f"not a readable .npz archive of arrays ({type(exc).__name__})")

