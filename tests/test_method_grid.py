"""Grids whose methods have their own axes (fyexp.experiments.method_grid): validation, coercion, expansion."""

from __future__ import annotations

import pytest

from fyexp.errors import ConfigValueError
from fyexp.experiments.method_grid import check_method_grid, method_cells

DECLARED = {"plain": {}, "sparse": {"rho": float}, "top": {"n": int}, "study": {"setting": ("1", "4a")}}


def test_values_are_read_as_their_kind_and_null_methods_dropped():
    grid = check_method_grid({"plain": {}, "sparse": {"rho": [1, 1.5]}, "top": None, "study": {"setting": ["4a"]}},
                             DECLARED)
    assert check_method_grid({"plain": False, "top": {"n": [2]}}, DECLARED) == {"top": {"n": [2]}}
    assert grid == {"plain": {}, "sparse": {"rho": [1.0, 1.5]}, "study": {"setting": ["4a"]}}
    assert all(isinstance(r, float) for r in grid["sparse"]["rho"])


def test_cells_follow_the_written_order_with_the_seed_innermost():
    cells = method_cells({"plain": {}, "sparse": {"rho": [2.0, 1.0]}}, (0, 1))
    assert [c.key for c in cells] == ["plain__seed=0", "plain__seed=1", "sparse__rho=2__seed=0",
                                      "sparse__rho=2__seed=1", "sparse__rho=1__seed=0", "sparse__rho=1__seed=1"]
    pinned = method_cells({"figure": {"seed": [0]}, "plain": {}}, (3, 4))
    assert [c.key for c in pinned] == ["figure__seed=0", "plain__seed=3", "plain__seed=4"]
    by_seed = method_cells({"sparse": {"rho": [2.0, 1.0]}}, (0, 1), by_seed=True)
    assert [c.key for c in by_seed] == ["sparse__rho=2__seed=0", "sparse__rho=1__seed=0", "sparse__rho=2__seed=1",
                                        "sparse__rho=1__seed=1"]


@pytest.mark.parametrize("grid, key", [({"other": {}}, "grid"), ({"sparse": {}}, "grid.sparse"), ({"plain": True}, "grid.plain"),
                                       ({"sparse": {"rho": 2}}, "grid.sparse.rho"),
                                       ({"sparse": {"rho": [1, 1.0]}}, "grid.sparse.rho"),
                                       ({"top": {"n": [1.5]}}, "grid.top.n"), ({"top": {"n": [True]}}, "grid.top.n"),
                                       ({"study": {"setting": ["2"]}}, "grid.study.setting")])
def test_errors_name_the_method_and_axis(grid, key):
    with pytest.raises(ConfigValueError) as error:
        check_method_grid(grid, DECLARED)
    assert error.value.key == key
