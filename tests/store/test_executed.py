"""Staleness from the code a cell executed (fyexp/store/provenance/executed.py): the recorder sees the fyexp functions a
cell calls;
normalised hashes ignore docstrings, comments and formatting; only an edit on the executed path flips a row."""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path

import pandas as pd
import pytest

from fyexp.store.provenance.executed import ExecutedCode, changed_functions, function_hashes
from fyexp.store.provenance.freshness import code_column, frame_freshness
from fyexp.store.provenance.record import settings_hash, write_record
from fyexp.store.provenance.source import current_fingerprint, git_commit
from fyexp.report.runs import profile_runs
from fyexp.spec.specs import deep_merge, load_spec
from tests.conftest import TOY_SPECS

MODULE = textwrap.dedent('''
    """A module."""
    SCALE = 2


    def f(x):
        """Doubles."""
        return [SCALE * v for v in x]  # a comment


    def g(x):
        return x + 1


    class C:
        k = 3

        def m(self):
            return self.k
''')


def _tree(tmp_path: Path, text: str) -> Path:
    (tmp_path / "fyexp").mkdir(parents=True, exist_ok=True)
    (tmp_path / "fyexp" / "mod.py").write_text(text)
    return tmp_path


def test_the_recorder_sees_the_fyexp_functions_called_inside_it_and_nothing_else():
    with ExecutedCode() as recorder:
        deep_merge({"a": {"b": 1}}, {"a": {"c": 2}})
    outside = deep_merge({}, {})
    functions = recorder.functions()
    assert functions == {"fyexp/spec/specs.py:deep_merge"}, functions
    assert outside == {}


def test_docstring_comment_format_and_unexecuted_edits_flip_nothing_an_executed_edit_flips_its_cells(tmp_path):
    root = _tree(tmp_path, MODULE)
    cell_a = function_hashes({"fyexp/mod.py:f"}, root)          # a cell that ran f
    cell_b = function_hashes({"fyexp/mod.py:C.m"}, root)        # a cell that ran C.m
    harmless = (MODULE.replace('"""Doubles."""', '"""Doubles every value (reworded)."""')
                .replace("# a comment", "# another comment")
                .replace("return [SCALE * v for v in x]", "return [SCALE*v\n            for v in x]")
                .replace("return x + 1", "return x + 2"))                    # g: never executed
    _tree(tmp_path, harmless)
    assert changed_functions(cell_a, root) == [] and changed_functions(cell_b, root) == []
    _tree(tmp_path, harmless.replace("SCALE*v\n", "SCALE*v + 1\n"))       # f's body
    assert changed_functions(cell_a, root) == ["fyexp/mod.py:f"] and changed_functions(cell_b, root) == []
    _tree(tmp_path, harmless.replace("k = 3", "k = 4"))                     # a class attribute of the method
    assert changed_functions(cell_a, root) == [] and changed_functions(cell_b, root) == ["fyexp/mod.py:C.m"]
    _tree(tmp_path, harmless.replace("SCALE = 2", "SCALE = 3"))             # a module constant
    assert changed_functions(cell_a, root) == ["fyexp/mod.py:<module>"]


def test_report_counts_stale_rows_by_the_executed_record_and_falls_back_to_files_without_one(tmp_path):
    root = _tree(tmp_path / "src", MODULE)
    results = tmp_path / "results" / "toy"
    cells = results / "cells" / "quick"
    cells.mkdir(parents=True)
    settings = {"experiment": "toy", "profile": "quick", "overrides": {}, "config": {}, "method": "m", "params": {},
                "seed": 0, "data": None, "environment": {}}
    for cell, function in (("a", "fyexp/mod.py:f"), ("b", "fyexp/mod.py:g"), ("c", None)):
        code = function_hashes({function}, root) if function else None
        (cells / f"{cell}.record.json").write_text(json.dumps({"settings": settings, "code": code,
                                                               "commit": "unknown", "fingerprint": None}))
    frame = pd.DataFrame({"profile": "quick", "cell": ["a", "a", "b", "c"], "git_commit": "unknown",
                          "status": "ok", "seed": 0, "settings_hash": settings_hash(settings)})
    def states():  # c recorded no code: the file rule judges it, and git cannot tell (commit unknown)
        return code_column(frame_freshness(frame, results, head=root)).tolist()

    assert states() == ["fresh", "fresh", "fresh", "unknown"]
    _tree(tmp_path / "src", MODULE.replace("return x + 1", "return x - 1"))
    assert states() == ["fresh", "fresh", "stale", "unknown"]
    spec = load_spec("toy", TOY_SPECS)
    run = profile_runs(spec, frame, results)["quick"]  # HEAD's tree lacks fyexp/mod.py: both recorded cells stale
    assert run.stale_rows == 3 and run.unknown_rows == 1  # the record-less row: file rule, commit unknown


def test_a_run_writes_the_record_beside_the_cell_file(tmp_path):
    path = tmp_path / "cells" / "quick" / "x.csv"
    path.parent.mkdir(parents=True)
    record = function_hashes({"fyexp/spec/specs.py:deep_merge"})
    write_record(path, {"experiment": "fy-vae", "seed": 0}, record)
    written = json.loads(path.with_suffix(".record.json").read_text())
    assert written["code"] == record and written["settings"] == {"experiment": "fy-vae", "seed": 0}
    assert written["commit"] == git_commit() and written["fingerprint"] == current_fingerprint("fy-vae")
    assert written["fingerprint"] and all(isinstance(v, (int, float)) for v in written["fingerprint"].values())
    assert sorted(p.name for p in path.parent.iterdir()) == ["x.record.json"]  # one file, no temporary one left
    write_record(path, {"experiment": "no-such", "seed": 0}, None)  # recording off; no fingerprint of its own
    written = json.loads(path.with_suffix(".record.json").read_text())
    assert written["code"] is None and written["fingerprint"] is None
    assert set(record) == {"fyexp/spec/specs.py:deep_merge", "fyexp/spec/specs.py:<module>"} and all(record.values())


def test_recording_can_be_switched_off_and_then_records_nothing(monkeypatch):
    monkeypatch.setenv("FYEXP_RECORD_CODE", "0")
    with ExecutedCode() as recorder:
        deep_merge({}, {})
    assert recorder.functions() is None


def _python_312_or_newer() -> str | None:
    """An interpreter with ``sys.monitoring`` (this one, one on PATH, or a pyenv build), else ``None``."""
    import glob
    import shutil
    import subprocess
    import sys

    if sys.version_info >= (3, 12):
        return sys.executable
    candidates = [shutil.which(n) for n in ("python3.13", "python3.12")]
    candidates += sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.1[2-9]*/bin/python3")))
    for path in filter(None, candidates):
        probe = subprocess.run([path, "-c", "import sys; assert sys.version_info >= (3, 12)"], capture_output=True)
        if probe.returncode == 0:
            return path
    return None


@pytest.mark.slow
def test_sys_monitoring_records_each_function_in_every_cell_and_costs_little(tmp_path):
    """On Python >= 3.12 the recorder uses sys.monitoring's PY_START, disabled per function after its first call:
    the second recorder of a process must still see the function (restart_events), and a call-heavy loop must not
    slow down the way sys.setprofile does (5x on 3.11)."""
    import subprocess

    python = _python_312_or_newer()
    if python is None:
        pytest.skip("no Python >= 3.12 here to exercise sys.monitoring")
    package = tmp_path / "fake" / "fyexp"
    package.mkdir(parents=True)
    (package / "mod.py").write_text("def f(x):\n    return {'a': x, 'b': [x] * 3}\n")
    script = f"""
import importlib.util, sys, time
from pathlib import Path
sys.path.insert(0, {str(Path(__file__).resolve().parents[2])!r})
import fyexp.store.provenance.executed as ex  # stdlib only: runs without the project's dependencies
ex.PACKAGE_DIR, ex.ROOT = Path({str(package)!r}), Path({str(package.parent)!r})
spec = importlib.util.spec_from_file_location("fakemod", {str(package / "mod.py")!r})
mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
work = lambda n: sum(len(mod.f(i)) for i in range(n))
for _ in range(2):
    with ex.ExecutedCode() as rec:
        work(3)
    print(sorted(rec.functions()))
best = {{}}
for mode in ("off", "on") * 3:
    t0 = time.perf_counter()
    if mode == "on":
        with ex.ExecutedCode():
            work(200000)
    else:
        work(200000)
    best[mode] = min(best.get(mode, 1e9), time.perf_counter() - t0)
print(best["on"] / best["off"])
"""
    out = subprocess.run([python, "-c", script], capture_output=True, text=True, env={**os.environ, "PYTHONPATH": ""})
    assert out.returncode == 0, out.stderr
    first, second, ratio = out.stdout.split("\n")[:3]
    assert first == second == "['fyexp/mod.py:f']"
    assert float(ratio) < 1.5  # sys.setprofile on 3.11: about 5x on this loop
