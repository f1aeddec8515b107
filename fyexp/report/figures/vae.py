"""FY β-VAE figures (fy-vae): decoded prior samples of the FY models, and test reconstructions, per data set.

They read the ``<cell>.npz`` artifacts the cells of the figure seed saved (uint8 images) and the cells' params
from the rows; a model's title is built from its cell's method (``psi_2-epanechnikov``) and params.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from fyexp.store.damaged import PANEL_LEFT_OUT, read_npz
from fyexp.report.figures import FigureContext, figure

SIDE = 28


def _models(ctx: FigureContext) -> dict[tuple[str, str], dict[tuple, tuple[Path, str]]]:
    """(profile, data set) → {(ρ′, ρ, regularizer): (artifact, method)} for every cell that saved images."""
    from fyexp.data.vision import DATASETS  # torch: imported only to draw, not to check a spec's plots

    out = {}
    frame = ctx.frame
    for profile in sorted(frame["profile"].dropna().unique()):
        cells = frame[frame["profile"] == profile].drop_duplicates("cell").set_index("cell")
        found = {}
        for path in sorted((ctx.artifacts / profile).glob("*.npz")):
            if path.stem in cells.index:
                params = json.loads(cells.at[path.stem, "params"])
                key = (params["dataset"], params["obs_rho"], params["latent_rho"], params["regularizer"])
                found[key] = (path, str(cells.at[path.stem, "method"]))
        for dataset in DATASETS:
            models = {k[1:]: v for k, v in sorted(found.items()) if k[0] == dataset}
            if models:
                out[(profile, dataset)] = models
    return out


def _grid(images: np.ndarray, columns: int) -> np.ndarray:
    """Tile (N, 28, 28) images into one array with ``columns`` per row and a 1-pixel gap."""
    rows = math.ceil(len(images) / columns)
    canvas = np.ones((rows * (SIDE + 1) + 1, columns * (SIDE + 1) + 1))
    for i, image in enumerate(images):
        r, c = divmod(i, columns)
        canvas[1 + r * (SIDE + 1):1 + r * (SIDE + 1) + SIDE, 1 + c * (SIDE + 1):1 + c * (SIDE + 1) + SIDE] = image / 255
    return canvas


def _title(key: tuple, method: str) -> str:
    """``Psi_2 ρ′=2 / Epanechnikov ρ=2 [authors' reg.]`` from the cell's method and params."""
    (obs_rho, latent_rho, regularizer), (observation, posterior) = key, method.split("-")
    name = r"$\Psi_2$" if observation.lower() == "psi_2" else observation.capitalize()
    title = f"{name} $\\rho'$={obs_rho:g} / {posterior.capitalize()} ρ={latent_rho:g}"
    return title + (" [authors' reg.]" if regularizer == "authors" else "")


@figure("vae-prior-samples")
def prior_samples(ctx: FigureContext) -> list[Path]:
    """Per profile and data set: decoded samples of the prior q* = β-Gaussian(0, I) of every FY model."""
    from fyexp.report.figures.output import plt, save_figure

    paths = []
    for (profile, dataset), models in _models(ctx).items():
        samples = {key: read_npz(models[key][0], ("samples",), consequence=PANEL_LEFT_OUT)
                   for key in models if key[2] == "fy"}
        fy = [key for key, arrays in samples.items() if arrays is not None]   # a damaged artifact: one warning
        if not fy:
            continue
        cols = min(3, len(fy))
        fig, axes = plt.subplots(math.ceil(len(fy) / cols), cols, figsize=(3.2 * cols, 3.8 * math.ceil(len(fy) / cols)),
                                 squeeze=False)
        for ax in axes.flat:
            ax.axis("off")
        for ax, key in zip(axes.flat, fy):
            path, method = models[key]
            ax.imshow(_grid(samples[key]["samples"], 8), cmap="gray", vmin=0, vmax=1)
            ax.set_title(_title(key, method), fontsize=8)
        fig.suptitle(f"FY β-VAE decoded prior samples, {dataset} [{profile}]", fontsize=10, y=0.995)
        paths.append(save_figure(fig, ctx.figures_dir / f"samples-{dataset}-{profile}.png"))
    return paths


@figure("vae-reconstructions")
def reconstructions(ctx: FigureContext) -> list[Path]:
    """Per profile and data set: test images and every model's reconstruction at the posterior mode."""
    from fyexp.report.figures.output import plt, save_figure

    paths = []
    for (profile, dataset), models in _models(ctx).items():
        arrays = {key: read_npz(path, ("originals", "reconstructions"), consequence=PANEL_LEFT_OUT)
                  for key, (path, _) in models.items()}
        arrays = {key: saved for key, saved in arrays.items() if saved is not None}   # a damaged one: one warning
        if not arrays:
            continue
        keys = list(arrays)
        first = arrays[keys[0]]["originals"]
        fig, axes = plt.subplots(len(keys) + 1, 1, figsize=(8, 0.62 * (len(keys) + 1) + 0.6), squeeze=False)
        for ax, (title, images) in zip(axes[:, 0], [("test images", first)] +
                                       [(_title(k, models[k][1]), arrays[k]["reconstructions"]) for k in keys]):
            ax.imshow(_grid(images, len(images)), cmap="gray", vmin=0, vmax=1)
            ax.set_ylabel(title, rotation=0, ha="right", va="center", fontsize=7)
            ax.set_xticks([])
            ax.set_yticks([])
        fig.suptitle(f"Reconstructions at the posterior mode, {dataset} [{profile}]", fontsize=10)
        paths.append(save_figure(fig, ctx.figures_dir / f"reconstructions-{dataset}-{profile}.png"))
    return paths
