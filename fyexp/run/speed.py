"""This machine's speed: the factor that turns a wall time recorded on the project's machine (the committed
``results/``, :data:`fyexp.run.estimate.PROFILE_TIMES`) into an estimate for this one,

    factor = seconds(this machine) / :data:`REFERENCE_SECONDS`  (the same workload on the project's 2-core Xeon),

the least CPU seconds (``time.process_time``: other processes' time is not counted) of up to :data:`REPEATS` runs of a
fixed workload (:func:`workload_seconds`: Python arithmetic and small single-threaded ``float32`` matrix products,
what fyexp's cells spend their time on).  It is kept in the user cache (kind ``speed``) with the load average then:
CPU seconds still grow under load (during a pip install 3.8× the quiet ones), so a *quiet* measurement (load at most
the core count, or none reported) is kept :data:`KEEP_S`, a *loaded* one :data:`LOADED_KEEP_S` and only while the
machine stays loaded.  ``FYEXP_MACHINE_SPEED=F`` sets the factor (``1``: as recorded; the tests' setting).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

#: CPU seconds of :func:`workload_seconds` on the project's machine (the least of 20 on 2026-12-02; 0.031-0.052 s
#: under the project's background runs: a factor measured under such load reads up to ~1.7)
REFERENCE_SECONDS = 0.031
REPEATS = 5
MIN_REPEATS = 3           # the first timing runs on cold caches: never the only one compared
AGREE = 0.03              # two least timings this close (relative): the least of them is the machine's
KEEP_S = 7 * 24 * 3600.0          # a quiet measurement is kept a week
LOADED_KEEP_S = 24 * 3600.0       # a loaded one a day, or until a command finds the machine quiet
WORKLOAD_VERSION = 1      # change it with the workload: a measurement of another workload is never reused
ENV = "FYEXP_MACHINE_SPEED"


@dataclass(frozen=True)
class Speed:
    """The factor (0.5: twice as fast); the seconds measured (``None``: set by ``$FYEXP_MACHINE_SPEED``), when, at
    which load average (``None``: none reported) on how many cores."""
    factor: float
    seconds: float | None = None
    measured_at: float | None = None
    load: float | None = None
    cores: int | None = None

    @property
    def loaded(self) -> bool:
        return self.seconds is not None and is_loaded(self.load, self.cores)


def is_loaded(load: float | None, cores: int | None) -> bool:
    """A load average above the core count: the machine is busier than it has cores (``None``: not loaded)."""
    return load is not None and load > (cores or 1)


def workload_seconds(repeats: int = REPEATS) -> float:
    """The least CPU seconds of up to ``repeats`` timings of 180,000 steps of Python arithmetic and 1,200 products
    of two 64 × 64 ``float32`` matrices (numpy's BLAS runs them on one thread), stopping once :func:`_settled`."""
    import numpy as np

    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((64, 64), dtype=np.float32), rng.standard_normal((64, 64), dtype=np.float32)
    timings: list[float] = []
    while len(timings) < repeats and not _settled(timings):
        start = time.process_time()
        total = 0.0
        for i in range(180_000):
            total += (i % 7) * 0.5 - (i & 3)
        c = a
        for _ in range(1200):
            c = np.tanh(c @ b)   # saturates near ±1: no decay into slow subnormal numbers
        timings.append(time.process_time() - start)
    return min(timings)


def _settled(timings: list[float]) -> bool:
    """At least :data:`MIN_REPEATS` timings, the two least within :data:`AGREE` (relative) of each other."""
    if len(timings) < MIN_REPEATS:
        return False
    first, second = sorted(timings)[:2]
    return second - first <= AGREE * first


def machine_speed(now: float | None = None) -> Speed:
    """``$FYEXP_MACHINE_SPEED``, else the user cache's measurement while the module's rule keeps it, else a new one."""
    import platform

    from fyexp.core.errors import FyexpError
    from fyexp.store.user_cache import load_entry, save_entry

    if chosen := os.environ.get(ENV):
        try:
            factor = float(chosen)
        except ValueError:
            factor = 0.0
        if not 0 < factor < float("inf"):
            raise FyexpError(f"${ENV}={chosen!r}: expected a positive number (the factor on recorded wall times; "
                             f"1 = as recorded)")
        return Speed(factor)
    try:
        load = float(os.getloadavg()[0])   # over the last minute
    except (AttributeError, OSError):
        load = None
    now, cores = time.time() if now is None else now, os.cpu_count() or 1
    machine = f"{platform.node()}|{platform.machine()}|{platform.processor()}|{os.cpu_count()}|v{WORKLOAD_VERSION}"
    kept = load_entry("speed", machine, WORKLOAD_VERSION)
    if isinstance(kept, tuple) and len(kept) == 3:
        found = Speed(kept[0] / REFERENCE_SECONDS, kept[0], kept[1], kept[2], cores)
        age = now - (found.measured_at or 0.0)
        if 0 <= age < (LOADED_KEEP_S if found.loaded else KEEP_S) and (not found.loaded or is_loaded(load, cores)):
            return found
    seconds = workload_seconds()
    save_entry("speed", machine, WORKLOAD_VERSION, (seconds, now, load))
    return Speed(seconds / REFERENCE_SECONDS, seconds, now, load, cores)


def speed_text(speed: Speed) -> str:
    """The factor in words, with the rule that keeps it: ``× 0.62 for this machine's speed (calibration, …)``."""
    how = (f"${ENV}" if speed.seconds is None else "calibration, kept a week" if not speed.loaded else
           f"calibration at load {speed.load:.1f} on {speed.cores} cores, kept a day or until the machine is quiet")
    return f"× {speed.factor:.2g} for this machine's speed ({how})"
