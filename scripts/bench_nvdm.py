"""Benchmarks of the FY-NVDM pieces, each against a peer in the same run.

1. α-entmax forward + backward on a (1024, 2000) float32 batch: ``fyexp.maps.entmax_newton`` vs
   ``entmax.entmax_bisect`` (50 bisections, the package default) vs ``torch.softmax`` (the floor).
2. One NVDM epoch (a decoder pass and an encoder pass over the training set) through ``fyexp.train.Trainer``
   vs a plain PyTorch loop of the same model, batches, optimizers and freezing.

    python scripts/bench_nvdm.py [--threads 2] [--docs 11290] [--reps 5] [--smoke]

``--smoke`` shrinks every size so that the script runs in seconds (``tests/project/test_benches.py``;
no timing meaning).

Prints a table per benchmark; times are the best of ``--reps`` (ms for the maps, s for an epoch).
"""

from __future__ import annotations

import argparse
import time

import torch
from entmax import entmax_bisect

from fyexp.maps import entmax_newton
from fyexp.models.nvdm import build_nvdm, nvdm_objective
from fyexp.train import OptimizerConfig, TrainConfig

SMOKE = {"docs": 64, "reps": 1, "vocab": 50, "rows": 8}


def best_of(fn, reps: int) -> float:
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def bench_maps(reps: int, rows: int, vocab: int) -> None:
    torch.manual_seed(0)
    scores = torch.randn(rows, vocab) * 2
    weights = torch.randn(rows, vocab)

    def fwd_bwd(fn):
        z = scores.clone().requires_grad_()
        (fn(z) * weights).sum().backward()

    floor = best_of(lambda: fwd_bwd(lambda z: torch.softmax(z, -1)), reps)
    print(f"\nα-entmax forward+backward, ({rows}, {vocab}) float32, {torch.get_num_threads()} threads")
    print(f"{'map':<28}{'ms':>10}{'× softmax':>12}")
    print(f"{'softmax':<28}{floor * 1e3:>10.1f}{1.0:>12.1f}")
    for alpha in (1.314, 1.5, 2.0):
        newton = best_of(lambda: fwd_bwd(lambda z: entmax_newton(z, alpha)), reps)
        bisect = best_of(lambda: fwd_bwd(lambda z: entmax_bisect(z, alpha)), max(1, reps // 2))
        print(f"{f'entmax_newton α={alpha}':<28}{newton * 1e3:>10.1f}{newton / floor:>12.1f}")
        print(f"{f'entmax_bisect α={alpha}':<28}{bisect * 1e3:>10.1f}{bisect / floor:>12.1f}")


def plain_epoch(model: NVDM, data: torch.Tensor, batch: int, alpha: float, beta: float, opts: dict) -> None:
    """The same NVDM epoch written by hand: decoder pass (encoder frozen), then encoder pass."""
    for phase in ("decoder", "encoder"):
        for p in model.decoder_parameters():
            p.requires_grad_(phase == "decoder")
        for p in model.encoder_parameters():
            p.requires_grad_(phase == "encoder")
        for idx in torch.randperm(len(data)).split(batch):
            loss = nvdm_objective(model, data[idx], alpha, beta)["objective"].mean()
            opts[phase].zero_grad(set_to_none=True)
            loss.backward()
            opts[phase].step()


def bench_epoch(docs: int, reps: int, vocab: int) -> None:
    from fyexp.experiments.nvdm import NVDMConfig
    from fyexp.train.nvdm import train_nvdm

    torch.manual_seed(0)
    data = torch.poisson(torch.rand(docs, vocab) * 0.05)
    data[:, 0] += 1
    valid = data[:200]
    print(f"\nOne NVDM epoch (decoder pass + encoder pass), {docs} synthetic docs × {vocab:,} words, K = 50")
    print(f"{'model / batch':<28}{'Trainer s':>11}{'plain s':>10}{'ratio':>8}")
    for observation, alpha, batch in (("multinomial", 1.0, 64), ("multinomial", 1.0, 1024), ("entmax", 1.314, 1024)):
        train = TrainConfig(epochs=1, batch_size=batch, optimizer=OptimizerConfig(lr=1e-3))
        config = NVDMConfig(observation=observation, rho_prime=alpha if alpha > 1 else 1.314, train=train,
                            alternating_epochs=1)
        ours = best_of(lambda: train_nvdm(config, data, valid, seed=0, device="cpu", work_dir=None), reps)
        model = build_nvdm(vocab, 50, 500, alpha)
        opts = {"decoder": torch.optim.Adam(model.decoder_parameters(), lr=1e-3),
                "encoder": torch.optim.Adam(model.encoder_parameters(), lr=1e-3)}
        plain = best_of(lambda: plain_epoch(model, data, batch, alpha, 0.01, opts), reps)
        name = f"{'NVDM' if alpha == 1 else 'FY-NVDM ρ′=1.314'} / {batch}"
        print(f"{name:<28}{ours:>11.2f}{plain:>10.2f}{ours / plain:>8.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--docs", type=int, default=11290)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--vocab", type=int, default=2000, help=argparse.SUPPRESS)
    parser.add_argument("--rows", type=int, default=1024, help=argparse.SUPPRESS)
    parser.add_argument("--smoke", action="store_true", help="tiny sizes: checks that the script runs")
    args = parser.parse_args()
    if args.smoke:
        vars(args).update(SMOKE)
    torch.set_num_threads(args.threads)
    bench_maps(args.reps, args.rows, args.vocab)
    bench_epoch(args.docs, max(1, args.reps // 2), args.vocab)


if __name__ == "__main__":
    main()
