"""Adam's update on the CPU: torch's per-parameter loop against the multi-tensor (``foreach``) and ``fused`` kernels.

The parameters are the FY β-VAE ``paper`` networks' (784-512-256 encoder with two 256-unit heads, 256-512-784
decoder: 1.3 M weights, ``fyexp.models``), one thread, gradients fixed, interleaved rounds, medians.
:func:`fyexp.train.config.make_optimizer` uses ``foreach``: bit-identical to the loop (``tests/train/test_trainer.py``);
``fused`` is printed for reference only (it rounds differently).

Usage: ``python scripts/bench_optimizer.py [--rounds 9] [--steps 50]`` (``--smoke``: a few steps).
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

SHAPES = [(512, 784), (512,), (256, 512), (256,), (256, 256), (256,), (256, 256), (256,),      # encoder, μ/σ heads
          (512, 256), (512,), (784, 512), (784,)]                                              # decoder


def step_seconds(kind: str, steps: int) -> float:
    """Seconds per ``Adam.step()`` of ``kind`` ('loop', 'foreach', 'fused') over the FY β-VAE's parameters."""
    torch.manual_seed(0)
    params = [torch.nn.Parameter(torch.randn(s) * 0.01) for s in SHAPES]
    for p in params:
        p.grad = torch.randn_like(p) * 1e-3
    options = {"loop": {"foreach": False}, "foreach": {"foreach": True}, "fused": {"fused": True}}[kind]
    optimizer = torch.optim.Adam(params, lr=5e-5, **options)
    optimizer.step()                                     # state allocated outside the timing
    start = time.perf_counter()
    for _ in range(steps):
        optimizer.step()
    return (time.perf_counter() - start) / steps


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--smoke", action="store_true", help="two rounds of two steps: the code path only")
    args = parser.parse_args(argv)
    rounds, steps = (2, 2) if args.smoke else (args.rounds, args.steps)
    torch.set_num_threads(1)
    times = {"loop": [], "foreach": [], "fused": []}
    for _ in range(rounds):
        for kind in times:
            times[kind].append(step_seconds(kind, steps))
    loop = statistics.median(times["loop"])
    print(f"Adam step over {sum(torch.Size(s).numel() for s in SHAPES):,} parameters, one thread, "
          f"median of {rounds} interleaved rounds of {steps} steps")
    for kind, values in times.items():
        median = statistics.median(values)
        print(f"  {kind:8s} {median * 1e3:7.2f} ms   {median / loop:5.2f}x the loop")


if __name__ == "__main__":
    main()
