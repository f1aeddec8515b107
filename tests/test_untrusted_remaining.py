"""A results folder, spec or cache from someone else is data (issue 51, the remaining cases): never code, never a
path outside it, never a traceback.  ``fyexp report`` refuses a link leading out of the results folder (as ``run``
does); a damaged figure artifact (``.npz``) or tuning study is one warning naming the file and that figure is
skipped; a tuning search space Optuna would refuse only at its first trial is refused when the spec is read; the
GPU kit's ``merge`` checks the status file and the manifest before it merges anything, and its ``pack`` checks its
options' domains.  Each through the command a user runs; each asserts the exit status, the one line and no
traceback.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, TOY_SPECS, cli_env, run_cli


def _no_traceback(result) -> None:
    assert "Traceback" not in result.stderr and "unexpected" not in result.stderr, result.stderr


def _one_error(result) -> str:
    assert result.returncode == 2, (result.returncode, result.stderr)
    _no_traceback(result)
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, result.stderr
    return errors[0]


def _toy_env(tmp_path: Path, experiments: Path = TOY_SPECS) -> dict:
    return {"FYEXP_EXPERIMENTS_DIR": str(experiments), "FYEXP_RESULTS_DIR": str(tmp_path / "results")}


# ---------------------------------------------------------------------------------------------- 1. report's links
def test_report_refuses_a_cells_folder_linked_out_of_the_results_folder(tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "note.txt").write_text("someone else's folder\n")
    link = tmp_path / "results" / "toy" / "cells" / "quick"
    link.parent.mkdir(parents=True)
    link.symlink_to(outside, target_is_directory=True)
    result = run_cli("report", "toy", env=_toy_env(tmp_path), timeout=300)
    line = _one_error(result)
    assert line.startswith(f"error: {link}: a symbolic link leading out of the results folder"), line
    assert sorted(p.name for p in outside.iterdir()) == ["note.txt"]          # nothing written through the link


# ---------------------------------------------------------------------------------------------- 3. search spaces
SEARCH_CASES = [
    ("low above high", "{low: 1.0, high: 0.1}", "search.lr.low", "a number <= high (0.1)"),
    ("a log scale from 0", "{low: 0.0, high: 1.0, log: true}", "search.lr.low", "a number > 0 (the space has log"),
    ("a log scale below 0", "{low: -1.0, high: 1.0, log: true}", "search.lr.low", "a number > 0"),
    ("step 0", "{low: 0.1, high: 1.0, step: 0}", "search.lr.step", "a finite number > 0"),
    ("a negative step", "{low: 0.1, high: 1.0, step: -0.1}", "search.lr.step", "a finite number > 0"),
    ("empty choices", "{choices: []}", "search.lr.choices", "a non-empty list of values"),
    ("choices not a list", "{choices: 3}", "search.lr.choices", "a non-empty list of values"),
    ("low text", "{low: abc, high: 1.0}", "search.lr.low", "a finite number"),
]


@pytest.mark.parametrize("name, space, key, says", SEARCH_CASES, ids=[c[0] for c in SEARCH_CASES])
def test_tune_refuses_a_search_space_optuna_would_refuse_at_its_first_trial(tmp_path, name, space, key, says):
    experiments = tmp_path / "experiments"
    experiments.mkdir()
    spec = experiments / "toy.yaml"
    spec.write_text((TOY_SPECS / "toy.yaml").read_text().replace("lr: {low: 0.001, high: 1.0, log: true}",
                                                                 f"lr: {space}"))
    assert f"lr: {space}" in spec.read_text()
    result = run_cli("tune", "toy", "-p", "tune", "--n-trials", "1", env=_toy_env(tmp_path, experiments),
                     timeout=300)
    line = _one_error(result)
    assert line.startswith(f"error: {spec}: key 'profiles.tune.{key}': expected {says}"), line
    assert not (tmp_path / "results" / "toy" / "study.db").exists()      # refused before a study is made


# ---------------------------------------------------------------------------------------------- 2. figure artifacts
class Payload:
    """Unpickling it calls ``exec``: the marker file appears if anything unpickles it."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return exec, (f"open({str(self.marker)!r}, 'w').write('code ran')",)


def _npz_object_array(path: Path, marker: Path) -> None:
    import numpy as np

    with path.open("wb") as handle:
        np.savez(handle, gammas=np.array([Payload(marker)], dtype=object))


def _npz_other_keys(path: Path, marker: Path) -> None:
    import numpy as np

    with path.open("wb") as handle:
        np.savez(handle, other=np.zeros(2))


def _npz_link(path: Path, marker: Path) -> None:
    inside = path.parents[2] / "elsewhere.npz"          # inside the results folder: not refused as leaving it
    shutil.copy(path, inside)
    path.unlink()
    path.symlink_to(inside)


def _npz_dangling(path: Path, marker: Path) -> None:
    path.unlink()
    path.symlink_to(path.parent / "gone.npz")


def _npz_fifo(path: Path, marker: Path) -> None:
    path.unlink()
    os.mkfifo(path)


NPZ_DAMAGE = {
    "garbage": (lambda path, marker: path.write_bytes(b"garbage\n"), "not a .npz archive (no zip header)"),
    "truncated": (lambda path, marker: path.write_bytes(path.read_bytes()[:path.stat().st_size // 2]),
                  "not a readable .npz archive"),
    "empty": (lambda path, marker: path.write_bytes(b""), "not a .npz archive (no zip header)"),
    "an object array": (_npz_object_array, "holds an object array, which is never unpickled"),
    "other arrays": (_npz_other_keys, "no array 'gammas'"),
    "a symlink": (_npz_link, "a symbolic link, not a file fyexp wrote"),
    "a dangling symlink": (_npz_dangling, "a symbolic link, not a file fyexp wrote"),
    "a FIFO": (_npz_fifo, "not a regular file"),
}
# (experiment, its cell's files, the artifact its figure reads, the figure, the damaged forms tried)
NPZ_FIGURES = [("gmm-calibration", "interpolation__seed=23", "interpolation.npz", "figure2-paper.png",
                ["garbage", "truncated", "an object array", "other arrays", "a dangling symlink", "a FIFO"]),
               ("tvem-bsc", "figure1__seed=0", "figure1.npz", "tvem-figure1-paper.png",
                ["truncated", "a symlink"])]
NPZ_CASES = [(experiment, cell, artifact, png, damage) for experiment, cell, artifact, png, damages in NPZ_FIGURES
             for damage in damages]


@pytest.mark.parametrize("experiment, cell, artifact, png, damage", NPZ_CASES,
                         ids=[f"{c[0]}-{c[4]}" for c in NPZ_CASES])
def test_report_skips_a_damaged_figure_artifact_with_one_warning(tmp_path, experiment, cell, artifact, png, damage):
    home = ROOT / "results" / experiment
    folder = tmp_path / "results" / experiment
    (folder / "cells" / "paper").mkdir(parents=True)
    (folder / "artifacts" / "paper").mkdir(parents=True)
    for path in (home / "cells" / "paper").glob(f"{cell}.*"):
        shutil.copy(path, folder / "cells" / "paper" / path.name)
    path = folder / "artifacts" / "paper" / artifact
    shutil.copy(home / "artifacts" / "paper" / artifact, path)
    marker = tmp_path / "marker"
    how, says = NPZ_DAMAGE[damage]
    how(path, marker)
    result = run_cli("report", experiment, "--results-dir", str(tmp_path / "results"), timeout=300)
    assert result.returncode == 0, result.stderr
    _no_traceback(result)
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1, result.stderr
    assert warnings[0].startswith(f"warning: skipped damaged figure artifact {path} ({says}"), warnings[0]
    assert warnings[0].endswith("; its figure is not drawn"), warnings[0]
    assert not (folder / "figures" / png).exists() and not marker.exists()
