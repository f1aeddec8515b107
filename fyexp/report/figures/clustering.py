"""FYVI Figures 1 and 2 (gmm-clustering): fitted mixtures, and sparse EM's metrics against ρ."""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np
import pandas as pd

from fyexp.store.damaged import read_artifact_json, read_npz
from fyexp.report.figures import FigureContext, figure
from fyexp.core.words import counted
from fyexp.report.figures.labels import profile_tag

FIGURE1_PANELS = (("standard", None, "Standard EM"), ("sparse", 2.0, "Sparse EM (ρ=2)"), ("hard", None, "Hard EM"))
FIGURE2_METRICS = (("adjusted_mi", "adjusted MI"), ("adjusted_ri", "adjusted RI"),
                   ("silhouette_score", "silhouette score"), ("estep_zeros", "zero responsibilities / sample"))


@figure("fyvi-figure1")
def figure1(ctx: FigureContext) -> list[Path]:
    """Per profile with a ``dataset.npz`` (or, written before it, ``dataset.json``) artifact: FYVI Figure 1, points
    by true label (outliers ×), true 2σ ellipses coloured, the fitted ellipses of standard, sparse (ρ = 2) and hard
    EM in black (lowest seed)."""
    paths = []
    for profile, rows in ctx.frame.groupby("profile", sort=False):
        artifacts = ctx.artifacts / str(profile)
        if os.path.lexists(artifacts / "dataset.json"):   # beside dataset.npz, or alone (written before it)
            drawn = _draw_figure1(rows, artifacts, ctx.figures_dir / f"fyvi-figure1-{profile}.png", profile)
            paths += [drawn] if drawn is not None else []
    return paths


@figure("fyvi-figure2")
def figure2(ctx: FigureContext) -> list[Path]:
    """Per profile: FYVI Figure 2, clustering metrics and E-step sparsity of sparse EM against ρ (mean ± std
    over seeds)."""
    paths = []
    for profile, rows in ctx.frame.groupby("profile", sort=False):
        paths += _draw_figure2(rows, ctx.figures_dir / f"fyvi-figure2-{profile}.png", profile)
    return paths


def _ellipse(ax, mean, covariance, n_std: float = 2.0, **style) -> None:
    """The level curve of N(mean, covariance) at Mahalanobis radius ``n_std``."""
    from matplotlib.patches import Ellipse

    values, vectors = np.linalg.eigh(np.asarray(covariance))
    angle = math.degrees(math.atan2(vectors[1, -1], vectors[0, -1]))
    width, height = 2 * n_std * np.sqrt(values[::-1])
    ax.add_patch(Ellipse(mean, width, height, angle=angle, fill=False, **style))


def _select(rows: pd.DataFrame, method: str, rho: float | None) -> pd.DataFrame:
    chosen = rows[rows["method"] == method]
    if rho is not None:
        chosen = chosen[pd.to_numeric(chosen["rho"], errors="coerce") == rho]
    return chosen


def _dataset(artifacts: Path) -> dict | None:
    """The points, true labels, inlier mask, centres, true covariances and outlier box the runner saved
    (``dataset.npz`` with ``dataset.json``); results written before ``dataset.npz`` existed are redrawn from the
    generating spec in ``dataset.json`` (:mod:`fyexp.data.gmm_blobs`).  ``None`` (one warning) where
    ``dataset.json`` is damaged."""
    meta = read_artifact_json(artifacts / "dataset.json", ("centers", "spread", "outlier_box"))
    if meta is None:
        return None
    arrays = read_npz(artifacts / "dataset.npz", ("X", "labels", "inliers", "true_covariances"),
                      consequence="the data are drawn again from dataset.json")
    if arrays is None:   # absent (results written before it), or damaged (one warning): redrawn from the spec
        from fyexp.data.gmm_blobs import BlobsSpec, make_gmm_blobs

        spec = BlobsSpec.from_lists(meta["centers"], meta["spread"],
                                    **{k: v for k, v in meta.items() if k not in ("centers", "spread")})
        data = make_gmm_blobs(spec)
        arrays = {"X": data.X, "labels": data.labels, "inliers": data.inliers,
                  "true_covariances": spec.true_covariances}
    return {**arrays, "centers": np.asarray(meta["centers"], dtype=float), "outlier_box": meta["outlier_box"]}


def _draw_figure1(rows: pd.DataFrame, artifacts: Path, path: Path, profile: str = "") -> Path | None:
    from fyexp.report.figures.output import plt, save_figure

    data = _dataset(artifacts)
    if data is None:
        return None
    colours = plt.get_cmap("tab10").colors
    fig, axes = plt.subplots(1, len(FIGURE1_PANELS), figsize=(4.2 * len(FIGURE1_PANELS), 4.2), sharex=True,
                             sharey=True)
    for ax, (method, rho, title) in zip(axes, FIGURE1_PANELS):
        chosen = _select(rows, method, rho)
        for k, (centre, cov) in enumerate(zip(data["centers"], data["true_covariances"])):
            members = data["labels"] == k
            ax.scatter(*data["X"][members].T, s=6, color=colours[k], alpha=0.5, linewidths=0)
            _ellipse(ax, centre, cov, color=colours[k], lw=2)
        ax.scatter(*data["X"][~data["inliers"]].T, s=14, marker="x", color="0.3", linewidths=0.8)
        if not chosen.empty:
            seed = int(chosen["seed"].min())
            fit_file = artifacts / "fits" / f"{chosen[chosen['seed'] == seed]['cell'].iloc[0]}.json"
            fitted = read_artifact_json(fit_file, ("means", "covariances", "weights"),
                                        consequence="its panel shows no fitted curves")
            if fitted is not None:
                for mean, cov, weight in zip(fitted["means"], fitted["covariances"], fitted["weights"]):
                    if weight > 0:
                        _ellipse(ax, mean, cov, color="black", lw=1.2)
                title += f" (seed {seed})"
        ax.set_title(title)
        ax.set_aspect("equal")
    box = data["outlier_box"]
    axes[0].set_xlim(-box, box)
    axes[0].set_ylim(-box, box)
    fig.suptitle(f"FYVI Figure 1 {profile_tag(profile)}: 2σ level curves, fitted (black), true (coloured); × outliers")
    return save_figure(fig, path)


# Table 1 prints two points of Figure 2's curves: standard EM is ρ = 1 (softmax), sparse EM ρ = 2
TABLE1_RHO = {"Standard EM": 1.0, "Sparse EM": 2.0}


def paper_points(metric: str) -> list[tuple[float, float, float]]:
    """``(ρ, mean, std)`` that FYVI prints for ``metric`` on Figure 2's curves (its Table 1 rows at ρ = 1, 2)."""
    from fyexp.reference import load_paper_tables

    table = load_paper_tables()
    rows = table[(table["paper"] == "fyvi") & (table["table"] == "1") & (table["column"] == metric)
                 & table["row"].isin(list(TABLE1_RHO))]
    return sorted((TABLE1_RHO[r.row], float(r.value_num), float(r.spread_std)) for r in rows.itertuples())


def missing_note(metric_rhos: list[float], all_rhos: list[float], ami: dict[float, float]) -> str:
    """Why a panel starts (or has gaps) at other ρ than the grid: the ρ without a value, and, where adjusted MI
    is 0 there, that the E-step put every point in one component (a silhouette is then undefined)."""
    gaps = [r for r in all_rhos if r not in metric_rhos]
    if not gaps:
        return ""
    where = ", ".join(f"{r:g}" for r in gaps)
    if all(ami.get(r) == 0 for r in gaps):
        return f"none at ρ = {where}: every point\nin one component (undefined)"
    return f"no value at ρ = {where}"


def _draw_figure2(rows: pd.DataFrame, path: Path, profile: str = "") -> list[Path]:
    """Sparse EM's metrics against ρ (mean ± std over seeds), the paper's printed points overlaid (Table 1 at
    ρ = 1 and 2, mean ± std), and under a panel without a value at some ρ, why."""
    from fyexp.report.figures.output import plt, save_figure

    sparse = rows[rows["method"] == "sparse"].copy()
    if sparse.empty:
        return []
    sparse["rho"] = pd.to_numeric(sparse["rho"], errors="coerce")
    sparse["value"] = pd.to_numeric(sparse["value"], errors="coerce")
    all_rhos = sorted(sparse["rho"].dropna().unique())
    stats = (sparse.dropna(subset=["value"]).groupby(["metric", "rho"])["value"]
             .agg(mean="mean", std=lambda v: float(np.std(v, ddof=0))))
    ami = stats.loc["adjusted_mi", "mean"].to_dict() if "adjusted_mi" in stats.index.get_level_values(0) else {}
    fig, axes = plt.subplots(1, len(FIGURE2_METRICS), figsize=(3.6 * len(FIGURE2_METRICS), 3.5))
    for ax, (metric, title) in zip(axes, FIGURE2_METRICS):
        if metric not in stats.index.get_level_values(0):
            continue
        curve = stats.loc[metric].sort_index()
        rho, mean, std = curve.index.to_numpy(), curve["mean"].to_numpy(), curve["std"].to_numpy()
        ax.plot(rho, mean, marker="o", label="fyexp")
        ax.fill_between(rho, mean - std, mean + std, alpha=0.25)
        points = paper_points(metric)
        if points:
            prho, pmean, pstd = zip(*points)
            ax.errorbar(prho, pmean, yerr=pstd, fmt="s", color="black", ms=5, capsize=3, label="paper (Table 1)")
        ax.axvline(1.0, color="0.6", lw=0.8, ls=":")
        note = missing_note(list(rho), all_rhos, ami)
        ax.set_xlabel("ρ" + (f"\n{note}" if note else ""))
        ax.set_title(title)
    axes[0].legend(fontsize=8, loc="lower right")
    seeds = counted(sparse['seed'].nunique(), 'seed')
    fig.suptitle(f"FYVI Figure 2 {profile_tag(profile)}: sparse EM against ρ (mean ± std over {seeds}); paper: "
                 f"FYVI Table 1 at ρ = 1 (standard EM) and ρ = 2")
    return [save_figure(fig, path)]
