"""The one warning of a damaged record, and what a leftover temporary file is.

A record (a cell file, ``results.csv``, a file under ``superseded/``, a cell's settings or executed-code record) that
fails its check is skipped, never a crash and never silence: :func:`warn_damaged` prints one line on stderr,
``warning: <what> <path> (<problem>); <consequence>``, once per file and problem in a process (a file read by
several steps of one command is named once).  The rows of a cell whose settings or executed-code record fails have
*unknown provenance* (:data:`UNKNOWN_PROVENANCE_NOTE`; :data:`fyexp.provenance.freshness.UNKNOWN_PROVENANCE`).

A write is atomic (:func:`fyexp.io.atomic_write`): its text goes to ``.<name>.<8 random characters>.tmp`` beside
the target, then is renamed over it.  A write in flight touches its temporary file until the rename, milliseconds
after the last byte; a temporary file untouched for :data:`LEFTOVER_AGE_S` was left by a write that was killed
(:func:`is_leftover`), and ``fyexp run`` removes those under the experiment it runs.
"""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path

UNKNOWN_PROVENANCE_NOTE = ("its rows have unknown provenance (never current, never a claim's evidence); "
                           "`fyexp run` redoes the cell")
TEMP_NAME = re.compile(r"^\..+\.[A-Za-z0-9_]{8}\.tmp$")   # tempfile.mkstemp(prefix=".<name>.", suffix=".tmp")
LEFTOVER_AGE_S = 600.0

_WARNED: set[tuple[str, str]] = set()


def read_json(path: Path) -> tuple[object, str | None]:
    """A record file's JSON value and ``None``, or ``None`` and what is wrong with the file (one phrase)."""
    try:
        return json.loads(Path(path).read_bytes().decode("utf-8")), None
    except UnicodeDecodeError:  # a ValueError too: caught first
        return None, "not UTF-8 text"
    except ValueError:
        return None, "not JSON"
    except OSError as exc:
        return None, f"cannot be read ({exc.strerror})"


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
    if not TEMP_NAME.match(Path(path).name):
        return False
    try:
        modified = Path(path).stat().st_mtime
    except OSError:  # renamed or removed meanwhile: a write in flight finished
        return False
    return (time.time() if now is None else now) - modified > LEFTOVER_AGE_S
