"""Smoke runs of every ``scripts/bench_*.py`` at tiny sizes (``--smoke``), so that no benchmark rots silently.

Each script must exit 0 and print its ratio lines (the patterns below); the timings themselves mean nothing at
these sizes and are not checked.  A new benchmark must be added to ``RATIO_LINES``, or the listing test fails.
All scripts run one after another in ONE fresh interpreter (:data:`_DRIVER`, each as ``__main__`` with
``sys.argv = [script, "--smoke"]``, its stdout captured, the environment, working folder, ``sys.path`` and torch's
thread count put back after it): torch, pandas and fyexp are imported once, not once a script (~5 s of CPU each).
"""

from __future__ import annotations

import json
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


#: run each script of argv[2:] as ``__main__`` with ``--smoke``; write {stem: {returncode, stdout, error, s}} to argv[1]
_DRIVER = r"""
import contextlib, io, json, os, runpy, sys, time, traceback, warnings
out, scripts = {}, sys.argv[2:]
for script in scripts:
    saved = dict(os.environ), os.getcwd(), list(sys.path), sys.argv
    threads = sys.modules["torch"].get_num_threads() if "torch" in sys.modules else None
    buffer, code, error, start = io.StringIO(), 0, "", time.perf_counter()
    sys.argv = [script, "--smoke"]
    try:
        with contextlib.redirect_stdout(buffer), warnings.catch_warnings():
            runpy.run_path(script, run_name="__main__")
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
        error = "" if code == 0 else f"SystemExit: {exc.code}"
    except BaseException:
        code, error = 1, traceback.format_exc()
    os.environ.clear()
    os.environ.update(saved[0])
    os.chdir(saved[1])
    sys.path[:], sys.argv = saved[2], saved[3]
    if threads:
        sys.modules["torch"].set_num_threads(threads)
    name = os.path.basename(script).removesuffix(".py")
    out[name] = {"returncode": code, "stdout": buffer.getvalue(), "error": error, "s": time.perf_counter() - start}
    print(f"{name}: exit {code}, {out[name]['s']:.1f} s", file=sys.stderr, flush=True)
with open(sys.argv[1], "w") as handle:
    json.dump(out, handle)
"""


@pytest.fixture(scope="module")
def smoke_runs(tmp_path_factory) -> dict:
    """Every listed script's ``--smoke`` run, in one interpreter (:data:`_DRIVER`): stem → its exit status, stdout,
    error (traceback or exit message) and seconds; a script missing from the answer (the interpreter died) is
    absent."""
    answer = tmp_path_factory.mktemp("bench-smoke") / "runs.json"
    scripts = [str(SCRIPTS / f"{name}.py") for name in sorted(RATIO_LINES) if (SCRIPTS / f"{name}.py").is_file()]
    done = subprocess.run([sys.executable, "-c", _DRIVER, str(answer), *scripts], capture_output=True, text=True,
                          timeout=1800, cwd=ROOT, env=cli_env({"MPLBACKEND": "Agg", "OMP_NUM_THREADS": "1"}))
    runs = json.loads(answer.read_text()) if answer.is_file() else {}
    for run in runs.values():
        run["process"] = f"exit {done.returncode}; stderr:\n{done.stderr[-3000:]}"
    return runs or {"": {"process": f"exit {done.returncode}; stderr:\n{done.stderr[-3000:]}"}}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(RATIO_LINES))
def test_bench_smoke(name, smoke_runs):
    script = SCRIPTS / f"{name}.py"
    if not script.is_file():
        pytest.fail(f"{script} is listed in RATIO_LINES but missing")
    assert name in smoke_runs, f"{name}: no answer from the smoke interpreter: {next(iter(smoke_runs.values()))}"
    done = smoke_runs[name]
    assert done["returncode"] == 0, f"{name}: {done['error'][-3000:]}\n{done['process']}"
    for pattern in RATIO_LINES[name]:
        assert re.search(pattern, done["stdout"]), f"{name}: no line matching {pattern!r} in\n{done['stdout']}"
