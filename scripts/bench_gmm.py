"""Benchmark of the gmm-clustering experiment.

1. Standard EM, time per iteration, ours (fyexp.em) against scikit-learn's GaussianMixture — same data (FYVI
   Table 1 blobs, 1,100 points), same initial weights/means/covariances, same ridge, tol = 0, a fixed number of
   iterations; best of ``--repeats`` runs each; printed as a ratio (≤ 1 means ours is at least as fast), with the
   largest parameter difference as a check that both computed the same thing.
2. Wall time of the whole `paper` profile (Table 1 + the Figure 2 ρ sweep, every cell), run in-process into a
   temporary folder, with CPU time and the machine's load average for context (other jobs share the cores).

Usage: ``python scripts/bench_gmm.py [--iterations 200] [--repeats 5] [--skip-profile]``
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.mixture import GaussianMixture
from threadpoolctl import threadpool_limits

from fyexp.data.gmm_blobs import make_gmm_blobs
from fyexp.em import GaussianMixtureEM, StandardEStep, authors_torch_init
from fyexp.experiments import RunContext, get_experiment
from fyexp.experiments.gmm_clustering_config import GMMClusteringConfig
from fyexp.spec.specs import load_spec, resolve


SMOKE = {"iterations": 3, "repeats": 1, "skip_profile": True}


def best_time(fn, repeats: int) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out


def bench_standard_em(iterations: int, repeats: int) -> None:
    config = GMMClusteringConfig()
    X = make_gmm_blobs(config.blobs).X
    init = authors_torch_init(0, config.n_components, X.shape[1])
    ours = GaussianMixtureEM(StandardEStep(), n_iter=iterations, reg_covar=config.reg_covar)

    def sklearn_fit():
        model = GaussianMixture(config.n_components, covariance_type="full", reg_covar=config.reg_covar, tol=0,
                                max_iter=iterations, init_params="random_from_data", weights_init=init.weights,
                                means_init=init.means, precisions_init=np.linalg.inv(init.covariances),
                                random_state=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            return model.fit(X)

    with threadpool_limits(1):  # both single-threaded BLAS: tiny matrices, shared cores
        t_ours, fitted = best_time(lambda: ours.fit(X, init), repeats)
        t_sk, model = best_time(sklearn_fit, repeats)
    diff = max(np.abs(fitted.params.means - model.means_).max(),
               np.abs(fitted.params.covariances - model.covariances_).max())
    print(f"standard EM, N={len(X)}, K={config.n_components}, {iterations} iterations, best of {repeats}:")
    print(f"  fyexp.em       {1e3 * t_ours / iterations:8.3f} ms/iteration")
    print(f"  scikit-learn   {1e3 * t_sk / iterations:8.3f} ms/iteration  (includes its one-off init and final E-step)")
    print(f"  ratio ours/sklearn = {t_ours / t_sk:.2f}   (max |Δ parameter| = {diff:.1e})")


def bench_paper_profile() -> None:
    experiments = Path(__file__).resolve().parents[1] / "experiments"
    spec = load_spec("gmm-clustering", experiments)
    experiment = get_experiment(spec.runner)
    resolved = resolve(spec, "paper", experiment.Config)
    cells = experiment.cells(resolved.config, resolved.seeds)
    with tempfile.TemporaryDirectory() as tmp:
        ctx = RunContext(experiment=spec.name, profile="paper", device="cpu", data_dir=None,
                         work_dir=Path(tmp) / "work", artifact_dir=Path(tmp) / "artifacts")
        wall, cpu = time.perf_counter(), time.process_time()
        by_method: dict[str, float] = {}
        for cell in cells:
            start = time.perf_counter()
            experiment.run_cell(resolved.config, cell, ctx)
            name = cell.method if cell.method != "sparse" else f"sparse rho={cell.params['rho']:g}"
            by_method[name] = by_method.get(name, 0.0) + time.perf_counter() - start
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(f"paper profile (Table 1 + Figure 2 sweep): {len(cells)} cells, wall {wall:.1f} s, CPU {cpu:.1f} s, "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    for name, seconds in sorted(by_method.items(), key=lambda kv: -kv[1]):
        print(f"  {name:<16} {seconds:6.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--skip-profile", action="store_true")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes: checks that the script runs (tests)")
    args = parser.parse_args()
    if args.smoke:
        vars(args).update(SMOKE)
    bench_standard_em(args.iterations, args.repeats)
    if not args.skip_profile:
        bench_paper_profile()


if __name__ == "__main__":
    main()
