"""Declared grids: a spec's ``grid:`` block → cells; metrics → rows with identity and paper keys."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from fyexp.errors import SpecError
from fyexp.experiments import fy_vae, get_experiment
from fyexp.experiments.grid import GridExperiment, PaperKeys, expand, metric
from fyexp.results import Cell
from fyexp.specs import build_config, load_spec, resolve


def test_expand_is_the_product_in_declared_order_less_the_excluded():
    combos = expand({"a": [1, 2], "b": ["x", "y", "z"]}, exclude=[{"a": 2, "b": "y"}])
    assert combos == [{"a": 1, "b": "x"}, {"a": 1, "b": "y"}, {"a": 1, "b": "z"}, {"a": 2, "b": "x"},
                      {"a": 2, "b": "z"}]
    assert expand({}) == [{}] and expand(None) == [{}]
    assert expand({"include": [{"a": [1, 2]}]}) == [{"a": 1}, {"a": 2}]        # no empty cell beside them


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
    from fyexp.errors import ConfigValueError
    from fyexp.experiments.grid import check_axes

    with pytest.raises(ConfigValueError, match="exclude"):
        check_axes({"a": [1], "exclude": [{"b": 1}]})
    with pytest.raises(ConfigValueError, match="include"):
        check_axes({"a": [1], "b": [2], "include": [{"a": 3}]})      # must name every axis
    with pytest.raises(ConfigValueError, match="include"):
        check_axes({"a": [1], "include": [[1]]})
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


def test_pinned_seeds_replace_the_run_s_seeds_and_leave_the_parameters():
    """The one pinned-seed expansion of the grid modules (grid, method_grid, declared): a point's ``seed`` replaces
    the run's seeds and is never a parameter; the point's own mapping is left as it was."""
    from fyexp.experiments.grid import pinned_seeds

    point = {"a": 1, "seed": 7}
    assert pinned_seeds(point, (0, 1)) == ({"a": 1}, (7,)) and point == {"a": 1, "seed": 7}
    assert pinned_seeds({"a": 2}, [0, 1]) == ({"a": 2}, (0, 1))
    assert pinned_seeds({"seed": 0}, (3, 4)) == ({}, (0,))   # seed 0 is a pin, not "no pin"
