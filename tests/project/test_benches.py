"""Smoke runs of every ``scripts/bench_*.py`` at tiny sizes (``--smoke``), so that no benchmark rots silently.

Each script must exit 0 and print its ratio lines (the patterns below); the timings themselves mean nothing at
these sizes and are not checked.  A new benchmark must be added to ``RATIO_LINES``, or the listing test fails.
"""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from tests.conftest import ROOT, cli_env

SCRIPTS = ROOT / "scripts"

# script name → regular expressions that its output must contain (its ratio / comparison lines)
RATIO_LINES = {
    "bench_cli": [r"fyexp --help\s+[\d.]+ s  ratio\s+[\d.]+x python -c pass",
                  r"fyexp list\s+[\d.]+ s  ratio\s+[\d.]+x", r"fyexp show \S+\s+[\d.]+ s  ratio\s+[\d.]+x"],
    "bench_readonly": [r"fyexp list\s+[\d.]+\s+[\d.]+\s+[\d.]+", r"fyexp reproduce all --dry-run\s+[\d.]+\s+[\d.]+\s+[\d.]+",
                       r"on a terminal \(pty, 80 columns", r"fyexp list(\s+[\d.]+){8}"],
    "bench_calibration": [r"speed-up ×\s*[\d.]+ \(3 replicas; identical results: True\)"],
    "bench_entmax": [r"entmax_newton .*× softmax\s+[\d.]+.*× entmax_bisect\s+[\d.]+"],
    "bench_figure_png": [r"grids: RGBA [\d.]+ s, palette [\d.]+ s, ratio palette / RGBA time [\d.]+x",
                         r"lines: .* size ratio [\d.]+"],
    "bench_frac": [r"ratio K=2 / K=1: [\d.]+x", r"L\^h_0\.5 semi-implicit 2 x 2: chunk"],
    "bench_gmm": [r"ratio ours/sklearn = [\d.]+"],
    "bench_grid": [r"per-core / sequential throughput: [\d.]+×", r"ensemble / one after another throughput: [\d.]+×"],
    "bench_malloc": [r"FY β-VAE Bernoulli / Gaussian\s+[\d.]+\s+[\d.]+\s+[\d.]+x\s+[\d.]+\s+[\d.]+\s+[\d.]+x"],
    "bench_nvdm": [r"entmax_newton α=1\.314\s+[\d.]+\s+[\d.]+", r"FY-NVDM ρ′=1\.314 / \d+\s+[\d.]+\s+[\d.]+\s+[\d.]+"],
    "bench_queue": [r"matmul peak .*: [\d.]+ GFLOP/s", r"FY β-VAE Bernoulli / Gaussian\s+[\d.]+\s+[\d.]+\s+[\d.]+x",
                    r"FY-NVDM .*\s+[\d.]+x", r"frac L_γ=0\.5 .*\s+[\d.]+x",
                    r"VR-max / IWAE step, Caltech K=50 .*ratio [\d.]+ \(paper 0\.42\)"],
    "bench_pack": [r"deflate \.npz [\d.]+ MiB in [\d.]+ s, LZMA \.tar\.xz [\d.]+ MiB",
                   r"size ratio LZMA / deflate [\d.]+; pack time ratio [\d.]+x"],
    "bench_optimizer": [r"foreach\s+[\d.]+ ms\s+[\d.]+x the loop", r"fused\s+[\d.]+ ms\s+[\d.]+x the loop"],
    "bench_objectives": [r"VR-max \(alpha=-inf\)\s+50 .*", r"Trainer epoch .* ratio [\d.]+",
                         r"decoder rho'=2 posterior rho=2: .* [\d.]+x Bernoulli/Gaussian",
                         r"largest overhead of a sparse latent / decoder over Bernoulli/Gaussian: [\d.]+x"],
    "bench_report": [r"ratio warm / full: wall [\d.]+  CPU [\d.]+", r"ratio warm / import fyexp\.cli: wall [\d.]+x"],
    "bench_tvem": [r"ratio TV-EM / exact \(shared\)\s+= [\d.]+", r"ratio TV-EM / exact \(per-point\) = [\d.]+"],
    "bench_vr": [r"speed-up [\d.]+x", r"ratio [\d.]+ \(aim <= 0\.5", r"ratio ensemble / batched [\d.]+"],
    "bench_vr_frey": [r"vae: ratio ensemble / one after another throughput: [\d.]+x",
                      r"vr_max: ratio ensemble / one after another throughput: [\d.]+x"],
}


def test_every_bench_script_has_a_smoke_run():
    assert sorted(p.stem for p in SCRIPTS.glob("bench_*.py")) == sorted(RATIO_LINES)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(RATIO_LINES))
def test_bench_smoke(name):
    script = SCRIPTS / f"{name}.py"
    if not script.is_file():
        pytest.fail(f"{script} is listed in RATIO_LINES but missing")
    done = subprocess.run([sys.executable, str(script), "--smoke"], capture_output=True, text=True, timeout=300,
                          cwd=ROOT, env=cli_env({"MPLBACKEND": "Agg", "OMP_NUM_THREADS": "1"}))
    assert done.returncode == 0, done.stderr[-3000:]
    for pattern in RATIO_LINES[name]:
        assert re.search(pattern, done.stdout), f"{name}: no line matching {pattern!r} in\n{done.stdout}"
