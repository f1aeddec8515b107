"""Benchmark: ρ′-entmax forward + backward at FY-NVDM's size against softmax and ``entmax.entmax_bisect``.

A (1024, 2000) float32 batch (batch 1024 × the 2,000-word vocabulary), one thread, ρ′ ∈ {1.314, 1.5, 2}; each map
runs forward, then backward of ⟨p, g⟩.  Contenders: ``torch.softmax`` (the floor), ``fyexp.maps.entmax_newton``
(Newton on the candidates only, its default), the same with the candidate path off (``SPARSE_SHARE = 0``, the
dense Newton iteration of before), and ``entmax_bisect`` (50 bisections, the package default).  The contenders
alternate within each of ``--reps`` rounds; printed are median ms and the ratios of the medians.  Then FY-NVDM's
loss N·L_Ω(θ; x/N) on Poisson word counts, against NVDM's multinomial NLL and against its dense computation
(dense entmax, dense Ω) of before, and the largest relative change of the loss between the two.

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
from fyexp.losses.fy_multinomial import fy_multinomial_loss, multinomial_nll
from fyexp.maps import entmax_newton
from fyexp.maps.tsallis import tsallis_negentropy

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
    out = (fn(z) * weights).sum()
    if out.requires_grad:
        out.backward()
    return time.perf_counter() - tic


def dense_fy_loss(scores: torch.Tensor, counts: torch.Tensor, alpha: float) -> torch.Tensor:
    """FY-NVDM's loss N·L_Ω(θ; x/N) as computed before the sparse paths: dense entmax, dense Ω (no gradient)."""
    length = counts.sum(-1, keepdim=True)
    y = counts / length
    p = dense_newton(scores, alpha)
    loss = ((p - y) * scores).sum(-1) - tsallis_negentropy(p, alpha) + tsallis_negentropy(y, alpha)
    return length.squeeze(-1) * loss


def word_counts(scores: torch.Tensor) -> torch.Tensor:
    counts = torch.poisson(torch.rand_like(scores) * 0.05)
    counts[:, 0] += 1
    return counts


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
    counts = word_counts(scores)
    losses = {"multinomial NLL": lambda z: multinomial_nll(z, counts).sum(),
              "FY loss α=1.314": lambda z: fy_multinomial_loss(z, counts, 1.314).sum(),
              "FY loss α=1.314, dense (before)": lambda z: dense_fy_loss(z.detach(), counts, 1.314).sum()}
    times = {name: [] for name in losses}
    for _ in range(args.reps):
        for name, fn in losses.items():
            times[name].append(fwd_bwd(fn, scores, torch.ones(())))
    med = {name: statistics.median(t) for name, t in times.items()}
    print("FY-NVDM's observation loss, forward + backward (the dense one: forward only, as its gradient is p − y)")
    for name, t in med.items():
        print(f"{name:<34}{t * 1e3:>9.2f} ms  × multinomial NLL {t / med['multinomial NLL']:>6.2f}")
    for alpha in ALPHAS:
        new, old = fy_multinomial_loss(scores, counts, alpha), dense_fy_loss(scores, counts, alpha)
        print(f"FY-NVDM loss α={alpha}: largest relative change per document vs the dense computation: "
              f"{float(((new - old).abs() / old.abs()).max()):.1e}")


if __name__ == "__main__":
    main()
