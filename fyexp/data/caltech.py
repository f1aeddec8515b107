"""Caltech 101 Silhouettes 28 × 28 (Marlin's split 1) from ``<data root>/Caltech101Silhouettes/``.

``caltech101_silhouettes_28_split1.mat`` (``scipy.io.loadmat``) holds ``train_data`` (4,100), ``val_data`` (2,264)
and ``test_data`` (2,307), N × 784 in {0, 1}, each image stored column-major; images are returned row-major
(reshaped with ``order="F"`` and flattened again), so a row reshaped to 28 × 28 is upright.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from fyexp.errors import FyexpError

FILE = Path("Caltech101Silhouettes") / "caltech101_silhouettes_28_split1.mat"
SIDE = 28


@dataclass(frozen=True)
class CaltechSplits:
    train: torch.Tensor
    valid: torch.Tensor
    test: torch.Tensor


def _row_major(images: np.ndarray) -> torch.Tensor:
    upright = images.reshape(-1, SIDE, SIDE, order="F").reshape(-1, SIDE * SIDE)
    return torch.tensor(upright, dtype=torch.float32)


@functools.lru_cache(maxsize=2)
def load_caltech(root: str | None) -> CaltechSplits:
    """The provided train / validation / test split as float32 tensors in {0, 1}; problems are one line."""
    if root is None:
        raise FyexpError(f"Caltech 101 Silhouettes needs a data root with {FILE} (pass --data-dir or FYEXP_DATA_DIR)")
    path = Path(root) / FILE
    if not path.is_file():
        raise FyexpError(f"Caltech 101 Silhouettes not found: no file {path}")
    import scipy.io

    try:
        mat = scipy.io.loadmat(path)
    except Exception as exc:  # noqa: BLE001 - any reading problem is a data problem
        raise FyexpError(f"{path}: not a MATLAB file scipy can read ({exc})") from None
    missing = [k for k in ("train_data", "val_data", "test_data") if k not in mat]
    if missing:
        raise FyexpError(f"{path}: missing variables {missing}")
    return CaltechSplits(*(_row_major(mat[k]) for k in ("train_data", "val_data", "test_data")))


__all__ = ["load_caltech", "CaltechSplits", "SIDE"]
