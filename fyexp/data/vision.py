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
from fyexp.data.sources import CONNECT_TIMEOUT_S, host, reachable, short, socket_timeout, supply
from fyexp.core.errors import DataError, DataMissing, FyexpError

DEFAULT_DOWNLOAD_ROOT = Path.home() / ".cache" / "fyexp" / "data"


@dataclass(frozen=True)
class ImageSplits:
    """Flat images, float32 in [0, 1], shape (N, 784) each."""

    train: torch.Tensor
    valid: torch.Tensor
    test: torch.Tensor


def idx_files(name: str) -> list[str]:
    """The four idx files of ``name`` as torchvision reads them from ``<root>/<name>/raw/`` (its ``resources``
    without ``.gz``)."""
    import torchvision

    return [Path(file).stem for file, _ in getattr(torchvision.datasets, name).resources]


def _remedy(name: str) -> str:
    return supply(f"the four idx files of {name} ({', '.join(idx_files(name))})", f"{name}/raw")


def _dataset(name: str, data_dir: str | None, train: bool):
    """torchvision's data set ``name`` (one split) read from ``<data_dir>/<name>/raw`` without downloading; with
    ``data_dir=None`` from ``~/.cache/fyexp/data``, downloaded there first when absent and a mirror answers
    (:func:`_download`).  Absent files are a :class:`DataMissing`, damaged ones a :class:`DataError`."""
    import torchvision

    if name not in DATASETS:
        raise FyexpError(f"unknown image data set '{name}' (known: {', '.join(DATASETS)})")
    cls = getattr(torchvision.datasets, name)
    root = Path(data_dir) if data_dir is not None else DEFAULT_DOWNLOAD_ROOT
    raw = root / name / "raw"
    absent = [file for file in idx_files(name) if not (raw / file).is_file()]
    if absent and data_dir is not None:
        what = (f"none of the idx files of {name}" if len(absent) == len(idx_files(name))
                else f"{', '.join(absent)} of {name}")
        raise DataMissing(raw, f"absent ({what})", _remedy(name))
    if absent:
        _download(cls, name, root, raw)
    try:
        return cls(root=str(root), train=train, download=False)
    except (RuntimeError, AssertionError, ValueError, OSError, EOFError) as exc:  # torchvision's idx reader
        raise DataError(raw, f"unreadable idx files ({short(exc)})", _remedy(name)) from None


def _download(cls, name: str, root: Path, raw: Path) -> None:
    """Download ``name`` into ``root`` from the first of torchvision's mirrors that accepts a connection within
    :data:`~fyexp.data.sources.CONNECT_TIMEOUT_S` s, with sockets timing out after
    :data:`~fyexp.data.sources.READ_TIMEOUT_S` s; none reachable is a :class:`DataMissing` at once."""
    mirror = next((m for m in cls.mirrors if reachable(m)), None)
    if mirror is None:
        hosts = " or ".join(host(m) for m in cls.mirrors)
        raise DataMissing(raw, f"absent, and {name} cannot be downloaded (no connection to {hosts} within "
                          f"{CONNECT_TIMEOUT_S:g} s)", _remedy(name))
    one_mirror = type(cls.__name__, (cls,), {"mirrors": [mirror]})  # same name: the same raw folder
    try:
        with socket_timeout():
            one_mirror(root=str(root), train=True, download=True)
    except (RuntimeError, OSError) as exc:
        raise DataMissing(raw, f"absent, and the download of {name} from {host(mirror)} failed ({short(exc)})",
                          _remedy(name)) from None


@functools.lru_cache(maxsize=4)
def load_images(name: str, data_dir: str | None, train: bool) -> torch.Tensor:
    """All images of one split of ``name`` as a (N, 784) float32 tensor in [0, 1].

    Reads ``<data_dir>/<name>/raw`` (torchvision's layout) without downloading; with ``data_dir=None`` reads
    ``~/.cache/fyexp/data``, downloading there first where a mirror answers.  Absent files are a
    :class:`DataMissing`, unreadable ones (truncated, not idx files) a :class:`DataError`, each one line naming the
    folder, the files and ``--data-dir`` / ``FYEXP_DATA_DIR``.
    """
    dataset = _dataset(name, data_dir, train)
    raw = (Path(data_dir) if data_dir is not None else DEFAULT_DOWNLOAD_ROOT) / name / "raw"
    if dataset.data.ndim != 3 or tuple(dataset.data.shape[1:]) != (28, 28) or not len(dataset.data):
        raise DataError(raw, f"images of shape {tuple(dataset.data.shape)}, expected (N, 28, 28)", _remedy(name))
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
    """The class labels (0–9) of one split of ``name``, read (and its problems told) as :func:`load_images`."""
    return _dataset(name, data_dir, train).targets
