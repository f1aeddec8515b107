"""The settings of gmm-calibration (Chai & Bonilla §5.1, §C; defaults: the authors' protocol, docs/protocols.md): the
four mixture settings of Tables 1 and 4a–4c, Figure 2's setting, the hyperparameters of the study, and the keys the
rows carry (:func:`paper_keys`: which rows the paper prints, declared in :data:`PRINTED`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Literal

from fyexp.calibration.data import MixtureSetting
from fyexp.core.constraints import (
    Interval, NonNegativeFloat, NonNegativeInt, OneOf, PositiveFloat, PositiveInt, settings,
)
from fyexp.core.errors import require
from fyexp.experiments.grid import check_method_grid

if TYPE_CHECKING:
    from fyexp.calibration.study import FitOptions


@dataclass(frozen=True)
class PaperSetting:
    """A setting of the study and the keys its rows carry in ``paper_tables.csv``."""

    table: str
    label: str
    mixture: MixtureSetting


SETTINGS: dict[str, PaperSetting] = {
    "1": PaperSetting("1", "n=400 K=2 mu=±2", MixtureSetting(400, (-2.0, 2.0), (-1.0, 1.0))),
    "4a": PaperSetting("4a", "n=30 K=2 mu=±2", MixtureSetting(30, (-2.0, 2.0), (-1.0, 1.0))),
    "4b": PaperSetting("4b", "n=400 K=2 mu=±1/2", MixtureSetting(400, (-0.5, 0.5), (-1.0, 1.0))),
    "4c": PaperSetting("4c", "n=400 K=4 mu=(-2 -1/2 1/2 2)",
                       MixtureSetting(400, (-2.0, -0.5, 0.5, 2.0), (-1.0, -0.25, 0.25, 1.0))),
}
#: §C.2: K = 2, n = 20, means ∓1/2, initialized as in §C.1
FIGURE2_SETTING = MixtureSetting(20, (-0.5, 0.5), (-1.0, 1.0))

#: the grid's methods and their axes (:func:`fyexp.experiments.grid.check_method_grid`): the study (Tables 1,
#: 4a–4c) and the importance sampling (Table 5, §5.1) of a setting, and Figure 2's interpolation
_Setting = Annotated[str, OneOf(tuple(SETTINGS))]
AXES = {"calibration": {"setting": _Setting}, "importance": {"setting": _Setting}, "interpolation": {}}


def _default_grid() -> dict:
    return {"calibration": {"setting": list(SETTINGS)}, "importance": {"setting": list(SETTINGS)},
            "interpolation": {}}


def _default_gammas() -> list[float]:
    return [round(0.1 * i, 1) for i in range(1, 11)]


_Gamma = Annotated[float, Interval(float, 0, 1, "right")]      # a fractional posterior's γ, in (0, 1]
_AtLeast2 = Annotated[int, Interval(int, 2, None)]


@settings
class GmmCalibrationConfig:
    """Hyperparameters of the study; the defaults are the authors' protocol (docs/protocols.md, §5.1, §C)."""

    grid: dict[str, dict | bool | None] = field(default_factory=_default_grid)
    n_replicas: _AtLeast2 = 5000
    gammas: list[_Gamma] = field(default_factory=_default_gammas)      # the L_γ grid; must contain 1.0
    conflated_gammas: list[float] = field(default_factory=lambda: [0.1, 0.5, 0.9])
    alpha: Annotated[float, Interval(float, 0, 1, "neither")] = 0.05
    prior_var: PositiveFloat = 9.0
    tol: NonNegativeFloat = 1e-5
    min_iter: PositiveInt = 3
    max_iter: int = 10000
    extra_sweeps: NonNegativeInt = 0      # sweeps run after the stopping test passes
    stopping_bound: Literal["eq7", "authors"] = "eq7"
    is_samples: _AtLeast2 = 1000          # per replica, for the log-evidence averaged over replicas (§C.3)
    is_gammas: list[float] = field(default_factory=lambda: [1.0])   # posteriors used for that average
    table5_samples: _AtLeast2 = 100000    # on one replica per setting (Table 5)
    table5_replica: NonNegativeInt = 0

    def __post_init__(self):
        self.grid = check_method_grid(self.grid, AXES)
        require(1.0 in self.gammas and len(self.gammas) >= 2, "gammas", "at least two values in (0, 1], including 1.0",
                self.gammas)
        require(set(self.conflated_gammas) <= set(self.gammas), "conflated_gammas", "a subset of gammas",
                self.conflated_gammas)
        require(set(self.is_gammas) <= set(self.gammas), "is_gammas", "a subset of gammas", self.is_gammas)
        require(self.min_iter <= self.max_iter, "min_iter", "an integer in [1, max_iter]", self.min_iter)
        require(self.table5_replica < self.n_replicas, "table5_replica", "an index below n_replicas",
                self.table5_replica)

    @property
    def fit_options(self) -> FitOptions:
        from fyexp.calibration.study import FitOptions   # scipy: imported when a cell fits, not to read a spec

        return FitOptions(prior_var=self.prior_var, tol=self.tol, min_iter=self.min_iter, max_iter=self.max_iter,
                          extra_sweeps=self.extra_sweeps, convention=self.stopping_bound)


PAPER = "frac"
_L = tuple(f"L_{g / 10:.1f}" for g in range(1, 11))
_C = ("C_0.1", "C_0.5", "C_0.9")
#: (table, setting) → the rows the paper prints there; a row elsewhere has an empty ``paper_row`` (its ``label``
#: names it).  tests/experiments/test_calibration_experiment.py checks this against the reference tables.
PRINTED: dict[tuple[str, str], tuple[str, ...]] = {
    ("1", "1"): _L[0::2] + ("L_1.0",) + _C + ("R_l", "R_kappa"),
    **{(table, table): _L + _C + ("R_l", "R_l-2", "R_kappa") for table in ("4a", "4b", "4c")},
    **{("5", setting): _L for setting in SETTINGS},
    ("text", "1"): ("R_l", "R_l-2", "R_kappa", "ideal", "log-evidence IS (sec 5.1)", "log-evidence IS (sec C.3)"),
    ("text", "4b"): ("R_kappa",),
    ("text", "4c"): ("R_kappa",),
}


def paper_keys(table: str, setting: str, row: str) -> dict:
    """The keys of a row named ``row`` of setting ``setting``'s cell in ``table``: ``paper_row`` where printed."""
    printed = row in PRINTED.get((table, setting), ())
    return {"paper": PAPER, "table": table, "setting": SETTINGS[setting].label, "paper_row": row if printed else "",
            "label": row}


Config = GmmCalibrationConfig   # the name fyexp.experiments.get_config_class reads


def cell_config(config, cell) -> dict:
    """A cell's settings (:func:`fyexp.spec.settings.scoped_config`): the config as written before the grid was
    declared — ``settings`` (of the study, else of importance sampling), ``importance``, ``figure2`` — so that
    committed cells keep their settings hashes."""
    from fyexp.spec.settings import jsonable

    data = jsonable(config)
    grid = data.pop("grid")
    settings = grid.get("calibration", grid.get("importance", {})).get("setting", [])
    return {**data, "settings": settings, "importance": "importance" in grid, "figure2": "interpolation" in grid}


cell_work = None
"""Its cells declare no work (the experiment's :meth:`~fyexp.experiments.base.Experiment.work` is None), so the
plan never scales their times from another profile's cells (:class:`fyexp.run.estimate.LightWork`)."""
