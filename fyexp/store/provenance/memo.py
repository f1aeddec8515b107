"""Values derived from the text of fyexp's own modules (function hashes, import sets), kept between processes.

Parsing some hundred modules is most of a second of every ``fyexp report``.  A :class:`TextMemo` maps a text's
SHA-256 (and further inputs) to the derived value, as one :mod:`fyexp.store.user_cache` entry keyed by the deriving
module's code and the Python version (``ast`` dumps differ): read on first use, written back at exit when it grew,
merged with what another process saved meanwhile, at most :data:`LIMIT` texts (those used last).
"""

from __future__ import annotations

import atexit
import hashlib
import sys
from typing import Any, Callable, Hashable

from fyexp.store import user_cache

KIND = "source-memo"
LIMIT = 4000  # texts per memo: some 200 modules (working tree and HEAD) times many versions of each


class TextMemo:
    """``memo.get(text, derive, *extra)``: ``derive()``'s value for this ``text`` and ``extra`` inputs, derived once
    per text across processes; ``deriving_file``: the ``__file__`` of the deriving module (a change starts empty)."""

    def __init__(self, name: str, deriving_file: str):
        self.name, self.deriving_file = name, deriving_file
        self.values: dict[tuple, Any] | None = None   # None: not loaded yet
        self.key: tuple | None = None
        self.used: dict[tuple, None] = {}   # the texts this process asked for, in order
        self.grew = False

    def get(self, text: str, derive: Callable[[], Any], *extra: Hashable) -> Any:
        if self.values is None:   # first use: what earlier processes kept
            self.values = {}
            if user_cache.cache_dir() is not None:
                self.key = (user_cache.code_key(self.deriving_file), sys.version)
                saved = user_cache.load_entry(KIND, self.name, self.key)
                self.values = saved if isinstance(saved, dict) else {}
                atexit.register(self.save)
        entry = (hashlib.sha256(text.encode("utf-8")).hexdigest(), *extra)
        if entry not in self.values:
            self.values[entry] = derive()
            self.grew = True
        self.used[entry] = None
        return self.values[entry]

    def save(self) -> None:
        """Write the memo back when it grew, merged with what is on disk, the texts used here kept newest."""
        if not self.grew or self.key is None:   # nothing new, or no cache
            return
        saved = user_cache.load_entry(KIND, self.name, self.key)
        merged = {**(saved if isinstance(saved, dict) else {}), **self.values}
        for entry in self.used:   # last: the newest
            merged[entry] = merged.pop(entry)
        user_cache.save_entry(KIND, self.name, self.key, dict(list(merged.items())[-LIMIT:]))
        self.grew = False
