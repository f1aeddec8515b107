"""Declared grids: a spec's ``grid:`` block → cells; metrics → rows with identity and paper keys."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from fyexp.errors import SpecError
from fyexp.experiments import fy_vae, get_experiment
from fyexp.grid import GridExperiment, PaperKeys, expand, metric
from fyexp.results import Cell
from fyexp.specs import build_config, load_spec, resolve


def test_expand_is_the_product_in_declared_order_less_the_excluded():
    combos = expand({"a": [1, 2], "b": ["x", "y", "z"]}, exclude=[{"a": 2, "b": "y"}])
    assert combos == [{"a": 1, "b": "x"}, {"a": 1, "b": "y"}, {"a": 1, "b": "z"}, {"a": 2, "b": "x"},
                      {"a": 2, "b": "z"}]
    assert expand({}) == [{}] and expand(None) == [{}]


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
