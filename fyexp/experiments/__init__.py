"""The registry of experiments: a spec's ``runner`` names a module here that registers one Experiment."""

from __future__ import annotations

import importlib

from fyexp.errors import FyexpError
from fyexp.experiments.base import Experiment, RunContext

_REGISTRY: dict[str, type[Experiment]] = {}


def register(cls: type[Experiment]) -> type[Experiment]:
    """Class decorator: make an Experiment available under its ``name``."""
    _REGISTRY[cls.name] = cls
    return cls


def get_experiment(runner: str) -> Experiment:
    """Import ``fyexp.experiments.<runner>`` (or a dotted module path) and return its registered experiment."""
    module_name = runner if "." in runner else f"fyexp.experiments.{runner}"
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name == module_name:
            raise FyexpError(f"spec names runner '{runner}', but fyexp has no module fyexp/experiments/{runner}.py") from None
        raise
    classes = [c for c in _REGISTRY.values() if c.__module__ == module.__name__]
    if len(classes) != 1:
        raise FyexpError(f"runner module '{runner}' must register exactly one experiment, found {len(classes)}")
    return classes[0]()


__all__ = ["Experiment", "RunContext", "register", "get_experiment"]
