"""Values derived from the text of fyexp's own modules (function hashes, import sets), kept between processes.

Parsing a module is the costly part of :func:`fyexp.store.provenance.executed.function_hashes` and of the import graphs
of :func:`fyexp.store.provenance.source.module_tree` and :func:`fyexp.report.cache.code_files` (about a hundred modules,
a second of every ``fyexp report``), and what it gives depends only on the module's text, on the code that derives it
and on the Python that parses it.  A :class:`TextMemo` maps the SHA-256 of a text (with any further inputs, such as
the package a relative import is resolved in) to the derived value; the map is one entry of
:mod:`fyexp.store.user_cache`, keyed by ``code_key(<the deriving module>)`` and the Python version (``ast`` dumps differ
between versions), read once per process on first use and written back once, at exit, when it grew.

At exit rather than at the end of a report: the same values are derived by ``fyexp run`` (the functions a cell
ran), ``fyexp claims`` and the fingerprint check too, and one write per process after all of them is
the fewest.  A process killed before exit loses only what it would have saved.  Two processes saving at once each
merge what is on disk first, and the write is atomic, so at worst one's new values are derived again later.  The map
keeps at most :data:`LIMIT` texts (those this process used last).  ``FYEXP_CACHE_DIR=off``: nothing is read or
written; every value is derived (and still kept for the process, by the callers' ``lru_cache``).
"""

from __future__ import annotations

import atexit
import hashlib
import sys
from typing import Any, Callable, Hashable

from fyexp.store import user_cache

KIND = "source-memo"
LIMIT = 4000  # texts per memo: some 200 modules (working tree and HEAD) times many versions of each


def text_digest(text: str) -> str:
    """SHA-256 of a source text (UTF-8), the key of what is derived from it."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class TextMemo:
    """``memo.get(text, derive, *extra)``: ``derive()``'s value for this ``text`` (and ``extra`` inputs), derived once
    per text across processes.  ``name`` names the memo; ``deriving_file`` is the ``__file__`` of the module whose
    code derives the values (a change to it starts an empty memo)."""

    def __init__(self, name: str, deriving_file: str):
        self.name = name
        self.deriving_file = deriving_file
        self.values: dict[tuple, Any] | None = None   # None: not loaded yet
        self.key: tuple | None = None
        self.used: dict[tuple, None] = {}   # the texts this process asked for, in order
        self.grew = False

    def _load(self) -> dict[tuple, Any]:
        if self.values is None:
            self.values = {}
            if user_cache.cache_dir() is not None:
                self.key = (user_cache.code_key(self.deriving_file), sys.version)
                saved = user_cache.load_entry(KIND, self.name, self.key)
                self.values = saved if isinstance(saved, dict) else {}
                atexit.register(self.save)
        return self.values

    def get(self, text: str, derive: Callable[[], Any], *extra: Hashable) -> Any:
        values = self._load()
        entry = (text_digest(text), *extra)
        if entry not in values:
            values[entry] = derive()
            self.grew = True
        self.used[entry] = None
        return values[entry]

    def save(self) -> None:
        """Write the memo back when it grew (merged with what another process saved meanwhile; the texts used here
        kept first when it is over :data:`LIMIT`)."""
        if not self.grew or self.key is None or self.values is None:
            return
        saved = user_cache.load_entry(KIND, self.name, self.key)
        merged = {**(saved if isinstance(saved, dict) else {}), **self.values}
        for entry in self.used:   # last: the newest
            merged[entry] = merged.pop(entry)
        user_cache.save_entry(KIND, self.name, self.key, dict(list(merged.items())[-LIMIT:]))
        self.grew = False
