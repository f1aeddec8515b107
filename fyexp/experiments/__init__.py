"""The registry of experiments: a spec's ``runner`` names a module here that registers one Experiment.

A spec is data, so its ``runner`` is looked up, never imported as it is written: it must be one of
:data:`fyexp.spec.specs.RUNNERS` (the modules of this package that register an experiment) or a module the user's
environment names in ``$FYEXP_RUNNERS`` (:func:`fyexp.spec.specs.check_runner`, which the spec loader calls too).
Anything else (``this.x``, a path, a module beside a downloaded ``experiments/`` folder) is refused before any
import, with one line naming the spec file, the key and the known runners.

A runner's ``Config`` may live in a sibling module ``<runner>_config`` that imports nothing heavy (no torch): then
reading a spec (:func:`get_config_class`, for ``fyexp show``) imports that module only, and running a cell imports
the runner (:func:`get_experiment`), whose ``Config`` is the same class.  The same module holds the runner's
``cell_config`` (the part of the config a cell's settings hash covers), so that the report and the claims judge
whether a row ran at the settings the spec now asks without importing a runner (:func:`get_settings_scope`).
"""

from __future__ import annotations

import importlib

from fyexp.core.errors import FyexpError
from fyexp.experiments.base import Experiment, RunContext
from fyexp.spec.specs import RUNNERS, check_runner, extra_runners, known_runners

_REGISTRY: dict[str, type[Experiment]] = {}


def register(cls: type[Experiment]) -> type[Experiment]:
    """Class decorator: make an Experiment available under its ``name``."""
    _REGISTRY[cls.name] = cls
    return cls


def _module_name(runner: str) -> str:
    """The module of a known runner (:func:`check_runner` first: no other name reaches an import)."""
    check_runner(runner)
    return runner if runner in extra_runners() and runner not in RUNNERS else f"fyexp.experiments.{runner}"


def _import_if_present(module_name: str):
    """The module ``module_name``, or None when there is no such module (an import error inside it propagates)."""
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name == module_name:
            return None
        raise


def get_experiment(runner: str) -> Experiment:
    """Import the module of the known runner ``runner`` (``fyexp.experiments.<runner>``, or a module of
    ``$FYEXP_RUNNERS``) and return its registered experiment."""
    module = _import_if_present(_module_name(runner))
    if module is None:
        raise FyexpError(f"spec names runner '{runner}', but fyexp has no module fyexp/experiments/{runner}.py")
    classes = [c for c in _REGISTRY.values() if c.__module__ == module.__name__]
    if len(classes) != 1:
        raise FyexpError(f"runner module '{runner}' must register exactly one experiment, found {len(classes)}")
    return classes[0]()


def get_config_module(runner: str):
    """The light sibling module ``<runner>_config`` of the known runner ``runner`` (no torch), or None for a runner
    without one.  Each of fyexp's defines ``Config``, ``cell_config`` and ``cell_work`` (None where its cells declare
    no work: tests/experiments/test_experiment_contract.py)."""
    return _import_if_present(_module_name(runner) + "_config")


def get_config_class(runner: str) -> type:
    """The ``Config`` of ``runner``: from its sibling module ``<runner>_config`` when there is one (light: no runner
    import), else from the runner's experiment.  Both are the same class (tests/project/test_architecture.py)."""
    config_module = get_config_module(runner)
    if config_module is not None:
        return config_module.Config
    return get_experiment(runner).Config


def get_settings_scope(runner: str):
    """What decides a cell's settings, without importing the runner: ``Config`` and ``cell_config(config, cell)``
    (:func:`fyexp.spec.settings.scoped_config` reads them), from the runner's light ``<runner>_config`` module where
    there is one (it defines both, and its experiment's ``cell_config`` is that function:
    tests/report/test_report_cache.py, tests/experiments/test_experiment_contract.py), else the runner's experiment
    (a runner without a config module)."""
    config_module = get_config_module(runner)
    return config_module if config_module is not None else get_experiment(runner)


__all__ = ["Experiment", "RunContext", "register", "get_experiment", "get_config_class", "get_config_module",
           "get_settings_scope",
           "RUNNERS", "known_runners", "check_runner"]
