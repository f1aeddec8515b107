"""Issue 18, class 5: the 10,000-cell limit counts the cells a run would start, i.e. after ``--only``."""

from __future__ import annotations

import pytest

from fyexp.run.cell_filter import parse_only
from fyexp.store.results import Cell
from tests.conftest import run_cli

ONE_SEED = [Cell("em", 0, {"K": k, "data": d}) for k in (5, 50) for d in ("a", "b", "c")]


@pytest.mark.parametrize("only, expected", [
    ([], 6 * 100),
    (["K=5"], 3 * 100),
    (["seed=7"], 6),
    (["seed=1*"], 6 * 11),          # 1, 10-19
    (["seed=1*", "data=a,b"], 4 * 11),
    (["K=7"], 0),                   # nothing matches: select() names the choices later
    (["nokey=1"], 0),
])
def test_count_is_the_filtered_grid(only, expected):
    cells = [Cell(c.method, seed, c.params) for seed in range(100) for c in ONE_SEED]
    only_filter = parse_only(only)
    assert only_filter.count(ONE_SEED, range(100)) == expected
    assert len([c for c in cells if only_filter.matches(c)]) == expected  # same as filtering the whole grid


@pytest.mark.slow
@pytest.mark.parametrize("only, code, text", [
    (["--only", "seed=7"], 0, "1 cell run"),
    (["--only", "seed=1*"], 2, "the grid has 11,111 cells, more than the limit of 10,000"),   # 1, 10-19, ..., 10000-19999
    ([], 2, "the grid has 100,000 cells"),
])
def test_run_of_a_huge_seed_range_narrowed_by_only(toy_env, only, code, text):
    """The most seeds a run may have (100,000, issue 51's limit on --seeds), narrowed by --only below the cell limit
    or not."""
    result = run_cli("run", "toy", "--profile", "quick", "--seeds", "0-99999", "--no-progress", *only, env=toy_env)
    assert result.returncode == code, result.stderr
    assert text in result.stderr and "Traceback" not in result.stderr
