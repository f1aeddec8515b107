"""Benchmark: VR Table 1's Frey Face set (4 methods × 10 runs) as one cell per core, or as ensembles of runs.

    python scripts/bench_vr_frey.py [--epochs 5] [--repeats 2] [--methods vae,vr_max] [--threads 1]

An ensemble (:meth:`fyexp.train.Trainer.fit_ensemble`) stacks models that differ in parameters, data and seed
only: one task, one objective.  So the Frey Face set can be ensembled per method, its 10 runs (folds) as members
(each on its own 1,768 training faces of the seeded split: the same shape for all), not per fold (the four
methods are four objectives).  For each method, ``--epochs`` epochs of its 10 runs are trained one after another
(:meth:`~fyexp.train.Trainer.fit`, what one core does with one cell at a time) and as one 10-member ensemble, in
this process with ``--threads`` threads, alternating ``--repeats`` times; the medians are reported.  The cells
are built as the runner builds them at the ``paper`` profile (:meth:`fyexp.experiments.vr_vae.VRVAE._task`, the
authors' protocol); the faces are random gray levels of the data set's shape (the cost does not depend on them).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import time

import torch

N_FACES, N_FOLDS = 1965, 10
SMOKE = {"epochs": 1, "repeats": 1, "folds": 2, "faces": 250}  # 225 training faces: 2 batches


def _members(method: str, folds: int, faces: torch.Tensor):
    """(task, training data) of each run of ``method``, built as the paper profile's cells build them."""
    from fyexp.data.vr_images import VRData, seeded_split
    from fyexp.experiments import get_experiment
    from fyexp.store.results import Cell
    from fyexp.spec.specs import load_spec, resolve

    spec = load_spec("vr-vae")
    experiment = get_experiment(spec.runner)
    config = resolve(spec, "paper", experiment.Config, seeds=[0]).config
    out = []
    for fold in range(folds):
        train, test = seeded_split(faces, config.fold_seed + fold, config.freyface.train_fraction)
        cell = Cell(method, 0, {"dataset": "freyface", "L": 1, "K": 5, "fold": fold})
        out.append((experiment._task(config, cell, VRData(train, test, False)), train, cell))
    return config, out


def _one_after_another(method, folds, faces, epochs) -> float:
    from fyexp.train import Trainer

    config, members = _members(method, folds, faces)
    train = dataclasses.replace(config.train_freyface, epochs=epochs)
    start = time.perf_counter()
    for task, data, cell in members:
        Trainer(dataclasses.replace(train, seed=cell.seed), device="cpu").fit(task, (data,))
    return time.perf_counter() - start


def _ensemble(method, folds, faces, epochs) -> float:
    from fyexp.train import Trainer
    from fyexp.train.ensemble import EnsembleMember

    config, members = _members(method, folds, faces)
    train = dataclasses.replace(config.train_freyface, epochs=epochs)
    ensemble = [EnsembleMember(task, (data,), cell.seed, None, cell.key) for task, data, cell in members]
    start = time.perf_counter()
    results = Trainer(train, device="cpu").fit_ensemble(ensemble)
    elapsed = time.perf_counter() - start
    for result in results:
        result.unwrap()
    return elapsed


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--methods", default="vae,vr_max")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--smoke", action="store_true", help="tiny sizes: a check that the script runs")
    args = parser.parse_args(argv)
    epochs, repeats, folds, n = args.epochs, args.repeats, N_FOLDS, N_FACES
    if args.smoke:
        epochs, repeats, folds, n = SMOKE["epochs"], SMOKE["repeats"], SMOKE["folds"], SMOKE["faces"]
    torch.set_num_threads(args.threads)
    faces = torch.rand(n, 560, generator=torch.Generator().manual_seed(0))
    print(f"Frey Face runs at the paper profile, {epochs} epoch(s), {folds} runs per method, {args.threads} "
          f"thread(s), load average {os.getloadavg()[0]:.1f}")
    for method in args.methods.split(","):
        _one_after_another(method, 2, faces, 1), _ensemble(method, 2, faces, 1)  # warm-up, not timed
        solo, stacked = [], []
        for _ in range(repeats):
            solo.append(_one_after_another(method, folds, faces, epochs))
            stacked.append(_ensemble(method, folds, faces, epochs))
        a, b = statistics.median(solo), statistics.median(stacked)
        print(f"{method}: {folds} runs one after another {a:.1f} s ({a / folds / epochs:.3f} s per run-epoch), "
              f"one {folds}-member ensemble {b:.1f} s ({b / folds / epochs:.3f} s per run-epoch)")
        print(f"{method}: ratio ensemble / one after another throughput: {a / b:.2f}x")


if __name__ == "__main__":
    main()
