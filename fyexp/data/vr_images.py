"""The image data of Li & Turner §5.1 (vr-vae): Frey Face, Caltech 101 Silhouettes and MNIST as one cell reads them.

* Frey Face: cross-validation fold ``fold`` of ``n_folds`` (one permutation, seed ``fold_seed``;
  :func:`fyexp.data.freyface.fold_split`), gray levels / 255, not binarized;
* Caltech 101 Silhouettes: the provided split, binary already;
* MNIST: gray levels for training, binarized afresh per batch by the task (``binarize``); the test set binarized
  once, x ∼ Bernoulli(gray levels) with seed 0.

Caps per data set (``n_train``, ``n_test``) cut the parts' heads; ``validation`` holds out that many images from
the END of the training part (the VI-setting stopping epoch, VR §5.1).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

import torch

from fyexp.data.freyface import HEIGHT as FREY_H
from fyexp.data.freyface import WIDTH as FREY_W
from fyexp.data.names import VR_IMAGE_DATASETS as DATASETS
from fyexp.errors import FyexpError

#: data set → (height, width) of its images
IMAGE_SHAPES = {"freyface": (FREY_H, FREY_W), "caltech": (28, 28), "mnist": (28, 28)}


@dataclass
class VRData:
    train: torch.Tensor
    test: torch.Tensor
    binarize: bool
    valid: torch.Tensor | None = None


def load_data(config: Any, dataset: str, fold: int | None, root) -> VRData:
    """Training and test images of a cell (Frey Face: cross-validation fold ``fold``).  ``config`` is anything with
    ``n_folds``, ``fold_seed`` and the mappings ``n_train``, ``n_test``, ``validation`` (data set → number)."""
    from fyexp.data.caltech import load_caltech
    from fyexp.data.freyface import fold_split, load_freyface
    from fyexp.data.vision import load_images

    root = None if root is None else str(root)
    if dataset == "freyface":
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


__all__ = ["DATASETS", "IMAGE_SHAPES", "VRData", "load_data"]
