"""Wall time of fyexp's read-only commands through the installed script, against peers measured in the same run.

The commands a researcher types to look before running (`fyexp --help`, `run --help`, `list`, `show NAME`,
`reproduce PAPER --dry-run`) should answer in under a second on a quiet machine.  A busy machine slows every
process, so each command is timed as a fresh process interleaved, round after round, with two peers: `python -c pass`
(starting the interpreter) and `fyexp --version` (starting fyexp's CLI: typer, click, rich).  The table gives each
command's median and its ratios to both peers; the ratios, not the seconds, are what compare across machines and
loads.  A first round is run and dropped (it fills the user cache and the OS's file cache).

    python scripts/bench_readonly.py [--rounds 5] [--smoke]

It prints, per command: median wall seconds, × python -c pass, × fyexp --version, the median CPU seconds (user +
system: close to a quiet machine's wall time) and `over 1 s` where the median wall time is.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def fyexp_script() -> str:
    script = Path(sys.executable).parent / "fyexp"
    return str(script) if script.is_file() else (shutil.which("fyexp") or sys.exit("the fyexp script is not installed"))


def wall_time(command: list[str], env: dict) -> tuple[float, float]:
    """``(wall seconds, CPU seconds)`` of one run of ``command`` (the CPU time, user + system, is what a quiet
    machine's wall time comes close to: on a loaded one the wall time is mostly waiting for a core)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"{' '.join(command)} failed (exit {done.returncode}): {done.stderr.strip()[-500:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def commands(fyexp: str) -> dict[str, list[str]]:
    return {"python -c pass": [sys.executable, "-c", "pass"],
            "fyexp --version": [fyexp, "--version"],
            "fyexp --help": [fyexp, "--help"],
            "fyexp run --help": [fyexp, "run", "--help"],
            "fyexp list": [fyexp, "list"],
            "fyexp show vr-vae": [fyexp, "show", "vr-vae", "--profile", "paper"],
            "fyexp reproduce fyvi --dry-run": [fyexp, "reproduce", "fyvi", "--dry-run"],
            "fyexp reproduce all --dry-run": [fyexp, "reproduce", "all", "--dry-run"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--smoke", action="store_true", help="one round, no warm-up (checks that it runs; tests)")
    args = parser.parse_args()
    rounds = 1 if args.smoke else args.rounds
    env = {**os.environ, "COLUMNS": "100"}
    # Python's default: modules' bytecode cached in __pycache__ (a sandbox that sets PYTHONDONTWRITEBYTECODE
    # recompiles every fyexp module in every process, ~0.8 s of CPU, which no user's installation pays)
    dropped = env.pop("PYTHONDONTWRITEBYTECODE", None) is not None
    env.setdefault("FYEXP_RESULTS_DIR", tempfile.mkdtemp(prefix="bench-readonly-"))  # a fresh folder: nothing to read
    todo = commands(fyexp_script())
    times: dict[str, list[float]] = {name: [] for name in todo}
    cpu: dict[str, list[float]] = {name: [] for name in todo}
    for round_ in range(rounds + (0 if args.smoke else 1)):
        for name, command in todo.items():
            seconds, used = wall_time(command, env)
            if args.smoke or round_ > 0:
                times[name].append(seconds)
                cpu[name].append(used)
    base, cli = statistics.median(times["python -c pass"]), statistics.median(times["fyexp --version"])
    print(f"{rounds} interleaved round(s), median wall time of a fresh process; load "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
          + ("; PYTHONDONTWRITEBYTECODE unset (bytecode cached, as by default)" if dropped else ""))
    print(f"{'command':<32} {'seconds':>8} {'× python':>9} {'× --version':>12} {'cpu s':>7}")
    for name in todo:
        median = statistics.median(times[name])
        print(f"{name:<32} {median:8.3f} {median / base:9.1f} {median / cli:12.1f} "
              f"{statistics.median(cpu[name]):7.3f}{'  over 1 s' if median >= 1.0 else ''}")


if __name__ == "__main__":
    main()
