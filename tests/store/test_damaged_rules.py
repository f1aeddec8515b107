"""fyexp/store/damaged.py in process: the phrase that names what is wrong with a record, the warning's one line
(flushed, once per file and problem), and the age at which a temporary file is a killed write's leftover.

Written from the survivors of a mutation run (docs/contributing/mutation.md, "fyexp/store/damaged.py"): the
installed-script tests of tests/store/test_damaged_records.py read these phrases in a subprocess, which a mutant never
reaches.
"""

from __future__ import annotations

import os

import pytest

from fyexp.store import damaged
from fyexp.store.damaged import LEFTOVER_AGE_S, is_leftover, read_json, warn_damaged


@pytest.mark.parametrize("content, value, problem", [
    (b'{"seed": 3}', {"seed": 3}, None),
    (b'\xff\xfe{"seed": 3}', None, "not UTF-8 text"),
    (b'{"seed": 3', None, "not JSON"),
    (b"", None, "not JSON"),
])
def test_read_json_names_what_is_wrong_in_one_phrase(tmp_path, content, value, problem):
    path = tmp_path / "record.json"
    path.write_bytes(content)
    assert read_json(path) == (value, problem)


def test_read_json_of_a_file_that_cannot_be_read_says_why(tmp_path):
    assert read_json(tmp_path / "gone.json") == (None, "cannot be read (No such file or directory)")
    assert read_json(tmp_path) == (None, "not a regular file (a FIFO, a device or a folder)")


class _Stream:
    """A stderr that records what was written and whether it was flushed after it."""

    def __init__(self):
        self.text, self.flushed_after = "", False

    def write(self, text):
        self.text += text
        self.flushed_after = False
        return len(text)

    def flush(self):
        self.flushed_after = True


def test_the_warning_is_one_flushed_line_once_per_file_and_problem(monkeypatch, tmp_path):
    stream = _Stream()
    monkeypatch.setattr(damaged.sys, "stderr", stream)
    monkeypatch.setattr(damaged, "_WARNED", set())
    path = tmp_path / "cell.record.json"
    warn_damaged(path, "settings record", "not JSON", "its rows have\n  unknown provenance")
    assert stream.text == f"warning: settings record {path} (not JSON); its rows have unknown provenance\n"
    assert stream.flushed_after          # seen before a long run's next progress line, not when the buffer fills
    warn_damaged(path, "settings record", "not JSON", "again")
    assert stream.text.count("\n") == 1
    warn_damaged(path, "settings record", "not UTF-8 text", "its rows have unknown provenance")
    assert stream.text.count("\n") == 2 and "(not UTF-8 text)" in stream.text.splitlines()[1]


def test_a_temporary_file_is_a_leftover_only_when_untouched_for_longer_than_the_age(tmp_path):
    path = tmp_path / ".results.csv.a1B2c3D4.tmp"
    path.write_text("x")
    modified = 1_000_000_000
    os.utime(path, (modified, modified))
    assert not is_leftover(path, now=modified + LEFTOVER_AGE_S)          # at the age: a write may still be in flight
    assert is_leftover(path, now=modified + LEFTOVER_AGE_S + 1)
    named_otherwise = tmp_path / "results.csv.a1B2c3D4.tmp"          # not an atomic write's name (no leading dot)
    named_otherwise.write_text("x")
    os.utime(named_otherwise, (modified, modified))
    assert not is_leftover(named_otherwise, now=modified + 10 * LEFTOVER_AGE_S)
    assert not is_leftover(tmp_path / ".gone.a1B2c3D4.tmp", now=modified + 10 * LEFTOVER_AGE_S)


def test_read_json_copies_unless_asked_to_share(tmp_path):
    path = tmp_path / "record.json"
    path.write_text('{"settings": {"config": {"epochs": 3}}}')
    copied = read_json(path, member="settings")[0]
    copied["config"]["epochs"] = 99                                       # a caller's change stays its own
    assert read_json(path, member="settings")[0] == {"config": {"epochs": 3}}
    shared = read_json(path, member="settings", shared=True)[0]
    assert shared == {"config": {"epochs": 3}}
    assert read_json(path, member="settings", shared=True)[0] is shared  # one value for the process, no copy
    assert read_json(path, member="settings")[0] is not shared
