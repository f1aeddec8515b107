"""Figures of the calibration study (gmm-calibration), drawn from the tidy result rows and the Figure 2 artifact,
and the notes that go with its tables."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from fyexp.report.figures import FigureContext, figure


@figure("frac-coverage-length")
def coverage_length_figure(ctx: FigureContext) -> list[Path]:
    """Per profile: κ and ℓ of every component against γ (:func:`coverage_and_length`)."""
    paths = []
    for profile in ctx.frame["profile"].dropna().unique():
        rows = ctx.frame[ctx.frame["profile"] == profile]
        paths += coverage_and_length(rows, ctx.figures_dir / f"coverage-length-{profile}.png")
    return paths


@figure("frac-figure2")
def figure2(ctx: FigureContext) -> list[Path]:
    """Per profile with its ``figure2.npz`` artifact: frac Figure 2 (:func:`interpolation`)."""
    paths = []
    for profile in ctx.frame["profile"].dropna().unique():
        artifact = ctx.artifacts / profile / "figure2.npz"
        if artifact.is_file():
            paths += interpolation(artifact, ctx.figures_dir / f"figure2-{profile}.png")
    return paths


@figure("frac-calibration-notes")
def notes(ctx: FigureContext) -> list[Path]:
    """Not a PNG: writes ``NOTES.md`` beside the tables (how agreement is judged, the columns), from the rows."""
    from fyexp.report.calibration_notes import write_notes

    write_notes(ctx.frame, ctx.folder / "NOTES.md")
    return []


def coverage_and_length(rows: pd.DataFrame, path: Path) -> list[Path]:
    """κ and ℓ of every component against γ for the ``L_γ`` rows of every setting, with the 1 − α line.

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
        for row, (prefix, ylabel) in enumerate((("kappa", "coverage κ"), ("l", "mean interval length ℓ"))):
            ax = axes[row, col]
            for component, curve in here[here["metric"].str.startswith(prefix + "_")].groupby("component"):
                curve = curve.sort_values("gamma")
                ax.plot(curve["gamma"], curve["value"], marker="o", ms=3, label=f"μ{component}")
            if prefix == "kappa":
                ax.axhline(0.95, color="k", ls="--", lw=1, label="1 − α")
                ax.set_title(setting, fontsize=9)
            ax.set_xlabel("γ")
            ax.set_ylabel(ylabel)
            ax.grid(alpha=0.3)
        axes[0, col].legend(fontsize=7)
    fig.suptitle("Fractional posteriors L_γ: coverage and interval length against γ (α = 0.05)")
    return [save_figure(fig, path)]


def interpolation(artifact: Path, path: Path) -> list[Path]:
    """Figure 2 (§C.2): (a) histogram over data sets of log10 mean-squared differences between the precisions
    of the learnt q_γ and of the interpolations p^{1−γ} r^γ; (b) both precisions against γ for one data set."""
    from fyexp.report.figures.output import plt, save_figure

    data = np.load(artifact)
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    left.hist(data["log10_msd"], bins=60, color="tab:blue", alpha=0.8)
    left.set_xlabel("log10 mean-squared difference of precisions")
    left.set_ylabel("data sets")
    left.set_title(f"(a) {len(data['log10_msd'])} data sets")
    gammas = np.concatenate([data["gammas"], [1.0]])
    learnt = np.concatenate([data["learnt"], [data["elbo_precision"]]])
    interpolated = np.concatenate([data["interpolated"], [data["elbo_precision"]]])
    right.plot(gammas, interpolated, marker="s", label="interpolated p^(1−γ) r^γ")
    right.plot(gammas, learnt, marker="o", label="learnt with L_γ")
    right.set_xlabel("γ")
    right.set_ylabel("precision of the first component")
    right.set_title(f"(b) data set #{int(data['replica'])} (largest difference)")
    right.legend()
    for ax in (left, right):
        ax.grid(alpha=0.3)
    return [save_figure(fig, path)]
