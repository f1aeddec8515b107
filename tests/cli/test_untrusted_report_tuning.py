"""A tuning study's output from someone else is data (issue 51, continued): ``fyexp run NAME --best`` over every
damaged form of the best-parameters file and of ``study.db`` gives one error line naming the file and what was
expected, exit status 2, no traceback, and never writes to the study file (a 0-byte ``study.db`` stays 0 bytes:
Optuna would create its tables in it).  Broken YAML through the installed ``fyexp`` script, as a user meets it; the
other cases through its entry point in this process (:mod:`tests.in_process`: the same exit status and output,
without importing torch again per case).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.conftest import ROOT, run_cli
from tests.in_process import run_here

EXPECTED_YAML = "expected the best-parameters file `fyexp tune` writes"
EXPECTED_DB = "expected the SQLite study file `fyexp tune` writes"
OWN = "best_params-paper-search.yaml"


def _write(text: bytes):
    return lambda path: path.write_bytes(text)


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _link(path: Path) -> None:
    (path.parent.parent / "elsewhere.yaml").write_text("params: {rho_prime: 1.5}\n")
    path.symlink_to(path.parent.parent / "elsewhere.yaml")


def _truncated_db(path: Path) -> None:
    path.write_bytes((ROOT / "results" / "fy-nvdm" / "study.db").read_bytes()[:5000])


def _db_link(path: Path) -> None:
    shutil.copy(ROOT / "results" / "fy-nvdm" / "study.db", path.parent.parent / "elsewhere.db")
    path.symlink_to(path.parent.parent / "elsewhere.db")


# (case, the file damaged, how, what the line says after the file's path)
CASES = [
    ("broken YAML", OWN, _write(b"params: [unclosed\n"), f"not valid YAML; {EXPECTED_YAML}"),
    ("a list", OWN, _write(b"- 1\n- 2\n"), f"a YAML list, not a mapping; {EXPECTED_YAML}"),
    ("not UTF-8", OWN, _write(b"params:\n  rho_prime: \xff\xfe\n"), f"not UTF-8 text; {EXPECTED_YAML}"),
    ("an integer key", OWN, _write(b"params:\n  1: 2\n"), "its params key 1 is not a config path"),
    ("params an integer", OWN, _write(b"params: 5\n"), "its params is a int, not a mapping"),
    ("a path of no parameter", OWN, _write(b"params:\n  nope.x: 2\n"),
     "its params key 'nope.x' is not a parameter of the experiment's config"),
    ("a symlink", OWN, _link, f"a symbolic link, not a file fyexp wrote; it is not followed; {EXPECTED_YAML}"),
    ("a FIFO", OWN, _fifo, "not a regular file (a FIFO, a device or a folder)"),
    ("the first studies' file a list", "best_params.yaml", _write(b"- 1\n"), "a YAML list, not a mapping"),
    ("study.db garbage", "study.db", _write(b"garbage\n"), f"not an SQLite database; {EXPECTED_DB}"),
    ("study.db 0 bytes", "study.db", _write(b""), f"empty (0 bytes); {EXPECTED_DB}"),
    ("study.db truncated", "study.db", _truncated_db, "not a readable Optuna study ("),
    ("study.db a symlink", "study.db", _db_link, "a symbolic link, not a file fyexp wrote"),
    ("study.db a FIFO", "study.db", _fifo, "not a regular file"),
]


@pytest.mark.slow
@pytest.mark.parametrize("name, file, damage, says", CASES, ids=[c[0] for c in CASES])
def test_run_best_over_damaged_tuning_output_is_one_line(tmp_path, name, file, damage, says):
    folder = tmp_path / "results" / "fy-nvdm"
    folder.mkdir(parents=True)
    for kept in ("best_params.yaml", "study.db"):
        if kept != file:
            shutil.copy(ROOT / "results" / "fy-nvdm" / kept, folder / kept)
    path = folder / file
    damage(path)
    before = path.read_bytes() if path.is_file() and not path.is_symlink() else None
    command = run_cli if name == "broken YAML" else run_here
    result = command("run", "fy-nvdm", "-p", "paper-search", "--best", "--dry-run", "--no-progress",
                     "--results-dir", str(tmp_path / "results"), timeout=120)
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr and "unexpected" not in result.stderr, result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and errors[0].startswith(f"error: --best: {path}: "), result.stderr
    assert says in errors[0], errors[0]
    if before is not None:
        assert path.read_bytes() == before                      # never written: no Optuna schema in a 0-byte file
