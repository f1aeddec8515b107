"""A cell's settings are part of its identity (fyexp/spec/settings.py) and ``--set`` runs a variant of a profile:
through the command line on the toy experiment, a bad ``--set`` through the installed ``fyexp`` script (what a user
runs), the other commands through its entry point in this process (:mod:`tests.in_process`: the same exit status and
output, without importing torch again per command)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from fyexp.report import build_report
from fyexp.report.runs import profile_runs
from fyexp.spec.specs import load_spec
from tests.conftest import TOY_SPECS, run_cli
from tests.in_process import call_here, run_here


def _env(tmp_path: Path) -> tuple[dict, Path]:
    specs = tmp_path / "specs"
    specs.mkdir()
    (specs / "toy.yaml").write_text((TOY_SPECS / "toy.yaml").read_text())
    return {"FYEXP_EXPERIMENTS_DIR": str(specs), "FYEXP_RESULTS_DIR": str(tmp_path / "results")}, specs / "toy.yaml"


def _rows(tmp_path: Path, profile: str) -> pd.DataFrame:
    files = sorted((tmp_path / "results" / "toy" / "cells" / profile).glob("*.csv"))
    return pd.concat([pd.read_csv(f) for f in files], ignore_index=True)


def _old_settings_rows(tmp_path: Path, spec: Path) -> int:
    frame = pd.read_csv(tmp_path / "results/toy/results.csv")
    return profile_runs(load_spec("toy", spec.parent), frame, tmp_path / "results/toy")["quick"].settings_changed_rows


@pytest.mark.slow
def test_a_settings_edit_reruns_the_affected_cells_and_keeps_the_old_rows_as_superseded(tmp_path):
    env, spec = _env(tmp_path)
    assert run_here("run", "toy", "-p", "quick", "--no-progress", env=env).returncode == 0
    first = _rows(tmp_path, "quick")
    assert first["settings_hash"].notna().all() and first["value"].tolist() == [0.25]
    record = json.loads(next((tmp_path / "results/toy/cells/quick").glob("*.record.json")).read_text())
    sidecar = record["settings"]
    assert sidecar["config"]["mode"] == "square" and sidecar["seed"] == 0 and sidecar["environment"]["torch"]

    again = run_here("run", "toy", "-p", "quick", "--no-progress", env=env)
    assert "settings changed" not in again.stderr and "0 cells run, 1 already finished" in again.stderr

    spec.write_text(spec.read_text().replace("    values: [0.5]", "    values: [0.5]\n    mode: cube"))
    assert _old_settings_rows(tmp_path, spec) == 1  # the index says so before the rerun
    edited = run_here("run", "toy", "-p", "quick", "--no-progress", env=env)
    assert edited.returncode == 0, edited.stderr
    assert "1 cell: settings changed since they ran" in edited.stderr
    assert "1 cell run, 0 already finished" in edited.stderr
    now = _rows(tmp_path, "quick")
    assert now["value"].tolist() == [0.125] and now["settings_hash"].iloc[0] != first["settings_hash"].iloc[0]
    old = list((tmp_path / "results/toy/superseded/quick").glob("*.csv"))
    assert len(old) == 1 and pd.read_csv(old[0])["value"].tolist() == [0.25]
    table = pd.read_csv(tmp_path / "results/toy/results.csv")
    assert table["value"].tolist() == [0.125]  # never averaged with the superseded rows
    assert _old_settings_rows(tmp_path, spec) == 0

    # the report shows the current rows only, the superseded ones when asked, as a profile of their own
    plain = build_report(["toy"], tmp_path / "results", spec.parent)[0]
    asked = build_report(["toy"], tmp_path / "results", spec.parent, superseded=True)[0]
    assert plain.profiles == ["quick"] and plain.rows == 1
    old_hash = first["settings_hash"].iloc[0]
    assert asked.profiles == ["quick", f"quick~superseded-{old_hash}"] and asked.rows == 2

    # an edit to another profile changes nothing here
    spec.write_text(spec.read_text().replace("n_trials: 5", "n_trials: 6"))
    assert "0 cells run, 1 already finished" in run_here("run", "toy", "-p", "quick", "--no-progress", env=env).stderr


@pytest.mark.slow
def test_set_runs_a_variant_of_the_profile_with_its_overrides_on_every_row(tmp_path):
    env, _ = _env(tmp_path)
    result = run_here("run", "toy", "-p", "quick", "--no-progress", "--set", "mode=cube", "--set", "values=[2]",
                     env=env)
    assert result.returncode == 0, result.stderr
    assert "toy [quick+mode=cube,values=2]" in result.stderr
    rows = _rows(tmp_path, "quick+mode=cube,values=2")
    assert rows["value"].tolist() == [8.0] and rows["profile"].tolist() == ["quick+mode=cube,values=2"]
    assert rows["overrides"].tolist() == ["mode=cube,values=[2]"] and rows["settings_hash"].notna().all()
    assert not (tmp_path / "results/toy/cells/quick").exists()  # never stored (nor scored) as the plain profile
    shown = run_here("show", "toy", "-p", "quick", "--set", "lr=1e-4", env=env)
    assert "profile: quick+lr=1e-4" in shown.stdout and "lr: 0.0001" in shown.stdout


@pytest.mark.slow
def test_a_bad_set_is_one_line_naming_the_key_with_exit_status_2(tmp_path):
    env, _ = _env(tmp_path)
    cases = [(["run", "toy", "--set", "lr=abc"], "error: --set: key 'lr': expected a number, got 'abc'"),
             (["show", "toy", "--set", "nope=1"], "error: --set: key 'nope': expected one of the parameters"),
             (["tune", "toy", "--set", "sleep_s=-1"], "error: --set: key 'sleep_s': expected a number >= 0"),
             (["run", "toy", "--set", "values.x=1"], "error: --set: key 'values': expected a mapping"),
             (["run", "toy", "--set", "lr"], "error: --set: expected KEY=VALUE"),
             (["run", "toy", "--set", "lr="], "error: --set lr: expected a value after '=', got ''"),
             (["run", "toy", "--set", "lr=null"], "error: --set: key 'lr': expected a number")]
    for i, (args, message) in enumerate(cases):
        result = (run_cli if i == 0 else run_here)(*args, env=env)
        lines = [line for line in result.stderr.splitlines() if line.strip()]
        assert result.returncode == 2 and len(lines) == 1 and lines[0].startswith(message), (args, result.stderr)


def test_set_null_unsets_a_setting_that_may_be_unset():
    from fyexp.experiments import get_experiment
    from fyexp.spec.specs import load_spec, parse_sets, resolve

    (init,) = parse_sets(["freyface.init_std=null"])
    assert init.key == "freyface.init_std" and init.value is None
    spec = load_spec("vr-vae")
    config = resolve(spec, "paper", get_experiment(spec.runner).Config, None, [init]).config
    assert config.freyface.init_std is None and config.freyface.mean == "sigmoid"  # torch's initialization


def test_a_cells_settings_cover_only_the_configuration_it_depends_on():
    """Editing Frey Face's training block leaves a Caltech cell's settings as they were (vr-vae's cell_config);
    editing Caltech's changes them; adding a value to a grid axis changes no existing cell (GridExperiment)."""
    import dataclasses

    from fyexp.experiments import get_experiment
    from fyexp.store.results import Cell
    from fyexp.spec.settings import scoped_config

    vr = get_experiment("vr_vae")
    config = vr.Config()
    caltech, frey = Cell("iwae", 0, {"dataset": "caltech", "L": 1, "K": 5}), Cell("vae", 0, {
        "dataset": "freyface", "L": 1, "K": 5, "fold": 0})
    longer_frey = dataclasses.replace(config, train_freyface=dataclasses.replace(config.train_freyface, epochs=1500),
                                      n_train={"freyface": 100})
    assert scoped_config(vr, longer_frey, caltech) == scoped_config(vr, config, caltech)
    assert scoped_config(vr, longer_frey, frey) != scoped_config(vr, config, frey)
    slower_caltech = dataclasses.replace(config, train_caltech=dataclasses.replace(
        config.train_caltech, optimizer=dataclasses.replace(config.train_caltech.optimizer, lr=1e-4)))
    assert scoped_config(vr, slower_caltech, caltech) != scoped_config(vr, config, caltech)
    assert scoped_config(vr, slower_caltech, frey) == scoped_config(vr, config, frey)

    fy = get_experiment("fy_vae")
    fy_config = fy.Config()
    cell = fy.cells(fy_config, (0,))[0]
    narrower = dataclasses.replace(fy_config, grid=dataclasses.replace(fy_config.grid, dataset=["MNIST"]))
    assert cell.params["dataset"] == "MNIST"
    assert scoped_config(fy, narrower, cell) == scoped_config(fy, fy_config, cell)
    assert scoped_config(fy, dataclasses.replace(fy_config, beta=0.5), cell) != scoped_config(fy, fy_config, cell)


@pytest.mark.slow
def test_settings_hashes_lists_every_cell_and_moves_only_with_the_settings(tmp_path):
    """``scripts/settings_hashes.py`` (the proof that a refactoring moved no committed cell's settings hash): one
    line per cell and per profile; a default written out changes no line, a changed value changes its lines."""
    import sys

    from tests.conftest import ROOT, cli_env

    import runpy

    def hashes(defaults: str, spawned: bool = False) -> dict:
        """The script's lines: ``spawned`` as a user runs it, else its ``main`` in this process."""
        folder = tmp_path / defaults.replace(" ", "").replace(":", "=")
        folder.mkdir()
        text = (TOY_SPECS / "toy.yaml").read_text().replace("defaults:\n", f"defaults:\n  {defaults}\n")
        (folder / "toy.yaml").write_text(text)
        script = ROOT / "scripts" / "settings_hashes.py"
        env = {"FYEXP_EXPERIMENTS_DIR": str(folder)}
        if spawned:
            done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=ROOT,
                                  env=cli_env(env), check=True)
        else:
            main = runpy.run_path(str(script))["main"]
            done = call_here(lambda argv: main(), [], env, ROOT)
            assert done.returncode == 0, done.stderr
        return {tuple(line.split()[:3]): line.split()[3] for line in done.stdout.splitlines()}

    plain, written, moved = hashes("mode: square", spawned=True), hashes("sleep_s: 0.0"), hashes("sleep_s: 0.5")
    assert ("toy", "paper", "*") in plain and ("toy", "quick", "toy__x=0.5__seed=0") in plain
    assert len(plain) == 3 + 2 * 2 + 1 + 2   # a line per profile, paper's 2 × 2 cells, quick's 1, tune's 2
    assert written == plain
    assert set(moved) == set(plain) and all(moved[key] != plain[key] for key in plain)
