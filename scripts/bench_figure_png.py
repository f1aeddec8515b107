"""Cost and size of the palette PNG (:func:`fyexp.report.figures.output.write_palette_png`) against matplotlib's own
RGBA PNG, on two figures shaped like the report's: a 7-panel strip of 8×8 grey sample grids (VR Figure 3's shape,
≤ 256 colours: kept exactly) and a two-panel line plot with a colour map (more colours: fast octree).

Per figure and round, interleaved: (a) ``fig.savefig`` to an RGBA PNG, (b) the same render followed by the palette
write, as :func:`save_figure` does.  Printed: median wall time of each, their ratio, and the bytes of each file::

    python scripts/bench_figure_png.py [--rounds 5] [--smoke]

2026-11-29 (two training cells and a CI run beside it, 5 rounds): grids 0.283 s RGBA, 0.419 s palette (1.48x),
940 → 349 KiB; lines 0.147 → 0.200 s (1.36x), 94 → 31 KiB.  So a full report redraw (44 figures, 26 s on a quiet
machine) pays a few seconds for files about three times smaller.
"""

from __future__ import annotations

import argparse
import io
import statistics
import time

import numpy as np


def grids_figure(plt):
    rng = np.random.default_rng(0)
    fig, axes = plt.subplots(1, 7, figsize=(21, 3.4))
    for ax in axes:
        tiles = rng.random((8, 8, 28, 28)) ** 2
        ax.imshow(tiles.transpose(0, 2, 1, 3).reshape(8 * 28, 8 * 28), cmap="gray", interpolation="nearest")
        ax.set_axis_off()
    return fig


def lines_figure(plt):
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    left.hist(np.random.default_rng(1).normal(size=5000), bins=60)
    for shift in range(10):
        right.plot(np.linspace(0, 1, 200), np.sin(np.linspace(0, 6, 200) + shift), marker="o", markevery=20)
    right.imshow(np.linspace(0, 1, 200 * 200).reshape(200, 200), extent=(0, 1, -1, 1), cmap="viridis", alpha=0.3)
    return fig


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--smoke", action="store_true", help="one round, to check the script runs")
    args = parser.parse_args()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from fyexp.report.figures.output import write_palette_png

    rounds = 1 if args.smoke else args.rounds
    for name, make in (("grids", grids_figure), ("lines", lines_figure)):
        plain, palette, sizes = [], [], (0, 0)
        for _ in range(rounds):
            for kind in ("plain", "palette"):          # interleaved: a busy machine slows both alike
                fig = make(plt)
                fig.canvas.draw()
                buffer, out = io.BytesIO(), io.BytesIO()
                start = time.perf_counter()
                fig.savefig(buffer, format="png", dpi=120)
                if kind == "palette":
                    buffer.seek(0)
                    write_palette_png(buffer, out)
                (plain if kind == "plain" else palette).append(time.perf_counter() - start)
                plt.close(fig)
                if kind == "palette":
                    sizes = (len(buffer.getvalue()), len(out.getvalue()))
        a, b = statistics.median(plain), statistics.median(palette)
        print(f"{name}: RGBA {a:.3f} s, palette {b:.3f} s, ratio palette / RGBA time {b / a:.2f}x; "
              f"{sizes[0] / 1024:.0f} KiB -> {sizes[1] / 1024:.0f} KiB, size ratio {sizes[1] / sizes[0]:.2f}")


if __name__ == "__main__":
    main()
