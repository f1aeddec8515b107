"""Li & Turner (vr) figures: Figure 2(b) (Monte Carlo vs exact negative Rényi divergence between two Gaussians),
Figure 3 (samples of the VR-max models) and Figure 4 (bias of L̂_{α,K} against α on Frey Face)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from fyexp.report.figures import FigureContext, figure


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
        ax.set_ylabel("−D_α estimate")
        ax.set_title(f"VR Figure 2(b): mean ± std over {reps} repetitions ({profile})", fontsize=9)
        ax.legend(fontsize=8)
        paths.append(save_figure(fig, ctx.figures_dir / f"vr-figure2b-{profile}.png"))
    return paths
