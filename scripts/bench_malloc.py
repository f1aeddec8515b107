"""glibc's malloc thresholds (:mod:`fyexp.train.allocator`) against its defaults, on the queue's training steps.

The setting is per process, so the two arms run as alternating child processes (default, tuned, default, tuned
...; ``--pairs`` of them), each timing fyexp's step of one workload of ``scripts/bench_queue.py`` (its Trainer path,
one thread) as the median of ``--rounds`` timings, and the hand-written loop beside it: wall-clock seconds per step
and CPU seconds per step (the process's user + system time: on a machine shared with other work the wall clock
mostly measures the others; page faults, which the setting removes, are CPU time).  Prints, per workload, the
median over the children of each arm and the ratio tuned / default of each.

Usage: ``python scripts/bench_malloc.py [--pairs 3] [--rounds 3] [--only fy-vae]`` (``--smoke``: seconds).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_WORKLOADS = ("fy-vae-bernoulli", "fy-vae-beta-gaussian", "vr-caltech-5", "fy-nvdm")


def child(arm: str, key: str, rounds: int, scale: float) -> None:
    """One arm in this process: print ``{"fyexp": s, "hand": s}`` (median seconds per step)."""
    if arm == "tuned":
        from fyexp.train.allocator import tune_allocator

        assert tune_allocator(), "glibc's mallopt refused the thresholds"
    sys.path.insert(0, str(HERE))
    import torch

    import bench_queue as bq

    torch.set_num_threads(1)
    work = bq.WORKLOADS[key]()
    steps = max(1, round(work.steps * scale))
    work.fyexp(1), work.hand(1)
    timed: dict[str, list[float]] = {"fyexp": [], "hand": [], "fyexp_cpu": [], "hand_cpu": []}
    for r in range(rounds):
        for side, run in (("fyexp", work.fyexp), ("hand", work.hand)):
            start = time.process_time()
            timed[side].append(run(steps))
            timed[f"{side}_cpu"].append((time.process_time() - start) / steps)
    print(json.dumps({"name": work.name, **{k: statistics.median(v) for k, v in timed.items()}}))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--only", default="", help="workloads whose key contains this text")
    parser.add_argument("--smoke", action="store_true", help="one pair, one round, tiny steps (the suite)")
    parser.add_argument("--child", nargs=2, metavar=("ARM", "KEY"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.smoke:
        args.pairs, args.rounds, args.scale, args.only = 1, 1, 0.05, args.only or "fy-vae-bernoulli"
    if args.child:
        child(args.child[0], args.child[1], args.rounds, args.scale)
        return
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    print(f"{'workload':44s} {'wall ms: default':>16s} {'tuned':>6s} {'ratio':>6s}  {'CPU ms: default':>15s} "
          f"{'tuned':>6s} {'ratio':>6s}  hand CPU ms: default / tuned")
    for key in [k for k in DEFAULT_WORKLOADS if args.only in k]:
        times: dict[str, list[dict]] = {"default": [], "tuned": []}
        for pair in range(args.pairs):
            for arm in (("default", "tuned") if pair % 2 == 0 else ("tuned", "default")):
                out = subprocess.run([sys.executable, __file__, "--child", arm, key, "--rounds", str(args.rounds),
                                      "--scale", str(args.scale)], env=env, capture_output=True, text=True,
                                     check=True)
                times[arm].append(json.loads(out.stdout.strip().splitlines()[-1]))
        keys = ("fyexp", "hand", "fyexp_cpu", "hand_cpu")
        med = {arm: {k: statistics.median(t[k] for t in times[arm]) for k in keys} for arm in times}
        d, t = med["default"], med["tuned"]
        print(f"{times['default'][0]['name']:44s} {d['fyexp'] * 1e3:16.2f} {t['fyexp'] * 1e3:6.2f} "
              f"{t['fyexp'] / d['fyexp']:5.2f}x  {d['fyexp_cpu'] * 1e3:15.2f} {t['fyexp_cpu'] * 1e3:6.2f} "
              f"{t['fyexp_cpu'] / d['fyexp_cpu']:5.2f}x  {d['hand_cpu'] * 1e3:.2f} / {t['hand_cpu'] * 1e3:.2f}",
              flush=True)


if __name__ == "__main__":
    main()
