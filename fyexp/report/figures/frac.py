"""Figures of the frac-vae experiment (frac Figures 1, 3–7), drawn from the ``.npz`` artifacts of the cells of
seed ``figure_seed`` (one run per panel, as in the paper); registered as ``frac-figure1`` … ``frac-figure7``.

* Figures 1 and 7 (Fashion-MNIST), 3 (MNIST): decoded mean images λ(z) over the coordinate-wise inverse-CDF
  grid of the unit square (Figure 1 adds the heat map of the prior density over the same grid; Figure 3 a row of
  test images);
* Figure 4: posterior means of the explicit posteriors, coloured by class; Figure 5: one posterior sample per
  test image (the Bayes posterior r for L^bh); axes −4 … 4;
* Figure 6: 500 implicit samples u ∈ (0, 1)² for each of 16 test images (one small square per image).
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import numpy as np
import pandas as pd

from fyexp.store.damaged import PANEL_LEFT_OUT, read_npz
from fyexp.report.figures import FigureContext, figure
from fyexp.report.figures.labels import math_notation, profile_tag

ORDER = {"L": 0, "Lh": 1, "Lbh": 2, "Lbh-alt": 3, "Lbeta": 4, "L-fixed-decoder": 5}


def _tile(images: np.ndarray, columns: int) -> np.ndarray:
    rows = math.ceil(len(images) / columns)
    canvas = np.ones((rows * 28, columns * 28))
    for i, image in enumerate(images):
        r, c = divmod(i, columns)
        canvas[r * 28:(r + 1) * 28, c * 28:(c + 1) * 28] = image / 255.0
    return canvas


SUPERSCRIPT = {"Lh": "h", "Lbh": "bh", "Lbh-alt": "bh-alt", "Lbeta": "beta"}  # method → its symbol's superscript


def _index(value: float) -> str:
    """A table row's index: ``0.9``; a power of ten ``10^-5``."""
    exponent = math.log10(value) if value > 0 else None
    return f"10^{int(round(exponent))}" if exponent is not None and abs(exponent) >= 1 and \
        math.isclose(exponent, round(exponent)) else f"{value:g}"


def _title(method: str, params: dict, row_name: str) -> str:
    """A panel's title: the table row's name (``L_10^-5``, ``L^h_0.9``), else the method's symbol with its index,
    in mathtext (:func:`fyexp.report.figures.labels.math_notation`)."""
    sup = SUPERSCRIPT.get(method)
    text = row_name or (f"L{'^' + sup if sup else ''}_{_index(params['value'])}" if method in ORDER and
                        method != "L-fixed-decoder" else f"{method} {params['value']:g}")
    text = math_notation(text)
    if params.get("latent", 2) != 2 and "dim" not in text:
        text += f" (dim z={params['latent']})"
    if params.get("parameterization") == "authors":
        text += " [authors']"
    return text


def _artifacts(frame: pd.DataFrame, profile: str, artifacts_root: Path) -> list[tuple[str, dict, dict, str]]:
    """(method, params, arrays, title) of every cell of ``profile`` with an artifact, in the tables' row order."""
    rows = frame[frame["profile"] == profile]
    found = []
    for cell, cell_rows in rows.groupby("cell", sort=False):
        path = artifacts_root / profile / f"{cell}.npz"
        if not os.path.lexists(path):   # a dangling link or a FIFO is read (refused, one warning), not skipped
            continue
        first = cell_rows.iloc[0]
        params = json.loads(first["params"])
        names = cell_rows["paper_row"].dropna().astype(str) if "paper_row" in cell_rows else pd.Series(dtype=str)
        names = [n for n in names if n and "reference" not in n]
        arrays = read_npz(path, consequence=PANEL_LEFT_OUT)
        if arrays is not None:   # a damaged artifact: one warning naming it, its panels left out
            found.append((first["method"], params, arrays, _title(first["method"], params, names[0] if names else "")))
    found.sort(key=lambda t: (t[1]["dataset"], t[1].get("latent", 2), ORDER.get(t[0], 9), t[1].get("parameterization"),
                              -t[1]["value"] if t[0] != "Lbeta" else t[1]["value"]))
    return found


def _panels(items, draw, title: str, path: Path, columns: int = 4, size: float = 2.6):
    from fyexp.report.figures import plt, save_figure

    if not items:
        return []
    rows = math.ceil(len(items) / columns)
    fig, axes = plt.subplots(rows, columns, figsize=(size * columns, size * rows + 0.4), squeeze=False)
    for ax in axes.flat:
        ax.axis("off")
    for ax, item in zip(axes.flat, items):
        draw(ax, item)
    fig.suptitle(title, fontsize=10)
    right = 1.0
    if getattr(draw, "classes", False):   # scatter panels coloured by digit: say which colour is which
        cmap = plt.get_cmap("tab10")
        handles = [plt.Line2D([], [], marker="o", ls="none", ms=4, color=cmap(i), label=str(i)) for i in range(10)]
        fig.legend(handles=handles, title="digit", loc="center right", fontsize=7, title_fontsize=8, frameon=False)
        right = 1 - 0.5 / (size * columns)
    fig.tight_layout(rect=(0, 0, right, 1 - 0.4 / (size * rows + 0.4)))   # titles clear of the row above's ticks
    return [save_figure(fig, path)]


def _grid_panel(ax, item):
    label, array = item
    if array.ndim == 2 and array.shape[0] == array.shape[1] and label == "prior density":
        ax.imshow(array, cmap="viridis")
    else:
        ax.imshow(_tile(array, int(round(math.sqrt(len(array))))), cmap="gray", vmin=0, vmax=1)
    ax.set_title(label, fontsize=8)


def _scatter_panel(key: str):
    def draw(ax, item):
        from fyexp.report.figures import plt

        label, arrays = item
        points = arrays[key].astype(float)
        ax.scatter(points[:, 0], points[:, 1], c=arrays["labels"], cmap=plt.get_cmap("tab10"), s=1, vmin=0, vmax=9)
        ax.set_xlim(-4, 4)
        ax.set_ylim(-4, 4)
        ax.set_aspect("equal")
        ax.axis("on")
        ax.tick_params(labelsize=6)
        ax.set_title(label, fontsize=8)
    draw.classes = True   # _panels adds the legend of the digit colours
    return draw


def _implicit_panel(ax, item):
    label, implicit = item                       # (S, 16, 2)
    n = implicit.shape[1]
    side = int(math.ceil(math.sqrt(n)))
    for i in range(n):
        r, c = divmod(i, side)
        pts = implicit[:, i].astype(float)
        ax.scatter(c + pts[:, 0] * 0.9, (side - 1 - r) + pts[:, 1] * 0.9, s=0.3, color="k")
    for k in range(side + 1):
        ax.axhline(k - 0.05, color="0.8", lw=0.4)
        ax.axvline(k - 0.05, color="0.8", lw=0.4)
    ax.set_xlim(-0.05, side - 0.05)
    ax.set_ylim(-0.05, side - 0.05)
    ax.set_aspect("equal")
    ax.set_title(label, fontsize=8)


def _figure(ctx: FigureContext, number: int, data_set: str, items, draw, title: str) -> list[Path]:
    """Figure ``number`` of every profile: ``items(found)`` → (label, array) panels of the cells of ``data_set``
    (MNIST without Table 7's fixed-decoder cells, or FashionMNIST) with artifacts, each drawn by ``draw``; the
    title ``title`` with its ``{profile}``.  A profile without panels draws nothing."""
    paths: list[Path] = []
    for profile in sorted(ctx.frame["profile"].dropna().unique()):
        found = [t for t in _artifacts(ctx.frame, profile, ctx.artifacts)
                 if t[1]["dataset"] == data_set and t[0] != "L-fixed-decoder"]
        paths += _panels(items(found), draw, f"frac Figure {number} {profile_tag(profile)}: "
                         + math_notation(title.format(profile=profile)),
                         ctx.figures_dir / f"frac-figure{number}-{profile}.png")
    return paths


def _grids(found) -> list:
    return [(title, a["grid"]) for _, _, a, title in found if "grid" in a]


def _arrays(key: str, whole: bool = True):
    return lambda found: [(title, a if whole else a[key]) for _, _, a, title in found if key in a]


def _figure1_panels(found) -> list:
    """Test images, the γ = 1 and smallest-γ decoders' grids (2-D L_γ, consistent), the prior density heat map."""
    from scipy import stats

    gammas = [t for t in found if t[0] == "L" and t[1]["latent"] == 2 and "grid" in t[2]
              and t[1].get("parameterization") == "consistent"]
    if not gammas:
        return []
    pick = [gammas[0]] + ([gammas[-1]] if len(gammas) > 1 else [])
    n = int(round(math.sqrt(len(pick[0][2]["grid"]))))
    z = stats.norm.ppf((np.arange(n) + 0.5) / n)
    density = np.outer(stats.norm.pdf(z[::-1]), stats.norm.pdf(z))
    return ([("Fashion-MNIST test images", pick[0][2]["test_images"][:16])] + _grids(pick)
            + [("prior density", density)])


@figure("frac-figure3")
def figure3(ctx: FigureContext) -> list[Path]:
    """MNIST decoded mean images over the inverse-CDF grid for every Table 2/6 row, and test images."""
    def panels(found):
        return _grids(found) + [("test images", found[0][2]["test_images"][:16])] if found else []
    return _figure(ctx, 3, "MNIST", panels, _grid_panel,
                   "MNIST decoded mean images over the inverse-CDF grid")


@figure("frac-figure7")
def figure7(ctx: FigureContext) -> list[Path]:
    """Fashion-MNIST decoded mean images for the L_γ and β-VAE rows of Table 9 (2-D latents)."""
    return _figure(ctx, 7, "FashionMNIST", _grids, _grid_panel,
                   "Fashion-MNIST decoded mean images ($L_\\gamma$, then β-VAE)")


@figure("frac-figure1")
def figure1(ctx: FigureContext) -> list[Path]:
    """Fashion-MNIST: test images, the γ = 1 and smallest-γ decoders' grids, and the prior density heat map."""
    return _figure(ctx, 1, "FashionMNIST", _figure1_panels, _grid_panel,
                   "Bayes (γ = 1) vs fractional posterior decoders")


@figure("frac-figure4")
def figure4(ctx: FigureContext) -> list[Path]:
    """Posterior means of the explicit posteriors of MNIST test images, coloured by class."""
    return _figure(ctx, 4, "MNIST", _arrays("means"), _scatter_panel("means"),
                   "explicit posterior means of MNIST test images")


@figure("frac-figure5")
def figure5(ctx: FigureContext) -> list[Path]:
    """One posterior sample per MNIST test image (the Bayes posterior r for L^bh and L^bh-alt)."""
    return _figure(ctx, 5, "MNIST", _arrays("samples"), _scatter_panel("samples"),
                   "one posterior sample per MNIST test image ($L^{{bh}}$: the Bayes posterior r)")


@figure("frac-figure6")
def figure6(ctx: FigureContext) -> list[Path]:
    """Implicit samples u ∈ (0, 1)² for 16 MNIST test images, one panel per semi-implicit row."""
    return _figure(ctx, 6, "MNIST", _arrays("implicit", whole=False), _implicit_panel,
                   "implicit samples u ∈ (0,1)² for 16 MNIST test images")
