"""The cache of derived values (fyexp.store.user_cache): a hit only for the same name and key, a miss for anything it
cannot read, nothing written when switched off, and never an error."""

from __future__ import annotations

import pytest

from fyexp.store import user_cache


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("FYEXP_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_round_trip_is_keyed_by_name_and_key(cache):
    user_cache.save_entry("cells", "/a/results/x", ("sig", 1), {"rows": [1, 2]})
    assert user_cache.load_entry("cells", "/a/results/x", ("sig", 1)) == {"rows": [1, 2]}
    assert user_cache.load_entry("cells", "/a/results/x", ("sig", 2)) is None      # derived from other bytes
    assert user_cache.load_entry("cells", "/a/results/y", ("sig", 1)) is None      # another folder
    assert user_cache.load_entry("other", "/a/results/x", ("sig", 1)) is None      # another kind
    assert not list(cache.rglob("*.tmp"))


def test_a_damaged_entry_is_a_miss(cache):
    user_cache.save_entry("cells", "n", "k", 1)
    [entry] = list(cache.rglob("*.pkl"))
    entry.write_bytes(b"not a pickle")
    assert user_cache.load_entry("cells", "n", "k") is None
    entry.write_bytes(b"")
    assert user_cache.load_entry("cells", "n", "k") is None


@pytest.mark.parametrize("value", ["", "0", "off", "OFF", "false"])
def test_switched_off_writes_nothing(tmp_path, monkeypatch, value):
    monkeypatch.setenv("FYEXP_CACHE_DIR", value)
    monkeypatch.chdir(tmp_path)
    assert user_cache.cache_dir() is None
    user_cache.save_entry("cells", "n", "k", 1)
    assert user_cache.load_entry("cells", "n", "k") is None
    assert list(tmp_path.iterdir()) == []


def test_default_folder_follows_xdg(monkeypatch, tmp_path):
    monkeypatch.delenv("FYEXP_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert user_cache.cache_dir() == tmp_path / "xdg" / "fyexp"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert user_cache.cache_dir() == tmp_path / "home" / ".cache" / "fyexp"


def test_an_unwritable_cache_is_skipped(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("a file where the cache folder would go")
    monkeypatch.setenv("FYEXP_CACHE_DIR", str(blocker / "cache"))
    user_cache.save_entry("cells", "n", "k", 1)       # no error
    assert user_cache.load_entry("cells", "n", "k") is None


def test_an_unpicklable_value_leaves_no_temporary_file(cache):
    user_cache.save_entry("cells", "n", "k", lambda: None)
    assert user_cache.load_entry("cells", "n", "k") is None
    assert not [p for p in cache.rglob("*") if p.is_file()]


def test_code_key_follows_the_source(tmp_path):
    a, b = tmp_path / "a.py", tmp_path / "b.py"
    a.write_text("x = 1\n")
    b.write_text("x = 1\n")
    assert user_cache.code_key(a) == user_cache.code_key(b)
    b.write_text("x = 2\n")
    assert user_cache.code_key(a) != user_cache.code_key(b)


def test_remembered_derives_once_per_key(cache):
    calls = []

    def derive():
        calls.append(1)
        return len(calls)

    assert user_cache.remembered("k", "n", 1, derive) == 1
    assert user_cache.remembered("k", "n", 1, derive) == 1 and len(calls) == 1    # the saved value
    assert user_cache.remembered("k", "n", 2, derive) == 2                         # another key derives again
