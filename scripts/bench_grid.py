"""Benchmark: how a grid of small models best fills the hardware (issue 14, "grids that fill the hardware").

    python scripts/bench_grid.py --data-dir DATA [--steps 300] [--ensemble-steps 40] [--repeats 3] [--device cpu]

(a) FYVI Table 2's network (fy-vae's MLP VAE at the paper's sizes: 784–512–256, batch 64, Adam 5e-5, FY β-ELBO
    with β = 0.01; cell ρ = ρ′ = 1), ``--steps`` steps per cell (the paper's cell is 50 epochs × 860 steps):
    cells per hour with ONE process of ``--cores`` threads running ``--cores`` cells one after another, vs
    ``--cores`` single-threaded processes running one cell each at the same time (what ``fyexp run NAME
    --executor local`` does: submitit's local executor, one single-threaded job per core).  Both contenders are
    plain ``multiprocessing`` (spawn) workers running the fyexp Trainer, timed from a common start barrier to
    the last worker's end (process start-up excluded).
(b) ``--models`` such networks trained as one ensemble (:meth:`fyexp.train.Trainer.fit_ensemble`, stacked
    parameters + vmap) vs one after another (:meth:`~fyexp.train.Trainer.fit`), ``--ensemble-steps`` steps
    each, in this process with ``--ensemble-threads`` threads (default ``--cores``; on ``--device``).

On a shared, oversubscribed machine (load average above the core count) multi-threaded GEMMs lose most of their
time to threads waiting for each other; the load average is printed beside the numbers.

The contenders alternate (A, B, A, B, …) ``--repeats`` times; medians are reported.  Without ``--data-dir`` the
images are random binary pixels (the cost does not depend on the pixel values).
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import statistics
import time

import torch

STEPS_PER_EPOCH, PAPER_EPOCHS, BATCH = 860, 50, 64
SMOKE = {"cores": 1, "steps": 2, "ensemble_steps": 2, "models": 2, "repeats": 1, "ensemble_threads": None}


def _images(data_dir: str | None, n: int) -> torch.Tensor:
    if data_dir:
        from fyexp.data.vision import image_splits
        return image_splits("MNIST", data_dir, min(n, 55_000), 5_000).train[:n]
    g = torch.Generator().manual_seed(0)
    return (torch.rand(n, 784, generator=g) < 0.13).float()


def _task(seed: int):
    """fy-vae's cell (ρ = ρ′ = 1, FY regularizer) as ``FYVAE.measure`` builds it."""
    from fyexp.experiments.fy_vae import Config
    from fyexp.models.fy_vae import build_fy_vae
    from fyexp.objectives import ELBO
    from fyexp.train import VariationalTask, seed_everything
    config = Config()
    seed_everything(seed)
    return VariationalTask(build_fy_vae(784, config.hidden, config.latent), ELBO(beta=config.beta)), config


def _train_cells(seeds, threads, steps, data_dir, barrier, out):
    """Worker: ``threads`` torch threads, train one cell per seed one after another; report (start, end)."""
    torch.set_num_threads(threads)
    import dataclasses

    from fyexp.train import Trainer
    images = _images(data_dir, steps * BATCH)
    warm, config = _task(0)                                   # first-call costs outside the timed span
    Trainer(dataclasses.replace(config.train, epochs=1, log_every=2)).fit(warm, (images[:2 * BATCH],))
    barrier.wait()
    start = time.time()
    for seed in seeds:
        task, config = _task(seed)
        Trainer(dataclasses.replace(config.train, epochs=1, seed=seed, log_every=steps)).fit(task, (images,))
    out.put((start, time.time()))


def _processes(plan: list[tuple[list[int], int]], steps: int, data_dir: str | None) -> float:
    """Run one worker per (seeds, threads) of ``plan`` at once; the wall time from the barrier to the last end."""
    ctx = mp.get_context("spawn")
    barrier, out = ctx.Barrier(len(plan)), ctx.Queue()
    workers = [ctx.Process(target=_train_cells, args=(seeds, threads, steps, data_dir, barrier, out))
               for seeds, threads in plan]
    for w in workers:
        w.start()
    spans = [out.get() for _ in workers]
    for w in workers:
        w.join()
        if w.exitcode:
            raise SystemExit(f"a benchmark worker failed (exit code {w.exitcode})")
    return max(end for _, end in spans) - min(start for start, _ in spans)


def bench_cells(cores: int, steps: int, repeats: int, data_dir: str | None) -> None:
    one = [(list(range(cores)), cores)]                       # one process, `cores` threads, cells in sequence
    many = [([seed], 1) for seed in range(cores)]             # one single-threaded process per core
    times: dict[str, list[float]] = {"sequential": [], "per-core": []}
    for _ in range(repeats):
        times["sequential"].append(_processes(one, steps, data_dir))
        # one core (--smoke): both plans are one single-threaded process, measured once
        times["per-core"].append(_processes(many, steps, data_dir) if many != one else times["sequential"][-1])
    walls = ", ".join(f"{k} {[round(t, 1) for t in v]}" for k, v in times.items())
    print(f"(a) FYVI Table 2 network, {cores} cells × {steps} steps of batch {BATCH} per contender, "
          f"{repeats} interleaved repeats (wall times, s: {walls})")
    full = STEPS_PER_EPOCH * PAPER_EPOCHS / steps
    rates = {}
    for name, label in (("sequential", f"1 process × {cores} threads, cells one after another"),
                        ("per-core", f"{cores} processes × 1 thread, one cell per core")):
        wall = statistics.median(times[name])
        rates[name] = cores * 3600 / wall
        print(f"    {label:<52} {wall / cores / steps * 1e3:7.2f} ms/step/cell   {rates[name]:8.1f} short cells/h   "
              f"{rates[name] / full:6.3f} paper cells/h (50 epochs)")
    print(f"    per-core / sequential throughput: {rates['per-core'] / rates['sequential']:.2f}×")


def bench_ensemble(models: int, steps: int, repeats: int, cores: int, device: str, data_dir: str | None) -> None:
    import dataclasses

    from fyexp.train import EnsembleMember, Trainer
    torch.set_num_threads(cores)
    images = _images(data_dir, steps * BATCH).to(device)

    def config():
        return dataclasses.replace(_task(0)[1].train, epochs=1, log_every=steps)

    def solo(n=models, data=images):
        for seed in range(n):
            task, _ = _task(seed)
            Trainer(dataclasses.replace(config(), seed=seed), device=device).fit(task, (data,))

    def ensemble(n=models, data=images):
        members = []
        for seed in range(n):
            task, _ = _task(seed)
            members.append(EnsembleMember(task, (data,), seed, label=str(seed)))
        for result in Trainer(config(), device=device).fit_ensemble(members):
            result.unwrap()

    solo(2, images[:2 * BATCH])       # warm-up: first-call costs of both contenders, not timed
    ensemble(2, images[:2 * BATCH])

    times: dict[str, list[float]] = {"one after another": [], "one ensemble": []}
    for _ in range(repeats):
        for name, run in (("one after another", solo), ("one ensemble", ensemble)):
            if device.startswith("cuda"):
                torch.cuda.synchronize()
            tic = time.perf_counter()
            run()
            if device.startswith("cuda"):
                torch.cuda.synchronize()
            times[name].append(time.perf_counter() - tic)
    print(f"(b) {models} FYVI Table 2 networks × {steps} steps on {device} ({torch.get_num_threads()} threads), "
          f"{repeats} interleaved repeats")
    medians = {name: statistics.median(v) for name, v in times.items()}
    for name, wall in medians.items():
        print(f"    {name:<20} {wall:7.2f} s   {models * steps / wall:8.1f} model-steps/s   "
              f"(runs: {[round(t, 2) for t in times[name]]})")
    speedup = medians["one after another"] / medians["one ensemble"]
    print(f"    ensemble / one after another throughput: {speedup:.2f}×")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=os.environ.get("FYEXP_DATA_DIR"))
    parser.add_argument("--cores", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--steps", type=int, default=300, help="training steps per cell in (a)")
    parser.add_argument("--ensemble-steps", type=int, default=40, help="training steps per model in (b)")
    parser.add_argument("--models", type=int, default=12)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--device", default="cpu", help="device of (b); (a) is a CPU benchmark")
    parser.add_argument("--ensemble-threads", type=int, nargs="+", default=None,
                        help="torch threads of (b), one run per value (default: --cores)")
    parser.add_argument("--skip-cells", action="store_true", help="only (b)")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes: checks that the script runs (tests)")
    args = parser.parse_args()
    if args.smoke:
        vars(args).update(SMOKE)
    print(f"torch {torch.__version__}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at start")
    if not args.skip_cells:
        bench_cells(args.cores, args.steps, args.repeats, args.data_dir)
    for threads in args.ensemble_threads or [args.cores]:
        bench_ensemble(args.models, args.ensemble_steps, args.repeats, threads, args.device, args.data_dir)
    print(f"load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
