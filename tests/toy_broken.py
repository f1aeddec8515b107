"""A toy experiment with a bug (a division by zero in its cell): the CLI's report of an unexpected error."""

from __future__ import annotations

from fyexp.experiments import register
from tests.toy_experiment import Toy


@register
class BrokenToy(Toy):
    """The toy's grid, with a cell that raises ZeroDivisionError."""

    def run_cell(self, config, cell, ctx):
        return [{"metric": "ratio", "value": cell.params["x"] / 0}]
