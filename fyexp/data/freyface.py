"""Frey Face (1,965 gray images of 28 × 20) from ``<data root>/FreyFace/freyfaces.pkl``, and its 10 folds.

The pickle holds a one-element list with a (1965, 560) uint8 array (``data/README.md``); gray levels are scaled
to [0, 1] by /255 for the Gaussian observation model (the scaling of the VR authors' pickle is not recorded in
their code; a continuous log-likelihood of ~1,300 nats per image, Table 1, needs values of this order).
Cross-validation: one permutation of the images (``seed``), cut into ``n_folds`` nearly equal folds that
partition the data set; fold f is the test set of run f, the other folds its training set.

The pickle is read as data (:class:`ArrayUnpickler`): its only globals may be numpy's array reconstructors, which
build arrays and call nothing else, so a crafted ``freyfaces.pkl`` in someone's data root is refused (one line)
before any of its code runs.  (The public file, SHA-256 ``3b69410c…d2138a``, names three of them.)
"""

from __future__ import annotations

import codecs
import functools
import pickle
from pathlib import Path

import numpy as np
import torch

from fyexp.data.sources import DATA_ROOT, supply
from fyexp.core.errors import DataError, DataMissing, FyexpError

HEIGHT, WIDTH = 28, 20
FILE = Path("FreyFace") / "freyfaces.pkl"
# the globals an array pickle names -> what they may build: numpy's reconstructors (python 2's numpy.core or numpy
# 2's numpy._core; protocol 5's _frombuffer), and the bytes decoder of protocols 0-2 written by python 3
ARRAY_GLOBALS = {("numpy.core.multiarray", "_reconstruct"): np._core.multiarray._reconstruct,
                 ("numpy._core.multiarray", "_reconstruct"): np._core.multiarray._reconstruct,
                 ("numpy.core.numeric", "_frombuffer"): np._core.numeric._frombuffer,
                 ("numpy._core.numeric", "_frombuffer"): np._core.numeric._frombuffer,
                 ("numpy", "ndarray"): np.ndarray, ("numpy", "dtype"): np.dtype,
                 ("_codecs", "encode"): codecs.encode}


class RefusedGlobal(pickle.UnpicklingError):
    """A pickle that names a global outside :data:`ARRAY_GLOBALS` (a function it would call, a class it would build)."""


class ArrayUnpickler(pickle.Unpickler):
    """``pickle.Unpickler`` that resolves only :data:`ARRAY_GLOBALS` (Python's documented way to restrict globals:
    https://docs.python.org/3/library/pickle.html#restricting-globals); lists, tuples, numbers, strings and numpy
    arrays load, any other global raises :class:`RefusedGlobal` before it is imported or called."""

    def find_class(self, module: str, name: str):
        try:
            return ARRAY_GLOBALS[(module, name)]
        except KeyError:
            raise RefusedGlobal(f"{module}.{name}") from None


GET_FILE = supply(f"the VAE-benchmark pickle {FILE.name} (a list holding the (1965, {HEIGHT * WIDTH}) uint8 array of "
                  f"frey_rawface.mat, https://cs.nyu.edu/~roweis/data.html; the VR authors' copy: "
                  f"https://github.com/y0ast/Variational-Autoencoder)", FILE.parent)


@functools.lru_cache(maxsize=2)
def load_freyface(root: str | None) -> torch.Tensor:
    """All images as a (1965, 560) float32 tensor in [0, 1]; a missing, malformed or code-carrying file is one line
    (:class:`ArrayUnpickler`)."""
    if root is None:
        raise FyexpError(f"Frey Face needs a data root with {FILE} ({DATA_ROOT})")
    path = Path(root) / FILE
    if not path.is_file():
        raise DataMissing(path, "absent (Frey Face)", GET_FILE)
    try:
        with open(path, "rb") as handle:
            data = ArrayUnpickler(handle, encoding="latin1").load()
        array = np.asarray(data[0] if isinstance(data, (list, tuple)) else data)
    except RefusedGlobal as exc:
        raise DataError(path, f"refused: the pickle names the global {exc}, not only numpy arrays (unpickling it "
                        f"could run code)", GET_FILE) from None
    except Exception as exc:  # noqa: BLE001 - any unpickling problem is a data problem
        raise DataError(path, f"not a pickled (N, {HEIGHT * WIDTH}) array ({type(exc).__name__}: "
                        f"{str(exc).splitlines()[0][:80] if str(exc) else ''})", GET_FILE) from None
    if array.ndim != 2 or array.shape[1] != HEIGHT * WIDTH or not len(array) or not np.issubdtype(array.dtype, np.number):
        raise DataError(path, f"expected an (N, {HEIGHT * WIDTH}) array of numbers, got shape {array.shape} "
                        f"({array.dtype})", GET_FILE)
    scale = 255.0 if array.dtype == np.uint8 or array.max() > 1 else 1.0
    return torch.tensor(array, dtype=torch.float32) / scale


def cv_folds(n: int, n_folds: int = 10, seed: int = 0) -> list[np.ndarray]:
    """Indices of ``n_folds`` disjoint folds covering 0…n−1 (sizes differ by at most one)."""
    if not 2 <= n_folds <= n:
        raise FyexpError(f"cross-validation needs 2 <= n_folds <= {n}, got {n_folds}")
    return np.array_split(np.random.default_rng(seed).permutation(n), n_folds)


def fold_split(data: torch.Tensor, fold: int, n_folds: int = 10, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """(train, test) of cross-validation run ``fold``: the test set is fold ``fold``, the rest is training data."""
    folds = cv_folds(len(data), n_folds, seed)
    if not 0 <= fold < n_folds:
        raise FyexpError(f"Frey Face fold {fold} out of range (0..{n_folds - 1})")
    train = np.concatenate([f for i, f in enumerate(folds) if i != fold])
    return data[torch.as_tensor(train)], data[torch.as_tensor(folds[fold])]


__all__ = ["load_freyface", "cv_folds", "fold_split", "HEIGHT", "WIDTH"]
