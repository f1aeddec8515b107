"""This machine's speed, measured once and kept in the user cache: what turns a wall time recorded on another machine
into an estimate for this one.

The committed ``results/`` (and :data:`fyexp.run.estimate.PROFILE_TIMES`, the measured times of the ``quick`` profiles)
were recorded on the project's machine; a cell takes another time on a faster or slower one.  fyexp measures this
machine with a short fixed workload (:func:`workload_seconds`, about 0.1 s in all: a loop of Python arithmetic and small
``float32`` matrix products in numpy, the two kinds of work fyexp's cells spend their time on; both single-threaded, as
a cell is by default), timed in CPU seconds (``time.process_time``: the time other processes take the core is not
counted), the least of up to :data:`REPEATS` runs (stopping once the two least agree), so that load on a shared machine
counts as little as it can. The estimate of a recorded cell is then

    wall_time_s(recorded) × factor,   factor = seconds(this machine) / :data:`REFERENCE_SECONDS`,

:data:`REFERENCE_SECONDS` the same workload's seconds on the machine that recorded the committed times (a 2-core
Xeon at 2.6 GHz, measured with this module).  A time recorded in the user's own results folder was recorded here,
and is not scaled.  The factor is the only thing the calibration decides: it does not know a cell's own balance of
Python and BLAS, memory or disk, so a machine much faster in one than the other is estimated roughly.

The measurement is kept in the user cache (:mod:`fyexp.store.user_cache`, kind ``speed``), keyed by the machine's name,
processor and core count and by this module's workload, so ``fyexp list`` pays for it once, with the load average
at the time (``os.getloadavg``, the last minute).  CPU seconds still grow under load (hyperthreads and caches
shared with busy processes: a measurement during a pip install read 3.8× the quiet one), so the rule is:

* a *quiet* measurement (load average at most the core count) is kept :data:`KEEP_S` (a week);
* a *loaded* one (load average above the core count) is kept :data:`LOADED_KEEP_S` (a day) and is measured again
  by the first command that finds the machine quiet;
* a machine that reports no load average counts as quiet.

The plan, ``fyexp list`` and ``fyexp show`` print the factor with the rule that kept it (:func:`speed_text`).  ``FYEXP_MACHINE_SPEED=F`` sets the factor F instead (``1``: estimates exactly as recorded; the tests use
it), and a cache switched off (``FYEXP_CACHE_DIR=off``) measures in each process.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

__all__ = ["AGREE", "KEEP_S", "LOADED_KEEP_S", "MIN_REPEATS", "REFERENCE_SECONDS", "REPEATS", "Speed", "is_loaded",
           "load_average", "machine_speed", "speed_text", "workload_seconds"]

#: CPU seconds of :func:`workload_seconds` on the machine that recorded the committed times (the least of 20
#: measurements on 2026-12-02; at the load of the project's background runs they ranged 0.031-0.052 s: two
#: hyperthreads shared with eight busy processes, so a factor measured under such load reads up to ~1.7)
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
    """This machine's factor (its workload seconds over :data:`REFERENCE_SECONDS`; 1 as recorded, 0.5 twice as
    fast), the seconds measured (``None`` where ``$FYEXP_MACHINE_SPEED`` set it) and when (epoch seconds)."""

    factor: float
    seconds: float | None = None
    measured_at: float | None = None
    load: float | None = None     # the load average when measured (None: not reported)
    cores: int | None = None      # the machine's cores then

    @property
    def source(self) -> str:
        return f"${ENV}" if self.seconds is None else "calibration"

    @property
    def loaded(self) -> bool:
        """Whether it was measured under load (:func:`is_loaded`)."""
        return self.seconds is not None and is_loaded(self.load, self.cores)


def load_average() -> float | None:
    """The system's load average over the last minute; ``None`` where the system reports none."""
    try:
        return float(os.getloadavg()[0])
    except (AttributeError, OSError):
        return None


def is_loaded(load: float | None, cores: int | None) -> bool:
    """A load average above the core count: the machine is busier than it has cores (``None``: not loaded)."""
    return load is not None and load > (cores or 1)


def workload_seconds(repeats: int = REPEATS) -> float:
    """The least CPU seconds of up to ``repeats`` timings of the fixed workload: 180,000 steps of Python arithmetic
    and 1,200 products of two 64 × 64 ``float32`` matrices (small enough that numpy's BLAS runs them on one thread).

    It stops early, after :data:`MIN_REPEATS` timings, once the two least agree to within :data:`AGREE` (relative):
    on a quiet machine the first timing (cold caches) is the slowest and the next two agree, so the calibration costs
    three timings, not five; under load the timings scatter and it takes all ``repeats`` (:func:`_settled`)."""
    import numpy as np

    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((64, 64), dtype=np.float32), rng.standard_normal((64, 64), dtype=np.float32)
    timings: list[float] = []
    for _ in range(repeats):
        start = time.process_time()
        total = 0.0
        for i in range(180_000):
            total += (i % 7) * 0.5 - (i & 3)
        c = a
        for _ in range(1200):
            c = np.tanh(c @ b)   # saturates near ±1: no decay into slow subnormal numbers
        timings.append(time.process_time() - start)
        if _settled(timings):
            break
    return min(timings)


def _settled(timings: list[float]) -> bool:
    """Whether the calibration may stop: at least :data:`MIN_REPEATS` timings, the two least within :data:`AGREE`
    of each other (relative to the least)."""
    if len(timings) < MIN_REPEATS:
        return False
    first, second = sorted(timings)[:2]
    return second - first <= AGREE * first


def _machine() -> str:
    import platform

    return f"{platform.node()}|{platform.machine()}|{platform.processor()}|{os.cpu_count()}|v{WORKLOAD_VERSION}"


def machine_speed(now: float | None = None) -> Speed:
    """This machine's :class:`Speed`: ``$FYEXP_MACHINE_SPEED`` when set (a positive number), else the user cache's
    measurement when under :data:`KEEP_S` old, else a new measurement (saved there)."""
    from fyexp.core.errors import FyexpError
    from fyexp.store.user_cache import load_entry, save_entry

    chosen = os.environ.get(ENV)
    if chosen not in (None, ""):
        try:
            factor = float(chosen)
        except ValueError:
            factor = float("nan")
        if not factor > 0 or factor == float("inf"):
            raise FyexpError(f"${ENV}={chosen!r}: expected a positive number (the factor on recorded wall times; "
                             f"1 = as recorded)")
        return Speed(factor)
    now = time.time() if now is None else now
    cores = os.cpu_count() or 1
    kept = load_entry("speed", _machine(), WORKLOAD_VERSION)
    if isinstance(kept, tuple) and len(kept) == 3:
        found = Speed(kept[0] / REFERENCE_SECONDS, kept[0], kept[1], kept[2], cores)
        if _still_good(found, now, load_average()):
            return found
    load = load_average()
    seconds = workload_seconds()
    save_entry("speed", _machine(), WORKLOAD_VERSION, (seconds, now, load))
    return Speed(seconds / REFERENCE_SECONDS, seconds, now, load, cores)


def _still_good(kept: Speed, now: float, load_now: float | None) -> bool:
    """Whether a kept measurement serves at ``now`` (the module's rule): a quiet one under :data:`KEEP_S` old; a
    loaded one under :data:`LOADED_KEEP_S` old and only while the machine is still loaded (``load_now``)."""
    age = now - (kept.measured_at or 0.0)
    if not kept.loaded:
        return 0 <= age < KEEP_S
    return 0 <= age < LOADED_KEEP_S and is_loaded(load_now, kept.cores)


def speed_text(speed: Speed) -> str:
    """The factor in the words the plan, ``list`` and ``show`` print, with the rule that keeps it: ``× 0.62 for
    this machine's speed (calibration, kept a week)``; ``× 3.8 for this machine's speed (calibration at load 3.3 on
    2 cores, kept a day or until the machine is quiet)``; ``× 2 for this machine's speed ($FYEXP_MACHINE_SPEED)``."""
    if speed.seconds is None:
        return f"× {speed.factor:.2g} for this machine's speed ({speed.source})"
    if speed.loaded:
        return (f"× {speed.factor:.2g} for this machine's speed (calibration at load {speed.load:.1f} on "
                f"{speed.cores} cores, kept a day or until the machine is quiet)")
    return f"× {speed.factor:.2g} for this machine's speed (calibration, kept a week)"
