"""The image data of Li & Turner §5.1 (vr-vae): Frey Face, Caltech 101 Silhouettes and MNIST as one cell reads them.

* Frey Face: gray levels / 255, not binarized; run ``fold`` of ``n_folds`` is, with ``freyface.splits``

  - ``seeded`` (the VR authors' code): the split their demo makes with ``--seed fold_seed + fold`` — the images
    shuffled by numpy's legacy generator seeded so, the first ``int(train_fraction · N)`` (0.9: 1,768 of 1,965)
    for training, the other 197 for testing (YingzhenLi/VRbound ``vae_autograd/demo/train_freyface.py``,
    ``load_data``: ``np.random.seed(seed); np.random.shuffle(data)``; :func:`seeded_split`).  The ten test sets
    are random and may overlap;
  - ``partition``: fold ``fold`` of one permutation (seed ``fold_seed``) cut into ``n_folds`` disjoint folds
    (:func:`fyexp.data.freyface.fold_split`), our reading of the paper's "10-fold cross validation" before;
* Caltech 101 Silhouettes: the provided split, binary already;
* MNIST: gray levels for training, binarized afresh per batch by the task (``binarize``); the test set binarized
  once, x ∼ Bernoulli(gray levels) with seed 0.

Caps per data set (``n_train``, ``n_test``) cut the parts' heads; ``validation`` holds out that many images from
the END of the training part (the VI-setting stopping epoch, VR §5.1).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np
import torch

from fyexp.data.freyface import HEIGHT as FREY_H
from fyexp.data.freyface import WIDTH as FREY_W
from fyexp.data.names import VR_IMAGE_DATASETS as DATASETS
from fyexp.core.errors import FyexpError

#: data set → (height, width) of its images
IMAGE_SHAPES = {"freyface": (FREY_H, FREY_W), "caltech": (28, 28), "mnist": (28, 28)}


@dataclass
class VRData:
    train: torch.Tensor
    test: torch.Tensor
    binarize: bool
    valid: torch.Tensor | None = None


def seeded_split(data: torch.Tensor, seed: int, train_fraction: float = 0.9) -> tuple[torch.Tensor, torch.Tensor]:
    """(train, test): the rows in the order numpy's legacy generator seeded with ``seed`` shuffles them
    (``np.random.seed(seed); np.random.shuffle(rows)``, the same order as ``RandomState(seed).permutation``), the
    first ``int(train_fraction · N)`` for training and the rest for testing."""
    order = np.random.RandomState(seed).permutation(len(data))
    n_train = int(train_fraction * len(data))
    if not 0 < n_train < len(data):
        raise FyexpError(f"freyface.train_fraction {train_fraction} leaves no training or no test image of {len(data)}")
    return data[torch.as_tensor(order[:n_train])], data[torch.as_tensor(order[n_train:])]


def load_data(config: Any, dataset: str, fold: int | None, root) -> VRData:
    """Training and test images of a cell (Frey Face: run ``fold``).  ``config`` is anything with ``n_folds``,
    ``fold_seed``, ``freyface`` (its ``splits`` and ``train_fraction``) and the mappings ``n_train``, ``n_test``,
    ``validation`` (data set → number)."""
    from fyexp.data.caltech import load_caltech
    from fyexp.data.freyface import fold_split, load_freyface
    from fyexp.data.vision import load_images

    root = None if root is None else str(root)
    if dataset == "freyface":
        protocol = config.freyface
        if protocol.splits == "seeded":
            train, test = seeded_split(load_freyface(root), config.fold_seed + fold, protocol.train_fraction)
        else:
            train, test = fold_split(load_freyface(root), fold, config.n_folds, config.fold_seed)
        binarize = False
    elif dataset == "caltech":
        splits = load_caltech(root)
        train, test, binarize = splits.train, splits.test, False
    else:
        if root is None:
            raise FyexpError("MNIST needs a data root (pass --data-dir or FYEXP_DATA_DIR)")
        train, gray_test = load_images("MNIST", root, True), load_images("MNIST", root, False)
        test = torch.bernoulli(gray_test, generator=torch.Generator().manual_seed(0))
        binarize = True
    caps: Mapping[str, int] = config.n_train
    train = train[:caps.get(dataset)]
    test = test[:config.n_test.get(dataset)]
    n_valid = config.validation.get(dataset, 0)
    if n_valid >= len(train):
        raise FyexpError(f"validation: {n_valid} images of {dataset} held out, but its training part has {len(train)}")
    if n_valid:
        return VRData(train[:-n_valid], test, binarize, train[-n_valid:])
    return VRData(train, test, binarize)


__all__ = ["DATASETS", "IMAGE_SHAPES", "VRData", "load_data", "seeded_split"]
