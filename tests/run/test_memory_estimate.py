"""Class 5 of issue 18: a cell's memory is estimated before the run starts, and a MemoryError is the user's input."""

from __future__ import annotations

import pytest

from fyexp.core.constraints import check_cell_memory
from fyexp.core.errors import FyexpError
from fyexp.experiments import get_experiment
from tests.conftest import run_cli


def test_a_cell_estimated_past_the_available_memory_is_refused_unless_yes():
    experiment = get_experiment("gmm_calibration")
    config = experiment.Config(n_replicas=10**9)
    cells = experiment.cells(config, (0,))
    with pytest.raises(FyexpError, match=r"would need about [\d,.]+ GiB \(n_replicas=1,000,000,000 × n=400 × K=4\)"):
        check_cell_memory(experiment, config, cells, yes=False, available=24 * 2**30)
    check_cell_memory(experiment, config, cells, yes=True, available=24 * 2**30)  # --yes: the user's call
    paper = experiment.Config()  # the paper's 5,000 replicas: well inside a 2 GiB machine
    check_cell_memory(experiment, paper, experiment.cells(paper, (0,)), yes=False, available=2 * 2**30)


@pytest.mark.slow
def test_the_installed_script_refuses_it_in_one_line_before_any_cell(tmp_path):
    from fyexp.spec.specs import experiments_dir

    spec = (experiments_dir() / "gmm-calibration.yaml").read_text()
    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / "gmm-calibration.yaml").write_text(spec.replace("profiles:\n", "profiles:\n  huge: {seeds: [0], "
                                                             "n_replicas: 1000000000000}\n", 1))
    result = run_cli("run", "gmm-calibration", "--profile", "huge", "--no-progress",
                     env={"FYEXP_EXPERIMENTS_DIR": str(specs), "FYEXP_RESULTS_DIR": str(tmp_path / "res")})
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "would need about" in lines[0] and "--yes" in lines[0] and "Traceback" not in result.stderr
    assert not (tmp_path / "res" / "gmm-calibration" / "cells").exists()


def test_a_memory_error_inside_a_cell_is_one_line_and_exit_2(monkeypatch, capsys):
    import fyexp.cli
    import fyexp.run.runner

    def boom(*args, **kwargs):
        raise MemoryError("Unable to allocate 2.84 PiB for an array")

    monkeypatch.setattr(fyexp.run.runner, "run_experiment", boom)
    with pytest.raises(SystemExit) as exit_:
        fyexp.cli.main(["run", "gmm-clustering", "--profile", "quick", "--no-progress"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()  # the run's plan, then the error in one line
    assert len(err) == 2 and err[0].startswith("plan: gmm-clustering [quick]")
    assert err[1].startswith("error: out of memory (Unable to allocate 2.84 PiB")
