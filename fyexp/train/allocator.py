"""glibc's ``malloc`` set up for training loops: the one process-wide setting fyexp changes for speed.

A training step allocates and frees the same large buffers every step (activations, gradients, the optimizer's
temporaries: 0.1–2 MB each for the FY β-VAE's 784-512-256 layers).  glibc serves a request above its *mmap
threshold* (128 KiB at start, raised dynamically up to 32 MiB as large blocks are freed) with a fresh ``mmap``,
and gives the top of the heap back to the system above its *trim threshold*; either way the next step's buffer is
new memory, and every page of it faults on first touch.  With both thresholds fixed high (``mallopt``:
``M_MMAP_THRESHOLD`` 32 MiB, glibc's ceiling on 64-bit, and ``M_TRIM_THRESHOLD`` 64 MiB), freed buffers stay in
the heap and are reused.  This changes where buffers lie, not what is computed: torch's CPU allocator aligns every
tensor to 64 bytes either way, and ``tests/train/test_allocator.py`` checks that a paper-shaped FY β-VAE epoch gives the
same parameters bit for bit.  Measured in ``scripts/bench_malloc.py`` (CPU time per step, alternating child
processes, on the shared 2-core machine, 2026-11-25): FY β-VAE `paper` step 0.90× (Bernoulli/Gaussian 13.6 → 12.2 ms,
β-Gaussian 14.0 → 12.6 ms), FY-NVDM `paper` pass 0.85× (269 → 228 ms), VR Caltech K = 5 unchanged (1.02×: its
buffers are small).

The cost: up to 64 MiB of freed memory kept by each process, and blocks under 32 MiB never returned while the
process lives; a training process holds its peak anyway.  ``FYEXP_MALLOC=default`` leaves glibc as it is.
Other C libraries (musl, macOS) are left alone.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys

M_TRIM_THRESHOLD = -1   # glibc's malloc.h
M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 32 * 1024 * 1024   # HEAP_MAX_SIZE / 2 on 64-bit glibc: the largest value mallopt accepts
TRIM_THRESHOLD = 64 * 1024 * 1024
SWITCH = "FYEXP_MALLOC"             # "default": leave glibc's malloc as it is

_done: bool | None = None


def tune_allocator() -> bool:
    """Set glibc's mmap and trim thresholds once per process (see the module's docstring); return whether they are
    set (``False``: switched off by ``FYEXP_MALLOC=default``, not Linux, or not glibc)."""
    global _done
    if _done is not None:
        return _done
    _done = False
    if os.environ.get(SWITCH, "") == "default" or not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
        libc.gnu_get_libc_version  # noqa: B018 (present in glibc only: musl has a mallopt that ignores these)
    except (OSError, AttributeError):
        return False
    _done = mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1 and mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD) == 1
    return _done


__all__ = ["tune_allocator", "SWITCH"]
