"""A results folder, spec or cache from someone else is data (issue 51, the remaining cases): never code, never a
path outside it, never a traceback.  ``fyexp report`` refuses a link leading out of the results folder (as ``run``
does); a damaged figure artifact (``.npz``) or tuning study is one warning naming the file and that figure is
skipped; a tuning search space Optuna would refuse only at its first trial is refused when the spec is read; the
GPU kit's ``merge`` checks the status file and the manifest before it merges anything, and its ``pack`` checks its
options' domains.  Each through the command a user runs; each asserts the exit status, the one line and no
traceback.  The report's refusal of a link and the kit's merge of a good job run the installed ``fyexp`` script and
``scripts/gpu_lease.py`` as processes (what a user runs); the other cases call the same entry points in this process
(:mod:`tests.in_process`: the same exit status and output, without importing torch again per case).
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, TOY_SPECS, cli_env, run_cli
from tests.in_process import call_here, run_here


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
    result = run_here("tune", "toy", "-p", "tune", "--n-trials", "1", env=_toy_env(tmp_path, experiments),
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


@pytest.mark.slow
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
    result = run_here("report", experiment, "--results-dir", str(tmp_path / "results"), timeout=300)
    assert result.returncode == 0, result.stderr
    _no_traceback(result)
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1, result.stderr
    assert warnings[0].startswith(f"warning: skipped damaged figure artifact {path} ({says}"), warnings[0]
    assert warnings[0].endswith("; its figure is not drawn"), warnings[0]
    assert not (folder / "figures" / png).exists() and not marker.exists()


# ---------------------------------------------------------------------------------------------- 4, 5. the GPU kit
KIT = ROOT / "scripts" / "gpu_lease.py"
CELL = "interpolation__seed=23"


def _kit(*args: str, timeout: float = 300, spawned: bool = False) -> subprocess.CompletedProcess:
    """``scripts/gpu_lease.py ARGS``: through its ``main`` in this process, or ``spawned`` as a user runs it."""
    if spawned:
        return subprocess.run([sys.executable, str(KIT), *args], capture_output=True, text=True, env=cli_env(),
                              cwd=ROOT, timeout=timeout)
    return call_here(_kit_module().main, list(args), cwd=ROOT, timeout=timeout)


@functools.cache
def _kit_module():
    spec = importlib.util.spec_from_file_location("gpu_lease_script", KIT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _returned_job(tmp_path: Path) -> Path:
    """A job's returned folder: one finished gmm-calibration cell in the cells archive, a status file."""
    import tarfile

    from gpu_kit.bundle import CELLS_ARCHIVE, STATUS_FILE

    out = tmp_path / "out"
    out.mkdir()
    with tarfile.open(out / CELLS_ARCHIVE, "w:gz") as tar:
        for path in (ROOT / "results" / "gmm-calibration" / "cells" / "paper").glob(f"{CELL}.*"):
            tar.add(path, arcname=f"gmm-calibration/cells/paper/{path.name}")
    (out / STATUS_FILE).write_text(json.dumps({"collected": True, "machine": {"gpu": "H200", "torch": "2.x"}}))
    return out


def _unit(**changes) -> dict:
    unit = {"label": "calibration", "experiment": "gmm-calibration", "profile": "paper", "method": "interpolation",
            "params": {}, "seeds": [23], "ensemble": False, "data": [], "sets": [], "folder": "paper",
            "entry_seeds": None}
    return {**unit, **changes}


def _manifest(value) -> bytes:
    return json.dumps(value).encode()


STATUS_CASES = [("machine a text", "its machine is a str, not an object", '"H200"'),
                ("machine a list", "its machine is a list, not an object", '["H200"]'),
                ("machine a number", "its machine is a int, not an object", "5")]
MANIFEST_CASES = [
    ("garbage", b"\x00garbage", "not JSON"),
    ("a list", _manifest([1, 2]), "a JSON list, not an object"),
    ("units not a list", _manifest({"units": {"a": 1}}), "its units is a dict, not a list"),
    ("a unit a number", _manifest({"units": [3]}), "its units[0] is a int, not an object"),
    ("a unit without seeds", _manifest({"units": [{k: v for k, v in _unit().items() if k != "seeds"}]}),
     "its units[0] has no seeds"),
    ("seeds text", _manifest({"units": [_unit(seeds=["0"])]}), "its units[0].seeds holds a value that is not"),
    ("an unknown field", _manifest({"units": [_unit(extra=1)]}), "its units[0] has the unknown field 'extra'"),
    ("an unknown experiment", _manifest({"units": [_unit(experiment="no-such-experiment")]}), "no-such-experiment"),
    ("a FIFO", None, "not a regular file"),
]


@pytest.mark.parametrize("name, says, machine", STATUS_CASES, ids=[c[0] for c in STATUS_CASES])
def test_the_kits_merge_refuses_a_status_file_whose_machine_is_no_mapping_before_merging(tmp_path, name, says,
                                                                                       machine):
    from gpu_kit.bundle import STATUS_FILE

    out = _returned_job(tmp_path)
    (out / STATUS_FILE).write_text('{"collected": true, "machine": ' + machine + "}")
    home = tmp_path / "home"
    result = _kit("merge", str(out), "--lease-dir", str(tmp_path / "lease"), "--results-dir", str(home))
    line = _one_error(result)
    assert line.startswith(f"error: merge: {out / STATUS_FILE}: {says}") and "nothing merged" in line, line
    assert not home.exists() or not list(home.rglob("*.csv"))                            # nothing merged


@pytest.mark.parametrize("name, content, says", MANIFEST_CASES, ids=[c[0] for c in MANIFEST_CASES])
def test_the_kits_merge_refuses_a_damaged_manifest_before_merging(tmp_path, name, content, says):
    out = _returned_job(tmp_path)
    lease = tmp_path / "lease"
    lease.mkdir()
    manifest = lease / "manifest.json"
    if content is None:
        os.mkfifo(manifest)
    else:
        manifest.write_bytes(content)
    home = tmp_path / "home"
    result = _kit("merge", str(out), "--lease-dir", str(lease), "--results-dir", str(home))
    line = _one_error(result)
    assert says in line, line
    assert not home.exists() or not list(home.rglob("*.csv"))                            # nothing merged


@pytest.mark.slow
def test_the_kits_merge_of_a_good_job_still_merges(tmp_path):
    out = _returned_job(tmp_path)
    lease = tmp_path / "lease"
    lease.mkdir()
    (lease / "manifest.json").write_bytes(_manifest({"units": [_unit()]}))
    home = tmp_path / "home"
    result = _kit("merge", str(out), "--lease-dir", str(lease), "--results-dir", str(home), spawned=True)
    assert result.returncode == 0, result.stderr
    assert "merge: 1 cells into" in result.stdout and "(run on H200, torch 2.x)" in result.stdout, result.stdout
    assert (home / "gmm-calibration" / "cells" / "paper" / f"{CELL}.csv").is_file()


PACK_CASES = [("--speedup", "0", "a positive number"), ("--speedup", "nan", "a positive number"),
              ("--speedup", "inf", "a positive number"), ("--max-mib", "-1", "a positive number"),
              ("--max-mib", "0", "a positive number"), ("--jobs", "0", "an integer >= 1"),
              ("--jobs-per-allocation", "0", "an integer >= 1"), ("--budget-s", "-5", "a positive number")]


@pytest.mark.parametrize("option, value, expected", PACK_CASES, ids=[f"{c[0]} {c[1]}" for c in PACK_CASES])
def test_the_kits_pack_refuses_an_option_outside_its_domain(tmp_path, option, value, expected):
    result = _kit("pack", "--dry-run", "--experiment", "gmm-calibration", "--lease-dir", str(tmp_path / "lease"),
                  "--results-dir", str(tmp_path / "results"), option, value)
    line = _one_error(result)
    assert line.startswith(f"error: {option}: expected {expected}, got "), line
    assert not (tmp_path / "lease").exists()


# ---------------------------------------------------------------------------------------------- 6. the study figure
def _fifo_file(path: Path) -> None:
    path.unlink()
    os.mkfifo(path)


def _linked_file(path: Path) -> None:
    inside = path.parents[1] / f"elsewhere{path.suffix}"   # inside the results folder: not refused as leaving it
    shutil.copy(path, inside)
    path.unlink()
    path.symlink_to(inside)


STUDY_CASES = [
    ("best params broken YAML", "best_params.yaml", lambda p: p.write_bytes(b"study: [unclosed\n"),
     "skipped damaged best-parameters file", "not valid YAML"),
    ("best params a list", "best_params.yaml", lambda p: p.write_bytes(b"- 1\n- 2\n"),
     "skipped damaged best-parameters file", "a YAML list, not a mapping"),
    ("best params not UTF-8", "best_params.yaml", lambda p: p.write_bytes(b"study: \xff\xfe\n"),
     "skipped damaged best-parameters file", "not UTF-8 text"),
    ("best params a FIFO", "best_params.yaml", _fifo_file, "skipped damaged best-parameters file",
     "not a regular file"),
    ("best params a symlink", "best_params.yaml", _linked_file, "skipped damaged best-parameters file",
     "a symbolic link, not a file fyexp wrote"),
    ("study.db 0 bytes", "study.db", lambda p: p.write_bytes(b""), "skipped damaged study file", "empty (0 bytes)"),
    ("study.db garbage", "study.db", lambda p: p.write_bytes(b"garbage\n" * 100), "skipped damaged study file",
     "not an SQLite database"),
    ("study.db a FIFO", "study.db", _fifo_file, "skipped damaged study file", "not a regular file"),
]


@pytest.mark.slow
@pytest.mark.parametrize("name, file, damage, what, says", STUDY_CASES, ids=[c[0] for c in STUDY_CASES])
def test_reports_study_figure_reads_a_damaged_study_or_best_params_file_as_one_warning(tmp_path, name, file, damage,
                                                                                        what, says):
    home = ROOT / "results" / "fy-nvdm"
    folder = tmp_path / "results" / "fy-nvdm"
    (folder / "cells" / "cpu-long").mkdir(parents=True)
    cell = sorted((home / "cells" / "cpu-long").glob("*.csv"))[0]
    for path in (cell, cell.with_suffix(".record.json")):
        shutil.copy(path, folder / "cells" / "cpu-long" / path.name)
    for kept in ("best_params.yaml", "study.db"):
        shutil.copy(home / kept, folder / kept)
    path = folder / file
    damage(path)
    before = path.read_bytes() if path.is_file() and not path.is_symlink() else None
    result = run_here("report", "fy-nvdm", "--results-dir", str(tmp_path / "results"), timeout=120)
    assert result.returncode == 0, result.stderr
    _no_traceback(result)
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and warnings[0].startswith(f"warning: {what} {path} ({says}"), result.stderr
    if before is not None:
        assert path.read_bytes() == before                     # never written: a 0-byte study.db stays 0 bytes
    if file == "study.db":
        assert not list((folder / "figures").glob("study_*.png"))


# ------------------------------------------------------------------- 2b. figure artifacts that are JSON, the kit's manifest
JSON_DAMAGE = {
    "garbage": (lambda path: path.write_bytes(b"{not json\n"), "not JSON"),
    "a list": (lambda path: path.write_text("[1, 2]"), "a JSON list, not an object"),
    "a FIFO": (lambda path: (path.unlink(), os.mkfifo(path)), "not a regular file (a FIFO, a device or a folder)"),
}


def _report_one(tmp_path, experiment, cells_glob):
    """A results folder of ``experiment``'s committed paper cells named by ``cells_glob`` and all its paper
    artifacts."""
    home = ROOT / "results" / experiment
    folder = tmp_path / "results" / experiment
    (folder / "cells" / "paper").mkdir(parents=True)
    for path in (home / "cells" / "paper").glob(cells_glob):
        shutil.copy(path, folder / "cells" / "paper" / path.name)
    shutil.copytree(home / "artifacts" / "paper", folder / "artifacts" / "paper")
    return folder


@pytest.mark.slow
@pytest.mark.parametrize("damage", sorted(JSON_DAMAGE))
def test_report_skips_a_damaged_json_figure_artifact_with_one_warning(tmp_path, damage):
    """tvem Figure 1 from its older ``figure1.json`` (no ``figure1.npz``): damaged, one warning, no figure."""
    folder = _report_one(tmp_path, "tvem-bsc", "figure1__seed=0.*")
    (folder / "artifacts" / "paper" / "figure1.npz").unlink()
    path = folder / "artifacts" / "paper" / "figure1.json"
    how, says = JSON_DAMAGE[damage]
    how(path)
    result = run_here("report", "tvem-bsc", "--results-dir", str(tmp_path / "results"), timeout=300)
    assert result.returncode == 0, result.stderr
    _no_traceback(result)
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert warnings == [f"warning: skipped damaged figure artifact {path} ({says}); its figure is not drawn"], \
        result.stderr
    assert not (folder / "figures" / "tvem-figure1-paper.png").exists()


@pytest.mark.slow
def test_a_damaged_fit_leaves_its_curves_out_and_a_damaged_data_set_its_figure(tmp_path):
    """FYVI Figure 1: a fit without its means is one warning and the panel is drawn without it; a ``dataset.json``
    that is no object is one warning and no figure."""
    folder = _report_one(tmp_path, "gmm-clustering", "*")
    artifacts = folder / "artifacts" / "paper"
    fit = next(iter(sorted((artifacts / "fits").glob("standard*seed=0.json"))))
    fit.write_text('{"weights": [1.0]}')
    result = run_here("report", "gmm-clustering", "--results-dir", str(tmp_path / "results"), timeout=300)
    _no_traceback(result)
    assert f"warning: skipped damaged figure artifact {fit} (no key 'means', 'covariances'); its panel shows " \
           "no fitted curves" in result.stderr.splitlines()
    assert (folder / "figures" / "fyvi-figure1-paper.png").is_file()
    (folder / "figures" / "fyvi-figure1-paper.png").unlink()
    (artifacts / "dataset.json").write_text('"a text"')
    result = run_here("report", "gmm-clustering", "--results-dir", str(tmp_path / "results"), "--no-cache",
                      timeout=300)
    _no_traceback(result)
    assert f"warning: skipped damaged figure artifact {artifacts / 'dataset.json'} (a JSON str, not an object); " \
           "its figure is not drawn" in result.stderr.splitlines()
    assert not (folder / "figures" / "fyvi-figure1-paper.png").exists()


@pytest.mark.slow
@pytest.mark.parametrize("text, says", [("[1]", "a JSON list, not an object"),
                                        ('{"units": [], "data": {"x": {"packed_bytes": "big"}}}',
                                         "its data is not a mapping of data sets to records")])
def test_the_kits_pack_reads_an_earlier_manifest_as_data(tmp_path, text, says):
    lease = tmp_path / "lease"
    lease.mkdir()
    (lease / "manifest.json").write_text(text)
    result = _kit("pack", "--dry-run", "--experiment", "gmm-calibration", "--lease-dir", str(lease),
                  "--results-dir", str(tmp_path / "results"))
    line = _one_error(result)
    assert line.startswith(f"error: {lease / 'manifest.json'}: {says}"), line
