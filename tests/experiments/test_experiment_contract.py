"""Every experiment through the same protocol (:class:`fyexp.experiments.base.Experiment`): its cells at every
profile of its spec, their settings, and the optional hooks the framework calls on every runner alike."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

import pytest

from fyexp.core.constraints import check_cell_memory
from fyexp.core.errors import FyexpError
from fyexp.experiments import Experiment, get_experiment, get_settings_scope
from fyexp.run.estimate import LightWork
from fyexp.store.results import Cell
from fyexp.spec.settings import cell_settings, scoped_config, settings_hash
from fyexp.spec.specs import available_specs, get_path, load_spec, resolve
from tests.conftest import ROOT

EXPERIMENTS = ROOT / "experiments"
SPECS = available_specs(EXPERIMENTS)


@pytest.mark.parametrize("name", SPECS)
def test_every_profile_of_every_experiment_keeps_the_protocol(name):
    """Cells of every profile: unique keys, seeds of the profile (or pinned by the grid), JSON settings that the
    light settings scope and the runner agree on; the optional hooks answer in their declared types."""
    spec = load_spec(name, EXPERIMENTS)
    experiment = get_experiment(spec.runner)
    scope = get_settings_scope(spec.runner)
    assert isinstance(experiment, Experiment) and scope.Config is experiment.Config
    for profile in spec.profile_names():
        resolved = resolve(spec, profile, experiment.Config)
        cells = experiment.cells(resolved.config, resolved.seeds)
        assert cells and all(isinstance(c, Cell) for c in cells), (name, profile)
        assert len({c.key for c in cells}) == len(cells), (name, profile, "duplicate cell keys")
        assert all(isinstance(c.seed, int) and c.seed >= 0 for c in cells), (name, profile)
        for cell in cells[:50]:
            scoped = scoped_config(experiment, resolved.config, cell)
            assert scoped == scoped_config(scope, resolved.config, cell), (name, profile, cell.key)
            json.dumps(scoped, allow_nan=False)
            estimate = experiment.memory_estimate(resolved.config, cell)
            assert estimate is None or (isinstance(estimate[0], int) and estimate[0] > 0 and estimate[1]), estimate
            work = experiment.work(scoped, cell.params)   # a plan's scaled estimate: positive where declared
            assert work is None or (len(work) == 2 and min(work) > 0), (name, profile, cell.key, work)
            light = LightWork.of(spec.runner)   # fyexp show's, from the light module: the same work or none
            assert (light.work(scoped, cell.params) if light else None) == work, (name, profile, cell.key)
        settings = cell_settings(resolved, cells[0], "cpu", experiment.data_identity(resolved.config, None),
                                 experiment)
        assert re.fullmatch(r"[0-9a-f]{12}", settings_hash(settings))
        if getattr(resolved.config, "search", None):  # a tuning study: the runner's trial, aliases onto the config
            assert type(experiment).trial is not Experiment.trial, (name, "has a search space but no trial")
            for path in experiment.PARAM_ALIASES.values():
                get_path(resolved.config, path)


def test_the_framework_calls_the_hooks_and_never_looks_for_them():
    """No ``getattr``/``hasattr`` on an experiment anywhere in fyexp (a hook is declared on the base class), and no
    runner dispatching its methods by name."""
    runners = {f"{r}.py" for r in ("frac_vae", "fy_vae", "gmm_calibration", "gmm_clustering", "nvdm", "tvem_bsc",
                                   "vr_bnn", "vr_renyi_gaussians", "vr_vae")}
    found = [f"{path.relative_to(ROOT)}:{n}" for path in sorted((ROOT / "fyexp").rglob("*.py"))
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if re.search(r"\b(getattr|hasattr)\((experiment|exp|scope)\b", line)
             or path.name in runners and re.search(r"\b(getattr|hasattr)\(self\b", line)]
    assert not found, found


@dataclass
class _Config:
    grid: dict = field(default_factory=lambda: {"a": [1, 2]})
    rate: float = 0.5


class _Plain(Experiment):
    name = "plain"
    Config = _Config

    def cells(self, config, seeds):
        return [Cell("m", s, {"a": a}) for a in config.grid["a"] for s in seeds]


class _Gridded(_Plain):
    grid_field = "grid"


class _Ensembles(_Plain):
    def prefit(self, config, cells, ctxs):
        pass


class _Estimated(_Plain):
    def memory_estimate(self, config, cell):
        return (cell.params["a"] * 2**30, f"a={cell.params['a']}") if cell.params["a"] > 1 else None


def test_the_defaults_of_the_optional_hooks():
    config, cell = _Config(), Cell("m", 0, {"a": 1})
    assert _Plain().cell_config(config, cell) == {"grid": {"a": [1, 2]}, "rate": 0.5}
    assert _Gridded().cell_config(config, cell) == {"rate": 0.5}   # the cell carries the grid's values
    assert _Plain().data_identity(config, None) is None and _Plain().memory_estimate(config, cell) is None
    assert _Plain().work({"rate": 0.5}, cell.params) is None   # no declared work: never scaled from another profile
    assert not _Plain().trains_ensembles and _Ensembles().trains_ensembles
    assert [get_experiment(r).trains_ensembles for r in ("fy_vae", "vr_vae")] == [True, False]
    with pytest.raises(FyexpError, match="'plain' has no tuning study"):
        _Plain().trial(config, None, lambda step, value: None, ROOT)


def test_memory_is_checked_on_the_cells_that_have_an_estimate():
    config = _Config(grid={"a": [1, 3]})
    cells = _Estimated().cells(config, (0,))
    with pytest.raises(FyexpError, match=r"cell m__a=3__seed=0 would need about 3\.0 GiB \(a=3\)"):
        check_cell_memory(_Estimated(), config, cells, yes=False, available=2 * 2**30)
    check_cell_memory(_Estimated(), config, cells, yes=False, available=4 * 2**30)
    check_cell_memory(_Plain(), config, cells, yes=False, available=1)   # no estimate: not checked
