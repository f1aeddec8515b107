"""What fyexp derives from its own source (function hashes, import sets) is kept between processes
(fyexp/store/provenance/memo.py): the kept values are the derived ones, bit for bit; a changed text, another deriving
code or another Python derives again; two processes' additions are merged; switched off, nothing is kept.  And the
one import parser (fyexp.store.provenance.source.imports_of) serves both module_tree and the report's output cache."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fyexp.store.provenance import executed, memo, source
from fyexp.report import cache as report_cache

ROOT = Path(__file__).resolve().parents[2]

# every module of the package: its function hashes, its import set (report's and code hash's), in a fresh process;
# ``ast.parse`` is counted, to see which values came from the parser and which from the kept memo
DERIVE_ALL = r"""
import ast, json, sys
from pathlib import Path
parses = []
real_parse = ast.parse
def counted(*args, **kwargs):   # the parses of fyexp's own code (libraries, e.g. inspect, parse too)
    if "fyexp" in sys._getframe(1).f_code.co_filename:
        parses.append(1)
    return real_parse(*args, **kwargs)
ast.parse = counted
from fyexp.store.provenance import executed, source
root = source.SOURCE_ROOT
out = {}
for path in sorted((root / "fyexp").rglob("*.py")):
    parts = list(path.relative_to(root).with_suffix("").parts)
    module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
    out[path.relative_to(root).as_posix()] = [executed._module_hashes(path, path.stat().st_mtime_ns),
                                              sorted(source.imports_of(path, module))]
print(json.dumps({"parses": len(parses), "values": out}, sort_keys=True))
"""


def _derive_all(cache_dir: str) -> dict:
    env = {**os.environ, "FYEXP_CACHE_DIR": cache_dir}
    done = subprocess.run([sys.executable, "-c", DERIVE_ALL], capture_output=True, text=True, env=env, cwd=ROOT,
                          check=True)
    return json.loads(done.stdout)


@pytest.mark.slow
def test_kept_values_are_the_derived_values_of_every_module(tmp_path):
    """Three processes: no cache (everything parsed), a cold cache (parsed, then saved at exit), a warm cache (not one
    parse): the function hashes and import sets of every fyexp module are the same in all three."""
    uncached = _derive_all("off")
    cold = _derive_all(str(tmp_path / "cache"))
    warm = _derive_all(str(tmp_path / "cache"))
    modules = len(uncached["values"])
    assert modules > 100 and uncached["parses"] >= modules and cold["parses"] >= modules
    assert warm["parses"] == 0
    assert warm["values"] == cold["values"] == uncached["values"]
    assert len(list((tmp_path / "cache").rglob("*.pkl"))) == 2   # one memo per deriving function


def test_the_memo_answers_by_text_and_a_changed_text_is_derived_again(tmp_path, monkeypatch):
    monkeypatch.setenv("FYEXP_CACHE_DIR", str(tmp_path / "cache"))
    deriving = tmp_path / "deriver.py"
    deriving.write_text("# the code that derives\n")
    first = memo.TextMemo("t", str(deriving))
    assert first.get("def f(): return 1\n", lambda: "derived from 1") == "derived from 1"
    first.save()
    again = memo.TextMemo("t", str(deriving))  # a new process: read from disk, never derived
    assert again.get("def f(): return 1\n", pytest.fail) == "derived from 1"
    assert again.get("def f(): return 2\n", lambda: "derived from 2") == "derived from 2"   # another text


def test_extra_inputs_are_part_of_the_key(tmp_path, monkeypatch):
    monkeypatch.setenv("FYEXP_CACHE_DIR", str(tmp_path / "cache"))
    m = memo.TextMemo("t", __file__)
    assert m.get("from . import x\n", lambda: "in a", "a") == "in a"
    assert m.get("from . import x\n", lambda: "in b", "b") == "in b"
    assert m.get("from . import x\n", pytest.fail, "a") == "in a"


def test_other_deriving_code_or_another_python_starts_empty(tmp_path, monkeypatch):
    monkeypatch.setenv("FYEXP_CACHE_DIR", str(tmp_path / "cache"))
    deriving = tmp_path / "deriver.py"
    deriving.write_text("VERSION = 1\n")
    one = memo.TextMemo("t", str(deriving))
    one.get("x = 1\n", lambda: "old code's value")
    one.save()
    deriving.write_text("VERSION = 2\n")
    assert memo.TextMemo("t", str(deriving)).get("x = 1\n", lambda: "new code's value") == "new code's value"
    deriving.write_text("VERSION = 1\n")
    assert memo.TextMemo("t", str(deriving)).get("x = 1\n", pytest.fail) == "old code's value"
    monkeypatch.setattr(sys, "version", sys.version + " (another build)")
    assert memo.TextMemo("t", str(deriving)).get("x = 1\n", lambda: "fresh") == "fresh"


def test_a_changed_module_gets_fresh_function_hashes(tmp_path, monkeypatch):
    """Through the real caller: a module edited in place (same path) hashes as its new text, kept memo or not."""
    monkeypatch.setenv("FYEXP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(executed, "_HASHES", memo.TextMemo("function-hashes", executed.__file__))
    path = tmp_path / "fyexp" / "mod.py"
    path.parent.mkdir()
    old = "def f(x):\n    return x + 1\n\n\ndef g():\n    pass\n"
    new = old.replace("x + 1", "x + 2")
    path.write_text(old)
    before = executed._module_hashes(path, 1)
    path.write_text(new)
    after = executed._module_hashes(path, 2)
    assert before == executed.text_hashes(old) and after == executed.text_hashes(new)
    assert before["f"] != after["f"] and before["g"] == after["g"]
    executed._HASHES.save()
    reread = memo.TextMemo("function-hashes", executed.__file__)
    assert reread.get(old, pytest.fail) == before and reread.get(new, pytest.fail) == after


def test_two_processes_saving_keep_both_and_the_limit_keeps_the_newest(tmp_path, monkeypatch):
    monkeypatch.setenv("FYEXP_CACHE_DIR", str(tmp_path / "cache"))
    a, b = memo.TextMemo("t", __file__), memo.TextMemo("t", __file__)
    a.get("a", lambda: 1)
    b.get("b", lambda: 2)
    a.save()
    b.save()   # merges a's entry from disk before writing
    both = memo.TextMemo("t", __file__)
    assert both.get("a", pytest.fail) == 1 and both.get("b", pytest.fail) == 2
    monkeypatch.setattr(memo, "LIMIT", 2)
    both.get("c", lambda: 3)
    both.save()   # over the limit: "c", then "a" and "b" were used here; the oldest used first is dropped
    kept = memo.TextMemo("t", __file__)
    assert kept.get("c", pytest.fail) == 3 and kept.get("b", pytest.fail) == 2
    assert kept.get("a", lambda: "derived again") == "derived again"


def test_switched_off_derives_every_time_and_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("FYEXP_CACHE_DIR", "off")
    monkeypatch.chdir(tmp_path)
    calls = []
    m = memo.TextMemo("t", __file__)
    assert m.get("x", lambda: calls.append(1) or "v") == "v"
    m.save()
    assert memo.TextMemo("t", __file__).get("x", lambda: calls.append(1) or "v") == "v"
    assert len(calls) == 2 and not list(tmp_path.rglob("*"))


# ---- the one import parser --------------------------------------------------------------------------------------
def test_imports_of_resolves_relative_imports_and_keeps_bookkeeping_modules_that_the_code_hash_drops(tmp_path):
    package = tmp_path / "fyexp" / "models"
    package.mkdir(parents=True)
    module = package / "net.py"
    module.write_text("import os\nfrom ..maps import entmax\nfrom . import heads as h\nimport fyexp.store.results\n"
                      "def later():\n    from fyexp.report.tables import x\n")
    found = source.imports_of(module, "fyexp.models.net")
    assert found == {"fyexp.maps", "fyexp.maps.entmax", "fyexp.models", "fyexp.models.heads", "fyexp.store.results",
                     "fyexp.report.tables", "fyexp.report.tables.x"}
    for other in ("maps/entmax.py", "models/heads.py", "store/results.py", "report/tables.py"):
        (tmp_path / "fyexp" / other).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "fyexp" / other).write_text("")
    source.module_tree.cache_clear()
    assert [p.as_posix() for p in source.module_tree("fyexp.models.net", tmp_path)] == [
        "fyexp/maps/entmax.py", "fyexp/models/heads.py", "fyexp/models/net.py"]   # the bookkeeping modules left out
    init = package / "__init__.py"   # in a package's __init__, "." is the package itself
    init.write_text("from .net import f\nfrom .. import io\n")
    assert source.imports_of(init, "fyexp.models") == {"fyexp.models.net", "fyexp.models.net.f", "fyexp",
                                                       "fyexp.io"}


def test_the_reports_drawing_code_follows_the_bookkeeping_modules_the_code_hash_leaves_out():
    """One parser, two uses: a table's drawing code includes the report's own modules and fyexp.store.results (an edit
    redraws the table); the code hash of the same module's tree leaves them out (an edit makes no row stale)."""
    drawing = {p.relative_to(report_cache.PACKAGE_ROOT).as_posix()
               for p in report_cache.code_files("fyexp.report.tables")}
    hashed = {p.as_posix() for p in source.module_tree("fyexp.report.tables")}
    assert {"fyexp/report/cache.py", "fyexp/report/tolerance.py", "fyexp/store/results.py"} <= drawing - hashed
    assert {"fyexp/claims/stats.py", "fyexp/core/latex.py", "fyexp/store/provenance/source.py"} <= drawing & hashed
