"""How far the plan's scaled estimate (:mod:`fyexp.run.estimate`) is from cells that did run.

For every finished cell of an experiment at the target profile (``--to``, default ``paper``), the time the plan would
have given it from the source profile's cells alone (``--from``, default ``cpu``), scaled by training examples and
evaluation samples, against its recorded ``wall_time_s``; printed per data set: cells, the median ratio
estimate / recorded and its range::

    python scripts/check_scaled_estimates.py [--experiment vr-vae] [--from cpu] [--to paper] [--results-dir results]

The target cell's work is read from its own run record (what it ran), not from the spec now.  A ratio near 1 says
the extrapolation holds for that data set between those profiles; it says nothing for a data set neither profile
ran at the target (vr-vae's MNIST at ``paper``: its figure is the one this check cannot test).

2026-11-29 (committed results): vr-vae ``cpu`` → ``paper`` Caltech 0.86 (0.70-0.99, 6 cells), Frey Face 1.36
(0.72-1.92, 40 cells); frac-vae ``cpu`` → ``claims`` MNIST 0.51, Fashion-MNIST 0.37 (the ``cpu`` profile also cuts the
samples per image): docs/profiles.md, "Scaled estimates".
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path


def check(results_dir: Path, name: str, source: str, target: str) -> dict[str, list[float]]:
    """Per data set, the ratios estimate / recorded of the ``target`` profile's finished cells."""
    from fyexp.experiments import get_experiment
    from fyexp.run.estimate import cell_times, csv_rows, records_as_recorded, recorded_factor, scaled_cell_estimate
    from fyexp.store.provenance.record import stated_settings
    from fyexp.spec.settings import training_epochs
    from fyexp.spec.specs import load_spec

    experiment = get_experiment(load_spec(name).runner)
    cell_root = Path(results_dir) / name / "cells"
    others = [p.name for p in cell_root.glob("*") if p.is_dir() and p.name != source]
    records, folder = records_as_recorded(results_dir, name, experiment, others)
    ratios: dict[str, list[float]] = {}
    for cell_file in sorted((cell_root / target).glob("*.csv")):
        times, stated = cell_times(csv_rows(cell_file)), stated_settings(cell_file)
        if times is None or stated is None or not isinstance(stated.get("config"), dict):
            continue
        method, params, wall = times.method, times.params, times.wall
        config = stated["config"]
        found = scaled_cell_estimate(method, params, training_epochs(config), experiment.work(config, params),
                                     records)
        if found is not None and wall > 0:
            ratios.setdefault(str(params.get("dataset", "-")), []).append(found[0] * recorded_factor(folder) / wall)
    return ratios


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--experiment", default="vr-vae")
    parser.add_argument("--from", dest="source", default="cpu", help="the profile whose cells are scaled")
    parser.add_argument("--to", dest="target", default="paper", help="the profile whose recorded cells are the truth")
    parser.add_argument("--results-dir", type=Path, default=Path("results"))
    args = parser.parse_args(argv)
    ratios = check(args.results_dir, args.experiment, args.source, args.target)
    print(f"{args.experiment}: '{args.target}' cells estimated from the '{args.source}' cells alone "
          f"(ratio = estimate / recorded wall time)")
    if not ratios:
        print("  no finished cell at the target profile has an estimate")
    for dataset, values in sorted(ratios.items()):
        print(f"  {dataset:<12} {len(values):>3} cells  median ratio {statistics.median(values):.2f}  "
              f"range {min(values):.2f}-{max(values):.2f}")


if __name__ == "__main__":
    main()
