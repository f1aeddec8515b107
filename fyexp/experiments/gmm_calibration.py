"""``fyexp run gmm-calibration``: calibration of fractional posteriors for Gaussian mixtures (Chai & Bonilla).

Reproduces frac Table 1 (§5.1), Tables 4a–4c (§C.1.2), the text's R_ℓ⁻² row and γ*'s (§C.1.1), Table 5 and the
log-evidence −827.2 (§5.1, §C.3), and Figure 2 (§C.2).  Cells: one per setting (the whole study of that
setting), one importance-sampling cell per setting, and one for Figure 2, so a rerun skips finished ones.
The pieces are in :mod:`fyexp.calibration`: data → CAVI fits → intervals → strategies → importance sampling.
"""

from __future__ import annotations

import numpy as np

from fyexp.calibration import importance, intervals, strategies
from fyexp.calibration.data import simulate
from fyexp.calibration.study import run_study
from fyexp.core.errors import CellFailed
from fyexp.experiments import register
from fyexp.experiments.gmm_calibration_config import (FIGURE2_SETTING, SETTINGS, GmmCalibrationConfig,
                                                      cell_config, paper_keys)
from fyexp.experiments.grid import GridExperiment, Metric, metric


def _fmt_gamma(gamma: float) -> str:
    return f"{gamma:.1f}"


@register
class GmmCalibration(GridExperiment):
    name = "gmm_calibration"
    Config = GmmCalibrationConfig
    by_seed = True   # the spec's grid, each method seed by seed

    cell_config = staticmethod(cell_config)   # the settings scope, in the light config module

    def memory_estimate(self, config, cell) -> tuple[int, str]:
        """The largest arrays of a cell (:func:`fyexp.core.constraints.check_cell_memory`): float64 data,
        responsibilities and their work copies, ≈ 4 (K + 1) values per point of each of the n_replicas data sets of n
        points."""
        mixture = SETTINGS[cell.params["setting"]].mixture if "setting" in cell.params else FIGURE2_SETTING
        n, k = mixture.n, len(mixture.means)
        return 8 * 4 * (k + 1) * config.n_replicas * n, f"n_replicas={config.n_replicas:,} × n={n} × K={k}"

    def measure(self, config, cell, ctx) -> list[Metric]:
        """The cell's method: ``calibration``, ``importance`` (of a setting) or ``interpolation`` (Figure 2)."""
        method = {"calibration": self._calibration, "importance": self._importance,
                  "interpolation": self._interpolation}[cell.method]
        return method(config, cell.params.get("setting"), cell.seed, ctx)

    # Tables 1, 4a-4c and the text's R_l-2 / γ* -------------------------------------------------------------
    def _calibration(self, config, setting_id: str, seed: int, ctx) -> list[Metric]:
        setting = SETTINGS[setting_id]
        mix = setting.mixture
        x = simulate(mix, config.n_replicas, seed).x
        advance = ctx.subtask(f"CAVI fits, table {setting.table}", (len(config.gammas) + 3) * config.n_replicas,
                              "fits")
        result = run_study(x, mix.means, mix.init_means, mix.init_var, config.gammas, config.conflated_gammas,
                           config.alpha, config.fit_options, progress=advance)
        if not all(np.isfinite(r.bound) for r in result.rows):
            raise CellFailed(f"non-finite bound in setting {setting.label}")
        out, R = [], config.n_replicas
        for r in result.rows:
            table = "text" if setting.table == "1" and r.row == "R_l-2" else setting.table
            base = {**paper_keys(table, setting_id, r.row), "gamma": r.gamma}
            for k, (kappa, ell) in enumerate(zip(r.coverage, r.length), start=1):
                se = float(intervals.coverage_standard_error(kappa, R))
                out += [metric(f"kappa_mu{k}", kappa, max(2.0 * se, 1.0 / R), **base, component=k),
                        metric(f"l_mu{k}", ell, **base, component=k)]
            out += [metric("bound", r.bound, **base), metric("bound_authors", r.bound_authors, **base)]
            if r.row.startswith("R_"):
                out.append(metric("gamma", r.gamma, **base))
                if setting.table != "1" and r.row == "R_kappa":
                    out.append(metric("gamma", r.gamma, **paper_keys("text", setting_id, r.row)))
        if setting.table == "1":
            text = {r.row: r for r in result.rows}
            out.append(metric("l_star", result.ideal_length, **paper_keys("text", setting_id, "ideal")))
            out += [metric("gamma_star_avg", text[name].gamma, **paper_keys("text", setting_id, name))
                    for name in ("R_l", "R_kappa")]
        return out + [metric(name, value, label=setting.label) for name, value in (
            ("sweeps_max", result.sweeps_max), ("sweeps_mean", result.sweeps_mean),
            ("fits_not_converged", result.not_converged))]

    # Table 5 and the log-evidence of §5.1 / §C.3 ---------------------------------------------------------------
    def _importance(self, config, setting_id: str, seed: int, ctx) -> list[Metric]:
        setting = SETTINGS[setting_id]
        mix, options = setting.mixture, config.fit_options
        x = simulate(mix, config.n_replicas, seed).x
        rng = np.random.default_rng([seed, list(SETTINGS).index(setting_id)])
        out = []
        one = x[config.table5_replica:config.table5_replica + 1]
        advance = ctx.subtask(f"importance sampling, {setting.label}", len(config.gammas) + len(config.is_gammas),
                              "fits")
        for gamma in config.gammas:
            fit = options.fit(one, gamma, mix.init_means, mix.init_var, keep_phi=True)
            eq7, authors = options.both_bounds(fit)
            log_w = importance.log_weights(one, fit.m, fit.s2, fit.phi, config.table5_samples, rng, config.prior_var)
            est = importance.summarize(log_w)
            se = float(est.cv[0]) / np.sqrt(config.table5_samples)
            base = {**paper_keys("5", setting_id, f"L_{_fmt_gamma(gamma)}"), "gamma": gamma,
                    "replica": config.table5_replica, "samples": config.table5_samples}
            out += [metric("l_gamma", eq7[0], **base), metric("l_gamma_authors", authors[0], **base),
                    metric("l_evd_hat", est.log_evidence[0], max(2 * se, 0.1), **base),
                    metric("cv", est.cv[0], **base)]
            advance()
        if setting_id == "1":
            for position, gamma in enumerate(config.is_gammas):
                fit = options.fit(x, gamma, mix.init_means, mix.init_var, keep_phi=True)
                log_w = importance.log_weights(x, fit.m, fit.s2, fit.phi, config.is_samples, rng, config.prior_var)
                value = float(importance.summarize(log_w).log_evidence.mean())
                extra = {"gamma": gamma, "samples": config.is_samples, "replicas": config.n_replicas}
                names = (("log-evidence IS (sec 5.1)", "log-evidence IS (sec C.3)") if position == 0 else
                         (f"log-evidence IS, q of L_{_fmt_gamma(gamma)}",))
                out += [metric("log_evidence", value, **paper_keys("text", setting_id, row), **extra) for row in names]
                advance()
        return out

    # Figure 2 ---------------------------------------------------------------------------------------------
    def _interpolation(self, config, _, seed: int, ctx) -> list[Metric]:
        """§C.2: the first component's precision under q_γ (every fractional γ) and the ELBO's variance, per data
        set, saved for the report's Figure 2 (:func:`fyexp.report.figures.calibration.figure2_series`); rows: the
        spread over data sets of log10 of their mean-squared gap to the interpolations
        (:func:`fyexp.calibration.strategies.interpolation_gap`)."""
        mix, options = FIGURE2_SETTING, config.fit_options
        x = simulate(mix, config.n_replicas, seed).x
        fractional = np.asarray([g for g in config.gammas if g < 1.0])
        G, R = len(fractional), config.n_replicas
        grid = options.fit(np.broadcast_to(x, (G, R, mix.n)).reshape(G * R, mix.n), np.repeat(fractional, R),
                           mix.init_means, mix.init_var)
        elbo = options.fit(x, 1.0, mix.init_means, mix.init_var)
        learnt = 1.0 / intervals.sort_components(grid.m, grid.s2)[1][:, 0].reshape(G, R)     # first component
        bayes_var = intervals.sort_components(elbo.m, elbo.s2)[1][:, 0]
        ctx.save_artifact("interpolation", gammas=fractional, learnt_precision=learnt, elbo_variance=bayes_var,
                          prior_var=config.prior_var)
        log10_msd = strategies.interpolation_gap(config.prior_var, bayes_var, fractional, learnt)[1]
        label = "n=20 K=2 mu=±1/2 (Figure 2)"
        return [metric(f"log10_msd_{stat}", fn(log10_msd), label=label)
                for stat, fn in (("median", np.median), ("mean", np.mean), ("min", np.min), ("max", np.max))]
