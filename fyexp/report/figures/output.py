"""Figure output shared by every figure function: headless backend, one way to save a PNG."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402


def save_figure(fig: "plt.Figure", path: Path, dpi: int = 120) -> Path:
    """Lay out ``fig``, write it to ``path`` as PNG (creating the folder), close it, and return ``path``."""
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
    return path
