"""Figure output shared by every figure function: headless backend, one way to save a PNG."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

from fyexp.report.cache import written  # noqa: E402


def save_figure(fig: "plt.Figure", path: Path, dpi: int = 120) -> Path:
    """Lay out ``fig`` with every text inside the canvas (:func:`fit_canvas`), write it to ``path`` as PNG
    (creating the folder), close it, and return ``path`` (noted as written, :func:`fyexp.report.cache.written`)."""
    fit_canvas(fig)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
    return written(path)


def fit_canvas(fig: "plt.Figure", tries: int = 4) -> None:
    """``tight_layout``, then, while something drawn (a long suptitle, tick labels of equal-aspect panels) reaches
    past the canvas, grow the figure by the overflow and lay it out again.  A figure that fits is left as
    ``tight_layout`` makes it."""
    import warnings

    for _ in range(tries + 1):
        with warnings.catch_warnings():  # equal-aspect panels: tight_layout warns, the loop below corrects
            warnings.simplefilter("ignore", UserWarning)
            fig.tight_layout()
        fig.canvas.draw()
        box = fig.get_tightbbox(fig.canvas.get_renderer())   # inches
        width, height = fig.get_size_inches()
        grow_w = max(0.0, -box.x0) + max(0.0, box.x1 - width)
        grow_h = max(0.0, -box.y0) + max(0.0, box.y1 - height)
        if grow_w < 0.01 and grow_h < 0.01:
            return
        fig.set_size_inches(width + grow_w + 0.1 * (grow_w > 0), height + grow_h + 0.1 * (grow_h > 0))


def text_outside_canvas(fig: "plt.Figure", tolerance_px: float = 0.5) -> list[str]:
    """The texts of ``fig`` drawn (partly) outside its canvas: each axes' title, labels, tick labels, legend and
    annotations (through its tight bounding box, which holds what it draws), and the figure's own texts (suptitle,
    captions, legends).  Empty when every text is whole; ``fig`` is drawn once to measure."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    width, height = fig.bbox.width, fig.bbox.height

    def outside(box) -> bool:
        return (box.x0 < -tolerance_px or box.y0 < -tolerance_px or box.x1 > width + tolerance_px
                or box.y1 > height + tolerance_px)

    found = []
    for ax in fig.axes:
        if ax.get_visible() and outside(ax.get_tightbbox(renderer)):
            texts = [t for t in ax.findobj(lambda a: hasattr(a, "get_text") and a.get_visible())
                     if t.get_text().strip() and outside(t.get_window_extent(renderer))]
            found.append(f"axes '{ax.get_title() or ax.get_label()}': "
                         + (", ".join(repr(t.get_text()[:40]) for t in texts) or "its drawing"))
    for artist in list(fig.texts) + list(fig.legends):
        if artist.get_visible() and outside(artist.get_window_extent(renderer)):
            found.append(f"figure text {getattr(artist, 'get_text', lambda: 'legend')()[:40]!r}")
    return found
