"""Sizing pilot of the frac-vae ``claims`` profile: how many epochs until the training curve flattens, and what a
cell costs in CPU time (not a test; issue 33, queue item 6).

Runs one ELBO cell (L_γ, γ = 1) and one fractional cell (default γ = 0.9) of Table 2 (MNIST, seed 0) at the
``claims`` profile's settings with a longer epoch budget (``--epochs``), each through the installed ``fyexp run``
(``--set`` overrides, so the rows form a variant of the profile in a scratch results folder, never scored as it),
two single-threaded cells side by side; reads the per-epoch training objective the Trainer logs (the cell's work
folder ``metrics.csv``, ``-train_loss`` = the bound averaged over the epoch) and picks, per cell, the first epoch
``e`` after which the curve has flattened:

    gain(e − W → e) < tol × gain(1 → e)        (W = ``--window`` epochs, tol = ``--tol``)

i.e. the last W epochs added less than ``tol`` of everything gained so far.  The profile's epoch count is the
larger of the two cells' epochs.  Prints each cell's CPU seconds (``os.wait4``'s user + system of the child),
its training CPU share (the epochs' share of the cell's wall time), the flattening epochs, and draws the curves
(``--figure``, a small PNG with the chosen epoch marked).

Usage::

    nice -n 5 python scripts/frac_claims_sizing.py --epochs 15 --figure results/frac-vae/figures/frac-claims-sizing.png
    python scripts/frac_claims_sizing.py --smoke          # seconds: the quick profile, 2 epochs, no figure file kept
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SMOKE = {"profile": "quick", "epochs": 3, "window": 1, "step_batches": 1, "step_k": 4}


def step_cpu_seconds(batches: int, k: int) -> dict[str, float]:
    """CPU seconds of one training step (batch of 64, forward, backward, Adam) of each objective family of the
    profile, one thread, after a warm-up step: L_γ with K samples, L^h_γ with √K × √K, the β-VAE with K (Monte
    Carlo KL) — the per-step cost the profile's estimate multiplies by its steps."""
    import torch

    from fyexp.models.semi_implicit import build_conv_vae
    from fyexp.objectives import ELBO, Fractional
    from fyexp.objectives.semi_implicit import HierarchicalFractional

    torch.set_num_threads(1)
    side = max(1, round(k ** 0.5))
    families = {f"L_0.9 K={k}": (False, Fractional(gamma=0.9, n_samples=k)),
                f"L^h_0.9 {side}x{side}": (True, HierarchicalFractional(gamma=0.9, n_u=side, n_z=side)),
                f"L^beta_10 K={k}": (False, ELBO(beta=10.0, analytic=False, n_samples=k))}
    out = {}
    for name, (semi, objective) in families.items():
        torch.manual_seed(0)
        model = build_conv_vae(2, 32, "consistent", 1e-4, bayes=False, semi_implicit=semi, n_implicit=side)
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, weight_decay=1e-5)
        x = torch.rand(64, 784)
        for i in range(batches + 1):
            if i == 1:
                start = time.process_time()
            bound, _ = objective(model, x)
            optimizer.zero_grad()
            (-bound.mean()).backward()
            optimizer.step()
        out[name] = (time.process_time() - start) / batches
    return out


def flatten_epoch(curve: list[float], window: int, tol: float) -> int | None:
    """The first epoch (1-based) ``e > window`` with ``curve[e] − curve[e − window] < tol · (curve[e] − curve[1])``,
    or None when the curve never flattens by that rule within its epochs."""
    for e in range(window + 1, len(curve) + 1):
        total = curve[e - 1] - curve[0]
        if total > 0 and curve[e - 1] - curve[e - 1 - window] < tol * total:
            return e
    return None


def command(args, value: float, results: Path) -> list[str]:
    here = Path(sys.executable).parent / "fyexp"        # this interpreter's installed script, else the PATH's
    fyexp = str(here) if here.is_file() else shutil.which("fyexp") or "fyexp"
    sets = {"grid.method": "[L]", "grid.value": f"[{value}]", "grid.include": "[]", "train.epochs": str(args.epochs)}
    sets.update(dict(s.split("=", 1) for s in args.set))
    out = [fyexp, "run", "frac-vae", "--profile", args.profile, "--seeds", "0", "--results-dir", str(results),
           "--device", "cpu", "--threads-per-job", "1"]
    if args.data_dir:
        out += ["--data-dir", args.data_dir]
    for key, val in sets.items():
        out += ["--set", f"{key}={val}"]
    return out


def run_cells(args, results: Path) -> dict[float, dict]:
    """Each value's cell in its own ``fyexp run`` process, side by side; CPU seconds per process."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    procs = {}
    for value in args.values:
        log = open(results / f"pilot-{value:g}.log", "w")
        start = time.perf_counter()
        procs[subprocess.Popen(command(args, value, results / f"v{value:g}"), stdout=log, stderr=subprocess.STDOUT,
                               env=env).pid] = (value, start, log)
    out = {}
    while procs:
        pid, status, usage = os.wait4(-1, 0)
        if pid not in procs:
            continue
        value, start, log = procs.pop(pid)
        log.close()
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit(f"frac_claims_sizing: the cell for value {value:g} failed; see {log.name}")
        out[value] = {"cpu_s": usage.ru_utime + usage.ru_stime, "wall_s": time.perf_counter() - start}
    return out


def read_costs(args) -> dict[float, dict]:
    """The CPU and wall seconds an earlier run of this script wrote to ``--json`` (nan without one: a pilot stopped
    early, read with ``--read``)."""
    old = json.loads(args.json.read_text())["cells"] if args.json and args.json.is_file() else {}
    nan = float("nan")
    return {v: {k: old.get(f"{v:g}", {}).get(k, nan) for k in ("cpu_s", "wall_s")} for v in args.values}


def read_curve(folder: Path) -> tuple[list[float], list[float]]:
    """The training bound per epoch (−train_loss) and the epochs' wall seconds, from the cell's ``metrics.csv``."""
    paths = sorted(folder.rglob("metrics.csv"))
    if len(paths) != 1:
        sys.exit(f"frac_claims_sizing: expected one metrics.csv under {folder}, found {len(paths)}")
    rows = list(csv.DictReader(paths[0].open()))
    return [-float(r["train_loss"]) for r in rows], [float(r["epoch_time_s"]) for r in rows]


def draw(curves: dict[float, list[float]], chosen: int | None, path: Path, title: str) -> None:
    from fyexp.report.figures.output import plt, save_figure

    fig, ax = plt.subplots(figsize=(5, 3.2))
    for value, curve in curves.items():
        ax.plot(range(1, len(curve) + 1), curve, marker=".", label=f"L_{value:g}" + (" (ELBO)" if value == 1 else ""))
    if chosen is not None:
        ax.axvline(chosen, color="grey", linestyle="--", linewidth=1, label=f"chosen: {chosen} epochs")
    ax.set_xlabel("epoch")
    ax.set_ylabel("training bound (epoch mean)")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=8)
    save_figure(fig, path, dpi=80)   # a palette PNG, as every figure of the report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="claims")
    parser.add_argument("--epochs", type=int, default=15)
    parser.add_argument("--values", type=float, nargs="+", default=[1.0, 0.9])
    parser.add_argument("--window", type=int, default=3)
    parser.add_argument("--tol", type=float, default=0.05)
    parser.add_argument("--set", action="append", default=[], help="more KEY=VALUE overrides for fyexp run")
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--figure", type=Path, default=None)
    parser.add_argument("--json", type=Path, default=None, help="write the curves and costs here")
    parser.add_argument("--keep", type=Path, default=None, help="results folder to keep (default: a scratch one)")
    parser.add_argument("--step-batches", type=int, default=3, help="timed steps per objective (0: none)")
    parser.add_argument("--step-k", type=int, default=100, help="samples per datum of the timed steps")
    parser.add_argument("--steps-only", action="store_true", help="only time the training steps")
    parser.add_argument("--read", action="store_true", help="run nothing: read the curves of an earlier pilot "
                        "(--keep, its metrics.csv; CPU times from its --json when there is one)")
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args()
    if args.smoke:
        for key, value in SMOKE.items():
            setattr(args, key, value)
    steps = step_cpu_seconds(args.step_batches, args.step_k) if args.step_batches else {}
    for name, seconds in steps.items():
        print(f"step {name}: {seconds:.2f} cpu-s per batch of 64")
    if args.steps_only:
        return
    scratch = None if args.keep else tempfile.mkdtemp(prefix="frac-claims-sizing-")
    results = args.keep or Path(scratch)
    results.mkdir(parents=True, exist_ok=True)
    try:
        costs = read_costs(args) if args.read else run_cells(args, results)
        curves, report = {}, {}
        for value in args.values:
            curve, epoch_s = read_curve(results / f"v{value:g}")
            curves[value] = curve
            cost = costs[value]
            train_share = min(1.0, sum(epoch_s) / cost["wall_s"])
            report[value] = {**cost, "epochs": len(curve), "train_cpu_s": cost["cpu_s"] * train_share,
                             "flatten_epoch": flatten_epoch(curve, args.window, args.tol), "curve": curve}
            print(f"L_{value:g}: {len(curve)} epochs, cpu {cost['cpu_s']:.0f} s (wall {cost['wall_s']:.0f} s), "
                  f"training ≈ {cost['cpu_s'] * train_share:.0f} cpu-s = "
                  f"{cost['cpu_s'] * train_share / len(curve):.1f} cpu-s per epoch; curve "
                  + " ".join(f"{c:.1f}" for c in curve))
            print(f"L_{value:g}: flattened at epoch {report[value]['flatten_epoch']} "
                  f"(gain over {args.window} epochs < {args.tol:.0%} of the gain since epoch 1)")
        flat = [r["flatten_epoch"] for r in report.values()]
        chosen = None if None in flat else max(flat)
        print(f"chosen epochs: {chosen}" + ("" if chosen else " (a curve did not flatten: run more epochs)"))
        if args.figure:
            draw(curves, chosen, args.figure, f"frac-vae claims pilot: MNIST, {args.profile} settings, seed 0")
            print(f"figure: {args.figure}")
        if args.json:
            args.json.write_text(json.dumps({"settings": vars(args) | {"figure": str(args.figure), "json": None,
                                                                      "keep": str(args.keep)},
                                             "chosen": chosen, "step_cpu_s": steps,
                                             "cells": {f"{v:g}": r for v, r in report.items()}},
                                            indent=1, default=str))
    finally:
        if scratch:
            shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
