"""Figures of the calibration study (gmm-calibration), drawn from the tidy result rows and the interpolation cell's
artifact (Figure 2's series computed here), and the notes that go with its tables."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from fyexp.store.damaged import read_npz
from fyexp.report.figures import FigureContext, figure
from fyexp.report.figures.labels import profile_tag


@figure("frac-coverage-length")
def coverage_length_figure(ctx: FigureContext) -> list[Path]:
    """Per profile: κ and ℓ of every component against γ (:func:`coverage_and_length`)."""
    paths = []
    for profile in ctx.frame["profile"].dropna().unique():
        rows = ctx.frame[ctx.frame["profile"] == profile]
        paths += coverage_and_length(rows, ctx.figures_dir / f"coverage-length-{profile}.png", profile)
    return paths


@figure("frac-figure2")
def figure2(ctx: FigureContext) -> list[Path]:
    """Per profile with the interpolation cell's artifact: frac Figure 2 (:func:`figure2_series`,
    :func:`interpolation`)."""
    paths = []
    for profile in ctx.frame["profile"].dropna().unique():
        series = figure2_series(ctx.artifacts / profile)
        if series is not None:
            paths += interpolation(series, ctx.figures_dir / f"figure2-{profile}.png", profile)
    return paths


def figure2_series(folder: Path) -> dict | None:
    """Figure 2's series from the interpolation cell's ``interpolation.npz`` (γ's, learnt precisions (G, R), the
    ELBO's variances (R,), the prior variance): per data set, log10 of the mean-squared gap between learnt and
    interpolated precisions (:func:`fyexp.calibration.strategies.interpolation_gap`), and for panel (b) the data
    set where it is largest (``replica``) with both precision curves and the ELBO's precision.  A folder written
    before ``interpolation.npz`` holds these series as ``figure2.npz``; ``None`` when there is neither."""
    if os.path.lexists(folder / "interpolation.npz"):   # a dangling link or a FIFO too: one warning
        from fyexp.calibration.strategies import interpolation_gap

        saved = read_npz(folder / "interpolation.npz", ("gammas", "learnt_precision", "elbo_variance", "prior_var"))
        if saved is None:
            return None
        gammas, learnt, bayes_var = saved["gammas"], saved["learnt_precision"], saved["elbo_variance"]
        interpolated, log10_msd = interpolation_gap(float(saved["prior_var"]), bayes_var, gammas, learnt)
        shown = int(np.argmax(log10_msd))
        return {"gammas": gammas, "log10_msd": log10_msd, "replica": shown, "learnt": learnt[:, shown],
                "interpolated": interpolated[:, shown], "elbo_precision": 1.0 / bayes_var[shown]}
    if os.path.lexists(folder / "figure2.npz"):
        return read_npz(folder / "figure2.npz")
    return None


@figure("frac-calibration-notes")
def notes(ctx: FigureContext) -> list[Path]:
    """Not a PNG: writes ``NOTES.md`` beside the tables (how agreement is judged, the columns), from the rows."""
    from fyexp.report.calibration_notes import write_notes

    write_notes(ctx.frame, ctx.folder / "NOTES.md")
    return []


def paper_coverage(setting: str) -> pd.DataFrame:
    """frac Tables 4a–c's κ and ℓ of the setting ``setting`` (columns ``gamma``, ``metric``, ``component``,
    ``value``, ``table``), read with :func:`fyexp.reference.load_paper_tables`; empty for a setting they lack."""
    from fyexp.reference import load_paper_tables

    table = load_paper_tables()
    rows = table[(table["paper"] == "frac") & table["table"].astype(str).str.match(r"^4[abc]$")
                 & (table["setting"] == setting) & table["row"].astype(str).str.match(r"^L_\d")
                 & table["column"].astype(str).str.match(r"^(kappa|l)_mu\d+$")]
    return pd.DataFrame({"gamma": pd.to_numeric(rows["row"].str[2:], errors="coerce"),
                         "metric": rows["column"], "component": rows["column"].str.extract(r"(\d+)$")[0].astype(int),
                         "value": rows["value_num"], "table": rows["table"]}).dropna(subset=["gamma"])


def coverage_and_length(rows: pd.DataFrame, path: Path, profile: str = "") -> list[Path]:
    """κ and ℓ of every component against γ for the ``L_γ`` rows of every setting, with the 1 − α line and, where
    frac Tables 4a–c print the setting, the paper's values (:func:`paper_coverage`) as open squares.

    ``rows`` are the tidy rows of one profile; only ``label`` ``L_γ`` rows with ``kappa_mu*``/``l_mu*``
    metrics are used.
    """
    from fyexp.report.figures.output import plt, save_figure

    fractional = rows[rows["label"].astype(str).str.match(r"^L_\d") & rows["metric"].astype(str).str.match(r"^(kappa|l)_mu")]
    if fractional.empty:
        return []
    fractional = fractional.assign(gamma=pd.to_numeric(fractional["gamma"]),
                                   value=pd.to_numeric(fractional["value"]),
                                   component=pd.to_numeric(fractional["component"]).astype(int))
    settings = list(dict.fromkeys(fractional["setting"]))
    fig, axes = plt.subplots(2, len(settings), figsize=(3.6 * len(settings), 6.0), squeeze=False)
    for col, setting in enumerate(settings):
        here = fractional[fractional["setting"] == setting]
        paper = paper_coverage(setting)
        for row, (prefix, ylabel) in enumerate((("kappa", "coverage κ"), ("l", "mean interval length ℓ"))):
            ax = axes[row, col]
            for component, curve in here[here["metric"].str.startswith(prefix + "_")].groupby("component"):
                curve = curve.sort_values("gamma")
                line, = ax.plot(curve["gamma"], curve["value"], marker="o", ms=3, label=f"μ{component}")
                printed = paper[(paper["component"] == component) & paper["metric"].str.startswith(prefix + "_")]
                if not printed.empty:
                    printed = printed.sort_values("gamma")
                    ax.plot(printed["gamma"], printed["value"], ls="none", marker="s", ms=5, mfc="none",
                            color=line.get_color(), label=f"μ{component}, paper (Table {printed['table'].iloc[0]})")
            if prefix == "kappa":
                ax.axhline(0.95, color="k", ls="--", lw=1, label="1 − α")
                title = setting.replace("mu=", "μ = ")   # the setting's label, in the paper's notation
                ax.set_title(title + ("" if not paper.empty else "\n(not in the paper's Tables 4a–c)"), fontsize=9)
            ax.set_xlabel("γ")
            ax.set_ylabel(ylabel)
            ax.grid(alpha=0.3)
        axes[0, col].legend(fontsize=7, loc="lower left")   # the curves fall from the top left: that corner is free
    fig.suptitle(f"frac Tables 4a–c {profile_tag(profile)}: fractional posteriors $L_\\gamma$, coverage and interval "
                 f"length against γ (α = 0.05); squares: the paper's")
    return [save_figure(fig, path)]


def interpolation(data: dict, path: Path, profile: str = "") -> list[Path]:
    """Figure 2 (§C.2, the series of :func:`figure2_series`): (a) histogram over data sets of log10 mean-squared
    differences between the precisions of the learnt q_γ and of the interpolations p^{1−γ} r^γ; (b) both
    precisions against γ for one data set."""
    from fyexp.report.figures.output import plt, save_figure

    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    left.hist(data["log10_msd"], bins=60, color="tab:blue", alpha=0.8)
    left.set_xlabel("log10 mean-squared difference of precisions")
    left.set_ylabel("data sets")
    left.set_title(f"(a) {len(data['log10_msd'])} data sets")
    gammas = np.concatenate([data["gammas"], [1.0]])
    learnt = np.concatenate([data["learnt"], [data["elbo_precision"]]])
    interpolated = np.concatenate([data["interpolated"], [data["elbo_precision"]]])
    right.plot(gammas, interpolated, marker="s", label=r"interpolated $p^{1-\gamma}\, r^{\gamma}$")
    right.plot(gammas, learnt, marker="o", label=r"learnt with $L_\gamma$")
    right.set_xlabel("γ")
    right.set_ylabel("precision of the first component")
    right.set_title(f"(b) data set #{int(data['replica'])} (largest difference)")
    right.legend()
    for ax in (left, right):
        ax.grid(alpha=0.3)
    fig.suptitle(f"frac Figure 2 {profile_tag(profile)}: learnt precisions against the interpolations", fontsize=10)
    return [save_figure(fig, path)]
