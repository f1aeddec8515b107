"""Wall time of the read-only commands ``fyexp --help``, ``fyexp list`` and ``fyexp show NAME`` (aim: < 0.5 s each).

They read YAML and print, so they should cost little more than starting Python: each command is timed as a fresh
process of the installed ``fyexp`` script, interleaved with the baseline ``python -c pass`` (round after round, so
a busy machine slows all alike), and reported as its median beside the baseline's, with their ratio::

    python scripts/bench_cli.py [--rounds 7] [--show gmm-clustering] [--smoke]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path


def fyexp_script() -> str:
    script = Path(sys.executable).parent / "fyexp"
    return str(script) if script.is_file() else (shutil.which("fyexp") or sys.exit("the fyexp script is not installed"))


def wall_time(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--show", default="gmm-clustering", help="the experiment of `fyexp show`")
    parser.add_argument("--smoke", action="store_true", help="one round (checks that the script runs; tests)")
    args = parser.parse_args()
    rounds = 1 if args.smoke else args.rounds
    fyexp = fyexp_script()
    commands = {"python -c pass": [sys.executable, "-c", "pass"],
                "fyexp --help": [fyexp, "--help"],
                "fyexp list": [fyexp, "list"],
                f"fyexp show {args.show}": [fyexp, "show", args.show, "--profile", "quick"]}
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(rounds):
        for name, command in commands.items():
            times[name].append(wall_time(command))
    base = statistics.median(times["python -c pass"])
    print(f"{rounds} interleaved round(s); median wall time of a fresh process")
    print(f"{'python -c pass':<32} {base:7.3f} s  (baseline)")
    for name in list(commands)[1:]:
        median = statistics.median(times[name])
        print(f"{name:<32} {median:7.3f} s  ratio {median / base:5.1f}x python -c pass"
              f"{'' if median < 0.5 else '  (over the 0.5 s aim)'}")


if __name__ == "__main__":
    main()
