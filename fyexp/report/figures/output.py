"""Figure output shared by every figure function: headless backend, one way to save a PNG (and its PDF copy)."""

from __future__ import annotations

import io
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

from fyexp.report.cache import written  # noqa: E402


#: colours of a saved figure's palette: a PNG's palette holds at most 256, enough for plots and for grey-level
#: sample grids (256 levels), and it makes the file about four times smaller than RGBA
PALETTE_COLOURS = 256
#: the resolution of every PNG (stated in its ``pHYs`` chunk): 150 dots an inch, the index's figures sharp on a
#: screen at twice the size of 100-dpi ones; a paper takes the PDF of ``fyexp report --vector``
PNG_DPI = 150


def save_figure(fig: "plt.Figure", path: Path, dpi: int = PNG_DPI) -> Path:
    """Lay out ``fig`` with every text inside the canvas (:func:`fit_canvas`), write it to ``path`` as a palette
    PNG (:func:`write_palette_png`; creating the folder) and, in a report with vector copies
    (:func:`fyexp.report.figures.vector_on`, ``fyexp report --vector``), beside it as a PDF (:func:`save_pdf`),
    close it, and return ``path`` (each file noted as written, :func:`fyexp.report.cache.written`)."""
    from fyexp.report.figures import vector_on

    fit_canvas(fig)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi)
    if vector_on():
        written(save_pdf(fig, path.with_suffix(".pdf")))
    plt.close(fig)
    write_palette_png(buffer, path, dpi)
    return written(path)


def save_pdf(fig: "plt.Figure", path: Path) -> Path:
    """Write ``fig`` (laid out already) to ``path`` as a PDF, its text and lines as vectors (for a paper), without a
    creation date, so that the same figure gives the same bytes; returns ``path``."""
    fig.savefig(path, format="pdf", metadata={"CreationDate": None, "ModDate": None})
    return path


def write_palette_png(rendered: "io.BytesIO | Path", path: Path, dpi: int = PNG_DPI) -> None:
    """Write the rendered PNG ``rendered`` to ``path`` with at most :data:`PALETTE_COLOURS` colours, ``optimize``
    on, stating ``dpi``.  A figure of that many colours or fewer (every grey-level sample grid) is kept exactly
    (Pillow's median cut then keeps each colour); one of more (anti-aliased plots, colour maps) goes through
    Pillow's fast-octree quantiser, without dithering, about one grey level off on average.  Both are
    deterministic.  Our choice, for size: the committed results travel with the working tree to a lent GPU within
    64 MiB (docs/contributing/gpu-lease.md), and the RGBA figures alone took 11 MiB of it; palette PNGs at 120 dpi
    took about 6.5 MiB."""
    from PIL import Image

    with Image.open(rendered) as image:
        rgb = image.convert("RGB")
    few = rgb.getcolors(PALETTE_COLOURS) is not None
    method = Image.Quantize.MEDIANCUT if few else Image.Quantize.FASTOCTREE
    rgb.quantize(colors=PALETTE_COLOURS, method=method, dither=Image.Dither.NONE).save(path, format="PNG",
                                                                                       optimize=True, dpi=(dpi, dpi))


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
