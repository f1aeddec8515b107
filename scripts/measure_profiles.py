"""Run each experiment's ``quick`` profile (or ``--profile``) through the installed ``fyexp`` script, one at a time in
a fresh results folder, and print its wall and CPU time; with ``--write`` the finished cells' wall times go to
``fyexp/reference/profile_times.csv``, which the estimates of ``fyexp list``, ``show`` and the plan read for a
profile that no results folder has cells of (:data:`fyexp.run.estimate.PROFILE_TIMES`, scaled there by this machine's
speed).

    python scripts/measure_profiles.py [--profile quick] [--only NAME ...] [--write] [--timeout 1800]

The wall time includes starting Python and importing torch; the CPU time is that of the run and its children
(user + system), what the run would take on a quiet core.  On a shared machine a run gets a share of the cores
only, so the file records each cell's wall time × the run's CPU / wall ratio (at most 1: a quiet machine's time)
÷ this machine's speed factor (:mod:`fyexp.run.speed`: its workload seconds over the reference machine's), so that the
file holds the project's machine's seconds, as the estimates that scale it by a user's factor assume; the measured
wall time is kept beside.  Each experiment reads ``$FYEXP_DATA_DIR``.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIELDS = ["experiment", "profile", "method", "params", "epochs", "wall_time_s", "measured_wall_s"]


def fyexp_script() -> str:
    script = Path(sys.executable).parent / "fyexp"
    return str(script) if script.is_file() else "fyexp"


def experiments() -> list[str]:
    done = subprocess.run([fyexp_script(), "list", "--plain"], capture_output=True, text=True, check=True)
    return [line.split("\t")[0] for line in done.stdout.splitlines() if line.strip()]


def cells_of(results: Path, name: str, profile: str) -> list[dict]:
    """The finished cells of ``name`` at ``profile`` under ``results``, as rows of :data:`FIELDS`."""
    from fyexp.run.estimate import times_as_recorded

    times, folder = times_as_recorded(results, name, [profile])
    return [{"experiment": name, "profile": profile, "method": t.method, "params": json.dumps(t.params, sort_keys=True),
             "epochs": t.epochs or "", "wall_time_s": f"{t.seconds:.2f}"} for t in times if folder == results]


def measure(name: str, profile: str, timeout: float) -> tuple[float, float, int, list[dict]]:
    """``(wall s, CPU s, exit status, cells)`` of ``fyexp run NAME --profile PROFILE`` in a fresh results folder."""
    results = Path(tempfile.mkdtemp(prefix=f"measure-{name}-"))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    try:
        code = subprocess.run([fyexp_script(), "run", name, "--profile", profile, "--results-dir", str(results),
                               "--yes", "--no-progress"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              text=True, timeout=timeout).returncode
    except subprocess.TimeoutExpired:
        code = 124
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, code, cells_of(results, name, profile)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="quick")
    parser.add_argument("--only", nargs="*", help="these experiments only (default: every one `fyexp list` names)")
    parser.add_argument("--write", action="store_true", help="write the cells' times to the reference file")
    parser.add_argument("--timeout", type=float, default=1800.0)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from fyexp.run.estimate import PROFILE_TIMES
    from fyexp.run.speed import REFERENCE_SECONDS, workload_seconds

    seconds = workload_seconds()
    factor = seconds / REFERENCE_SECONDS
    print(f"calibration: {seconds:.4f} s here, {REFERENCE_SECONDS:.4f} s on the reference machine (factor "
          f"{factor:.2f}); load {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", flush=True)
    for name in args.only or experiments():
        wall, cpu, code, cells = measure(name, args.profile, args.timeout)
        print(f"{name:<22} {args.profile}: wall {wall:7.1f} s  cpu {cpu:7.1f} s  cells {len(cells):3d}  "
              f"exit {code}  (load {os.getloadavg()[0]:.1f})", flush=True)
        if code == 0 and cells and args.write:   # after each experiment: a long one cut short keeps the others
            write(PROFILE_TIMES, name, args.profile, quiet(cells, cpu / wall, factor))


def quiet(cells: list[dict], share: float, factor: float = 1.0) -> list[dict]:
    """The cells with their wall time × ``share`` (the run's CPU seconds over its wall seconds, at most 1: what they
    take when the run has its cores to itself, as on a quiet machine) ÷ ``factor`` (this machine's speed: the
    reference machine's seconds); the measured time is kept beside."""
    share = min(1.0, share)
    return [{**c, "measured_wall_s": c["wall_time_s"],
             "wall_time_s": f"{float(c['wall_time_s']) * share / factor:.4g}"} for c in cells]


def write(path: Path, name: str, profile: str, cells: list[dict]) -> None:
    """Replace the rows of ``name`` at ``profile`` in the reference file ``path`` by ``cells``."""
    kept = [row for row in (csv.DictReader(path.open()) if path.is_file() else [])
            if not (row["experiment"] == name and row["profile"] == profile)]
    rows = sorted(kept + cells, key=lambda r: (r["experiment"], r["profile"], r["method"], r["params"]))
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=FIELDS)
        writer.writeheader()
        writer.writerows(rows)
    print(f"  wrote {len(cells)} cells of {name} to {path.relative_to(ROOT)}", flush=True)


if __name__ == "__main__":
    main()
