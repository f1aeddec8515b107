"""MNIST-like image sets (MNIST, Fashion-MNIST) as flat gray-level tensors, read with torchvision.

Gray levels are torchvision's ``ToTensor`` values, uint8 / 255 ∈ [0, 1]; an image is a row of 784 floats.
The training split is cut into the first ``n_train`` images for training and the last ``n_valid`` for
validation (the FY β-VAE protocol: 55,000 / 5,000).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

import torch

from fyexp.data.names import VISION_DATASETS as DATASETS
from fyexp.errors import DataError, DataMissing, FyexpError

DEFAULT_DOWNLOAD_ROOT = Path.home() / ".cache" / "fyexp" / "data"


@dataclass(frozen=True)
class ImageSplits:
    """Flat images, float32 in [0, 1], shape (N, 784) each."""

    train: torch.Tensor
    valid: torch.Tensor
    test: torch.Tensor


@functools.lru_cache(maxsize=4)
def load_images(name: str, data_dir: str | None, train: bool) -> torch.Tensor:
    """All images of one split of ``name`` as a (N, 784) float32 tensor in [0, 1].

    Reads ``<data_dir>/<name>/raw`` (torchvision's layout) without downloading; with ``data_dir=None``
    downloads into ``~/.cache/fyexp/data``.  A missing data set is a :class:`DataMissing`, unreadable files
    (truncated, not idx files) a :class:`DataError`, each naming the folder and where to get the files.
    """
    import torchvision

    if name not in DATASETS:
        raise FyexpError(f"unknown image data set '{name}' (known: {', '.join(DATASETS)})")
    root = Path(data_dir) if data_dir is not None else DEFAULT_DOWNLOAD_ROOT
    raw = root / name / "raw"
    get = (f"put the four idx files of {name} (torchvision's layout: train-images-idx3-ubyte, ...) into "
           f"<data root>/{name}/raw/, or run without --data-dir to download them")
    try:
        dataset = getattr(torchvision.datasets, name)(root=str(root), train=train, download=data_dir is None)
    except RuntimeError as exc:
        if "not found" in str(exc):
            raise DataMissing(raw, f"missing ({name}, torchvision's layout)", get) from None
        raise DataError(raw, f"unreadable ({type(exc).__name__}: {str(exc)[:80]})", get) from None
    except (AssertionError, ValueError, OSError, EOFError) as exc:  # torchvision's idx reader on a damaged file
        raise DataError(raw, f"unreadable idx files ({type(exc).__name__}{': ' + str(exc)[:80] if str(exc) else ''})",
                        get) from None
    if dataset.data.ndim != 3 or tuple(dataset.data.shape[1:]) != (28, 28) or not len(dataset.data):
        raise DataError(raw, f"images of shape {tuple(dataset.data.shape)}, expected (N, 28, 28)", get)
    return dataset.data.reshape(len(dataset.data), -1).to(torch.float32) / 255.0


def image_splits(name: str, data_dir: Path | str | None, n_train: int, n_valid: int,
                 n_test: int | None = None) -> ImageSplits:
    """First ``n_train`` training images, the last ``n_valid`` as validation, the first ``n_test`` test images."""
    full = load_images(name, None if data_dir is None else str(data_dir), True)
    test = load_images(name, None if data_dir is None else str(data_dir), False)
    if n_train + n_valid > len(full):
        raise FyexpError(f"{name}: n_train + n_valid = {n_train + n_valid} exceeds the {len(full)} training images")
    return ImageSplits(train=full[:n_train], valid=full[len(full) - n_valid:], test=test[:n_test])


@functools.lru_cache(maxsize=4)
def image_labels(name: str, data_dir: str | None, train: bool) -> torch.Tensor:
    """The class labels (0–9) of one split of ``name``, read as :func:`load_images` reads the images."""
    import torchvision

    root = Path(data_dir) if data_dir is not None else DEFAULT_DOWNLOAD_ROOT
    try:
        return getattr(torchvision.datasets, name)(root=str(root), train=train, download=data_dir is None).targets
    except RuntimeError as exc:
        raise FyexpError(f"{name} labels not found under {root / name / 'raw'}: {exc}") from None
