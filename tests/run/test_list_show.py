"""`fyexp list` and `fyexp show` through the installed script: cells and estimates per profile, whole words."""

from __future__ import annotations

import json

import pytest
import yaml

from fyexp.experiments import get_experiment
from fyexp.experiments.declared import declared_cells
from fyexp.spec.specs import available_specs, load_spec, resolve
from tests.conftest import ROOT, committed_paper_seconds, run_cli, run_in_terminal, strip_ansi

EXPERIMENTS = ROOT / "experiments"


def test_declared_cells_count_what_every_runner_runs_at_every_profile():
    """The torch-free count of list/show equals each runner's own cells() (grid styles, pinned seeds, includes)."""
    checked = 0
    for name in available_specs(EXPERIMENTS):
        spec = load_spec(name, EXPERIMENTS)
        experiment = get_experiment(spec.runner)
        for profile in spec.profile_names():
            resolved = resolve(spec, profile, experiment.Config, None, ())
            ours = declared_cells(resolved.config, resolved.seeds)
            theirs = experiment.cells(resolved.config, resolved.seeds)
            assert len(ours) == len(theirs), (name, profile)
            if all(c.method for c in ours):  # where the grid names the methods, they are the runner's
                assert sorted(c.method for c in ours) == sorted(c.method for c in theirs), (name, profile)
            checked += 1
    assert checked >= 20


@pytest.mark.slow
@pytest.mark.parametrize("width", [60, 80])
def test_list_wraps_whole_words_and_gives_cells_and_time_per_profile(width, tmp_path):
    code, screen = run_in_terminal("list", "--experiments-dir", str(EXPERIMENTS), "--results-dir",
                                   str(ROOT / "results"), columns=width, timeout=120)
    assert code == 0, screen
    lines = strip_ansi(screen).replace("\r", "").splitlines()
    assert lines and max(len(line) for line in lines) <= width, max(lines, key=len)
    shown = set(" ".join(lines).split())
    for name in available_specs(EXPERIMENTS):
        spec = load_spec(name, EXPERIMENTS)
        source = spec.title.split() + " ".join(spec.tables + spec.figures).replace(";", " ").split()
        split = [w for w in source if w not in shown and w + ";" not in shown]
        assert not split, (name, split)  # every word of the title and of what it reproduces shown whole
        assert all(p in shown for p in spec.profile_names()), name
    text = " ".join(" ".join(lines).split())  # non-breaking spaces read as spaces
    from fyexp.core.words import duration

    # gmm-clustering's committed paper cells: their recorded time
    assert f"paper (60 cells, {duration(committed_paper_seconds())})" in text
    # frac-vae quick: no cell recorded in a results folder; the measured profile times
    # (fyexp.run.estimate.PROFILE_TIMES)
    from fyexp.run.estimate import PROFILE_TIMES, csv_rows

    measured = sum(float(r["wall_time_s"]) for r in csv_rows(PROFILE_TIMES)
                   if (r["experiment"], r["profile"]) == ("frac-vae", "quick"))
    assert f"quick (13 cells, {duration(measured)})" in text


@pytest.mark.slow
def test_list_json_counts_cells_per_profile():
    listed = json.loads(run_cli("list", "--json", "--experiments-dir", str(EXPERIMENTS), "--results-dir",
                                str(ROOT / "results")).stdout)
    entry = next(e for e in listed if e["name"] == "fy-vae")
    assert entry["cells"]["paper"] == 60 and entry["estimate_s"]["paper"] > 2 * 3600
    assert entry["unestimated_cells"]["paper"] == 0
    vr = next(e for e in listed if e["name"] == "vr-vae")  # Frey Face and MNIST: no paper cell of theirs recorded
    assert vr["cells"]["paper"] == 60 and 0 < vr["unestimated_cells"]["paper"] < 60
    # those cells scaled from the cpu profile's, as reproduce --dry-run and show scale them
    assert vr["scaled_cells"]["paper"] == vr["unestimated_cells"]["paper"] and vr["scaled_s"]["paper"] > 100 * 3600
    assert "paper" not in entry["scaled_cells"]


def test_a_profiles_line_adds_the_scaled_time_of_its_unestimated_cells():
    """``fyexp list``'s short line: the recorded estimate, the scaled one of the cells it leaves out (as ``show``
    and the plan scale them), and only the cells neither covers counted unknown."""
    from fyexp.run.overview import ProfileSummary

    def line(estimate, unestimated, scaled_s=None, scaled=0):
        return ProfileSummary("paper", 20, (0,), estimate, 4, unestimated=unestimated, scaled_s=scaled_s,
                              scaled=scaled).line().replace("\u00a0", " ")

    assert line(3600.0, 0) == "paper (20 cells, 60 min)"
    assert line(3600.0, 6) == "paper (20 cells, 60 min + 6 unknown)"
    assert line(3600.0, 6, 7200.0 * 1000, 6) == "paper (20 cells, 60 min + ~2,000 h scaled)"
    assert line(3600.0, 6, 7200.0, 4) == "paper (20 cells, 60 min + ~2.0 h scaled + 2 unknown)"
    assert line(None, 20, 36000.0, 20) == "paper (20 cells, ~10.0 h scaled)"
    assert line(None, 20) == "paper (20 cells, time unknown)"
    assert line(None, 20, None, 0) == line(None, 20, 5.0, 0)   # no scaled cell: no scaled time, whatever the field


def test_show_names_the_settings_no_recorded_cell_had():
    from types import SimpleNamespace

    from fyexp.run.overview import ProfileSummary, show_summary

    spec = SimpleNamespace(name="vr-vae")
    flagged = ProfileSummary("paper", 3, (0,), 3420.0, 19, {"iwae": 3}, {"K": ["50"]}, {"iwae": {"K": ["50"]}},
                             0, 3, ("K",))
    assert show_summary(spec, flagged)[0] == ("# vr-vae [paper]: 3 cells (seed 0); estimate 57 min from 19 recorded "
                                              "cells; 3 of them at another K than any recorded cell")
    plain = ProfileSummary("paper", 3, (0,), 3420.0, 19, {"iwae": 3}, {"K": ["5"]}, {"iwae": {"K": ["5"]}})
    assert show_summary(spec, plain)[0].endswith("estimate 57 min from 19 recorded cells")
    unknown = ProfileSummary("paper", 3, (0,), None, 0, {"iwae": 3}, {}, {"iwae": {}}, 0, 3, ("K",))
    assert "another" not in show_summary(spec, unknown)[0]  # no estimate: nothing extrapolated to speak of


@pytest.mark.slow
def test_show_opens_with_a_summary_and_stays_yaml():
    shown = run_cli("show", "vr-vae", "--profile", "paper", "--experiments-dir", str(EXPERIMENTS),
                    "--results-dir", str(ROOT / "results"))
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert lines[0].startswith("# vr-vae [paper]: 60 cells (seed 0); estimate ")
    assert " recorded cells, unknown for " in lines[0] and " on data none of them used; times in " in lines[0]
    assert lines[1] == "# methods:"
    assert lines[2].startswith("#   vae: 16 cells (dataset freyface, mnist, caltech; L 1, 2; K 5, 50; fold 0, 1")
    assert "#   iwae_single: 1 cell (dataset mnist; L 1; K 50)" in lines
    assert "# data sets: freyface, mnist, caltech" in lines
    assert yaml.safe_load(shown.stdout)["name"] == "vr-vae"  # the summary is comments: still one YAML document
    quick = run_cli("show", "gmm-clustering", "--profile", "quick", "--experiments-dir", str(EXPERIMENTS),
                    "--results-dir", str(ROOT / "results"))
    first = quick.stdout.splitlines()
    assert first[0].startswith("# gmm-clustering [quick]: 12 cells (seeds 0, 1); estimate ")   # no committed cell:
    assert first[0].endswith(" from 12 recorded cells; times in fyexp's measured profile times, recorded on the "
                             "project's machine, × 1 for this machine's speed ($FYEXP_MACHINE_SPEED)")  # the measured
    assert "#   sparse: 4 cells (rho 1.0, 2.0)" in first and "#   standard: 2 cells (no grid parameters)" in first


def test_list_summaries_are_kept_in_the_user_cache_and_never_served_stale(tmp_path, monkeypatch):
    """`fyexp list`'s profile summaries (recorded-time lookups over every cell file) are kept in the user cache:
    served from it while nothing they are derived from changed, derived again after a results file or the spec
    changed.  A cell file rewritten at its size with its modification time put back is a changed file too (its
    change time and its bytes differ)."""
    import os
    import shutil

    from fyexp.run import overview

    monkeypatch.setenv("FYEXP_CACHE_DIR", str(tmp_path / "cache"))
    specs, results = tmp_path / "experiments", tmp_path / "results"
    specs.mkdir()
    shutil.copy(EXPERIMENTS / "vr-renyi-gaussians.yaml", specs)
    shutil.copytree(ROOT / "results" / "vr-renyi-gaussians" / "cells", results / "vr-renyi-gaussians" / "cells")
    derive = overview._profile_summaries
    spec = load_spec("vr-renyi-gaussians", specs)
    first = overview.profile_summaries(spec, results)
    assert first == derive(spec, results) and first[0].name == "paper" and first[0].estimate_s is not None
    assert (tmp_path / "cache" / "list-summaries").is_dir()

    def derived_again(*args, **kwargs):
        raise AssertionError("derived again although nothing changed")

    monkeypatch.setattr(overview, "_profile_summaries", derived_again)
    assert overview.profile_summaries(spec, results) == first        # nothing changed: served from the cache
    monkeypatch.setattr(overview, "_profile_summaries", derive)

    # a results file changed: one cell's recorded wall time 0.446 s → 0.947 s, same size, old modification time
    cell = results / "vr-renyi-gaussians" / "cells" / "paper" / "mc__K=100__seed=0.csv"
    before = cell.stat()
    text = cell.read_text()
    assert ",0.446," in text
    cell.write_text(text.replace(",0.446,", ",0.947,"))
    os.utime(cell, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert cell.stat().st_size == before.st_size and cell.stat().st_mtime_ns == before.st_mtime_ns
    changed = overview.profile_summaries(spec, results)
    assert changed == derive(spec, results) and changed != first
    assert abs(changed[0].estimate_s - first[0].estimate_s - 0.501) < 1e-9

    # the spec changed (outside the default experiments folder): paper at seeds 0 and 1, twice the cells
    path = specs / "vr-renyi-gaussians.yaml"
    path.write_text(path.read_text().replace("  paper:\n    seeds: [0]\n", "  paper:\n    seeds: [0, 1]\n"))
    respec = load_spec("vr-renyi-gaussians", specs)
    assert respec.profiles["paper"]["seeds"] == [0, 1]
    again = overview.profile_summaries(respec, results)
    assert again == derive(respec, results) and again[0].cells == 2 * changed[0].cells


def test_list_summaries_are_kept_as_recorded_and_scaled_to_this_machine_as_they_are_read(tmp_path, monkeypatch):
    """The kept summaries hold the project's times as recorded, not this machine's: a new calibration (another
    factor) serves them from the user cache, every estimate × the new factor, the plan's scaled figure too."""
    from fyexp.run import overview
    from fyexp.run.estimate import committed_results

    monkeypatch.setenv("FYEXP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("FYEXP_MACHINE_SPEED", "1")
    spec = load_spec("vr-vae", EXPERIMENTS)
    empty = tmp_path / "results"          # no cells here: every time is the committed results' (the project's)
    at_one = {s.name: s for s in overview.profile_summaries(spec, empty)}
    assert at_one["paper"].estimate_s and at_one["paper"].scaled and at_one["paper"].scaled_s
    assert at_one["paper"].source == str(committed_results()) and at_one["paper"].scaled_source

    def derived_again(*args, **kwargs):
        raise AssertionError("derived again: the kept summaries should not depend on the machine's speed")

    monkeypatch.setattr(overview, "_profile_summaries", derived_again)
    monkeypatch.setenv("FYEXP_MACHINE_SPEED", "2.5")
    at_speed = {s.name: s for s in overview.profile_summaries(spec, empty)}
    assert at_speed.keys() == at_one.keys()
    for name, one in at_one.items():
        if one.estimate_s is not None:
            assert at_speed[name].estimate_s == pytest.approx(2.5 * one.estimate_s, rel=1e-12)
        if one.scaled_s is not None:
            assert at_speed[name].scaled_s == pytest.approx(2.5 * one.scaled_s, rel=1e-12)
        assert at_speed[name].cells == one.cells and at_speed[name].recorded == one.recorded


def test_a_summary_at_speed_scales_only_the_times_of_the_projects_machine(tmp_path, monkeypatch):
    """:meth:`ProfileSummary.at_speed`: × the factor for times read from the committed results (or the measured
    profile times), × 1 for a folder of this machine's, and an unknown time stays unknown."""
    from fyexp.run.overview import ProfileSummary
    from fyexp.run.estimate import PROFILE_TIMES, committed_results

    monkeypatch.setenv("FYEXP_MACHINE_SPEED", "3")
    project = ProfileSummary("paper", 4, (0,), 10.0, 2, source=str(committed_results()), scaled_s=5.0, scaled=1,
                             scaled_source=str(PROFILE_TIMES))
    assert (project.at_speed().estimate_s, project.at_speed().scaled_s) == (30.0, 15.0)
    here = ProfileSummary("paper", 4, (0,), 10.0, 2, source=str(tmp_path), scaled_s=5.0, scaled=1,
                          scaled_source=str(committed_results()))
    assert (here.at_speed().estimate_s, here.at_speed().scaled_s) == (10.0, 15.0)
    unknown = ProfileSummary("paper", 4, (0,), None, 0)
    assert unknown.at_speed().estimate_s is None and unknown.at_speed().scaled_s is None
    assert project.estimate_s == 10.0                     # a copy: the kept summary stays as recorded


def test_counts_take_the_number_of_their_noun():
    from fyexp.run.overview import ProfileSummary, show_summary
    from fyexp.core.words import counted

    assert (counted(1), counted(0), counted(2), counted(1, "recorded cell")) == \
        ("1 cell", "0 cells", "2 cells", "1 recorded cell")
    one = ProfileSummary("quick", 1, (0,), 60.0, 1, methods={"iwae_single": 1}, axes={},
                         methods_axes={"iwae_single": {}})
    assert one.line() == "quick\u00a0(1\u00a0cell,\u00a060\u00a0s)"
    head, methods, method = show_summary(load_spec("vr-vae", EXPERIMENTS), one)[:3]
    assert head.startswith("# vr-vae [quick]: 1 cell (seed 0); estimate 60 s from 1 recorded cell")
    assert methods == "# methods:" and method.startswith("#   iwae_single: 1 cell (")
