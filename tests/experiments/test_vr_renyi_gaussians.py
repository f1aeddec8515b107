"""vr-renyi-gaussians on the grid framework: its K axis, cell keys, settings as committed, one-line config errors."""

from __future__ import annotations

import pytest

from fyexp.core.errors import ConfigValueError
from fyexp.experiments.vr_renyi_gaussians import Config, VRRenyiGaussians
from fyexp.experiments.vr_renyi_gaussians_config import Grid
from fyexp.store.results import Cell


def test_cells_are_k_by_seed_with_the_committed_keys():
    cells = VRRenyiGaussians().cells(Config(grid=Grid(K=[1, 10])), (0, 1))
    assert [c.key for c in cells] == ["mc__K=1__seed=0", "mc__K=1__seed=1", "mc__K=10__seed=0", "mc__K=10__seed=1"]


def test_settings_read_as_before_the_grid_and_rows_carry_k():
    experiment, config = VRRenyiGaussians(), Config(grid=Grid(K=[1, 10]), repetitions=5, alphas=[0.5])
    settings = experiment.cell_config(config, Cell("mc", 0, {"K": 10}))
    assert settings == {"mu_p": [0.0, 0.0], "mu_q": [1.0, 1.0], "alphas": [0.5], "n_samples": [1, 10],
                        "repetitions": 5}
    rows = experiment.run_cell(config, Cell("mc", 0, {"K": 10}), None)
    assert [r["metric"] for r in rows] == ["neg_renyi_mc_mean", "neg_renyi_mc_std", "neg_renyi_exact"]
    assert all(r["K"] == 10 and r["alpha"] == 0.5 and r["repetitions"] == 5 for r in rows)
    assert rows[2]["value"] == pytest.approx(-0.5)


@pytest.mark.parametrize("make", [lambda: Grid(K=[0]), lambda: Grid(K=[1, 1]), lambda: Config(repetitions=1)])
def test_config_rejects_bad_values(make):
    with pytest.raises(ConfigValueError):
        make()
