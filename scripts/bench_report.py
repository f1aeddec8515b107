"""Time of ``fyexp report`` with a warm cache against a full regeneration (``--no-cache``) and against starting the
CLI (``python -c "import fyexp.cli"``), on a copy of the committed results (aim: warm ≤ 5 s).

Each command is a fresh process of the installed ``fyexp`` script, run on a copy of ``results/`` (the repository's
own folder is never written), round after round in this one process, interleaved (warm, full, import), so that a
busy machine slows all alike.  A warm round follows a report of the same folder, so it draws nothing and finds what it
derives from unchanged files in the user cache (:mod:`fyexp.store.user_cache`, a folder of this run's); the full round
draws every table and figure.  Printed per command: the median wall time and the median CPU time of the child
(user + system, which a loaded machine does not inflate), and the ratios::

    python scripts/bench_report.py [--rounds 3] [--experiments a b ...] [--smoke]

Quiet machine, 2026-11-25 (the queue paused, load ≈ 1.3; all of results/, 5,523 rows, 3 rounds): warm report
**3.82 s wall, 4.01 s CPU** (aim 5 s: met), full redraw 26.0 s, ``import fyexp.cli`` 0.10 s.  Before this round's
work the warm report took 9.4 s quiet (about 10 s CPU under load).  What brought it down, each with the report's
output unchanged: cell files parsed once across processes (:mod:`fyexp.store.user_cache`, 1.9 → 0.1 s CPU), each row's
freshness judged once for tables, run facts and claims (was four passes), Optuna study files opened only when they
changed (no Optuna / SQLAlchemy import), the claims' intervals on ``scipy.special`` instead of ``scipy.stats``
(≈ 0.75 s of import), function hashes and import sets of fyexp's own source kept by text hash
(:mod:`fyexp.store.provenance.memo`, ≈ 1.4 s under the profiler → 0.02 s), one import parser, and the claims' pairing
keys in plain Python.  What is left (CPU, warm): judging the 107 verdicts ≈ 1.0 s (row selection by pandas masks
≈ 0.5 s of it), the tables' status scoring for the index ≈ 1 s, each row's settings against the spec ≈ 0.6 s,
imports ≈ 0.6 s.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def fyexp_script() -> str:
    script = Path(sys.executable).parent / "fyexp"
    return str(script) if script.is_file() else (shutil.which("fyexp") or sys.exit("the fyexp script is not installed"))


def timed(command: list[str]) -> tuple[float, float]:
    """(wall s, CPU s of the child) of one run of ``command``."""
    before = os.times()
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = os.times()
    return wall, (after.children_user - before.children_user) + (after.children_system - before.children_system)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--experiments", nargs="*", default=None,
                        help="copy only these experiments' results (default: all of results/)")
    parser.add_argument("--smoke", action="store_true", help="one round on one small experiment (tests)")
    args = parser.parse_args()
    rounds = 1 if args.smoke else args.rounds
    names = ["vr-renyi-gaussians"] if args.smoke else args.experiments
    fyexp = fyexp_script()
    with tempfile.TemporaryDirectory() as tmp:
        results = Path(tmp) / "results"
        os.environ["FYEXP_CACHE_DIR"] = str(Path(tmp) / "cache")   # store.user_cache: this run's own, warmed below
        if names:
            for name in names:
                shutil.copytree(ROOT / "results" / name, results / name)
        else:
            shutil.copytree(ROOT / "results", results)
        report = [fyexp, "report", "--results-dir", str(results)]
        commands = {"import fyexp.cli": [sys.executable, "-c", "import fyexp.cli.app"],
                    "fyexp report (warm)": report,
                    "fyexp report --no-cache": report + ["--no-cache"]}
        if not args.smoke:  # warm the cache (--smoke: the "warm" round warms it; its time is not checked)
            subprocess.run(report, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
        for _ in range(rounds):
            for name in ("fyexp report (warm)", "fyexp report --no-cache", "import fyexp.cli"):
                times[name].append(timed(commands[name]))  # a full run rewrites the same manifest: still warm
    wall = {name: statistics.median(t[0] for t in ts) for name, ts in times.items()}
    cpu = {name: statistics.median(t[1] for t in ts) for name, ts in times.items()}
    print(f"{rounds} interleaved round(s) on {', '.join(names) if names else 'all of results/'}; "
          "median of fresh processes")
    for name in commands:
        print(f"{name:<26} wall {wall[name]:7.2f} s   CPU {cpu[name]:7.2f} s")
    warm, full, base = "fyexp report (warm)", "fyexp report --no-cache", "import fyexp.cli"
    print(f"ratio warm / full: wall {wall[warm] / wall[full]:.3f}  CPU {cpu[warm] / cpu[full]:.3f}")
    print(f"ratio warm / import fyexp.cli: wall {wall[warm] / wall[base]:.1f}x  CPU {cpu[warm] / cpu[base]:.1f}x")
    print(f"warm report: {wall[warm]:.2f} s wall, {cpu[warm]:.2f} s CPU "
          f"({'within' if wall[warm] <= 5 else 'over'} the 5 s aim by wall; load average now "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")


if __name__ == "__main__":
    main()
