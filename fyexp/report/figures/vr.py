"""Li & Turner (vr) figures: Figure 2(b) (Monte Carlo vs exact negative Rényi divergence between two Gaussians),
Figure 3 (samples of the VR-max models) and Figure 4 (bias of L̂_{α,K} against α on Frey Face)."""

from __future__ import annotations

import math
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd

from fyexp.store.damaged import PANEL_LEFT_OUT, read_npz
from fyexp.report.figures import FigureContext, figure
from fyexp.core.words import counted


def _num(frame: pd.DataFrame, column: str) -> pd.Series:
    return pd.to_numeric(frame[column], errors="coerce")


@figure("vr-figure2b")
def figure2b(ctx: FigureContext) -> list[Path]:
    """Per profile: mean ± std over repetitions of L̂_{α,K} against α, one curve per K, and the exact −D_α."""
    from fyexp.report.figures import plt, save_figure

    paths = []
    for profile, rows in ctx.frame.groupby("profile", sort=False):
        rows = rows.assign(alpha=_num(rows, "alpha"), K=_num(rows, "K"), value=_num(rows, "value"))
        fig, ax = plt.subplots(figsize=(5.2, 3.8))
        exact = rows[rows["metric"] == "neg_renyi_exact"].drop_duplicates("alpha").sort_values("alpha")
        ax.plot(exact["alpha"], exact["value"], color="black", lw=2, label="exact −D_α[q‖p]")
        for k, group in rows.groupby("K"):
            mean = group[group["metric"] == "neg_renyi_mc_mean"].sort_values("alpha")
            std = group[group["metric"] == "neg_renyi_mc_std"].sort_values("alpha")
            line, = ax.plot(mean["alpha"], mean["value"], marker="o", ms=3, label=f"MC, K = {int(k)}")
            ax.fill_between(mean["alpha"], mean["value"] - std["value"].to_numpy(),
                            mean["value"] + std["value"].to_numpy(), color=line.get_color(), alpha=0.15)
        reps = int(_num(rows, "repetitions").max())
        ax.set_xlabel("α")
        ax.set_ylabel(r"$-D_\alpha$ estimate")
        ax.set_title(f"VR Figure 2(b) [{profile}]: mean ± std over {counted(reps, 'repetition')}", fontsize=9)
        ax.legend(fontsize=8)
        paths.append(save_figure(fig, ctx.figures_dir / f"vr-figure2b-{profile}.png"))
    return paths


FIGURE3_COLUMNS = 4  # panels per row of VR Figure 3


@figure("vr-figure3")
def figure3(ctx: FigureContext) -> list[Path]:
    """Per profile: decoded samples of every VR-max model that saved ``samples-<cell>.npz`` (one panel each), and
    beneath them the VR-max settings left undrawn (:func:`figure3_missing`)."""
    from fyexp.report.figures import plt, save_figure

    paths = []
    vr_max = ctx.frame[ctx.frame["method"] == "vr_max"]
    for profile in sorted(ctx.frame["profile"].dropna().unique()):
        files = sorted((ctx.artifacts / str(profile)).glob("samples-vr_max*.npz"))
        arrays = [read_npz(path, ("shape", "images", "setting"), consequence=PANEL_LEFT_OUT) for path in files]
        arrays = [saved for saved in arrays if saved is not None]
        if not arrays:   # a damaged artifact: one warning naming it, its panel left out
            continue
        columns = min(len(arrays), FIGURE3_COLUMNS)  # 7 panels: a 4 × 2 grid, not one 2520 × 408 row
        rows = math.ceil(len(arrays) / columns)
        missing = textwrap.wrap(figure3_missing(vr_max, str(profile), {str(saved["setting"]) for saved in arrays}),
                                width=16 * 3 * columns)   # 7-point text: about 16 characters an inch
        below = 0.14 * len(missing) + 0.1 * bool(missing)   # inches under the panels for those lines
        height = 3.2 * rows + 0.4 + below
        fig, axes = plt.subplots(rows, columns, figsize=(3.0 * columns, height), squeeze=False)
        for ax in axes.flat:
            ax.axis("off")
        for ax, saved in zip(axes.flat, arrays):
            height, width = (int(v) for v in saved["shape"])
            ax.imshow(_tile(saved["images"].reshape(-1, height, width), 8), cmap="gray", vmin=0, vmax=255)
            ax.set_title(str(saved["setting"]), fontsize=8)
            ax.axis("off")
        fig.suptitle(f"VR Figure 3 [{profile}]: samples from the VR-max models", fontsize=9)
        if missing:   # a figure label: tight_layout keeps the panels above it
            fig.supxlabel("\n".join(missing), fontsize=7, x=0.01, ha="left")
        paths.append(save_figure(fig, ctx.figures_dir / f"vr-figure3-{profile}.png"))
    return paths


def figure3_missing(vr_max, profile: str, drawn: set[str]) -> str:
    """What VR Figure 3 at ``profile`` leaves out, in words: the settings of VR-max rows (``vr_max``: rows of any
    profile) that ran at ``profile`` but saved no samples, and those that ran only at other profiles; ``""`` when
    every setting is drawn."""
    here = set(vr_max.loc[vr_max["profile"] == profile, "setting"].dropna().astype(str))
    everywhere = set(vr_max["setting"].dropna().astype(str))
    parts = []
    if here - drawn:
        parts.append(f"{', '.join(sorted(here - drawn))}: run at [{profile}], no samples saved")
    if everywhere - here:
        parts.append(f"{', '.join(sorted(everywhere - here))}: no VR-max cell run at [{profile}]")
    return f"Not drawn: {'; '.join(parts)}." if parts else ""


def _tile(images: np.ndarray, columns: int) -> np.ndarray:
    n, h, w = images.shape
    rows = math.ceil(n / columns)
    canvas = np.full((rows * (h + 1) + 1, columns * (w + 1) + 1), 255, dtype=np.uint8)
    for i, image in enumerate(images):
        r, c = divmod(i, columns)
        canvas[1 + r * (h + 1):1 + r * (h + 1) + h, 1 + c * (w + 1):1 + c * (w + 1) + w] = image
    return canvas


def alpha_label(alpha: float) -> str:
    """A tick of VR Figure 4's α axis as the paper writes α: ``−500``, ``−1``, ``0``, ``0.5`` (a true minus sign)."""
    text = f"{alpha:g}"
    return text.replace("-", "\u2212")


@figure("vr-figure4")
def figure4(ctx: FigureContext) -> list[Path]:
    """Per profile: the bias L̂_{0,S} − L̂_{α,K} against α (symlog axis, a tick at each α drawn), one panel per K,
    mean ± std."""
    import matplotlib.ticker

    from fyexp.report.figures import plt, save_figure

    paths = []
    rows_all = ctx.frame[ctx.frame["metric"].isin(["bias_mean", "bias_std"])]
    for profile, rows in rows_all.groupby("profile", sort=False):
        rows = rows.assign(alpha=_num(rows, "alpha"), K=_num(rows, "K"), value=_num(rows, "value"))
        ks = sorted(rows["K"].dropna().unique())
        fig, axes = plt.subplots(1, len(ks), figsize=(4.0 * len(ks), 3.3), squeeze=False)
        for ax, k in zip(axes[0], ks):
            sub = rows[rows["K"] == k]
            mean = sub[sub["metric"] == "bias_mean"].sort_values("alpha")
            std = sub[sub["metric"] == "bias_std"].sort_values("alpha")
            ax.errorbar(mean["alpha"], mean["value"], yerr=std["value"].to_numpy(), marker="o", capsize=3)
            ax.set_xscale("symlog", linthresh=1.0)
            alphas = sorted(mean["alpha"].dropna().unique())
            ax.set_xticks(alphas, [alpha_label(a) for a in alphas])   # the α drawn, not −10⁰ between them
            ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
            ax.axhline(0.0, color="0.6", lw=0.8)
            ax.set_xlabel("α")
            ax.set_ylabel(r"$\hat L_{0,S} - \hat L_{\alpha,K}$")
            ax.set_title(f"K = {int(k)}")
        fig.suptitle(f"VR Figure 4: bias on Frey Face test points, mean ± std [{profile}]")
        paths.append(save_figure(fig, ctx.figures_dir / f"vr-figure4-{profile}.png"))
    return paths
