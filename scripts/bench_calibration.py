"""Benchmark of the gmm-calibration study: wall times at the paper profile and the gain from vectorization.

Prints
1. the wall time of frac Table 1 at the paper profile (5,000 replicas, ten γ's, C_γ and the three strategies);
2. the wall time of every cell of the paper profile (Tables 1, 4a–4c, Table 5 + §5.1 importance sampling,
   Figure 2), unless ``--table1-only``;
3. the speed-up of the vectorized CAVI over a per-replica loop of the same code (``cavi.fit`` on one row at
   a time) on a subset of replicas, for the Table 1 setting at γ = 0.5 and 1.0, after checking that both
   give the same posteriors.

Usage: ``python scripts/bench_calibration.py [--table1-only] [--loop-replicas 200]``
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from pathlib import Path
from tempfile import TemporaryDirectory

import numpy as np

from fyexp.calibration import cavi
from fyexp.calibration.data import simulate
from fyexp.calibration.study import run_study
from fyexp.experiments import RunContext, get_experiment
from fyexp.experiments.gmm_calibration_config import SETTINGS
from fyexp.spec.specs import load_spec, resolve


SMOKE = {"table1_only": True, "loop_replicas": 3, "replicas": 10}


def paper_config():
    spec = load_spec("gmm-calibration", Path(__file__).resolve().parents[1] / "experiments")
    experiment = get_experiment(spec.runner)
    resolved = resolve(spec, "paper", experiment.Config)
    return experiment, resolved


def bench_table1(config, seed: int) -> float:
    mix = SETTINGS["1"].mixture
    x = simulate(mix, config.n_replicas, seed).x
    start = time.perf_counter()
    run_study(x, mix.means, mix.init_means, mix.init_var, config.gammas, config.conflated_gammas, config.alpha,
              config.fit_options)
    return time.perf_counter() - start


def bench_all_cells(experiment, resolved) -> dict[str, float]:
    times = {}
    with TemporaryDirectory() as tmp:
        for cell in experiment.cells(resolved.config, resolved.seeds):
            ctx = RunContext(experiment="gmm-calibration", profile="paper", device="cpu", data_dir=None,
                             work_dir=Path(tmp) / "work", artifact_dir=Path(tmp) / "artifacts")
            start = time.perf_counter()
            experiment.run_cell(resolved.config, cell, ctx)
            times[cell.key] = time.perf_counter() - start
            print(f"  {cell.key:45s} {times[cell.key]:7.1f} s", flush=True)
    return times


def bench_loop(config, seed: int, n_rows: int) -> None:
    mix = SETTINGS["1"].mixture
    x = simulate(mix, n_rows, seed).x
    options = config.fit_options
    for gamma in (0.5, 1.0):
        start = time.perf_counter()
        batched = options.fit(x, gamma, mix.init_means, mix.init_var)
        vectorized = time.perf_counter() - start
        start = time.perf_counter()
        rows = [options.fit(x[r:r + 1], gamma, mix.init_means, mix.init_var) for r in range(n_rows)]
        looped = time.perf_counter() - start
        same = all(np.allclose(f.m[0], batched.m[r], rtol=1e-12) and f.n_iter[0] == batched.n_iter[r]
                   for r, f in enumerate(rows))
        print(f"  γ = {gamma}: vectorized {vectorized:6.2f} s, per-replica loop {looped:6.2f} s, "
              f"speed-up ×{looped / vectorized:5.1f} ({n_rows} replicas; identical results: {same})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--table1-only", action="store_true", help="skip the timing of every paper cell")
    parser.add_argument("--loop-replicas", type=int, default=200, help="replicas for the loop comparison")
    parser.add_argument("--replicas", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--smoke", action="store_true", help="tiny sizes: checks that the script runs (tests)")
    args = parser.parse_args()
    if args.smoke:
        vars(args).update(SMOKE)
    experiment, resolved = paper_config()
    config, seed = resolved.config, resolved.seeds[0]
    if args.replicas:
        config = dataclasses.replace(config, n_replicas=args.replicas)
    print(f"frac Table 1 at the paper profile ({config.n_replicas} replicas, {len(config.gammas)} γ's, C_γ, "
          f"R_l, R_l-2, R_kappa): {bench_table1(config, seed):.1f} s")
    if not args.table1_only:
        print("every cell of the paper profile:")
        times = bench_all_cells(experiment, resolved)
        print(f"all settings + Table 5 + Figure 2: {sum(times.values()):.1f} s")
    print(f"vectorized CAVI vs a per-replica loop of the same code (Table 1 setting):")
    bench_loop(config, seed, args.loop_replicas)


if __name__ == "__main__":
    main()
