"""Benchmark of the frac-vae hot paths (not a test).

1. Training cost per epoch of L_γ with K = 100 samples per datum vs K = 1 (the encoder runs once per image,
   only the decoder sees the K·B samples; the aim is "well under 100×").
2. Evaluation with 1,024 samples per image (L_γ: 1 × 1,024; L^h: 32 × 32) in memory-bounded chunks: wall time
   and peak memory for several chunk sizes (CUDA: ``torch.cuda.max_memory_allocated``; CPU: each configuration
   runs in a fresh subprocess and prints the peak resident set ``ru_maxrss`` and its growth over the process's
   resident set before the evaluation).  Each configuration twice: the decoder fed at most
   ``DECODE_ROWS`` = 4,096 images at a time (fyexp's evaluation since issue 28) and the whole chunk × batch at once
   (``decode rows all``, as before): the first's peak no longer grows with the chunk, with the same mean L.

Usage::

    python scripts/bench_frac.py [--device cpu|cuda] [--batches 5] [--n-eval 100] [--threads N] [--skip-training]

Epoch times are extrapolated from ``--batches`` timed batches of 64 (after one warm-up batch) to the 938 batches
of a 60,000-image epoch.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import time

import torch

from fyexp.metrics.evidence import EvalPlan, evidence_breakdown
from fyexp.models.conv_vae import DECODE_ROWS, ConvVAE
from fyexp.models.semi_implicit import SemiImplicitVAE
from fyexp.objectives import Fractional
from fyexp.objectives.semi_implicit import HierarchicalFractional

BATCHES_PER_EPOCH = 60_000 // 64 + 1
EVAL_CHUNKS = {"explicit": (64, 256, 1024), "semi": (2, 8, 32)}
ALL_ROWS = 10 ** 12   # the whole chunk × batch through the decoder at once (fyexp's evaluation before issue 28)
SMOKE = {"batches": 1, "n_eval": 2, "k_large": 2, "n_chunks": 1, "h_side": 2, "side": 2}


def sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def time_training(model, objective, device: str, batches: int) -> float:
    """Seconds per batch of 64 (forward, backward, Adam step)."""
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, weight_decay=1e-5)
    x = torch.rand(64, 784, device=device)
    for i in range(batches + 1):
        if i == 1:
            sync(device)
            start = time.perf_counter()
        bound, _ = objective(model, x)
        optimizer.zero_grad()
        (-bound.mean()).backward()
        optimizer.step()
    sync(device)
    return (time.perf_counter() - start) / batches


def peak_memory_mb(device: str) -> float:
    if device.startswith("cuda"):
        return torch.cuda.max_memory_allocated() / 2**20
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--batches", type=int, default=5)
    parser.add_argument("--n-eval", type=int, default=100)
    parser.add_argument("--threads", type=int, default=0)
    parser.add_argument("--eval-only", default="", help=argparse.SUPPRESS)
    parser.add_argument("--skip-training", action="store_true")
    parser.add_argument("--k-large", type=int, default=100, help=argparse.SUPPRESS)
    parser.add_argument("--n-chunks", type=int, default=3, help=argparse.SUPPRESS)
    parser.add_argument("--h-side", type=int, default=10, help=argparse.SUPPRESS)  # L^h training: n_u = n_z
    parser.add_argument("--side", type=int, default=32, help=argparse.SUPPRESS)  # evaluation: side² samples
    parser.add_argument("--smoke", action="store_true", help="tiny sizes: checks that the script runs (tests)")
    args = parser.parse_args()
    if args.smoke:
        vars(args).update(SMOKE)
    if args.threads:
        torch.set_num_threads(args.threads)
    device = args.device
    if args.eval_only:
        name, chunk, rows = args.eval_only.split(":")
        print(evaluate(name, int(chunk), args.n_eval, device, args.side, int(rows)))
        return
    torch.manual_seed(0)
    print(f"device {device}, torch {torch.__version__}, threads {torch.get_num_threads()}")

    if not args.skip_training:
        train_section(args, device)
    eval_section(args, device)


def train_section(args, device: str) -> None:
    print("\n1. training, L_0.5 with the explicit posterior, batch 64")
    per_batch = {}
    for k in (1, args.k_large):
        model = ConvVAE().to(device).train()
        per_batch[k] = time_training(model, Fractional(gamma=0.5, n_samples=k), device, args.batches)
        print(f"   K = {k:>3}: {per_batch[k] * 1e3:8.1f} ms/batch, ~{per_batch[k] * BATCHES_PER_EPOCH / 60:6.1f} min "
              f"per 60,000-image epoch")
    print(f"   ratio K={args.k_large} / K=1: {per_batch[args.k_large] / per_batch[1]:.1f}x (the decoder's share grows with K; the "
          f"encoder runs once)")
    model = SemiImplicitVAE().to(device).train()
    t = time_training(model, HierarchicalFractional(gamma=0.5, n_u=args.h_side, n_z=args.h_side), device,
                      args.batches)
    print(f"   L^h {args.h_side} x {args.h_side}: {t * 1e3:8.1f} ms/batch, ~{t * BATCHES_PER_EPOCH / 60:6.1f} min per epoch")



def eval_section(args, device: str) -> None:
    print(f"\n2. evaluation, {args.side ** 2:,} samples per image, {args.n_eval} images")
    configurations = [(name, chunk, rows) for name, chunks in EVAL_CHUNKS.items() for chunk in chunks[:args.n_chunks]
                      for rows in (DECODE_ROWS, ALL_ROWS)]
    for i, (name, chunk, rows) in enumerate(configurations):
        # --smoke: a fresh process for the last configuration only (its path checked; each costs an import)
        if device.startswith("cuda") or (args.smoke and i < len(configurations) - 1):
            print("   " + evaluate(name, chunk, args.n_eval, device, args.side, rows))
            continue
        # a fresh process per configuration, so that ru_maxrss is this configuration's peak
        command = [sys.executable, __file__, "--device", device, "--n-eval", str(args.n_eval),
                   "--side", str(args.side), "--eval-only", f"{name}:{chunk}:{rows}"] + (
            ["--threads", str(args.threads)] if args.threads else [])
        print("   " + subprocess.run(command, capture_output=True, text=True, check=True).stdout.strip())


def evaluate(name: str, chunk: int, n_eval: int, device: str, side: int = 32, rows: int = DECODE_ROWS) -> str:
    """One evaluation configuration with side² samples per image; returns its line (time, peak memory, the
    estimate)."""
    torch.manual_seed(0)
    x = torch.rand(n_eval, 784, device=device)
    if name == "explicit":
        label, model = f"L_0.5 explicit 1 x {side * side}", ConvVAE()
        samples = min(chunk, side * side)
        plan = EvalPlan(gamma=0.5, n_z=side * side, chunk_z=samples)
    else:
        label, model = f"L^h_0.5 semi-implicit {side} x {side}", SemiImplicitVAE()
        plan, samples = EvalPlan(gamma=0.5, n_u=side, n_z=side, chunk_u=min(chunk, side)), min(chunk, side) * side
    model = model.to(device).eval()
    model.decode_rows = rows
    if device.startswith("cuda"):
        torch.cuda.reset_peak_memory_stats()
    baseline = peak_memory_mb(device) if device.startswith("cuda") else current_rss_mb()
    sync(device)
    start = time.perf_counter()
    out = evidence_breakdown(model, x, plan, batch_size=min(n_eval, 100))
    sync(device)
    peak = peak_memory_mb(device)
    decoded = "all" if rows == ALL_ROWS else f"{rows}"
    return (f"{label}: chunk {samples:>5} samples x {min(n_eval, 100)} images, decode rows {decoded:>4}: "
            f"{time.perf_counter() - start:7.2f} s, "
            f"peak memory {peak:8.1f} MiB (+{peak - baseline:.1f} over the model and data), "
            f"mean L = {float(out['obj_total'].mean()):.2f}")


def current_rss_mb() -> float:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * resource.getpagesize() / 2**20


if __name__ == "__main__":
    main()
