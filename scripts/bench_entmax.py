"""Benchmark: ρ′-entmax forward + backward at FY-NVDM's size against softmax and ``entmax.entmax_bisect``.

A (1024, 2000) float32 batch (batch 1024 × the 2,000-word vocabulary), one thread, ρ′ ∈ {1.314, 1.5, 2}; each map
runs forward, then backward of ⟨p, g⟩.  Contenders: ``torch.softmax`` (the floor), ``fyexp.maps.entmax_newton``
(Newton on the candidates only, its default), the same with the candidate path off (``SPARSE_SHARE = 0``, the
dense Newton iteration of before), and ``entmax_bisect`` (50 bisections, the package default).  The contenders
alternate within each of ``--reps`` rounds; printed are median ms and the ratios of the medians.  Also printed:
the largest relative change of FY-NVDM's loss N·L_Ω(θ; x/N) between the two Newton paths.

    python scripts/bench_entmax.py [--reps 9] [--rows 1024] [--vocab 2000] [--smoke]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import torch
from entmax import entmax_bisect

import fyexp.maps.newton as newton
from fyexp.losses.fy_multinomial import fy_multinomial_loss
from fyexp.maps import entmax_newton

SMOKE = {"reps": 1, "rows": 8, "vocab": 50}
ALPHAS = (1.314, 1.5, 2.0)


def dense_newton(z: torch.Tensor, alpha: float) -> torch.Tensor:
    """``entmax_newton`` with the candidate path switched off (the dense iteration)."""
    share, newton.SPARSE_SHARE = newton.SPARSE_SHARE, 0.0
    try:
        return entmax_newton(z, alpha)
    finally:
        newton.SPARSE_SHARE = share


def fwd_bwd(fn, scores: torch.Tensor, weights: torch.Tensor) -> float:
    z = scores.clone().requires_grad_()
    tic = time.perf_counter()
    (fn(z) * weights).sum().backward()
    return time.perf_counter() - tic


def loss_change(scores: torch.Tensor, alpha: float) -> float:
    """Largest relative change of the FY-NVDM loss per document, candidate path vs dense path."""
    counts = torch.poisson(torch.rand_like(scores) * 0.05)
    counts[:, 0] += 1
    sparse = fy_multinomial_loss(scores, counts, alpha)
    share, newton.SPARSE_SHARE = newton.SPARSE_SHARE, 0.0
    try:
        dense = fy_multinomial_loss(scores, counts, alpha)
    finally:
        newton.SPARSE_SHARE = share
    return float(((sparse - dense).abs() / dense.abs()).max())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=9)
    parser.add_argument("--rows", type=int, default=1024)
    parser.add_argument("--vocab", type=int, default=2000)
    parser.add_argument("--smoke", action="store_true", help="tiny sizes: checks that the script runs (tests)")
    args = parser.parse_args()
    if args.smoke:
        vars(args).update(SMOKE)
    torch.set_num_threads(1)
    torch.manual_seed(0)
    scores = torch.randn(args.rows, args.vocab) * 2
    weights = torch.randn(args.rows, args.vocab)
    contenders = {"softmax": lambda z: torch.softmax(z, -1)}
    for alpha in ALPHAS:
        contenders[f"entmax_newton α={alpha}"] = lambda z, a=alpha: entmax_newton(z, a)
        contenders[f"entmax_newton dense α={alpha}"] = lambda z, a=alpha: dense_newton(z, a)
        contenders[f"entmax_bisect α={alpha}"] = lambda z, a=alpha: entmax_bisect(z, a)
    times: dict[str, list[float]] = {name: [] for name in contenders}
    for fn in contenders.values():  # warm-up
        fwd_bwd(fn, scores, weights)
    for _ in range(args.reps):
        for name, fn in contenders.items():
            times[name].append(fwd_bwd(fn, scores, weights))
    med = {name: statistics.median(t) for name, t in times.items()}
    print(f"ρ′-entmax forward + backward, ({args.rows}, {args.vocab}) float32, {torch.get_num_threads()} thread, "
          f"median of {args.reps} interleaved rounds, load average {os.getloadavg()[0]:.1f}")
    print(f"{'map':<30}{'ms':>9}")
    for name, t in med.items():
        alpha = name.split("=")[-1] if "=" in name else None
        bisect = med[f"entmax_bisect α={alpha}"] if alpha else float("nan")
        print(f"{name:<30}{t * 1e3:>9.2f}  × softmax {t / med['softmax']:>6.2f}  × entmax_bisect {t / bisect:>6.3f}")
    for alpha in ALPHAS:
        print(f"FY-NVDM loss α={alpha}: largest relative change, candidate vs dense path: "
              f"{loss_change(scores, alpha):.1e}")


if __name__ == "__main__":
    main()
