"""Size and time of the GPU kit's data pack (:func:`gpu_kit.data.pack_data_set`, LZMA ``.tar.xz``) against the
deflate ``.npz`` it replaced, on the same files, interleaved per round; and the unpacking time of each::

    python scripts/bench_pack.py [--data-dir DIR] [--data-set MNIST] [--rounds 1] [--smoke]

Without ``--data-dir`` (or ``$FYEXP_DATA_DIR``), and with ``--smoke``, it packs a stand-in: MNIST-shaped idx files
of 28×28 images drawn as blurred strokes on black (2,000 images; 200 with ``--smoke``), which compress much as
the digits do; the sizes that matter are the real ones.

2026-11-29, the real data sets on this 2-core machine beside two training cells (one round):
MNIST deflate 10.7 MiB in 28 s, LZMA 9.0 MiB in 47 s (size ratio 0.84); Fashion-MNIST 29.2 MiB → 25.2 MiB in
33 → 58 s (0.86).  Unpacking is a few seconds either way.  Fashion-MNIST's 4 MiB are what lets it travel beside the
32.3 MiB tree (docs/contributing/gpu-lease.md).
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np


def deflate_pack(name: str, data_dir: Path, target: Path) -> int:
    """The former packing: each file's bytes as one uint8 array of a deflate ``.npz``; its size in bytes."""
    from gpu_kit.data import DATA_FILES

    arrays = {f"f{i}": np.frombuffer((data_dir / rel).read_bytes(), dtype=np.uint8)
              for i, rel in enumerate(DATA_FILES[name])}
    np.savez_compressed(target, **arrays)
    return target.stat().st_size


def deflate_unpack(source: Path) -> int:
    with np.load(source) as packed:
        return sum(len(packed[k].tobytes()) for k in packed.files)


def stand_in(root: Path, n_train: int, n_test: int) -> None:
    """MNIST-shaped idx files of stroke-like images (a deterministic draw)."""
    rng = np.random.default_rng(0)

    def images(n: int) -> bytes:
        canvas = np.zeros((n, 28, 28), dtype=np.float32)
        for k in range(n):
            for _ in range(3):
                r, c = rng.integers(6, 22, size=2)
                dr, dc = rng.integers(-1, 2, size=2)
                for step in range(8):
                    canvas[k, np.clip(r + dr * step, 0, 27), np.clip(c + dc * step, 0, 27)] = 1.0
        blurred = (canvas + np.roll(canvas, 1, 1) + np.roll(canvas, 1, 2)) / 3
        pixels = (np.clip(blurred, 0, 1) * 255).astype(np.uint8)
        return np.array([0, 0, 8, 3], np.uint8).tobytes() + np.array([n, 28, 28], ">i4").tobytes() + pixels.tobytes()

    def labels(n: int) -> bytes:
        return np.array([0, 0, 8, 1], np.uint8).tobytes() + np.array([n], ">i4").tobytes() + \
            rng.integers(0, 10, n, dtype=np.uint8).tobytes()

    raw = root / "MNIST" / "raw"
    raw.mkdir(parents=True, exist_ok=True)
    (raw / "train-images-idx3-ubyte").write_bytes(images(n_train))
    (raw / "train-labels-idx1-ubyte").write_bytes(labels(n_train))
    (raw / "t10k-images-idx3-ubyte").write_bytes(images(n_test))
    (raw / "t10k-labels-idx1-ubyte").write_bytes(labels(n_test))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, default=os.environ.get("FYEXP_DATA_DIR") or None)
    parser.add_argument("--data-set", default="MNIST")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--smoke", action="store_true", help="a small stand-in, one round")
    args = parser.parse_args()
    from gpu_kit.data import pack_data_set, unpack_data_set

    with tempfile.TemporaryDirectory() as scratch:
        scratch = Path(scratch)
        data_dir, name = args.data_dir, args.data_set
        if args.smoke or data_dir is None:
            data_dir, name = scratch / "data", "MNIST"
            stand_in(data_dir, 200 if args.smoke else 2000, 50 if args.smoke else 500)
        times = {"deflate": [], "lzma": [], "deflate unpack": [], "lzma unpack": []}
        sizes = {}
        for _ in range(1 if args.smoke else args.rounds):
            start = time.perf_counter()
            sizes["deflate"] = deflate_pack(name, Path(data_dir), scratch / "pack.npz")
            times["deflate"].append(time.perf_counter() - start)
            start = time.perf_counter()
            record = pack_data_set(name, Path(data_dir), scratch / "pack.tar.xz")
            times["lzma"].append(time.perf_counter() - start)
            sizes["lzma"] = record["packed_bytes"]
            start = time.perf_counter()
            deflate_unpack(scratch / "pack.npz")
            times["deflate unpack"].append(time.perf_counter() - start)
            start = time.perf_counter()
            unpack_data_set(record, scratch / "pack.tar.xz", scratch / "root")
            times["lzma unpack"].append(time.perf_counter() - start)
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"{name}: deflate .npz {sizes['deflate'] / 2**20:.2f} MiB in {med['deflate']:.2f} s, "
          f"LZMA .tar.xz {sizes['lzma'] / 2**20:.2f} MiB in {med['lzma']:.2f} s")
    print(f"size ratio LZMA / deflate {sizes['lzma'] / sizes['deflate']:.3f}; "
          f"pack time ratio {med['lzma'] / max(med['deflate'], 1e-9):.2f}x; "
          f"unpack {med['deflate unpack']:.2f} s vs {med['lzma unpack']:.2f} s")


if __name__ == "__main__":
    main()
