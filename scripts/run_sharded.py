"""Run one profile's cells in parallel worker processes (e.g. many small trainings sharing one GPU).

    python scripts/run_sharded.py fy-vae --profile paper --workers 15 --device cuda --data-dir DATA --results-dir R

Each worker walks the grid and claims a cell by creating ``<results>/<exp>/work/<profile>/<cell>.claim``
exclusively (O_EXCL), so the load balances itself; a claimed cell runs through the ordinary runner
(:func:`fyexp.runner.run_experiment`), which skips finished cells and writes each one atomically.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

from fyexp.experiments import get_experiment
from fyexp.results import ResultStore
from fyexp.runner import run_experiment
from fyexp.specs import load_spec, resolve


class OneCell:
    """An experiment restricted to one of its cells (everything else delegated)."""

    def __init__(self, experiment, cell):
        self._experiment, self._cell = experiment, cell

    def cells(self, config, seeds):
        return [self._cell]

    def __getattr__(self, name):
        return getattr(self._experiment, name)


def worker(args) -> None:
    spec = load_spec(args.name)
    experiment = get_experiment(spec.runner)
    resolved = resolve(spec, args.profile, experiment.Config)
    store = ResultStore(Path(args.results_dir), spec.name)
    for cell in experiment.cells(resolved.config, resolved.seeds):
        if store.is_finished(args.profile, cell):
            continue
        claim = store.work_dir(args.profile, cell).with_suffix(".claim")
        claim.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.close(os.open(claim, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            continue
        tic = time.perf_counter()
        run_experiment(resolved, OneCell(experiment, cell), device=args.device,
                       data_dir=Path(args.data_dir) if args.data_dir else None,
                       results_dir=Path(args.results_dir), show_progress=False)
        print(f"[worker {args.worker}] {cell.key} {time.perf_counter() - tic:.1f}s", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("name")
    parser.add_argument("--profile", default="paper")
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--results-dir", default="results")
    parser.add_argument("--worker", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker is not None:
        worker(args)
        return
    argv = [sys.executable, __file__, args.name, "--profile", args.profile, "--device", args.device,
            "--results-dir", args.results_dir] + (["--data-dir", args.data_dir] if args.data_dir else [])
    procs = [subprocess.Popen(argv + ["--worker", str(i)]) for i in range(args.workers)]
    codes = [p.wait() for p in procs]
    ResultStore(Path(args.results_dir), args.name).consolidate()
    sys.exit(max(codes))


if __name__ == "__main__":
    main()
