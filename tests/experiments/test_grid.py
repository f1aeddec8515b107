"""The one grid mechanism (fyexp.experiments.grid): a spec's ``grid:`` block → cells (axes, include / exclude,
per-method axes, pinned seeds), its validation (one-line errors naming the key), and metrics → rows with identity
and paper keys."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Annotated

import pytest

from fyexp.core.constraints import NonNegativeInt, OneOf, PositiveFloat, PositiveInt
from fyexp.core.errors import ConfigValueError, SpecError
from fyexp.experiments import fy_vae, get_experiment
from fyexp.experiments.grid import GridExperiment, PaperKeys, cells_of, check_method_grid, expand, metric
from fyexp.store.results import Cell
from fyexp.spec.specs import build_config, load_spec, resolve


def test_expand_is_the_product_in_declared_order_less_the_excluded():
    combos = expand({"a": [1, 2], "b": ["x", "y", "z"], "exclude": [{"a": 2, "b": "y"}]})
    assert combos == [{"a": 1, "b": "x"}, {"a": 1, "b": "y"}, {"a": 1, "b": "z"}, {"a": 2, "b": "x"},
                      {"a": 2, "b": "z"}]
    assert len(expand({"a": [1, 2], "b": ["x", "y", "z"]})) == 6                # nothing excluded: the product
    assert expand({"include": [{"a": [1, 2]}]}) == [{"a": 1}, {"a": 2}]        # no empty cell beside them


def test_no_grid_is_one_cell_per_seed_and_an_empty_grid_none():
    assert expand(None) == [{}] and [c.key for c in cells_of(None, (0, 1), lambda p: "m")] == ["m__seed=0",
                                                                                                "m__seed=1"]
    assert expand({}) == [] and cells_of({}, (0, 1)) == []
    assert cells_of({"include": [], "exclude": []}, (0,)) == []                  # vr-vae's shape, emptied


@dataclass
class _Train:
    lr: float = 0.1


@dataclass
class _Config:
    grid: dict = field(default_factory=lambda: {"setting": ["s1", "s2"], "rho": [1.0, 2.0]})
    train: _Train = field(default_factory=_Train)


class _Toy(GridExperiment):
    name = "toy-grid"
    Config = _Config
    identity = {"lr": "train.lr"}
    columns = {"setting": "setting", "rho": "rho"}
    paper_keys = PaperKeys(tables=(("p", "1"), ("q", "3")), metrics=("score",),
                           row=lambda cell: f"rho={cell.params['rho']:g}" if cell.params["rho"] == 1.0 else "",
                           label=lambda cell: None if cell.params["rho"] == 1.0 else "unpublished variant")

    def measure(self, config, cell, ctx):
        return [metric("score", cell.params["rho"] * 10, tolerance=0.5), metric("seconds", 1.0),
                *[metric("coherence", k / 10, k=k) for k in (5, 10)]]


def test_cells_carry_axes_and_run_identity_and_seed_innermost():
    cells = _Toy().cells(_Config(), (0, 1))
    assert [(c.params["setting"], c.params["rho"], c.seed) for c in cells[:3]] == [("s1", 1.0, 0), ("s1", 1.0, 1),
                                                                                     ("s1", 2.0, 0)]
    assert all(c.params["lr"] == 0.1 and c.method == "toy-grid" for c in cells)
    assert len({c.key for c in cells}) == 8


def test_rows_get_columns_everywhere_and_paper_keys_once_per_table_on_published_metrics():
    exp = _Toy()
    published, variant = exp.cells(_Config(), (0,))[:2]
    rows = exp.run_cell(_Config(), published, ctx=None)
    score = [r for r in rows if r["metric"] == "score"]
    assert [(r["paper"], r["table"]) for r in score] == [("p", "1"), ("q", "3")]
    assert all(r["paper_row"] == "rho=1" and r["value"] == 10.0 and r["tolerance"] == 0.5 and "label" not in r
               for r in score)
    others = [r for r in rows if r["metric"] != "score"]
    assert all("paper" not in r and r["setting"] == "s1" and r["rho"] == 1.0 for r in others)
    assert sorted(r["k"] for r in others if r["metric"] == "coherence") == [5, 10]
    unpublished = [r for r in exp.run_cell(_Config(), variant, ctx=None) if r["metric"] == "score"]
    assert all(r["paper_row"] == "" and r["label"] == "unpublished variant" for r in unpublished)


def test_fy_vae_cells_are_those_of_the_hand_written_grid():
    """The committed results' cell keys: the grid the runner wrote by hand before grids were declared."""
    spec = load_spec("fy-vae")
    exp = get_experiment(spec.runner)
    config = resolve(spec, "paper", exp.Config).config
    names_o = {1.0: "bernoulli", 2.0: "psi_2"}
    names_r = {1.0: "gaussian", 1.5: "biweight", 2.0: "epanechnikov"}
    by_hand = [Cell(f"{names_o[o]}-{names_r[r]}", seed, {"dataset": d, "obs_rho": o, "latent_rho": r,
                                                         "regularizer": reg})
               for d in ("MNIST", "FashionMNIST") for o in (1.0, 2.0) for r in (1.0, 1.5, 2.0)
               for reg in ("fy", "authors") if not (reg == "authors" and r == 1.0) for seed in (0, 1, 2)]
    assert [(c.key, c.params_json) for c in exp.cells(config, (0, 1, 2))] == \
        [(c.key, c.params_json) for c in by_hand]


def test_a_bad_grid_axis_is_a_one_line_spec_error_with_its_path():
    with pytest.raises(SpecError, match=r"profiles\.x\.grid\.latent_rho'?: expected a non-empty list"):
        build_config(fy_vae.Config, {"grid": {"latent_rho": []}}, "s.yaml", "profiles.x")
    with pytest.raises(SpecError, match=r"profiles\.x\.grid\.dataset'?: expected names among"):
        build_config(fy_vae.Config, {"grid": {"dataset": ["CIFAR"]}}, "s.yaml", "profiles.x")
    with pytest.raises(SpecError, match=r"profiles\.x\.grid\.axis'?: expected one of the parameters"):
        build_config(fy_vae.Config, {"grid": {"axis": [1]}}, "s.yaml", "profiles.x")


def test_include_adds_sub_grids_and_pins_seeds_exclude_drops_partial_cells_method_axis_names_the_method():
    grid = {"method": ["a", "b"], "value": [1, 2],
            "exclude": [{"method": "b", "value": 2}],
            "include": [{"method": "c", "value": [3, 4]}, {"method": "a", "value": 1},   # already there: once
                        {"method": "d", "value": 9, "seed": 7}]}
    assert expand(grid) == [{"method": "a", "value": 1}, {"method": "a", "value": 2}, {"method": "b", "value": 1},
                            {"method": "c", "value": 3}, {"method": "c", "value": 4},
                            {"method": "d", "value": 9, "seed": 7}]

    @dataclass
    class _Ragged:
        grid: dict = field(default_factory=lambda: grid)
        train: _Train = field(default_factory=_Train)

    cells = _Toy().cells(_Ragged(), (0, 1))
    assert [(c.method, c.params["value"], c.seed) for c in cells] == [
        ("a", 1, 0), ("a", 1, 1), ("a", 2, 0), ("a", 2, 1), ("b", 1, 0), ("b", 1, 1),
        ("c", 3, 0), ("c", 3, 1), ("c", 4, 0), ("c", 4, 1), ("d", 9, 7)]
    assert all("method" not in c.params and "seed" not in c.params for c in cells)


def test_ragged_entries_that_name_no_axis_are_one_line_spec_errors():
    from fyexp.core.errors import ConfigValueError
    from fyexp.experiments.grid import check_axes

    with pytest.raises(ConfigValueError, match="exclude"):
        check_axes({"a": [1], "exclude": [{"b": 1}]})
    with pytest.raises(ConfigValueError, match="include"):
        check_axes({"a": [1], "b": [2], "include": [{"a": 3}]})      # must name every axis
    with pytest.raises(ConfigValueError, match="include"):
        check_axes({"a": [1], "include": [[1]]})
    for axis in (5, [], [1, 1]):                                               # a scalar, empty, repeated
        with pytest.raises(ConfigValueError, match="a non-empty list of distinct values"):
            check_axes({"a": axis})
    check_axes({"a": [1], "include": [{"a": [2, 3], "seed": 0}], "exclude": [{"a": 1}]})
    with pytest.raises(SpecError, match=r"profiles\.x\.grid\.exclude"):
        build_config(fy_vae.Config, {"grid": {"exclude": [{"beta": 1}]}}, "s.yaml", "profiles.x")


class _Several(_Toy):
    paper_keys = (PaperKeys(tables=(("p", "1"),), metrics=("test_*",), row=lambda cell: "r1"),
                  PaperKeys(tables=(("p", "2"),), metrics=("test_b",), row=lambda cell: "r2", setting="S2",
                            when=lambda cell: cell.params["rho"] == 2.0))
    seed_streams = {"init": 0, "mc": 12345}

    def metric_name(self, cell, name):
        return name + "_authors" if cell.params["setting"] == "s2" else name

    def measure(self, config, cell, ctx):
        return [metric("test_a", 1.0), metric("test_b", 2.0), metric("other", 3.0)]


def test_several_paper_keys_match_patterns_and_conditions_and_the_metric_name_hook_renames_rows():
    exp = _Several()
    cells = {(c.params["setting"], c.params["rho"]): c for c in exp.cells(_Config(), (0,))}
    rows = exp.run_cell(_Config(), cells[("s1", 2.0)], ctx=None)
    keyed = sorted((r["metric"], r.get("table"), r.get("paper_row"), r["setting"]) for r in rows)
    assert keyed == [("other", None, None, "s1"), ("test_a", "1", "r1", "s1"), ("test_b", "1", "r1", "s1"),
                     ("test_b", "2", "r2", "S2")]
    rows = exp.run_cell(_Config(), cells[("s2", 1.0)], ctx=None)
    assert sorted((r["metric"], r.get("table")) for r in rows) == [("other_authors", None), ("test_a_authors", "1"),
                                                                    ("test_b_authors", "1")]


def test_seed_streams_are_declared_offsets_of_the_cell_seed():
    exp, cell = _Several(), Cell("m", 3, {})
    assert exp.seed_stream(cell, "init") == 3 and exp.seed_stream(cell, "mc") == 12348
    with pytest.raises(KeyError, match="no seed stream 'data'"):
        exp.seed_stream(cell, "data")


def test_save_artifact_writes_whole_files_atomically(tmp_path, monkeypatch):
    import numpy as np

    from fyexp.experiments import RunContext

    ctx = RunContext("e", "quick", "cpu", None, tmp_path / "w", tmp_path / "artifacts")
    path = ctx.save_artifact("cell", a=np.arange(3), b=np.ones((2, 2), np.float16))
    with np.load(path) as saved:
        assert saved["a"].tolist() == [0, 1, 2] and saved["b"].dtype == np.float16
    monkeypatch.setattr("os.replace", lambda *a: (_ for _ in ()).throw(OSError("disk full")))
    with pytest.raises(OSError):
        ctx.save_artifact("cell", a=np.zeros(5))
    with np.load(path) as saved:                  # the previous file is whole
        assert saved["a"].tolist() == [0, 1, 2]
    assert sorted(p.name for p in path.parent.iterdir()) == ["cell.npz"]
    monkeypatch.undo()
    assert ctx.save_text("t.json", "{}").read_text() == "{}"


def test_to_uint8_rounds_clamps_and_reshapes():
    import torch

    from fyexp.data.images import to_uint8

    out = to_uint8(torch.tensor([[-0.5, 0.0, 0.5, 0.999, 1.0, 2.0]]), (2, 3))
    assert out.dtype.name == "uint8" and out.shape == (1, 2, 3)
    assert out.ravel().tolist() == [0, 0, 128, 255, 255, 255]


def test_pinned_seeds_replace_the_run_s_seeds_and_are_never_a_parameter():
    """One pinned-seed expansion for both grid shapes: an include entry's or a per-method axis's ``seed`` replaces
    the run's seeds (seed 0 is a pin, not "no pin"); a null value is no parameter."""
    grid = {"a": [1, 2], "include": [{"a": 3, "seed": 7}, {"a": 4, "seed": 0}]}
    assert [c.key for c in cells_of(grid, (5, 6), lambda p: "m")] == [
        "m__a=1__seed=5", "m__a=1__seed=6", "m__a=2__seed=5", "m__a=2__seed=6", "m__a=3__seed=7", "m__a=4__seed=0"]
    assert grid["include"][0] == {"a": 3, "seed": 7}                            # the spec's mapping is left as it was
    nulls = {"include": [{"d": "x", "fold": [0, 1]}, {"d": "y", "fold": None}]}
    assert [c.params for c in cells_of(nulls, (0,), lambda p: "m")] == [{"d": "x", "fold": 0}, {"d": "x", "fold": 1},
                                                                        {"d": "y"}]


# ---- per-method axes ---------------------------------------------------------------------------------------------
DECLARED = {"plain": {}, "sparse": {"rho": PositiveFloat}, "top": {"n": PositiveInt},
            "study": {"setting": Annotated[str, OneOf(("1", "4a"))]}, "figure": {"seed": NonNegativeInt}}


def test_per_method_values_are_read_as_their_declared_type_and_null_methods_dropped():
    grid = check_method_grid({"plain": {}, "sparse": {"rho": [1, 1.5]}, "top": None, "study": {"setting": ["4a"]}},
                             DECLARED)
    assert check_method_grid({"plain": False, "top": {"n": [2]}}, DECLARED) == {"top": {"n": [2]}}
    assert grid == {"plain": {}, "sparse": {"rho": [1.0, 1.5]}, "study": {"setting": ["4a"]}}
    assert all(isinstance(r, float) for r in grid["sparse"]["rho"])
    # the declared domain's edge (constraints.py): a positive ρ just above 0 and n = 1 pass, 0 does not (below)
    assert check_method_grid({"sparse": {"rho": [1e-9]}, "top": {"n": [1]}}, DECLARED)["top"] == {"n": [1]}


def test_per_method_cells_follow_the_written_order_with_the_seed_innermost_or_by_seed():
    cells = cells_of({"plain": {}, "sparse": {"rho": [2.0, 1.0]}}, (0, 1))
    assert [c.key for c in cells] == ["plain__seed=0", "plain__seed=1", "sparse__rho=2__seed=0",
                                      "sparse__rho=2__seed=1", "sparse__rho=1__seed=0", "sparse__rho=1__seed=1"]
    pinned = cells_of({"figure": {"seed": [0]}, "plain": {}}, (3, 4))
    assert [c.key for c in pinned] == ["figure__seed=0", "plain__seed=3", "plain__seed=4"]
    by_seed = cells_of({"plain": {}, "sparse": {"rho": [2.0, 1.0]}}, (0, 1), by_seed=True)
    assert [c.key for c in by_seed] == ["plain__seed=0", "plain__seed=1", "sparse__rho=2__seed=0",
                                        "sparse__rho=1__seed=0", "sparse__rho=2__seed=1", "sparse__rho=1__seed=1"]
    # the same grid written as include entries gives the same cells: one mechanism
    as_include = {"include": [{"method": "plain"}, {"method": "sparse", "rho": [2.0, 1.0]}]}
    assert [c.key for c in cells_of(as_include, (0, 1))] == [c.key for c in cells]


@pytest.mark.parametrize("grid, key, expected", [
    ({}, "grid", "a grid of at least one cell"),
    ({"other": {}}, "grid", "methods among"), ({"sparse": {}}, "grid.sparse", "the axes ['rho']"),
    ({"plain": True}, "grid.plain", "the axes []"),
    ({"sparse": {"rho": 2}}, "grid.sparse.rho", "a non-empty list of distinct values"),
    ({"sparse": {"rho": []}}, "grid.sparse.rho", "a non-empty list of distinct values"),
    ({"sparse": {"rho": [1, 1.0]}}, "grid.sparse.rho", "a non-empty list of distinct values"),
    ({"sparse": {"rho": [0.0]}}, "grid.sparse.rho", "a list of positive numbers"),
    ({"sparse": {"rho": ["a"]}}, "grid.sparse.rho", "a list of positive numbers"),
    ({"top": {"n": [1.5]}}, "grid.top.n", "a list of integers"), ({"top": {"n": [True]}}, "grid.top.n", "integers"),
    ({"top": {"n": [0]}}, "grid.top.n", "a list of integers >= 1"),
    ({"figure": {"seed": [-1]}}, "grid.figure.seed", ">= 0"),
    ({"study": {"setting": ["2"]}}, "grid.study.setting", "a list of names among ['1', '4a']")])
def test_per_method_errors_name_the_method_and_axis_and_what_was_expected(grid, key, expected):
    with pytest.raises(ConfigValueError) as error:
        check_method_grid(grid, DECLARED)
    assert error.value.key == key and expected in error.value.expected, (error.value.key, error.value.expected)


def test_an_empty_axes_grid_is_refused_not_read_as_the_default_grid():
    """``grid: {}`` for an axes grid (a class of :func:`fyexp.experiments.grid.axes`) is the empty grid, refused with
    the key path as the empty per-method grid is; a grid that gives one axis keeps the others' defaults."""
    from fyexp.experiments import vr_renyi_gaussians_config as renyi

    with pytest.raises(SpecError, match=r"s\.yaml: key 'profiles\.x\.grid': expected a grid of at least one cell"):
        build_config(renyi.Config, {"grid": {}}, "s.yaml", "profiles.x")
    assert build_config(renyi.Config, {"grid": {"K": [3]}}, "s.yaml", "profiles.x").grid.K == [3]
    with pytest.raises(SpecError, match=r"profiles\.x\.grid\.K'?: expected integers >= 1, got \[0\]"):
        build_config(renyi.Config, {"grid": {"K": [0]}}, "s.yaml", "profiles.x")
    from fyexp.experiments import gmm_clustering_config as gmm

    with pytest.raises(SpecError, match=r"key 'profiles\.x\.grid': expected a grid of at least one cell"):
        build_config(gmm.Config, {"grid": {}}, "s.yaml", "profiles.x")


class _Recorded(_Toy):
    records = ("seconds",)

    def row_defaults(self, cell):
        return {"status": "ok", "setting": "default"}

    def measure(self, config, cell, ctx):
        return [metric("score", 1.0), metric("seconds", 2.0), metric("fid", float("nan"), status="missing")]


def test_records_are_stored_as_measured_after_the_rows_and_row_defaults_lie_under_every_row():
    exp = _Recorded()
    rows = exp.run_cell(_Config(), exp.cells(_Config(), (0,))[0], ctx=None)
    assert [r["metric"] for r in rows] == ["score", "score", "seconds", "fid"]       # two tables, then the records
    assert all(r["setting"] == "s1" and r["rho"] == 1.0 and r["status"] == "ok" for r in rows[:2])   # columns win
    assert rows[2] == {"status": "ok", "setting": "default", "metric": "seconds", "value": 2.0}
    assert rows[3]["status"] == "missing" and "paper" not in rows[3] and "rho" not in rows[3]


@pytest.mark.slow
def test_an_empty_axes_grid_from_set_is_refused_like_the_same_grid_in_a_spec_file(tmp_path):
    """Through the installed script: ``--set grid={}`` on vr-renyi-gaussians (an axes grid) and the same empty grid
    written in the spec file: one line each naming the key, exit 2, nothing run; the other side, one K, runs."""
    from tests.conftest import ROOT, run_cli, strip_ansi

    results = tmp_path / "results"
    base = ("run", "vr-renyi-gaussians", "--profile", "quick", "--no-progress", "--results-dir", str(results))

    def refused(done, text):
        lines = [line for line in strip_ansi(done.stderr).splitlines() if line.strip()]
        assert done.returncode == 2 and len(lines) == 1 and text in lines[0], (done.returncode, done.stderr)

    refused(run_cli(*base, "--set", "grid={}"),
            "error: --set: key 'grid': expected a grid of at least one cell, got {}")
    spec = (ROOT / "experiments" / "vr-renyi-gaussians.yaml").read_text(encoding="utf-8")
    folder = tmp_path / "specs"
    folder.mkdir()
    (folder / "vr-renyi-gaussians.yaml").write_text(spec.replace("    grid: {K: [1, 10]}\n", "    grid: {}\n")
                                                    .replace("  grid:\n    K: [1, 10, 100]", "  grid: {}\n  #"),
                                                    encoding="utf-8")
    refused(run_cli(*base, "--experiments-dir", str(folder)),
            "vr-renyi-gaussians.yaml: key 'profiles.quick.grid': expected a grid of at least one cell, got {}")
    assert not results.joinpath("vr-renyi-gaussians", "cells").exists()
    one = run_cli(*base, "--set", "grid.K=[3]", "--dry-run")
    assert one.returncode == 0 and re.match(r"plan: vr-renyi-gaussians \[quick\+K=3\]: 1 cells?", one.stdout), one


def test_include_entries_are_checked_against_the_axes_declarations_and_read_as_their_types():
    """An axes class (:func:`fyexp.experiments.grid.axes`) declares each axis's item type once; its ``include``
    entries obey the same declaration (a scalar or a list), ints read as floats on a float axis, errors naming
    ``include[i].<axis>``; the value at the domain's edge passes, the one just outside does not."""
    from fyexp.experiments import frac_vae_config as frac

    entry = {"method": "Lbeta", "dataset": "FashionMNIST", "latent": 1, "table": "9", "value": [5, 1e-9],
             "parameterization": "authors"}
    grid = build_config(frac.Config, {"grid": {"include": [entry]}}, "s.yaml", "profiles.x").grid
    assert grid.include[0]["value"] == [5.0, 1e-9] and all(type(v) is float for v in grid.include[0]["value"])
    assert grid.include[0]["latent"] == 1 and grid.include[0]["parameterization"] == "authors"     # scalars stay
    for key, bad, expected in (("latent", 0, "a list of integers >= 1, got 0"),
                               ("value", [5, 0.0], "a list of positive numbers, got [5, 0.0]"),
                               ("table", 9, "a list of names among ['2', '6', '7', '9'], got 9"),
                               ("method", "Lq", "a list of names among ['L', 'L-fixed-decoder'")):
        with pytest.raises(SpecError, match=rf"key 'profiles\.x\.grid\.include\[1\]\.{key}': expected "
                                            + re.escape(expected)):
            build_config(frac.Config, {"grid": {"include": [entry, {**entry, key: bad}]}}, "s.yaml", "profiles.x")
