"""A toy experiment with a bug (a division by zero in its cell): the CLI's report of an unexpected error."""

from __future__ import annotations

from fyexp.experiments import Experiment, register
from fyexp.results import Cell
from tests.toy_experiment import ToyConfig


@register
class BrokenToy(Experiment):
    name = "toy"
    Config = ToyConfig

    def cells(self, config, seeds):
        return [Cell("toy", seed, {"x": v}) for v in config.values for seed in seeds]

    def run_cell(self, config, cell, ctx):
        return [{"metric": "ratio", "value": cell.params["x"] / 0}]
