"""Whether a run may start (fyexp/run/plan.py: check_start, confirm) and the options object the commands share
(fyexp/cli/commands/options.py), each decision on both sides of its threshold."""

from __future__ import annotations

from pathlib import Path

import pytest

from fyexp.run.cell_filter import parse_only
from fyexp.cli.commands.options import Options, resolve_experiment
from fyexp.core.constraints import MAX_CELLS
from fyexp.core.errors import FyexpError, SpecError
from fyexp.run.executors import ExecutorOptions, executor_options
from fyexp.experiments.grid import EMPTY_GRID
from fyexp.run.plan import check_start, confirm, grid_cells
from tests.conftest import TOY_SPECS


def _toy(profile: str = "paper", seeds: str | None = None, sets: tuple[str, ...] = ()):
    return resolve_experiment("toy", Options(profile=profile, seeds=seeds, sets=sets, experiments_dir=TOY_SPECS))


def test_confirm_asks_only_for_a_long_plan_and_refuses_off_a_terminal():
    asked = []

    def ask(answer):
        return lambda question: asked.append(question) or answer

    assert confirm(None, False, "fyexp run toy", ask(False)) and not asked          # not long: no question
    assert confirm("it is estimated at 3.0 h (over 2 h)", True, "fyexp run toy", ask(False)) and not asked  # --yes
    assert confirm("its time is unknown", False, "fyexp run toy", ask(True))
    assert not confirm("its time is unknown", False, "fyexp run toy", ask(False))
    assert asked == ["fyexp run toy: its time is unknown. Start it?"] * 2
    with pytest.raises(FyexpError, match=r"^fyexp run toy: not started: its time is unknown; pass --yes"):
        confirm("its time is unknown", False, "fyexp run toy", ask(None))            # off a terminal


@pytest.mark.parametrize("profile, dry_run, checked", [("paper", False, True), ("paper", True, False),
                                                       ("quick", False, False)])
def test_the_clean_tree_is_required_of_a_real_paper_run_only(monkeypatch, profile, dry_run, checked):
    import fyexp.store.provenance.source

    calls = []
    monkeypatch.setattr(fyexp.store.provenance.source, "require_clean_tree",
                        lambda allow, module: calls.append((allow, module)))
    experiment, resolved = _toy(profile, sets=("sleep_s=0.5",))   # a variant of the profile is checked like it
    check_start(resolved, experiment, parse_only(None), yes=False, allow_dirty=True, dry_run=dry_run)
    assert calls == ([(True, "tests.toy_experiment")] if checked else [])


def test_the_grid_size_limit_is_checked_after_only_and_lifted_by_yes():
    half = MAX_CELLS // 2                                 # the toy grid has two values a seed
    experiment, resolved = _toy(seeds=f"0-{half - 1}")
    check_start(resolved, experiment, parse_only(None), yes=False, allow_dirty=True, dry_run=True)  # the limit
    experiment, resolved = _toy(seeds=f"0-{half}")
    with pytest.raises(FyexpError, match=f"the grid has {MAX_CELLS + 2:,} cells"):
        check_start(resolved, experiment, parse_only(None), yes=False, allow_dirty=True, dry_run=True)
    check_start(resolved, experiment, parse_only(["x=1"]), yes=False, allow_dirty=True, dry_run=True)
    check_start(resolved, experiment, parse_only(None), yes=True, allow_dirty=True, dry_run=True)


def test_an_empty_grid_names_the_spec_key_without_overrides():
    import dataclasses

    experiment, resolved = _toy("quick")
    assert [c.key for c in grid_cells(resolved, experiment)] == ["toy__x=0.5__seed=0"]
    empty = dataclasses.replace(resolved, config=dataclasses.replace(resolved.config, values=[]))
    with pytest.raises(SpecError) as refused:
        grid_cells(empty, experiment)
    assert (Path(refused.value.file).name, refused.value.key) == ("toy.yaml", "profiles.quick")


GMM_GRID_OFF = ("grid.standard=false", "grid.hard=false", "grid.truncated=false", "grid.sklearn=false",
                "grid.sparse=false")


@pytest.mark.parametrize("sets", [GMM_GRID_OFF, ("n_iter=3", *GMM_GRID_OFF)])
def test_a_grid_emptied_by_set_names_the_grid_overrides_that_emptied_it(sets):
    """Every method of gmm-clustering switched off: a valid config of no cell.  The ``grid.`` overrides are blamed
    (with the one value each set, ``false``), not the override beside them.  (``--set grid={}`` and an empty axis
    are refused earlier, when the config is built: ``tests/cli/test_cli_bad_inputs.py``.)"""
    experiment, resolved = resolve_experiment("gmm-clustering", Options(profile="quick", sets=sets))
    with pytest.raises(SpecError) as refused:
        grid_cells(resolved, experiment)
    blamed = [o.split("=")[0] for o in GMM_GRID_OFF]
    assert (refused.value.file, refused.value.key, refused.value.expected, refused.value.got) == (
        "--set", ", ".join(blamed), EMPTY_GRID, dict.fromkeys(blamed, False))
    sparse_on = tuple(o for o in sets if o != "grid.sparse=false")        # the other side: sparse EM is left
    experiment, resolved = resolve_experiment("gmm-clustering", Options(profile="quick", sets=sparse_on))
    assert [c.key for c in grid_cells(resolved, experiment)] == ["sparse__rho=1__seed=0", "sparse__rho=2__seed=0"]


def test_a_spec_whose_own_grid_has_no_cell_is_blamed_even_beside_an_override(tmp_path):
    from fyexp.spec.specs import experiments_dir

    text = (experiments_dir() / "gmm-clustering.yaml").read_text(encoding="utf-8")
    off = "{standard: false, hard: false, truncated: false, sklearn: false, sparse: false}"
    text = text.replace("    grid: {sparse: {rho: [1.0, 2.0]}}\n", f"    grid: {off}\n")
    (tmp_path / "gmm-clustering.yaml").write_text(text, encoding="utf-8")
    for sets in ((), ("n_iter=3",)):
        experiment, resolved = resolve_experiment("gmm-clustering", Options(profile="quick", sets=sets,
                                                                            experiments_dir=tmp_path))
        with pytest.raises(SpecError) as refused:
            grid_cells(resolved, experiment)
        assert (Path(refused.value.file).name, refused.value.key, refused.value.expected) == (
            "gmm-clustering.yaml", "profiles.quick.grid", EMPTY_GRID)
        assert refused.value.got == resolved.raw["grid"] and refused.value.got["sparse"] is False
    # one override that empties a spec's grid is named with the one value it set
    only_sparse = text.replace(off, "{standard: false, hard: false, truncated: false, sklearn: false}")
    (tmp_path / "gmm-clustering.yaml").write_text(only_sparse, encoding="utf-8")
    experiment, resolved = resolve_experiment("gmm-clustering", Options(profile="quick", sets=("grid.sparse=false",),
                                                                        experiments_dir=tmp_path))
    with pytest.raises(SpecError) as refused:
        grid_cells(resolved, experiment)
    assert (refused.value.file, refused.value.key, refused.value.got) == ("--set", "grid.sparse", False)


def test_check_start_refuses_a_cell_past_the_available_memory_unless_yes():
    experiment, resolved = resolve_experiment("gmm-calibration", Options(sets=("n_replicas=1000000000",)))
    with pytest.raises(FyexpError, match=r"would need about [\d,.]+ GiB \(n_replicas=1,000,000,000 "):
        check_start(resolved, experiment, parse_only(None), yes=False, allow_dirty=True, dry_run=True)
    check_start(resolved, experiment, parse_only(None), yes=True, allow_dirty=True, dry_run=True)


def test_options_are_built_once_from_a_commands_parameters():
    params = {"name": "toy", "profile": "quick", "sets": ["a=1", "b=2"], "only": None, "data_dir": "/data",
              "executor": "slurm", "jobs": 3, "threads_per_job": None, "slurm_time": 90, "slurm_mem_gb": None,
              "dry_run": True, "yes": True, "n_trials": 5}
    options = Options.from_params(params)
    assert (options.profile, options.sets, options.only, options.data_dir) == ("quick", ("a=1", "b=2"), (), Path("/data"))
    assert options.dry_run and options.yes and not options.force and options.device == "auto"
    assert options.executor == ExecutorOptions(kind="slurm", jobs=3, slurm_time_min=90)
    local = Options.from_params({**params, "executor": "local"}).executor
    assert local == ExecutorOptions(kind="local", jobs=3, slurm_time_min=90)
    assert Options.from_params({"profile": "paper"}) == Options()


@pytest.mark.parametrize("kind, given, message", [
    (None, {"--jobs": 2}, "--jobs needs --executor local or slurm"),
    (None, {"--jobs": 0}, "--jobs: expected an integer >= 1, got 0"),
    ("local", {"--threads-per-job": 0}, "--threads-per-job: expected an integer >= 1, got 0"),
    ("slurm", {"--slurm-mem-gb": float("nan")}, "--slurm-mem-gb: expected a positive number, got nan"),
    ("pbs", {}, "--executor: expected one of local, slurm, got 'pbs'"),
])
def test_executor_options_are_checked_in_one_place(kind, given, message):
    with pytest.raises(FyexpError, match=message.replace("(", r"\(").replace(")", r"\)")):
        executor_options(kind, given)


def test_executor_options_take_defaults_for_what_is_not_given():
    assert executor_options(None, {"--jobs": None, "--threads-per-job": None}) is None
    assert executor_options("local", {"--jobs": 1, "--threads-per-job": None, "--n-trials": 4}) == \
        ExecutorOptions(kind="local", jobs=1)
