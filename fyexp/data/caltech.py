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

from fyexp.data.sources import DATA_ROOT, supply
from fyexp.core.errors import DataError, DataMissing, FyexpError

FILE = Path("Caltech101Silhouettes") / "caltech101_silhouettes_28_split1.mat"
GET_FILE = supply(f"{FILE.name} (Marlin's split, https://people.cs.umass.edu/~marlin/data.shtml)", FILE.parent)
SPLITS = ("train_data", "val_data", "test_data")
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
        raise FyexpError(f"Caltech 101 Silhouettes needs a data root with {FILE} ({DATA_ROOT})")
    path = Path(root) / FILE
    if not path.is_file():
        raise DataMissing(path, "absent (Caltech 101 Silhouettes)", GET_FILE)
    import scipy.io

    try:
        mat = scipy.io.loadmat(path)
    except Exception as exc:  # noqa: BLE001 - any reading problem is a data problem
        raise DataError(path, f"not a MATLAB file scipy can read ({type(exc).__name__}: "
                        f"{str(exc).splitlines()[0][:80] if str(exc) else ''})", GET_FILE) from None
    missing = [k for k in SPLITS if k not in mat]
    if missing:
        raise DataError(path, f"missing variables {missing}", GET_FILE)
    for key in SPLITS:
        if np.ndim(mat[key]) != 2 or np.shape(mat[key])[1] != SIDE * SIDE:
            raise DataError(path, f"'{key}' has shape {np.shape(mat[key])}, expected (N, {SIDE * SIDE})", GET_FILE)
    return CaltechSplits(*(_row_major(mat[k]) for k in SPLITS))


__all__ = ["load_caltech", "CaltechSplits", "SIDE"]
