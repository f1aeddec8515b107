"""Issue 29, end to end through the command line: each class of damaged record in a copy of committed results
gives exactly one warning line naming the file (and what is wrong) from `fyexp report` and from `fyexp claims`,
both exit 0, and the rows whose records fail are never a verdict's evidence; `fyexp run` redoes a cell whose settings
record was deleted and removes the temporary files its killed writes left.  `fyexp claims` runs the installed
script; `report` and `run` its entry point in this process (:mod:`tests.in_process`: the same exit status and output,
without importing torch again per command)."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

import pandas as pd
import pytest

from fyexp.store.damaged import LEFTOVER_AGE_S
from tests.conftest import ROOT, TOY_SPECS, run_cli, strip_ansi
from tests.in_process import run_here

FY_NVDM_PAPER = ("FY-VAE__alternating_epochs=3__batch_size=1024__beta=0.01__epochs=500__learning_rate=5e-05"
                 "__n_topics=50__rho_prime=1.314__seed={}")
NVDM_PAPER = ("NVDM__alternating_epochs=1__batch_size=64__beta=0.01__epochs=500__learning_rate=5e-05__n_topics=50"
              "__seed={}")


def _killed_write(path: Path) -> Path:
    """A temporary file of an atomic write of ``path`` whose writer was killed (untouched for longer than the
    limit)."""
    tmp = path.parent / f".{path.name}.q1w2e3r4.tmp"
    tmp.write_text("experiment,prof")
    then = time.time() - LEFTOVER_AGE_S - 60
    os.utime(tmp, (then, then))
    return tmp


def _damage_record(cell: Path, **change) -> Path:
    """Change the fields ``change`` of ``cell``'s run record (``settings`` as a function of the recorded ones);
    return the record, the file the warning must name."""
    record = cell.with_suffix(".record.json")
    found = json.loads(record.read_text())
    if callable(change.get("settings")):
        change["settings"] = change["settings"](found["settings"])
    record.write_text(json.dumps({**found, **change}))
    return record


def _other_epochs(settings: dict) -> dict:
    return {**settings, "config": {**settings["config"], "train": {**settings["config"].get("train", {}),
                                                                   "epochs": 3}}}


def _damage(results: Path) -> dict[str, tuple[Path, str]]:
    """One damaged record of each class in ``results`` (a copy of committed fy-nvdm and nvdm results): class →
    (the file the warning must name, a word of what is wrong)."""
    fy, nv = results / "fy-nvdm" / "cells" / "paper", results / "nvdm" / "cells" / "paper"
    fy_cell, nv_cell = (lambda seed: fy / f"{FY_NVDM_PAPER.format(seed)}.csv",
                        lambda seed: nv / f"{NVDM_PAPER.format(seed)}.csv")
    cases = {
        "run record: garbage": (fy_cell(0).with_suffix(".record.json"), "not JSON"),
        "run record: a JSON list": (fy_cell(1).with_suffix(".record.json"), "a JSON list"),
        "code record: not Python": (_damage_record(nv_cell(0), code={"fyexp/reference/claims.yaml:claims": None}),
                                    "does not name a function"),
        "code record: /etc/passwd": (_damage_record(nv_cell(1), code={"/etc/passwd:root": "0123456789ab"}),
                                     "does not name a function"),
        "run record deleted": (fy_cell(2).with_suffix(".record.json"), "name settings"),
        "settings of other settings": (_damage_record(nv_cell(3), settings=_other_epochs), "its settings hash"),
        "superseded garbage": (results / "fy-nvdm" / "superseded" / "paper" / "x__seed=0.abc.csv", "not UTF-8"),
        "killed write": (_killed_write(nv_cell(2)), "interrupted"),
        "results.csv: bad UTF-8": (results / "gmm-clustering" / "results.csv", "not UTF-8"),
        "results.csv: columns missing": (results / "fy-vae" / "results.csv", "missing column(s)"),
        "results.csv: empty": (results / "vr-vae" / "results.csv", "empty"),
        "code record: not a hash": (_damage_record(nv_cell(4), code={"fyexp/train/loop.py:fit": "abc"}),
                                    "is not a function hash"),
    }
    cases["run record: garbage"][0].write_text("{garbage")
    cases["run record: a JSON list"][0].write_text('["fyexp/train/loop.py:fit"]')
    cases["run record deleted"][0].unlink()
    for path, _ in list(cases.values())[6:]:
        path.parent.mkdir(parents=True, exist_ok=True)
    cases["superseded garbage"][0].write_bytes(b"\xff\x00 not a cell file\n")
    cases["results.csv: bad UTF-8"][0].write_bytes(b"experiment,profile\n\xff\xfe,\x00\n")
    cases["results.csv: columns missing"][0].write_text("experiment,metric,value\nfy-vae,l1,1.0\n")
    cases["results.csv: empty"][0].write_bytes(b"")
    # the seeds the queue adds later (3, 4, ...): their run record damaged too, so that every fy-nvdm paper cell stays
    # of unknown provenance whatever has landed
    for cell in sorted(fy.glob(FY_NVDM_PAPER.format("*") + ".csv")):
        seed = int(cell.stem.rsplit("=", 1)[1])
        record = cell.with_suffix(".record.json")
        if seed > 2 and record.is_file():
            record.write_text("{garbage")
            cases[f"run record: garbage (seed {seed})"] = (record, "not JSON")
    return cases


@pytest.fixture(scope="module")
def damaged(tmp_path_factory):
    results = tmp_path_factory.mktemp("damaged") / "results"
    for name in ("fy-nvdm", "nvdm"):
        shutil.copytree(ROOT / "results" / name, results / name, ignore=shutil.ignore_patterns("tables", "figures"))
    cases = _damage(results)
    report = run_here("report", "--results-dir", str(results))
    claims = run_cli("claims", "--json", "--results-dir", str(results))
    return results, cases, report, claims


def _warnings(stderr: str) -> list[str]:
    text = strip_ansi(stderr)
    assert "Traceback" not in text and "error:" not in text, text
    return [" ".join(line.split()) for line in text.splitlines() if line.startswith("warning:")]


@pytest.mark.slow
@pytest.mark.parametrize("command", ["report", "claims"])
def test_each_damaged_record_is_one_warning_line_and_the_command_succeeds(damaged, command):
    results, cases, report, claims = damaged
    done = report if command == "report" else claims
    assert done.returncode == 0, done.stderr
    lines = _warnings(done.stderr)
    for case, (path, what) in cases.items():
        naming = [line for line in lines if f" {path} (" in line]
        assert len(naming) == 1, (case, naming, lines)
        assert what in naming[0], (case, naming[0])
    assert len(lines) == len(cases), lines


def test_rows_of_unknown_provenance_are_never_current_nor_evidence(damaged):
    results, cases, report, claims = damaged
    verdicts = json.loads(claims.stdout)
    at_paper = [v for v in verdicts if v["id"] == "fyvi-t3-fy-nvdm" and v["profile"] == "paper"]
    # every fy-nvdm paper cell (seeds 0-2, and any landed since) has a damaged record: the claim has no FY-NVDM rows
    # left at that profile
    assert [v["verdict"] for v in at_paper] in ([], ["data missing"]), at_paper
    assert any(v["id"] == "fyvi-t3-fy-nvdm" and v["profile"] == "cpu" and v["n"] for v in verdicts)  # the rest judged
    index = (results / "README.md").read_text()
    row = next(line for line in index.splitlines() if line.startswith("| `fy-nvdm` | `paper` |"))
    assert "unknown" in row, row  # counted as unknown in the provenance table, not as current


def test_report_rebuilds_results_csv_but_loading_wrote_no_damaged_file(damaged):
    results, cases, report, claims = damaged
    for case in ("results.csv: bad UTF-8", "results.csv: columns missing", "results.csv: empty"):
        path = cases[case][0]
        assert not (path.parent / "cells").exists()  # nothing to rebuild it from: left as it is
    assert cases["killed write"][0].exists()  # report and claims only name it; `run` removes it
    assert pd.read_csv(results / "nvdm" / "results.csv")["cell"].nunique() == 9


@pytest.mark.slow
def test_run_redoes_a_cell_without_its_run_record_and_removes_its_leftovers(tmp_path):
    env = {"FYEXP_EXPERIMENTS_DIR": str(TOY_SPECS), "FYEXP_RESULTS_DIR": str(tmp_path / "results")}
    first = run_here("run", "toy", "--profile", "quick", "--seeds", "0-2", "--no-progress", env=env)
    assert first.returncode == 0, first.stderr
    folder = tmp_path / "results" / "toy" / "cells" / "quick+seeds=0-2"   # seeds other than the profile's: a variant
    cells = sorted(folder.glob("*.csv"))
    assert len(cells) == 3
    sidecar = cells[0].with_suffix(".record.json")
    sidecar.unlink()
    leftover = _killed_write(cells[1])
    again = run_here("run", "toy", "--profile", "quick", "--seeds", "0-2", "--no-progress", env=env)
    assert again.returncode == 0, again.stderr
    said = " ".join(strip_ansi(again.stderr).split())
    assert f"warning: missing run record {sidecar} (" in said
    assert f"1 cell run, {len(cells) - 1} already finished" in said
    assert "removed 1 leftover temporary file(s)" in said and not leftover.exists()
    assert sidecar.is_file()  # redone: its record is back
    report = run_here("report", "toy", env=env)  # the cell's records are whole again: nothing to name
    assert report.returncode == 0 and "warning" not in report.stderr, report.stderr
