"""``gpu_lease.py pack --dry-run``: what one allocation would finish, from recorded cells and stated assumptions.

A unit's time on the GPU is estimated from the cells of its experiment already recorded in ``results/`` (any
profile; the nearest one: same data set required, then most parameters in common, then same method and profile):

    t_cpu(cell) = median over the nearest recorded cells of  max(wall_time_s, epoch_time_s · E_row) · E / E_row

(E the unit's epochs, E_row the recorded cell's, from its settings record); where the experiment declares the work
of its cells (:meth:`~fyexp.experiments.base.Experiment.work`: vr-vae, frac-vae) and the recorded cell states its
training time, the plan's scaling instead (:func:`fyexp.run.estimate.scaled_time`): its training seconds by the
training examples E·N, the rest by the evaluation units — a ``cpu`` cell on 5,000 MNIST images is no estimate of
a ``paper`` cell on 59,600 scaled by epochs alone.  Where a nearest cell was recorded on a
CUDA device its time is taken as measured; otherwise the **assumptions**, never measurements, are

    t_gpu(unit) = t_cpu(cell) / speedup · (1 + ensemble_cost · (M − 1))     (M seeds trained as one ensemble)

and ``jobs`` units run at once with ``concurrency_gain`` times the throughput of one, so a unit occupies its slot
for t_gpu · jobs / concurrency_gain.  Units are placed in queue order on the earliest free slot of an allocation of
``jobs_per_allocation`` jobs of ``budget_s`` seconds (a unit resumed across jobs is assumed to lose nothing).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from gpu_kit.queue import QueueEntry, Unit, resolve_entry
from fyexp.core.words import duration
from fyexp.spec.settings import training_epochs

__all__ = ["Assumptions", "UnitEstimate", "estimate", "describe"]


@dataclass(frozen=True)
class Assumptions:
    speedup: float = 10.0            # one cell alone on the GPU vs its recorded time on one shared CPU core
    ensemble_cost: float = 0.25      # each extra ensemble member, as a fraction of one cell's GPU time
    jobs: int = 4                    # units at once on the device
    concurrency_gain: float = 2.5    # throughput of `jobs` units at once, in units of one alone
    jobs_per_allocation: int = 3
    budget_s: float = 540.0


@dataclass
class UnitEstimate:
    unit: Unit
    cpu_cell_s: float | None
    gpu_s: float | None
    source: str
    measured: bool = False
    end_s: float | None = None       # when its slot finishes it, from the allocation's start
    finishes: bool = False
    across_jobs: bool = False        # longer than one job: it must resume from checkpoints that came back


def _profile_epochs(experiment_name: str, experiments_dir: Path | None):
    """``(profile, cell) → epochs`` from the spec as it is now (for cells recorded without a settings record)."""
    from fyexp.core.errors import FyexpError
    from fyexp.spec.settings import scoped_config

    resolved: dict[str, Any] = {}

    def epochs(profile: str, cell) -> int | None:
        base = profile.split("+", 1)[0]
        if base not in resolved:
            try:
                resolved[base] = resolve_entry(QueueEntry("", experiment_name, base), experiments_dir)
            except (FyexpError, KeyError, TypeError, ValueError):
                resolved[base] = None
        if resolved[base] is None:
            return None
        experiment, spec = resolved[base]
        try:
            return training_epochs(scoped_config(experiment, spec.config, cell), cell.params)
        except (KeyError, TypeError, ValueError):
            return None
    return epochs


def _recorded(results_dir: Path, experiment: str, experiments_dir: Path | None = None) -> list[dict]:
    """One record per recorded ``ok`` cell of ``results.csv`` (:func:`fyexp.run.estimate.cell_times`): params, method,
    profile, device, wall time, epoch time, epochs (from its settings record, else from its profile as the spec gives
    it now)."""
    from fyexp.run.estimate import cell_times, csv_rows
    from fyexp.store.provenance.record import stated_settings
    from fyexp.store.results import Cell

    spec_epochs = _profile_epochs(experiment, experiments_dir)
    runner = _experiment(experiment, experiments_dir)
    cells: dict[tuple[str, str], list[dict]] = {}
    for row in csv_rows(Path(results_dir) / experiment / "results.csv"):
        if row.get("profile") and row.get("cell") and (row.get("status") or "ok") == "ok":
            cells.setdefault((row["profile"], row["cell"]), []).append(row)
    records = []
    for (profile, cell), rows in sorted(cells.items()):
        if (times := cell_times(rows)) is None:
            continue
        stated = stated_settings(Path(results_dir) / experiment / "cells" / profile / f"{cell}.csv") or {}
        config = stated.get("config")
        epochs = training_epochs(config, times.params)
        work = runner.work(config, times.params) if runner is not None and isinstance(config, dict) else None
        if epochs is None:
            epochs = spec_epochs(profile, Cell(times.method, int(rows[0]["seed"]), times.params))
        records.append({"profile": profile, "method": times.method, "params": times.params, "device": times.device,
                        "wall": times.wall, "epoch_time": times.epoch_time, "epochs": epochs,
                        "train_time": times.train_time, "work": work})
    return records


def _experiment(name: str, experiments_dir: Path | None):
    """The runner of experiment ``name`` (``None`` where its spec cannot be read)."""
    from fyexp.core.errors import FyexpError
    from fyexp.experiments import get_experiment
    from fyexp.spec.specs import load_spec

    try:
        return get_experiment(load_spec(name, experiments_dir).runner)
    except (FyexpError, KeyError, TypeError, ValueError):
        return None


def _one_cell(r: dict, target_epochs: int, target_work) -> float:
    """One recorded cell's time scaled to the unit's epochs (and work, where both are declared: the module text)."""
    from fyexp.run.estimate import scaled_time, training_seconds

    train = training_seconds(r.get("train_time"), r.get("epoch_time"), r["epochs"])
    if target_work is not None and r.get("work") is not None and train is not None:
        return scaled_time(train, max(r["wall"] - train, 0.0), r["epochs"], r["work"], target_epochs, target_work)
    return max(r["wall"], (r["epoch_time"] or 0.0) * r["epochs"]) * target_epochs / r["epochs"]


def _cpu_cell(unit: Unit, target_epochs: int | None, records: list[dict], target_work=None
              ) -> tuple[float | None, str, bool]:
    dataset = unit.params.get("dataset")
    usable = [r for r in records if r["epochs"] and target_epochs
              and (dataset is None or r["params"].get("dataset") == dataset)]
    if not usable:
        return None, f"no recorded cell{' of ' + str(dataset) if dataset else ''} with its epochs", False
    gpu = [r for r in usable if r["device"].startswith("cuda")]
    pool = gpu or usable

    def score(r):
        same = sum(r["params"].get(k) == v for k, v in unit.params.items())
        return r["profile"] == unit.folder, same, r["method"] == unit.method

    best = max(map(score, pool))
    nearest = [r for r in pool if score(r) == best]
    if target_work is not None and all(r.get("work") is not None for r in nearest):
        # as the plan (fyexp.run.estimate): of the nearest, the profile that trained the most, the closest in scale
        most = max(nearest, key=lambda r: (r["epochs"] * r["work"].train_examples, r["profile"]))["profile"]
        nearest = [r for r in nearest if r["profile"] == most]
    times = [_one_cell(r, target_epochs, target_work) for r in nearest]
    profiles = sorted({r["profile"] for r in nearest})
    where = "cuda" if gpu else "cpu"
    return (statistics.median(times), f"{len(nearest)} {where} cell(s) of profile {', '.join(profiles)}",
            bool(gpu))


def estimate(units: Sequence[Unit], results_dir: Path, assumptions: Assumptions = Assumptions(),
             experiments_dir: Path | None = None) -> list[UnitEstimate]:
    from fyexp.spec.settings import scoped_config

    records: dict[str, list[dict]] = {}
    out = []
    for unit in units:
        experiment, resolved = resolve_entry(unit.entry(), experiments_dir)
        config = scoped_config(experiment, resolved.config, unit.cells()[0])
        target = training_epochs(config, unit.params)
        if unit.experiment not in records:
            records[unit.experiment] = _recorded(results_dir, unit.experiment, experiments_dir)
        cpu, source, measured = _cpu_cell(unit, target, records[unit.experiment], experiment.work(config, unit.params))
        if cpu is None:
            out.append(UnitEstimate(unit, None, None, source))
            continue
        members = len(unit.seeds)
        if measured:
            gpu = cpu if unit.ensemble else cpu * members
        elif unit.ensemble:
            gpu = cpu / assumptions.speedup * (1 + assumptions.ensemble_cost * (members - 1))
        else:
            gpu = cpu / assumptions.speedup * members
        out.append(UnitEstimate(unit, cpu, gpu, source, measured))
    _schedule(out, assumptions)
    return out


def _schedule(estimates: list[UnitEstimate], a: Assumptions) -> None:
    capacity = a.jobs_per_allocation * a.budget_s
    slots = [0.0] * max(1, a.jobs)
    stretch = max(1, a.jobs) / max(a.concurrency_gain, 1e-9) if a.jobs > 1 else 1.0
    for e in estimates:
        if e.gpu_s is None:
            continue
        i = min(range(len(slots)), key=slots.__getitem__)
        start = slots[i]
        slots[i] += e.gpu_s * stretch
        e.end_s = slots[i]
        e.finishes = e.end_s <= capacity
        e.across_jobs = int(start // a.budget_s) != int(min(e.end_s, capacity) // a.budget_s) or \
            e.gpu_s * stretch > a.budget_s


def describe(estimates: Sequence[UnitEstimate], a: Assumptions) -> str:
    lines = ["What one GPU allocation would finish (an estimate, not a measurement).",
             f"ASSUMPTIONS: one cell alone on the GPU runs {a.speedup:g}x faster than its recorded time on one core "
             f"of the shared CPU (--speedup); each extra seed of an ensemble adds {a.ensemble_cost:g} of one cell's "
             f"time (--ensemble-cost); {a.jobs} units at once give {a.concurrency_gain:g}x the throughput of one "
             f"(--jobs, --concurrency-gain); an allocation is {a.jobs_per_allocation} jobs of {a.budget_s:g} s "
             f"(--jobs-per-allocation, --budget-s) and a unit resumed across jobs loses nothing. Times recorded on a "
             f"CUDA device, where a unit's nearest cells have them, replace the assumptions.",
             "",
             f"{'unit':<92} {'cells':>5} {'CPU/cell':>9} {'GPU':>9}  finishes  (recorded from)"]
    for e in estimates:
        done = ("yes*" if e.across_jobs else "yes") if e.finishes else "no" if e.gpu_s is not None else "?"
        gpu = duration(e.gpu_s) + (" (measured)" if e.measured else "")
        lines.append(f"{e.unit.name[:92]:<92} {len(e.unit.seeds):>5} {duration(e.cpu_cell_s):>9} {gpu:>9}  "
                     f"{done:<8}  ({e.source})")
    finished = [e for e in estimates if e.finishes]
    known = [e for e in estimates if e.gpu_s is not None]
    total_gpu = sum(e.gpu_s for e in known)
    cells = sum(len(e.unit.seeds) for e in estimates)
    capacity = a.jobs_per_allocation * a.budget_s
    stretch = max(1, a.jobs) / max(a.concurrency_gain, 1e-9) if a.jobs > 1 else 1.0
    allocations = total_gpu * stretch / max(1, a.jobs) / capacity if known else 0.0
    if any(e.finishes and e.across_jobs for e in estimates):
        lines.append("* spans a job's end: it finishes only if its checkpoints come back and travel again (a fy-vae "
                     "member's are about 14 MiB, an FY-NVDM cell's about 13 MiB); else it restarts in the next job")
    lines += ["", f"{len(estimates)} units ({cells} cells) in this pack; one allocation would finish {len(finished)} units "
                  f"({sum(len(e.unit.seeds) for e in finished)} cells). All units with an estimate: "
                  f"{duration(total_gpu)} of GPU time, about {allocations:.1f} allocation(s) at these assumptions"
                  + (f"; {len(estimates) - len(known)} unit(s) without a recorded time" if len(known) < len(estimates)
                     else "") + "."]
    return "\n".join(lines)
