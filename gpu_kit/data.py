"""The data files a unit reads, packed for the trip and unpacked on the device into a data root of the usual layout.

Each data set is the list of files its loader reads under the data root (``MNIST/raw/*-ubyte`` in torchvision's
layout, Marlin's Caltech ``.mat``, the Frey Face pickle, the 20 Newsgroups by-date archive and NVDM's
``test.feat``).  A pack is one ``.tar.xz`` (:data:`PACK_SUFFIX`) holding each file's bytes as they are, compressed
with LZMA, and unpacking writes the same bytes back: the device's loaders read exactly the files the CPU reads,
through their own code (no second reader to keep in step).  LZMA, not deflate (our choice, measured 2026-11-29 on
the raw idx files): Fashion-MNIST packs to 25.2 MiB instead of 29.2, MNIST to 9.0 instead of 10.7, at about twice
the packing time (a minute, once per data set; unpacking takes seconds) — the 4 MiB that let Fashion-MNIST travel
beside a 32 MiB tree (docs/contributing/gpu-lease.md).  Frey Face packs to 1.0 MiB, Caltech 0.8, 20 Newsgroups (an archive
already gzipped) 14.6.
"""

from __future__ import annotations

import hashlib
import io
import tarfile
from pathlib import Path
from typing import Callable, Sequence

from fyexp.core.errors import FyexpError
from fyexp.store.results import Cell

__all__ = ["DATA_FILES", "PACK_SUFFIX", "TYPICAL_PACKED_MIB", "data_sets", "choose_units", "pack_data_set",
           "unpack_data_set"]

#: a packed data set's file name: ``<name>.tar.xz``
PACK_SUFFIX = ".tar.xz"
#: LZMA preset of a pack (6, xz's default: 9 gains under 1% here at twice the memory)
PACK_PRESET = 6

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
TYPICAL_PACKED_MIB = {"MNIST": 9.0, "FashionMNIST": 25.3, "caltech": 0.8, "freyface": 1.0, "20newsgroups": 14.6}

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


def pack_data_set(name: str, data_dir: Path, target: Path) -> dict:
    """Write ``target`` (``.tar.xz``) holding the bytes of every file of data set ``name`` under ``data_dir``, each
    under its path relative to the data root; return its record (files with sizes and SHA-256, packed size).  A
    missing file is a one-line error."""
    files = {}
    for relative in DATA_FILES[name]:
        path = Path(data_dir) / relative
        if not path.is_file():
            raise FyexpError(f"pack: data set {name}: {path} is missing (expected the files {', '.join(DATA_FILES[name])} "
                             f"under the data root; pass --data-dir or set FYEXP_DATA_DIR)")
    target.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(target, "w:xz", preset=PACK_PRESET) as archive:
        for relative in DATA_FILES[name]:
            raw = (Path(data_dir) / relative).read_bytes()
            member = tarfile.TarInfo(relative)
            member.size = len(raw)            # no owner, mode or time: the same files pack to the same bytes
            archive.addfile(member, io.BytesIO(raw))
            files[relative] = {"bytes": len(raw), "sha256": hashlib.sha256(raw).hexdigest()}
    return {"file": target.name, "packed_bytes": target.stat().st_size, "files": files}


def unpack_data_set(record: dict, source: Path, data_root: Path) -> None:
    """Write the files of a packed data set (``source``, its ``record``) under ``data_root``, checking each file's
    SHA-256 (a damaged or incomplete pack is a one-line error)."""
    try:
        with tarfile.open(source, "r:xz") as archive:
            for relative, expected in record["files"].items():
                handle = archive.extractfile(relative)
                raw = handle.read() if handle is not None else b""
                if hashlib.sha256(raw).hexdigest() != expected["sha256"]:
                    raise FyexpError(f"run: {source}: file {relative} does not match its checksum (the pack is "
                                     f"damaged; pack again)")
                path = Path(data_root) / relative
                path.parent.mkdir(parents=True, exist_ok=True)
                if not path.is_file() or path.stat().st_size != len(raw):
                    path.write_bytes(raw)
    except (tarfile.TarError, KeyError, EOFError, OSError) as exc:   # a truncated or foreign file, a missing member
        raise FyexpError(f"run: {source}: cannot be read as a data pack ({exc}; pack again)") from None


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
