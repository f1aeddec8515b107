"""Bad input, bad data and damaged results (issue 18), end to end through the installed `fyexp` script.

Each class is closed by one mechanism and tested here by a table of cases: the finished-cell rule
(:func:`fyexp.results.value_problem`), the domain table of settings, the data-error type.  Every case checks the
exit status, that stderr holds exactly the expected line(s) and no traceback, and that nothing was written where
nothing should be.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest

from tests.conftest import TOY_SPECS, run_cli, strip_ansi


def _lines(stderr: str) -> list[str]:
    text = strip_ansi(stderr)
    assert "Traceback" not in text, text
    return [line for line in text.splitlines() if line.strip()]


def _one_line(stderr: str) -> str:
    lines = _lines(stderr)
    assert len(lines) == 1, stderr
    return lines[0]


# --- class 6: damaged results (the finished-cell rule) ---------------------------------------------------------

DAMAGED_VALUES = [
    # (id, value text written into the cell file, status, label, what report must say)
    ("a word", "banana", "ok", "", "value 'banana' of metric 'adjusted_mi' is not a number"),
    ("infinity", "inf", "ok", "", "value 'inf' of metric 'adjusted_mi' is not finite"),
    ("minus infinity", "-inf", "ok", "", "is not finite"),
    ("overflowing number", "1e999", "ok", "", "is not finite"),
    ("NaN without a reason", "nan", "ok", "", "NaN without a reason"),
    ("empty without a reason", "", "ok", "", "NaN without a reason"),
]


def _toy_specs(tmp_path: Path, old: str = "", new: str = "") -> Path:
    """A copy of the toy spec folder with ``old`` replaced by ``new`` in toy.yaml."""
    folder = tmp_path / "specs"
    folder.mkdir(parents=True, exist_ok=True)
    text = (TOY_SPECS / "toy.yaml").read_text()
    assert old in text
    (folder / "toy.yaml").write_text(text.replace(old, new))
    return folder


def _set_value(path: Path, value: str, status: str, label: str) -> None:
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    frame["value"], frame["status"], frame["label"] = value, status, label
    frame.to_csv(path, index=False)


def test_only_finite_numbers_and_explained_nans_are_finished(tmp_path):
    explained = [("explained by its status", "", "missing", "no Inception weights offline"),
                 ("explained by its label", "nan", "ok", "undefined for one cluster")]
    values = ", ".join(str(float(i + 1)) for i in range(len(DAMAGED_VALUES) + len(explained)))
    env = {"FYEXP_EXPERIMENTS_DIR": str(_toy_specs(tmp_path, "values: [0.5]", f"values: [{values}]")),
           "FYEXP_RESULTS_DIR": str(tmp_path / "results")}
    first = run_cli("run", "toy", "--profile", "quick", "--no-progress", env=env)
    assert first.returncode == 0, first.stderr
    cells = sorted((tmp_path / "results" / "toy" / "cells" / "quick").glob("*.csv"))
    for path, (_, value, status, label, _) in zip(cells, DAMAGED_VALUES + [(None, *e[1:], None) for e in explained]):
        _set_value(path, value, status, label)
    report = run_cli("report", "toy", env=env)
    assert report.returncode == 0, report.stderr
    lines = _lines(report.stderr)
    assert "RuntimeWarning" not in report.stderr
    assert len(lines) == len(DAMAGED_VALUES), lines
    for path, line, (case_id, _, _, _, expected) in zip(cells, lines, DAMAGED_VALUES):
        assert f"skipped damaged cell file {path} (" in line and expected in line, (case_id, line)
    assert len(pd.read_csv(tmp_path / "results" / "toy" / "results.csv")) == len(explained)
    again = run_cli("run", "toy", "--profile", "quick", "--no-progress", env=env)
    assert again.returncode == 0, again.stderr
    assert f"{len(DAMAGED_VALUES)} cells run, {len(explained)} already finished" in " ".join(again.stderr.split())


def test_a_corrupt_study_file_is_named_by_report(toy_env):
    results = Path(toy_env["FYEXP_RESULTS_DIR"])
    (results / "toy").mkdir(parents=True)
    (results / "toy" / "study.db").write_bytes(b"this is not SQLite" * 100)
    report = run_cli("report", "toy", env=toy_env)
    assert report.returncode == 0, report.stderr
    line = _one_line(report.stderr)
    assert f"skipped damaged study file {results / 'toy' / 'study.db'}" in line
