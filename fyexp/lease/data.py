"""The data files a unit reads, packed for the trip and unpacked on the device into a data root of the usual layout.

Each data set is the list of files its loader reads under the data root (``MNIST/raw/*-ubyte`` in torchvision's
layout, Marlin's Caltech ``.mat``, the Frey Face pickle, the 20 Newsgroups by-date archive and NVDM's
``test.feat``).  A pack stores each file's bytes as one ``uint8`` array of a compressed ``.npz`` (deflate), and
unpacking writes the same bytes back: the device's loaders read exactly the files the CPU reads, through their
own code (no second reader to keep in step).  MNIST packs to about 11 MiB, Fashion-MNIST to about 29 MiB,
Frey Face 1.2 MiB, Caltech 0.8 MiB, 20 Newsgroups 15 MiB.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from fyexp.errors import FyexpError
from fyexp.results import Cell

__all__ = ["DATA_FILES", "TYPICAL_PACKED_MIB", "data_sets", "choose_units", "pack_data_set", "unpack_data_set"]

_IDX = ("train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")

#: data set → the files (relative to the data root) its loader reads
DATA_FILES: dict[str, tuple[str, ...]] = {
    "MNIST": tuple(f"MNIST/raw/{name}" for name in _IDX),
    "FashionMNIST": tuple(f"FashionMNIST/raw/{name}" for name in _IDX),
    "caltech": ("Caltech101Silhouettes/caltech101_silhouettes_28_split1.mat",),
    "freyface": ("FreyFace/freyfaces.pkl",),
    "20newsgroups": ("20newsgroups/20news-bydate.tar.gz", "20newsgroups/nvdm/test.feat"),
}

#: packed sizes of the public files (MiB, measured with this module's packing): the dry run's sizes
TYPICAL_PACKED_MIB = {"MNIST": 11.0, "FashionMNIST": 29.4, "caltech": 0.8, "freyface": 1.2, "20newsgroups": 14.7}

#: an experiment's cell → its data sets (by the cell's ``dataset`` parameter where it has one)
_BY_DATASET = {"MNIST": "MNIST", "FashionMNIST": "FashionMNIST", "mnist": "MNIST", "caltech": "caltech",
               "freyface": "freyface"}
_BY_EXPERIMENT = {"fy-nvdm": "20newsgroups", "nvdm": "20newsgroups"}


def data_sets(experiment: str, cell: Cell) -> list[str]:
    """The data sets ``cell`` of ``experiment`` reads (empty where the kit knows none: synthetic data)."""
    if experiment in _BY_EXPERIMENT:
        return [_BY_EXPERIMENT[experiment]]
    dataset = cell.params.get("dataset")
    return [_BY_DATASET[dataset]] if dataset in _BY_DATASET else []


def _key(relative: str) -> str:
    return relative.replace("/", "|")


def pack_data_set(name: str, data_dir: Path, target: Path) -> dict:
    """Write ``target`` (``.npz``) holding the bytes of every file of data set ``name`` under ``data_dir``; return
    its record (files with sizes and SHA-256, packed size).  A missing file is a one-line error."""
    arrays, files = {}, {}
    for relative in DATA_FILES[name]:
        path = Path(data_dir) / relative
        if not path.is_file():
            raise FyexpError(f"pack: data set {name}: {path} is missing (expected the files {', '.join(DATA_FILES[name])} "
                             f"under the data root; pass --data-dir or set FYEXP_DATA_DIR)")
        raw = path.read_bytes()
        arrays[_key(relative)] = np.frombuffer(raw, dtype=np.uint8)
        files[relative] = {"bytes": len(raw), "sha256": hashlib.sha256(raw).hexdigest()}
    target.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(target, **arrays)
    return {"file": target.name, "packed_bytes": target.stat().st_size, "files": files}


def unpack_data_set(record: dict, source: Path, data_root: Path) -> None:
    """Write the files of a packed data set (``source``, its ``record``) under ``data_root``, checking each file's
    SHA-256 (a damaged pack is a one-line error)."""
    with np.load(source, allow_pickle=False) as packed:
        for relative, expected in record["files"].items():
            raw = packed[_key(relative)].tobytes()
            if hashlib.sha256(raw).hexdigest() != expected["sha256"]:
                raise FyexpError(f"run: {source}: file {relative} does not match its checksum (the pack is damaged; "
                                 f"pack again)")
            path = Path(data_root) / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            if not path.is_file() or path.stat().st_size != len(raw):
                path.write_bytes(raw)


def choose_units(units: Sequence, room: int, packed_size: Callable[[str], int]) -> tuple[list, list, list[str]]:
    """The units, in order, whose data sets fit together in ``room`` bytes (``packed_size(name)`` gives, or makes,
    a data set's packed size; it is asked once per data set): ``(kept, left for a later pack, data sets)``.  A data
    set that does not fit beside those chosen before it is left out, with every unit that reads it."""
    chosen: dict[str, int] = {}
    too_big: set[str] = set()
    kept, later = [], []
    for unit in units:
        for name in unit.data:
            if name in chosen or name in too_big:
                continue
            size = packed_size(name)
            if sum(chosen.values()) + size > room:
                too_big.add(name)
            else:
                chosen[name] = size
        (kept if all(name in chosen for name in unit.data) else later).append(unit)
    return kept, later, list(chosen)
