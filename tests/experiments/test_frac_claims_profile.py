"""The frac-vae ``claims`` profile (issue 33, item 6): the paper's settings but for data, epochs, test set and
seeds; every row the frac Table 2, 7 and 9 claims and the FID-ordering claims (and their proxy checks) read,
derived from ``claims.yaml`` so that a claim added later is checked too (since issue 46 the L^bh rows of Table 2
and Table 9's dim(z) = 4 rows as well: no claim waits for cells the profile does not declare); its verdict is the
headline among the reduced profiles; the sizing pilot runs (smoke)."""

from __future__ import annotations

import dataclasses
import json
import math
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from tests.conftest import ROOT, cli_env, run_cli

SHRUNK = {"n_train", "n_test", "train.epochs", "table7_epochs", "grid"}   # what the profile may change
TABLES = {"2", "7", "9"}
FID_METRICS = {"fid", "frechet_proxy"}

def flat(config, prefix: str = "") -> dict:
    out = {}
    for f in dataclasses.fields(config):
        value = getattr(config, f.name)
        if dataclasses.is_dataclass(value) and f.name != "grid":
            out.update(flat(value, f"{prefix}{f.name}."))
        else:
            out[prefix + f.name] = value
    return out


def configs():
    from fyexp.experiments.frac_vae_config import Config
    from fyexp.spec.specs import load_spec, resolve

    spec = load_spec("frac-vae")
    return spec, resolve(spec, "claims", Config).config, resolve(spec, "paper", Config).config


def test_the_claims_profile_keeps_the_papers_model_objectives_and_sample_counts():
    """Only data, epochs, the test set and the rows differ from ``paper``; the curve-flattening epochs are fewer."""
    spec, claims, paper = configs()
    a, b = flat(claims), flat(paper)
    changed = {k for k in a if a[k] != b[k]}
    assert changed <= SHRUNK, changed - SHRUNK
    assert {"n_train", "train.epochs"} <= changed
    assert a["n_samples"] == 100 and (a["n_u"], a["n_z"]) == (10, 10) and a["train.batch_size"] == 64
    assert a["eval_samples"] == 1024 and a["n_train"] < b["n_train"] and a["train.epochs"] < b["train.epochs"]
    assert len(spec.profiles["claims"]["seeds"]) >= 3      # intervals for the verdicts


def needed_selectors():
    """Every selector of a frac-vae claim or check on Tables 2, 7, 9 or an FID metric (or its proxy)."""
    from fyexp.claims.model import load_claims

    out = []
    for claim in load_claims().claims:
        for s in claim.selectors():
            if s.experiment == "frac-vae" and (str(s.table) in TABLES or s.metric in FID_METRICS):
                out.append((claim.id, s))
    return out


def profile_rows(config, metrics: set[str], seeds=(0, 1, 2)) -> pd.DataFrame:
    """The rows the runner would write for ``metrics`` (base names; ``_authors`` added by the runner) in every cell
    of the profile, with the columns the store adds (method, params, profile)."""
    from fyexp.experiments.frac_vae import FracVAE
    from fyexp.experiments.grid import metric

    experiment, rows = FracVAE(), []
    for cell in experiment.cells(config, seeds):
        for r in experiment.rows(cell, [metric(m, 1.0, math.nan) for m in sorted(metrics)], config):
            rows.append({**r, "method": cell.method, "params": cell.params_json, "profile": "claims",
                         "seed": cell.seed})
    return pd.DataFrame(rows)


def test_the_claims_profile_has_every_row_the_table_2_7_9_and_fid_claims_read():
    from fyexp.claims.verdicts import select

    _, claims, _ = configs()
    wanted = needed_selectors()
    ids = {cid for cid, _ in wanted}
    assert {"frac-t2-gamma-trend", "frac-t7-tighter-bounds", "frac-t9-beta-looser", "frac-s5-fid-elbo-worst",
            "frac-t9-proxy-elbo-worst", "frac-t2-bh-kl-increases",
            "frac-t9-dim4-gamma-fid"} <= ids          # the derivation finds the claims the issues name
    base = {s.metric.removesuffix("_authors") for _, s in wanted}
    frame = profile_rows(claims, base)
    short = []
    for cid, s in wanted:
        rows = select(frame, s)
        seeds = sorted(set(rows["seed"]))
        want = [claims.figure_seed] if str(s.table) == "7" else [0, 1, 2]   # Table 7: one run, as in the paper
        if seeds != want:
            short.append(f"{cid}: {s.describe()} has seeds {seeds}, wants {want}")
    assert not short, "\n".join(short)


def test_a_row_missing_from_the_profile_is_found():
    """The check above fails when the profile lacks a row a claim reads (here Table 9's L_10^-3)."""
    from fyexp.claims.verdicts import select

    _, claims, _ = configs()
    grid = claims.grid
    include = [e for e in grid.include if not (e.get("method") == "L" and e.get("dataset") == "FashionMNIST")]
    include.append({"method": "L", "dataset": "FashionMNIST", "latent": 2, "table": "9", "value": [1.0, 0.1, 1e-5],
                    "parameterization": "consistent"})
    fewer = dataclasses.replace(claims, grid=dataclasses.replace(grid, include=include))
    frame = profile_rows(fewer, {"test_obj_total"})
    gamma_bound = next(s for cid, s in needed_selectors() if cid == "frac-t9-gamma-bound" and "10^-3" in str(s))
    assert select(frame, gamma_bound).empty
    assert not select(profile_rows(claims, {"test_obj_total"}), gamma_bound).empty


def verdict(claim, profile, rows_read):
    from fyexp.claims.verdicts import Verdict

    v = Verdict(claim, profile, "supported")
    v.rows_read = rows_read
    return v


def test_the_claims_profile_is_the_headline_among_reduced_profiles():
    """``claims`` heads a claim's verdicts even when ``cpu`` read more rows; ``paper`` still heads both; without
    ``claims`` the reduced profile with the most rows does."""
    from fyexp.claims.model import load_claims
    from fyexp.claims.verdicts import headline

    claim = next(c for c in load_claims().claims if c.id == "frac-t2-gamma-bound")
    cpu, mine, quick = verdict(claim, "cpu", 6), verdict(claim, "claims", 3), verdict(claim, "quick", 1)
    assert headline([cpu, mine, quick]) is mine and headline([quick, cpu, mine]) is mine
    assert headline([cpu, quick]) is cpu and headline([quick, cpu]) is cpu
    assert headline([cpu, mine, verdict(claim, "paper", 2)]).profile == "paper"
    assert headline([verdict(claim, "claims+epochs=3", 9), cpu]) is cpu           # a variant never is


@pytest.mark.slow
def test_fyexp_lists_the_claims_profile_and_its_cells():
    done = run_cli("run", "frac-vae", "--profile", "claims", "--dry-run", "--results-dir", str(ROOT / "nonexistent"))
    assert done.returncode == 0, done.stderr
    assert "frac-vae [claims]: 64 cells" in done.stdout


def test_flatten_rule():
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        from frac_claims_sizing import flatten_epoch
    finally:
        sys.path.pop(0)
    curve = [0.0, 50.0, 80.0, 90.0, 95.0, 97.0, 98.0, 98.5]
    # gain over 2 epochs / gain since epoch 1: e=5: 15/95 = 0.16, e=6: 7/97 = 0.072, e=7: 3/98 = 0.031
    assert flatten_epoch(curve, 2, 0.05) == 7
    assert flatten_epoch(curve, 2, 0.10) == 6
    assert flatten_epoch(curve, 2, 0.01) is None
    assert flatten_epoch([0.0, -1.0, -2.0], 1, 0.5) is None                   # no gain: never flat


@pytest.fixture
def tiny_data(tmp_path):
    from fyexp.run.fingerprints import write_idx

    rng = np.random.default_rng(0)
    for prefix, n in (("train", 64), ("t10k", 12)):
        labels = rng.integers(0, 10, n)
        images = (rng.random((n, 28, 28)) * 60 + labels[:, None, None] * 20).clip(0, 255)
        write_idx(tmp_path / "data" / "MNIST" / "raw", images, labels, prefix)
    return tmp_path


@pytest.mark.slow
def test_sizing_pilot_smoke(tiny_data):
    """The pilot (quick profile, 3 epochs, stand-in data) runs both cells through the installed ``fyexp run``, reads
    their curves and writes the figure and the JSON."""
    figure, out = tiny_data / "pilot.png", tiny_data / "pilot.json"
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "frac_claims_sizing.py"), "--smoke",
                           "--data-dir", str(tiny_data / "data"), "--figure", str(figure), "--json", str(out)],
                          capture_output=True, text=True, timeout=300, cwd=ROOT,
                          env=cli_env({"MPLBACKEND": "Agg", "OMP_NUM_THREADS": "1"}))
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    report = json.loads(out.read_text())
    assert set(report["cells"]) == {"1", "0.9"}
    assert all(len(c["curve"]) == 3 and c["cpu_s"] > 0 for c in report["cells"].values())
    assert figure.stat().st_size > 1000 and "chosen epochs" in done.stdout
    from PIL import Image

    assert Image.open(figure).mode == "P"   # a palette PNG, as the report's figures (save_figure)
    assert set(report["step_cpu_s"]) == {"L_0.9 K=4", "L^h_0.9 2x2", "L^beta_10 K=4"}
    assert all(s > 0 for s in report["step_cpu_s"].values())
