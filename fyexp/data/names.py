"""The names of the data sets, without their loaders: a ``Config`` validates a spec against them without torch."""

from __future__ import annotations

#: the image data sets of :mod:`fyexp.data.vision` (FY VAEs, frac VAEs)
VISION_DATASETS = ("MNIST", "FashionMNIST")
#: the data sets of :mod:`fyexp.data.vr_images` → their names in the paper's tables
VR_IMAGE_DATASETS = {"freyface": "Frey Face", "caltech": "Caltech 101 Silhouettes", "mnist": "MNIST"}

__all__ = ["VISION_DATASETS", "VR_IMAGE_DATASETS"]
