"""``fyexp run gmm-calibration``: calibration of fractional posteriors for Gaussian mixtures (Chai & Bonilla).

Reproduces frac Table 1 (§5.1), Tables 4a–4c (§C.1.2), the text's R_ℓ⁻² row and γ*'s (§C.1.1), Table 5 and the
log-evidence −827.2 (§5.1, §C.3), and Figure 2 (§C.2).  Cells: one per setting (the whole study of that
setting), one importance-sampling cell per setting, and one for Figure 2, so a rerun skips finished ones.
The pieces are in :mod:`fyexp.calibration`: data → CAVI fits → intervals → strategies → importance sampling.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import pandas as pd

from fyexp.calibration import importance, intervals, strategies
from fyexp.calibration.data import MixtureSetting, simulate
from fyexp.calibration.study import FitOptions, run_study
from fyexp.errors import CellFailed, require
from fyexp.experiments import Experiment, register
from fyexp.reference import paper_cells
from fyexp.results import Cell

PAPER = "frac"


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

SettingId = Literal["1", "4a", "4b", "4c"]


def _default_gammas() -> list[float]:
    return [round(0.1 * i, 1) for i in range(1, 11)]


@dataclass
class GmmCalibrationConfig:
    """Hyperparameters of the study; the defaults are the authors' protocol (anchors.md, §5.1, §C)."""

    settings: list[SettingId] = field(default_factory=lambda: ["1", "4a", "4b", "4c"])
    n_replicas: int = 5000
    gammas: list[float] = field(default_factory=_default_gammas)      # the L_γ grid; must contain 1.0
    conflated_gammas: list[float] = field(default_factory=lambda: [0.1, 0.5, 0.9])
    alpha: float = 0.05
    prior_var: float = 9.0
    tol: float = 1e-5
    min_iter: int = 3
    max_iter: int = 10000
    extra_sweeps: int = 0                 # sweeps run after the stopping test passes
    stopping_bound: Literal["eq7", "authors"] = "eq7"
    importance: bool = True               # Table 5 and the averaged log-evidence
    is_samples: int = 1000                # per replica, for the log-evidence averaged over replicas (§C.3)
    is_gammas: list[float] = field(default_factory=lambda: [1.0])   # posteriors used for that average
    table5_samples: int = 100000          # on one replica per setting (Table 5)
    table5_replica: int = 0
    figure2: bool = True

    def __post_init__(self):
        require(self.n_replicas >= 2, "n_replicas", "an integer >= 2", self.n_replicas)
        require(all(0 < g <= 1 for g in self.gammas) and 1.0 in self.gammas and len(self.gammas) >= 2,
                "gammas", "at least two values in (0, 1], including 1.0", self.gammas)
        require(set(self.conflated_gammas) <= set(self.gammas), "conflated_gammas", "a subset of gammas",
                self.conflated_gammas)
        require(set(self.is_gammas) <= set(self.gammas), "is_gammas", "a subset of gammas", self.is_gammas)
        require(0 < self.alpha < 1, "alpha", "a number in (0, 1)", self.alpha)
        require(self.prior_var > 0, "prior_var", "a positive number", self.prior_var)
        require(self.tol >= 0, "tol", "a number >= 0", self.tol)
        require(1 <= self.min_iter <= self.max_iter, "min_iter", "an integer in [1, max_iter]", self.min_iter)
        require(self.extra_sweeps >= 0, "extra_sweeps", "an integer >= 0", self.extra_sweeps)
        require(self.is_samples >= 2 and self.table5_samples >= 2, "is_samples", "at least 2 samples",
                (self.is_samples, self.table5_samples))
        require(0 <= self.table5_replica < self.n_replicas, "table5_replica", "an index below n_replicas",
                self.table5_replica)

    @property
    def fit_options(self) -> FitOptions:
        return FitOptions(prior_var=self.prior_var, tol=self.tol, min_iter=self.min_iter, max_iter=self.max_iter,
                          extra_sweeps=self.extra_sweeps, convention=self.stopping_bound)


class _Keys:
    """Paper keys of a row: ``paper_row`` only where the paper prints that (table, setting, row)."""

    def __init__(self):
        published = pd.concat([paper_cells(PAPER, t) for t in ("1", "4a", "4b", "4c", "5", "text")])
        self.rows = set(zip(published["table"], published["setting"], published["row"]))

    def __call__(self, table: str, setting: str, row: str) -> dict:
        printed = (table, setting, row) in self.rows
        return {"paper": PAPER, "table": table, "setting": setting, "paper_row": row if printed else "", "label": row}


def _fmt_gamma(gamma: float) -> str:
    return f"{gamma:.1f}"


@register
class GmmCalibration(Experiment):
    name = "gmm_calibration"
    Config = GmmCalibrationConfig

    def cells(self, config, seeds):
        cells = [Cell("calibration", seed, {"setting": s}) for seed in seeds for s in config.settings]
        if config.importance:
            cells += [Cell("importance", seed, {"setting": s}) for seed in seeds for s in config.settings]
        if config.figure2:
            cells += [Cell("interpolation", seed, {}) for seed in seeds]
        return cells

    def memory_estimate(self, config, cell) -> tuple[int, str]:
        """The largest arrays of a cell (:func:`fyexp.domains.check_cell_memory`): float64 data, responsibilities
        and their work copies, ≈ 4 (K + 1) values per point of each of the n_replicas data sets of n points."""
        mixture = SETTINGS[cell.params["setting"]].mixture if "setting" in cell.params else FIGURE2_SETTING
        n, k = mixture.n, len(mixture.means)
        return 8 * 4 * (k + 1) * config.n_replicas * n, f"n_replicas={config.n_replicas:,} × n={n} × K={k}"

    def run_cell(self, config, cell, ctx):
        if cell.method == "calibration":
            return self._calibration(config, SETTINGS[cell.params["setting"]], cell.seed, ctx)
        if cell.method == "importance":
            return self._importance(config, cell.params["setting"], cell.seed, ctx)
        return self._interpolation(config, cell.seed, ctx)

    # Tables 1, 4a-4c and the text's R_l-2 / γ* -------------------------------------------------------------
    def _calibration(self, config, setting: PaperSetting, seed: int, ctx) -> list[dict]:
        mix = setting.mixture
        x = simulate(mix, config.n_replicas, seed).x
        advance = ctx.subtask(f"CAVI fits, table {setting.table}", (len(config.gammas) + 3) * config.n_replicas)
        result = run_study(x, mix.means, mix.init_means, mix.init_var, config.gammas, config.conflated_gammas,
                           config.alpha, config.fit_options, progress=advance)
        if not all(np.isfinite(r.bound) for r in result.rows):
            raise CellFailed(f"non-finite bound in setting {setting.label}")
        keys, rows = _Keys(), []
        R = config.n_replicas
        for r in result.rows:
            table = "text" if setting.table == "1" and r.row == "R_l-2" else setting.table
            base = {**keys(table, setting.label, r.row), "gamma": r.gamma}
            for k, (kappa, ell) in enumerate(zip(r.coverage, r.length), start=1):
                se = float(intervals.coverage_standard_error(kappa, R))
                rows.append({**base, "metric": f"kappa_mu{k}", "value": kappa, "component": k,
                             "tolerance": max(2.0 * se, 1.0 / R)})
                rows.append({**base, "metric": f"l_mu{k}", "value": ell, "component": k})
            rows.append({**base, "metric": "bound", "value": r.bound})
            rows.append({**base, "metric": "bound_authors", "value": r.bound_authors})
            if r.row.startswith("R_"):
                rows.append({**base, "metric": "gamma", "value": r.gamma})
                if setting.table != "1" and r.row == "R_kappa":
                    rows.append({**keys("text", setting.label, r.row), "metric": "gamma", "value": r.gamma})
        if setting.table == "1":
            text = {r.row: r for r in result.rows}
            rows.append({**keys("text", setting.label, "ideal"), "metric": "l_star", "value": result.ideal_length})
            for name in ("R_l", "R_kappa"):
                rows.append({**keys("text", setting.label, name), "metric": "gamma_star_avg",
                             "value": text[name].gamma})
        rows += [{"metric": "sweeps_max", "value": result.sweeps_max, "label": setting.label},
                 {"metric": "sweeps_mean", "value": result.sweeps_mean, "label": setting.label},
                 {"metric": "fits_not_converged", "value": result.not_converged, "label": setting.label}]
        return rows

    # Table 5 and the log-evidence of §5.1 / §C.3 ---------------------------------------------------------------
    def _importance(self, config, setting_id: str, seed: int, ctx) -> list[dict]:
        setting = SETTINGS[setting_id]
        mix, options = setting.mixture, config.fit_options
        x = simulate(mix, config.n_replicas, seed).x
        rng = np.random.default_rng([seed, list(SETTINGS).index(setting_id)])
        keys, rows = _Keys(), []
        one = x[config.table5_replica:config.table5_replica + 1]
        advance = ctx.subtask(f"importance sampling, {setting.label}", len(config.gammas) + len(config.is_gammas))
        for gamma in config.gammas:
            fit = options.fit(one, gamma, mix.init_means, mix.init_var, keep_phi=True)
            eq7, authors = options.both_bounds(fit)
            log_w = importance.log_weights(one, fit.m, fit.s2, fit.phi, config.table5_samples, rng, config.prior_var)
            est = importance.summarize(log_w)
            se = float(est.cv[0]) / np.sqrt(config.table5_samples)
            base = {**keys("5", setting.label, f"L_{_fmt_gamma(gamma)}"), "gamma": gamma,
                    "replica": config.table5_replica, "samples": config.table5_samples}
            rows += [{**base, "metric": "l_gamma", "value": float(eq7[0])},
                     {**base, "metric": "l_gamma_authors", "value": float(authors[0])},
                     {**base, "metric": "l_evd_hat", "value": float(est.log_evidence[0]), "tolerance": max(2 * se, 0.1)},
                     {**base, "metric": "cv", "value": float(est.cv[0])}]
            advance()
        if setting_id == "1":
            for position, gamma in enumerate(config.is_gammas):
                fit = options.fit(x, gamma, mix.init_means, mix.init_var, keep_phi=True)
                log_w = importance.log_weights(x, fit.m, fit.s2, fit.phi, config.is_samples, rng, config.prior_var)
                value = float(importance.summarize(log_w).log_evidence.mean())
                extra = {"gamma": gamma, "samples": config.is_samples, "replicas": config.n_replicas}
                if position == 0:
                    for row in ("log-evidence IS (sec 5.1)", "log-evidence IS (sec C.3)"):
                        rows.append({**keys("text", setting.label, row), **extra, "metric": "log_evidence",
                                     "value": value})
                else:
                    rows.append({**keys("text", setting.label, f"log-evidence IS, q of L_{_fmt_gamma(gamma)}"),
                                 **extra, "metric": "log_evidence", "value": value})
                advance()
        return rows

    # Figure 2 ---------------------------------------------------------------------------------------------
    def _interpolation(self, config, seed: int, ctx) -> list[dict]:
        mix, options = FIGURE2_SETTING, config.fit_options
        x = simulate(mix, config.n_replicas, seed).x
        fractional = [g for g in config.gammas if g < 1.0]
        G, R = len(fractional), config.n_replicas
        grid = options.fit(np.broadcast_to(x, (G, R, mix.n)).reshape(G * R, mix.n), np.repeat(fractional, R),
                           mix.init_means, mix.init_var)
        elbo = options.fit(x, 1.0, mix.init_means, mix.init_var)
        learnt = 1.0 / intervals.sort_components(grid.m, grid.s2)[1][:, 0].reshape(G, R)     # first component
        bayes_var = intervals.sort_components(elbo.m, elbo.s2)[1][:, 0]
        interpolated = strategies.interpolated_precision(config.prior_var, bayes_var[None, :],
                                                         np.asarray(fractional)[:, None])
        log10_msd = np.log10(np.mean((learnt - interpolated) ** 2, axis=0))
        shown = int(np.argmax(log10_msd))          # panel (b): the data set where the two differ most
        ctx.artifact_dir.mkdir(parents=True, exist_ok=True)
        np.savez_compressed(ctx.artifact_dir / "figure2.npz", gammas=np.asarray(fractional), log10_msd=log10_msd,
                            replica=shown, learnt=learnt[:, shown], interpolated=interpolated[:, shown],
                            elbo_precision=1.0 / bayes_var[shown])
        label = "n=20 K=2 mu=±1/2 (Figure 2)"
        return [{"metric": f"log10_msd_{stat}", "value": float(fn(log10_msd)), "label": label}
                for stat, fn in (("median", np.median), ("mean", np.mean), ("min", np.min), ("max", np.max))]
