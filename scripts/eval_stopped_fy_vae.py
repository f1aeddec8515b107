"""Evaluate a stopped fy-vae cell at its last checkpoint: what the authors' script would have tested.

A cell whose loss became non-finite fails in fyexp (the Trainer stops and says so; no number is written).  The
authors' script (deep-spin/fy-vi ``fy-vae-image/mvb.py`` at 27bd093) has no such guard: it keeps training on NaN
weights, and at the end it tests the checkpoint it last saved (lines 181–189, 205), which a NaN validation error
never overwrites — a model from before the divergence.  fyexp's Trainer writes a checkpoint at the end of every
finite epoch, so the failed cell's work folder holds the model at the end of the last epoch before the one that
diverged.  This script measures the FYVI Table 2 errors of that model, exactly as the runner measures a finished
cell (:func:`fyexp.metrics.reconstruction.l1_errors` on the test set).

It is a diagnostic of ours, not the authors' rule: their checkpoint is the best validation point *within* the
last finite epoch (validation every 50 batches), ours the end of the epoch before; the numbers go into the NOTES,
never into ``results.csv``.

    python scripts/eval_stopped_fy_vae.py WORK_DIR [WORK_DIR ...] [--profile paper] [--data-dir DIR]

Each WORK_DIR is ``results/fy-vae/work/<profile>/<cell key>``; the cell's parameters are read from its key.
"""

from __future__ import annotations

import argparse
import math
import os
from pathlib import Path

import torch

from fyexp.experiments import get_config_class, get_experiment
from fyexp.metrics.reconstruction import l1_errors
from fyexp.results import Cell
from fyexp.specs import load_spec, resolve


def cell_from_key(key: str) -> Cell:
    """``method__name=value__…__seed=S`` → the :class:`Cell` (values parsed as numbers where they are)."""
    method, *pairs = key.split("__")
    params = {}
    for pair in pairs:
        name, value = pair.split("=", 1)
        try:
            params[name] = float(value) if "." in value or "e" in value else int(value)
        except ValueError:
            params[name] = value
    seed = int(params.pop("seed"))
    params = {k: float(v) if k.endswith("rho") else v for k, v in params.items()}
    return Cell(method, seed, params)


def evaluate(work_dir: Path, profile: str, data_dir: str) -> dict:
    experiment = get_experiment("fy_vae")
    resolved = resolve(load_spec("fy-vae"), profile, get_config_class("fy_vae"))
    config = resolved.config
    cell = cell_from_key(work_dir.name)
    data = experiment.load_data(cell.params["dataset"], data_dir, config.n_train, config.n_valid, config.n_test)
    task = experiment._task(config, cell, data)
    state = torch.load(work_dir / "checkpoint.pt", map_location="cpu", weights_only=False)
    task.model.load_state_dict(state["model"])
    torch.manual_seed(0)
    errors = l1_errors(task.model.eval(), data.test)
    out = {"epoch": int(state["epoch"])}
    for latent, v in errors.items():
        out[latent] = (float(v.mean()), 2 * float(v.std()) / math.sqrt(len(v)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("work_dirs", nargs="+", type=Path)
    parser.add_argument("--profile", default="paper")
    parser.add_argument("--data-dir", default=os.environ.get("FYEXP_DATA_DIR"))
    args = parser.parse_args()
    for work_dir in args.work_dirs:
        result = evaluate(work_dir, args.profile, args.data_dir)
        epoch = result.pop("epoch")
        numbers = "  ".join(f"{k} {m:.3f} ± {e:.3f}" for k, (m, e) in result.items())
        print(f"{work_dir.name}: checkpoint of epoch {epoch}: {numbers}")


if __name__ == "__main__":
    main()
