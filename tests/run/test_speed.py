"""This machine's speed (fyexp.run.speed) and the estimates it scales: the factor measured once and kept in the user
cache, set by $FYEXP_MACHINE_SPEED, applied to the times recorded on the project's machine (committed results, the
measured profile times) and not to a results folder of this machine; `fyexp list`, `show` and the plan say so
(issue 49)."""

from __future__ import annotations

import json
import re
import shutil

import pytest

from fyexp.run import speed
from fyexp.core.errors import FyexpError
from fyexp.run.estimate import PROFILE_TIMES, at_speed, committed_results, csv_rows, source_text, times_as_recorded
from tests.conftest import run_cli


@pytest.fixture
def measured(monkeypatch, tmp_path):
    """No $FYEXP_MACHINE_SPEED, a cache of this test, and a workload that takes what ``seconds[0]`` says."""
    monkeypatch.delenv("FYEXP_MACHINE_SPEED", raising=False)
    monkeypatch.setenv("FYEXP_CACHE_DIR", str(tmp_path / "cache"))
    seconds = [speed.REFERENCE_SECONDS / 2]
    calls = []

    def workload(repeats=speed.REPEATS):
        calls.append(repeats)
        return seconds[0]

    monkeypatch.setattr(speed, "workload_seconds", workload)
    _load(monkeypatch, 0.0)                                       # a quiet machine unless a test says otherwise
    return seconds, calls


def test_the_factor_is_the_workload_over_the_reference_and_is_kept_a_week(measured):
    seconds, calls = measured
    first = speed.machine_speed(now=1000.0)
    assert first.factor == pytest.approx(0.5) and first.seconds is not None and calls == [speed.REPEATS]
    seconds[0] = speed.REFERENCE_SECONDS * 3           # the machine "changed": a kept measurement is not redone
    assert speed.machine_speed(now=1000.0 + speed.KEEP_S - 1).factor == pytest.approx(0.5) and len(calls) == 1
    again = speed.machine_speed(now=1000.0 + speed.KEEP_S + 1)   # a week on: measured again
    assert again.factor == pytest.approx(3.0) and len(calls) == 2
    assert speed.speed_text(again) == "× 3 for this machine's speed (calibration, kept a week)"


def _load(monkeypatch, value):
    """The system's load average over the last minute is ``value`` (``None``: the system reports none)."""
    def load():
        if value is None:
            raise OSError("no load average")
        return value, 1.0, 0.5

    monkeypatch.setattr(speed.os, "getloadavg", load)


def test_a_loaded_measurement_is_kept_a_day_and_measured_again_once_the_machine_is_quiet(measured, monkeypatch):
    seconds, calls = measured
    cores = speed.os.cpu_count()
    seconds[0] = speed.REFERENCE_SECONDS * 3.8                 # a pip install on the cores: 3.8 times slower
    _load(monkeypatch, cores + 0.01)                          # just above the core count: loaded
    first = speed.machine_speed(now=1000.0)
    assert first.loaded and first.factor == pytest.approx(3.8) and len(calls) == 1
    assert speed.speed_text(first) == (f"× 3.8 for this machine's speed (calibration at load {cores + 0.01:.1f} on "
                                       f"{cores} cores, kept a day or until the machine is quiet)")
    seconds[0] = speed.REFERENCE_SECONDS                      # (the machine's quiet speed, not measured yet)
    assert speed.machine_speed(now=1000.0 + speed.LOADED_KEEP_S - 1).factor == pytest.approx(3.8)  # still loaded
    assert len(calls) == 1
    after = speed.machine_speed(now=1000.0 + speed.LOADED_KEEP_S + 1)   # a day on, still loaded: measured again
    assert len(calls) == 2 and after.factor == pytest.approx(1.0) and after.loaded
    seconds[0] = speed.REFERENCE_SECONDS * 3.8                 # loaded again: a loaded measurement kept
    _load(monkeypatch, cores * 4.0)
    loaded = speed.machine_speed(now=1000.0 + 2 * speed.LOADED_KEEP_S + 2)
    assert len(calls) == 3 and loaded.factor == pytest.approx(3.8)
    seconds[0] = speed.REFERENCE_SECONDS / 2
    _load(monkeypatch, float(cores))                          # at the core count: quiet, so measured again at once
    quiet = speed.machine_speed(now=1000.0 + 2 * speed.LOADED_KEEP_S + 3)
    assert len(calls) == 4 and quiet.factor == pytest.approx(0.5) and not quiet.loaded
    _load(monkeypatch, cores * 4.0)                           # a quiet measurement survives later load for a week
    kept = speed.machine_speed(now=1000.0 + 2 * speed.LOADED_KEEP_S + 3 + speed.KEEP_S - 1)
    assert len(calls) == 4 and kept.factor == pytest.approx(0.5)
    assert speed.speed_text(kept) == "× 0.5 for this machine's speed (calibration, kept a week)"


def test_a_machine_without_a_load_average_counts_as_quiet(measured, monkeypatch):
    _, calls = measured
    _load(monkeypatch, None)
    first = speed.machine_speed(now=10.0)
    assert not first.loaded and first.load is None
    assert speed.machine_speed(now=10.0 + speed.KEEP_S - 1) == first and len(calls) == 1
    assert not speed.is_loaded(None, 2) and not speed.is_loaded(2.0, 2) and speed.is_loaded(2.001, 2)
    assert speed.is_loaded(1.5, None) and not speed.is_loaded(1.0, None)   # no core count: one core


def test_the_load_average_is_the_last_minutes(measured, monkeypatch):
    _load(monkeypatch, 2.5)
    assert speed.machine_speed(now=1.0).load == 2.5


def test_without_a_cache_every_process_measures(measured, monkeypatch):
    _, calls = measured
    monkeypatch.setenv("FYEXP_CACHE_DIR", "off")
    speed.machine_speed(now=5.0)
    speed.machine_speed(now=5.0)
    assert len(calls) == 2


def test_the_environment_sets_the_factor_and_a_bad_one_is_refused(monkeypatch):
    monkeypatch.setenv("FYEXP_MACHINE_SPEED", "2.5")
    assert speed.machine_speed().factor == 2.5 and speed.machine_speed().seconds is None
    assert speed.speed_text(speed.machine_speed()) == "× 2.5 for this machine's speed ($FYEXP_MACHINE_SPEED)"
    for bad in ("fast", "0", "-1", "inf", "nan"):
        monkeypatch.setenv("FYEXP_MACHINE_SPEED", bad)
        with pytest.raises(FyexpError, match="expected a positive number"):
            speed.machine_speed()


def test_the_workload_measures_something():
    assert 0 < speed.workload_seconds(repeats=1) < 30


def test_committed_times_are_scaled_and_a_results_folder_of_this_machine_is_not(monkeypatch, tmp_path):
    monkeypatch.setenv("FYEXP_MACHINE_SPEED", "1")
    as_recorded, folder = times_as_recorded(tmp_path / "empty", "gmm-clustering", ["paper"])
    assert folder == committed_results() and as_recorded and at_speed(100.0, folder) == 100.0
    monkeypatch.setenv("FYEXP_MACHINE_SPEED", "0.25")
    assert at_speed(100.0, folder) == 25.0 and at_speed(None, folder) is None
    assert "× 0.25 for this machine's speed" in source_text(folder)
    own = tmp_path / "mine"                                   # the same cells in a results folder of this machine
    shutil.copytree(committed_results() / "gmm-clustering", own / "gmm-clustering")
    mine, read = times_as_recorded(own, "gmm-clustering", ["paper"])
    assert read == own and sorted(t.seconds for t in mine) == pytest.approx(sorted(t.seconds for t in as_recorded))
    assert source_text(read) == f"in {own}" and at_speed(100.0, read) == 100.0


def test_every_quick_profile_has_measured_times(tmp_path):
    from fyexp.spec.specs import available_specs, load_spec

    for name in available_specs():
        if "quick" in load_spec(name).profile_names():
            cells = [r for r in csv_rows(PROFILE_TIMES) if (r["experiment"], r["profile"]) == (name, "quick")]
            assert cells and all(float(c["wall_time_s"]) > 0 for c in cells), name
    assert times_as_recorded(tmp_path, "gmm-clustering", ["no-such-profile"]) == ([], None)


def test_a_quick_profile_is_estimated_from_its_measured_times_scaled(monkeypatch, tmp_path):
    monkeypatch.setenv("FYEXP_MACHINE_SPEED", "1")
    times, folder = times_as_recorded(tmp_path, "vr-renyi-gaussians", ["quick"])
    assert folder == PROFILE_TIMES and times
    monkeypatch.setenv("FYEXP_MACHINE_SPEED", "2")
    assert at_speed(sum(t.seconds for t in times), folder) == pytest.approx(2 * sum(t.seconds for t in times))


@pytest.mark.slow
def test_list_and_show_through_the_script_state_the_factor(tmp_path):
    env = {"FYEXP_MACHINE_SPEED": "0.5", "COLUMNS": "120"}
    shown = run_cli("show", "gmm-clustering", "--profile", "quick", "--results-dir", str(tmp_path), env=env)
    assert shown.returncode == 0, shown.stderr
    head = shown.stdout.splitlines()[0]
    assert "recorded cells; times in fyexp's measured profile times, recorded on the project's machine, × 0.5 for this " \
           "machine's speed ($FYEXP_MACHINE_SPEED)" in head, head
    listed = run_cli("list", "--json", "--results-dir", str(tmp_path), env=env)
    halves = {e["name"]: e["estimate_s"] for e in json.loads(listed.stdout)}
    listed = run_cli("list", "--json", "--results-dir", str(tmp_path), env={"FYEXP_MACHINE_SPEED": "1"})
    wholes = {e["name"]: e["estimate_s"] for e in json.loads(listed.stdout)}
    for name, profiles in wholes.items():
        assert profiles.get("quick") is not None, name           # every quick profile has an estimate
        for profile, seconds in profiles.items():
            if seconds is not None:
                assert halves[name][profile] == pytest.approx(seconds / 2), (name, profile)
    bad = run_cli("list", "--json", env={"FYEXP_MACHINE_SPEED": "fast"})
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "FYEXP_MACHINE_SPEED" in bad.stderr


def test_show_prints_the_rule_that_kept_the_measured_factor(tmp_path):
    """Measured (no $FYEXP_MACHINE_SPEED), through the installed script: show's line names the keeping rule, of a
    quiet or of a loaded measurement, whichever this machine's load gives."""
    env = {"FYEXP_MACHINE_SPEED": "", "FYEXP_CACHE_DIR": str(tmp_path / "cache")}
    shown = run_cli("show", "gmm-clustering", "--profile", "quick", "--results-dir", str(tmp_path / "r"), env=env)
    assert shown.returncode == 0, shown.stderr
    head = shown.stdout.splitlines()[0]
    assert re.search(r"× [\d.e+-]+ for this machine's speed \(calibration(, kept a week| at load [\d.]+ on \d+ cores, "
                     r"kept a day or until the machine is quiet)\)", head), head


def test_the_calibration_stops_once_its_two_least_timings_agree(monkeypatch):
    monkeypatch.setattr(speed, "AGREE", 0.25)          # binary-exact bounds: 0.5 and 0.625 differ by 0.25 × 0.5
    assert not speed._settled([0.75, 0.5])              # too few, however close
    assert speed._settled([0.75, 0.5, 0.625])           # three, the two least exactly AGREE apart: settled
    assert not speed._settled([0.75, 0.5, 0.6250001])   # just beyond
    assert speed._settled([0.625, 0.875, 0.5])          # in any order
    assert speed._settled([0.875, 0.5, 0.625, 0.75])    # more than three
    assert not speed._settled([1.0, 0.875, 0.75, 0.5])  # scattered: go on (the two least 0.5 apart)


def test_the_calibration_agreement_is_a_few_percent():
    assert speed.MIN_REPEATS == 3 and 0 < speed.AGREE <= 0.05 and speed.REPEATS >= speed.MIN_REPEATS
    assert speed._settled([0.05, 0.040, 0.040 * (1 + speed.AGREE / 2)])
    assert not speed._settled([0.05, 0.040, 0.040 * (1 + speed.AGREE * 2)])


def test_the_calibration_takes_the_least_timing_and_every_repeat_when_they_scatter(monkeypatch):
    clock = iter([0.0, 0.9, 1.0, 1.5, 2.0, 2.3, 3.0, 3.2, 4.0, 4.15])   # timings 0.9, 0.5, 0.3, 0.2, 0.15
    monkeypatch.setattr(speed.time, "process_time", lambda: next(clock))
    assert speed.workload_seconds(repeats=5) == pytest.approx(0.15)
    clock = iter([0.0, 0.9, 1.0, 1.5, 2.0, 2.501])                        # 0.9, 0.5, 0.501: settled at three
    monkeypatch.setattr(speed.time, "process_time", lambda: next(clock))
    assert speed.workload_seconds(repeats=5) == pytest.approx(0.5)
