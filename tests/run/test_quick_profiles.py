"""Issue 49's bounds through the installed ``fyexp`` script: each experiment's ``quick`` profile takes about two
minutes (its estimate from fyexp's measured profile times, at this machine's speed 1: the project's machine), and a
paper run that would take years is refused with the estimate its plan printed, never as "unknown"."""

from __future__ import annotations

import json
import re

import pytest

from tests.conftest import run_cli

#: About two minutes on two cores: the cells' summed quick-core seconds, run one after another.
QUICK_BOUND_S = 150.0


def test_every_quick_profile_is_estimated_at_about_two_minutes(tmp_path):
    """At factor 1 and with an empty results folder, ``list --json`` estimates every quick profile from the measured
    profile times: raising a quick profile's epochs scales its estimate (epochs ratio) past the bound."""
    listed = run_cli("list", "--json", "--results-dir", str(tmp_path / "empty"), env={"FYEXP_MACHINE_SPEED": "1"})
    assert listed.returncode == 0, listed.stderr
    quick = {e["name"]: e for e in json.loads(listed.stdout) if "quick" in e["profiles"]}
    assert len(quick) == 10, sorted(quick)
    for name, entry in quick.items():
        seconds = entry["estimate_s"]["quick"]
        assert seconds is not None and 0 < seconds <= QUICK_BOUND_S, (name, seconds)
        assert entry["unestimated_cells"]["quick"] == 0, name   # vr-bnn's quick has no Year (minutes an epoch)


@pytest.mark.slow
def test_installed_run_refuses_a_paper_run_with_the_estimate_its_plan_printed(tmp_path):
    """frac-vae at ``paper``: none of its cells ran at that profile anywhere; all are scaled from other profiles'
    cells.  The refusal quotes the plan's figure (issue 49: "its time is unknown" after "about 157,993 h")."""
    results = tmp_path / "results"
    ran = run_cli("run", "frac-vae", "--profile", "paper", "--no-progress", "--allow-dirty", "--results-dir",
                  str(results))
    assert ran.returncode == 2 and "Traceback" not in ran.stderr, ran.stderr
    plan, error = ran.stderr.strip().splitlines()[-2:]
    scaled = re.search(r"about ([\d,]+ h) for 528 of them, scaled from", plan)
    assert plan.startswith("plan: frac-vae [paper]: 528 cells: 528 to run, 0 finished;") and scaled, plan
    assert error == (f"error: fyexp run frac-vae: not started: it is estimated at about {scaled.group(1)}, scaled "
                     "from other profiles' cells (an extrapolation) for 528 cells (over 2 h); pass --yes to start it "
                     "(--dry-run shows the plan)")
    assert "unknown" not in error
    assert not (results / "frac-vae" / "cells").exists()


@pytest.mark.slow
def test_list_show_and_the_plan_scale_a_profile_whose_epochs_changed_alike(tmp_path):
    """nvdm's quick profile at 6 epochs instead of 2: its measured cells ran 2, so ``list``, ``show`` and the plan
    each give 3 × the measured time (``list`` and ``show`` once summed the recorded times unscaled: "12 min" where
    the plan said "4 min" for nvdm at cpu-long)."""
    import shutil

    from tests.conftest import ROOT

    specs = tmp_path / "experiments"
    shutil.copytree(ROOT / "experiments", specs)
    spec = specs / "nvdm.yaml"
    text = spec.read_text()
    assert text.count("train: {epochs: 2, batch_size: 256") == 1
    spec.write_text(text.replace("train: {epochs: 2, batch_size: 256", "train: {epochs: 6, batch_size: 256"))
    data = tmp_path / "data"
    data.mkdir()
    empty = str(tmp_path / "empty")
    env = {"FYEXP_MACHINE_SPEED": "1", "FYEXP_DATA_DIR": str(data), "COLUMNS": "200"}

    def listed(environment: dict) -> float:
        done = run_cli("list", "--json", "--results-dir", empty, env=environment)
        assert done.returncode == 0, done.stderr
        return next(e for e in json.loads(done.stdout) if e["name"] == "nvdm")["estimate_s"]["quick"]

    measured = listed(env)
    edited = {**env, "FYEXP_EXPERIMENTS_DIR": str(specs)}
    assert listed(edited) == pytest.approx(3 * measured)
    shown = run_cli("show", "nvdm", "--profile", "quick", "--results-dir", empty, env=edited)
    planned = run_cli("run", "nvdm", "--profile", "quick", "--dry-run", "--results-dir", empty, env=edited)
    assert shown.returncode == 0 and planned.returncode == 0, shown.stderr + planned.stderr
    in_show = re.search(r"estimate (\S+ \S+) from 2 recorded cells", shown.stdout.splitlines()[0])
    in_plan = re.search(r"estimate (\S+ \S+) \(from 2 recorded cells", planned.stdout.splitlines()[0])
    assert in_show and in_plan and in_show.group(1) == in_plan.group(1), (shown.stdout[:300], planned.stdout[:300])


def test_measured_profile_times_are_written_in_the_reference_machines_seconds():
    """``scripts/measure_profiles.py --write``: a cell's wall time × the run's CPU share (at most 1) ÷ this machine's
    speed factor, so that the committed file holds the project's machine's seconds, as the estimates assume."""
    import importlib.util

    from tests.conftest import ROOT

    found = importlib.util.spec_from_file_location("measure_profiles", ROOT / "scripts" / "measure_profiles.py")
    module = importlib.util.module_from_spec(found)
    found.loader.exec_module(module)
    cells = [{"experiment": "x", "wall_time_s": "10.0"}]
    assert module.quiet(cells, 0.5, 0.8) == [{"experiment": "x", "measured_wall_s": "10.0", "wall_time_s": "6.25"}]
    assert module.quiet(cells, 2.0, 1.25)[0]["wall_time_s"] == "8"   # a share over 1 counts as 1
