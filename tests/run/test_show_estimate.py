"""`fyexp show`, `fyexp run --dry-run` (the run plan) and `fyexp reproduce --dry-run` give one estimate of a profile
(issue 49, "estimates that disagree"): the cells a recorded cell of the profile estimates, and the others scaled
from another profile's cells, called an extrapolation, in the same hours; through the installed ``fyexp`` script."""

from __future__ import annotations

import re

import pytest

from tests.conftest import ROOT, run_cli

pytestmark = pytest.mark.slow

SCALED = re.compile(r"about ([\d,.]+ (?:h|min|s)) for (\d+) of them, scaled from the .*? cells by training examples "
                    r"and evaluation samples \(an extrapolation\)")
RECORDED = re.compile(r"estimate ([\d,.]+ (?:h|min|s)) for (\d+) (?:cells|of them)")


def _env(tmp_path, results) -> dict:
    return {"FYEXP_RESULTS_DIR": str(results), "FYEXP_CACHE_DIR": str(tmp_path / "cache"),
            "FYEXP_MACHINE_SPEED": "1.7", "FYEXP_EXPERIMENTS_DIR": str(ROOT / "experiments")}


def _three(tmp_path, results, name: str, paper: str) -> tuple[str, str, str]:
    """The estimate lines of show, the run plan and reproduce --dry-run for ``name`` at ``paper``."""
    env = _env(tmp_path, results)
    shown = run_cli("show", name, "--profile", "paper", env=env)
    planned = run_cli("run", name, "--profile", "paper", "--dry-run", env=env)
    reproduced = run_cli("reproduce", paper, "--dry-run", env=env)
    for proc in (shown, planned, reproduced):
        assert proc.returncode == 0, proc.stderr
    plan_line = next(line for line in planned.stdout.splitlines() if line.startswith(f"plan: {name} "))
    dry_line = next(line for line in reproduced.stdout.splitlines() if line.startswith(f"  {name}: "))
    return shown.stdout.splitlines()[0], plan_line, dry_line


def test_a_profile_with_recorded_cells_has_one_estimate_and_one_scaled_figure(tmp_path):
    """vr-vae at paper in an empty results folder: 46 cells from the committed paper cells, 14 (MNIST) scaled."""
    shown, planned, dry = _three(tmp_path, tmp_path / "results", "vr-vae", "vr")
    recorded = {RECORDED.search(line).groups() for line in (shown, planned, dry)}
    scaled = {SCALED.search(line).groups() for line in (shown, planned, dry)}
    assert len(recorded) == 1 and len(scaled) == 1, (shown, planned, dry)
    assert next(iter(recorded))[1] == "46" and next(iter(scaled))[1] == "14"
    assert "unknown for 14" in shown          # the 14 have no recorded cell of the profile: scaled, said so


def test_a_profile_without_recorded_cells_is_scaled_in_the_same_hours(tmp_path):
    """frac-vae at paper: no cell of the profile ever ran; all its cells scaled from the cpu and claims cells."""
    shown, planned, dry = _three(tmp_path, tmp_path / "results", "frac-vae", "frac")
    scaled = {SCALED.search(line).groups() for line in (shown, planned, dry)}
    assert len(scaled) == 1 and next(iter(scaled))[1] == "528", (shown, planned, dry)
    assert "estimate unknown (no finished cell of this profile recorded)" in shown
    assert not RECORDED.search(shown)


def test_show_scales_nothing_where_every_cell_has_a_recorded_time(tmp_path):
    """gmm-clustering at paper: every cell estimated from its own profile's cells, no extrapolation printed."""
    env = _env(tmp_path, tmp_path / "results")
    shown = run_cli("show", "gmm-clustering", "--profile", "paper", env=env)
    assert shown.returncode == 0, shown.stderr
    assert "estimate" in shown.stdout.splitlines()[0] and not SCALED.search(shown.stdout)
