"""Wall time of fyexp's read-only commands through the installed script, against peers measured in the same run.

The commands a researcher types to look before running (`fyexp --help`, `run --help`, `list`, `show NAME`,
`reproduce PAPER --dry-run`) should answer in under a second on a quiet machine.  A busy machine slows every
process, so each command is timed as a fresh process interleaved, round after round, with two peers: `python -c pass`
(starting the interpreter) and `fyexp --version` (starting fyexp's CLI: typer, click, rich).  The table gives each
command's median and its ratios to both peers; the ratios, not the seconds, are what compare across machines and
loads.  A first round is run and dropped (it fills the user cache and the OS's file cache).

Every command, the peers too, is timed twice per round: piped (its output read by another process, as a script
reads it) and on a pseudo-terminal (:func:`os.openpty`, 80 columns, ``TERM=xterm-256color``: what a researcher's
terminal runs; `fyexp list` summarizes every profile of every experiment there, and only there).  Where the user
cache decides the time (`list`, `show`), the command is timed a third and fourth time, piped and on the terminal,
with an empty ``FYEXP_CACHE_DIR`` of its own (*cold*: the first command after installing fyexp, or after the
cache was deleted, pays the machine's speed calibration and every derivation the cache keeps); the cold column
is left empty for the others (`reproduce --dry-run` plans through the runners when cold, several seconds, by
design: its plan is cached).

    python scripts/bench_readonly.py [--rounds 5] [--smoke]

It prints, per command and way of running it (piped, terminal): the median wall seconds, × python -c pass and
× fyexp --version run the same way, and the median CPU seconds (user + system: close to a quiet machine's wall
time), warm, then cold; `over 1 s warm` (`cold`) where a median wall time is; and the load average before and after.
"""

from __future__ import annotations

import argparse
import fcntl
import os
import resource
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import time
from pathlib import Path

WAYS = ("piped", "terminal")
COLD = ("fyexp list", "fyexp show vr-vae", "fyexp show frac-vae")   # the commands the user cache speeds up
TERMINAL = {"COLUMNS": "80", "LINES": "24", "TERM": "xterm-256color"}
# --smoke: the peers, one cached command (warm and cold) and the slowest: every way of timing, a third of the runs
SMOKE = ("python -c pass", "fyexp --version", "fyexp list", "fyexp reproduce all --dry-run")


def fyexp_script() -> str:
    script = Path(sys.executable).parent / "fyexp"
    return str(script) if script.is_file() else (shutil.which("fyexp") or sys.exit("the fyexp script is not installed"))


def _on_terminal(command: list[str], env: dict) -> tuple[int, bytes]:
    """Run ``command`` with stdin, stdout and stderr on a new pseudo-terminal of 80 × 24; its exit status and all it
    wrote (read as it writes: a full terminal buffer would block it)."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    try:
        child = subprocess.Popen(command, stdin=slave, stdout=slave, stderr=slave, env=env, close_fds=True,
                                 start_new_session=True)
    finally:
        os.close(slave)
    written = bytearray()
    try:
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:   # EIO: every end of the terminal's slave side is closed
                break
            if not chunk:
                break
            written += chunk
    finally:
        os.close(master)
    return child.wait(), bytes(written)


def wall_time(command: list[str], env: dict, way: str = "piped") -> tuple[float, float]:
    """``(wall seconds, CPU seconds)`` of one run of ``command``, ``piped`` or on a ``terminal`` (the CPU time, user
    + system, is what a quiet machine's wall time comes close to: on a loaded one the wall time is mostly waiting
    for a core)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    if way == "terminal":
        code, written = _on_terminal(command, {**env, **TERMINAL})
        problem = written.decode("utf-8", "replace")
    else:
        done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        code, problem = done.returncode, done.stderr
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if code != 0:
        sys.exit(f"{' '.join(command)} ({way}) failed (exit {code}): {problem.strip()[-500:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def cold_time(command: list[str], env: dict, way: str) -> tuple[float, float]:
    """:func:`wall_time` with an empty user cache of its own (removed after)."""
    folder = tempfile.mkdtemp(prefix="bench-readonly-cache-")
    try:
        return wall_time(command, {**env, "FYEXP_CACHE_DIR": folder}, way)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def commands(fyexp: str) -> dict[str, list[str]]:
    return {"python -c pass": [sys.executable, "-c", "pass"],
            "fyexp --version": [fyexp, "--version"],
            "fyexp --help": [fyexp, "--help"],
            "fyexp run --help": [fyexp, "run", "--help"],
            "fyexp list": [fyexp, "list"],
            "fyexp show vr-vae": [fyexp, "show", "vr-vae", "--profile", "paper"],
            "fyexp show frac-vae": [fyexp, "show", "frac-vae", "--profile", "paper"],
            "fyexp reproduce fyvi --dry-run": [fyexp, "reproduce", "fyvi", "--dry-run"],
            "fyexp reproduce all --dry-run": [fyexp, "reproduce", "all", "--dry-run"]}


def _load() -> str:
    try:
        return f"{os.getloadavg()[0]:.1f}"
    except OSError:
        return "unknown"


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
    todo = {name: command for name, command in commands(fyexp_script()).items()
            if not args.smoke or name in SMOKE}
    runs = [(name, way, cold) for name in todo for way in WAYS for cold in ((False, True) if name in COLD
                                                                             else (False,))]
    times: dict[tuple, list[float]] = {run: [] for run in runs}
    cpu: dict[tuple, list[float]] = {run: [] for run in runs}
    load_before = _load()
    for round_ in range(rounds + (0 if args.smoke else 1)):
        for name, way, cold in runs:
            seconds, used = (cold_time if cold else wall_time)(todo[name], env, way)
            if args.smoke or round_ > 0:
                times[name, way, cold].append(seconds)
                cpu[name, way, cold].append(used)
    print(f"{rounds} interleaved round(s), median wall time of a fresh process; load {load_before} before, "
          f"{_load()} after, on {os.cpu_count()} cores"
          + ("; PYTHONDONTWRITEBYTECODE unset (bytecode cached, as by default)" if dropped else ""))
    for way in WAYS:
        base = statistics.median(times["python -c pass", way, False])
        cli = statistics.median(times["fyexp --version", way, False])
        print()
        print("piped (output read by another process), COLUMNS=100" if way == "piped" else
              "on a terminal (pty, 80 columns, TERM=xterm-256color)")
        head = f"{'seconds':>8} {'× python':>9} {'× --version':>12} {'cpu s':>7}"
        print(f"{'':<32} {'warm user cache':^39}   {'cold (empty FYEXP_CACHE_DIR)':^39}")
        print(f"{'command':<32} {head}   {head}")
        for name in todo:
            cells, over = [], []
            for cold in (False, True):
                if (name, way, cold) not in times:
                    cells.append(f"{'-':>8} {'':>9} {'':>12} {'':>7}")
                    continue
                median = statistics.median(times[name, way, cold])
                if median >= 1.0:
                    over.append("cold" if cold else "warm")
                cells.append(f"{median:8.3f} {median / base:9.1f} {median / cli:12.1f} "
                             f"{statistics.median(cpu[name, way, cold]):7.3f}")
            print(f"{name:<32} {'   '.join(cells)}{'  over 1 s ' + ' and '.join(over) if over else ''}")


if __name__ == "__main__":
    main()
