"""Benchmarks of the VR experiments (issue 11), interleaved in one run, single-threaded (the cores are shared).

1. One BNN epoch on Boston (455 training points, batch 32, K = 100, 50 hidden units), one model: all K weight
   samples as one batched computation (:class:`fyexp.models.bnn.BatchedBNN`) vs a Python loop over the K samples
   (the same network, one sample per call, the K log-weights stacked before the bound).  Aim ≥ 10×.
2. One epoch of the whole Boston grid (20 splits × 4 methods = 80 models, K = 100) as one batched computation (all
   80 models per product, and in cache-sized chunks of 4 models, the runner's default) vs split by split (20 runs of
   the 4 methods of a split).  Per-epoch times; training is 500 such epochs.  Aim ≥ 5×.
3. One training step of the one-layer MNIST VAE (784-200-200-50, tanh, batch 20, K = 50): VR-max with one backward
   pass through the max-weight sample (:class:`~fyexp.objectives.single_backward.VRMaxSingle`) vs IWAE back-
   propagating all K samples.  Aim ≤ 0.5× (the paper: 25h29 / 61h16 = 0.42 on a GPU).
4. The same grid epoch by the two ways of training many models as one: the batched BNN (all 80 models one
   :class:`~fyexp.models.bnn.BatchedBNN`, chunks of 4, the runner's :func:`fyexp.train.batched_bnn.fit_group`) vs
   :mod:`fyexp.train.ensemble` (torch.func: ``vmap`` over stacked parameters, one ensemble of 20 one-model members
   per α, as an ensemble needs members of one setting).  Ratio ensemble / batched: > 1 means the batched BNN wins.

Each measurement is the median of ``--rounds`` rounds, the variants of a comparison alternating within a round.

Usage: ``python scripts/bench_vr.py [--rounds 3] [--vae-steps 20]``
"""

from __future__ import annotations

import argparse
import math
import statistics
import time

import torch

from fyexp.models import ModelConfig, build_vae
from fyexp.models.bnn import BatchedBNN, RegressionBatch
from fyexp.objectives import IWAE
from fyexp.objectives.per_column import PerColumnVR
from fyexp.objectives.single_backward import VRMaxSingle
from fyexp.models.latent import LatentTerms
from fyexp.train import OptimizerConfig, TrainConfig, TrainTask
from fyexp.train.ensemble import EnsembleMember, fit_ensemble

N_TRAIN, N_FEATURES, HIDDEN, BATCH, K = 455, 13, 50, 32, 100
SMOKE = {"rounds": 1, "vae_steps": 1}
ALPHAS = (1.0, 0.5, 0.0, -math.inf)


def boston_like(n_groups: int) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    return torch.randn(n_groups, N_TRAIN, N_FEATURES, generator=g), torch.randn(n_groups, N_TRAIN, generator=g)


def bnn_epoch(n_splits: int, alphas: tuple[float, ...], loop_samples: bool = False, chunk: int | None = None) -> float:
    """Seconds for one epoch of Adam steps of ``len(alphas) * n_splits`` batched models (``chunk`` models per
    batched product, None: all)."""
    x, y = boston_like(n_splits)
    model = BatchedBNN([torch.Generator().manual_seed(m) for m in range(len(alphas) * n_splits)], N_FEATURES, HIDDEN)
    model.model_chunk = chunk
    objective = PerColumnVR(n_samples=K, alphas=tuple(a for a in alphas for _ in range(n_splits)))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    n_data = torch.full((n_splits,), N_TRAIN)
    start = time.perf_counter()
    for b in range(0, N_TRAIN, BATCH):
        batch = RegressionBatch(x[:, b:b + BATCH], y[:, b:b + BATCH], n_data)
        terms = looped_terms(model, batch) if loop_samples else model.terms(batch, K)
        loss = -(objective.bound(terms) / N_TRAIN).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return time.perf_counter() - start


class OneBNNTask(TrainTask):
    """One BNN (a one-model :class:`BatchedBNN`) on the minibatch VR bound: an ensemble member's task."""

    def __init__(self, model: BatchedBNN, alpha: float):
        self.model, self.objective = model, PerColumnVR(n_samples=K, alphas=(alpha,))

    def loss(self, batch):
        x, y = batch
        bound, _ = self.objective(self.model, RegressionBatch(x[None], y[None], torch.tensor([N_TRAIN])))
        return -(bound / N_TRAIN).sum(), {}


def ensemble_epoch(n_splits: int, alphas: tuple[float, ...]) -> float:
    """Seconds for one epoch of ``len(alphas) * n_splits`` one-model BNNs trained by :func:`fit_ensemble`, one
    ensemble per α; each member draws its initialization and noise from its own global-RNG state."""
    x, y = boston_like(n_splits)
    config = TrainConfig(epochs=1, batch_size=BATCH, optimizer=OptimizerConfig(lr=1e-3))
    seconds = 0.0
    for alpha in alphas:
        members = []
        for s in range(n_splits):
            torch.manual_seed(s)
            model = BatchedBNN([torch.default_generator], N_FEATURES, HIDDEN)
            members.append(EnsembleMember(OneBNNTask(model, alpha), (x[s], y[s]), s))
        start = time.perf_counter()
        fit_ensemble(config, members)
        seconds += time.perf_counter() - start
    return seconds


def looped_terms(model: BatchedBNN, batch: RegressionBatch) -> LatentTerms:
    """The terms of K samples computed one sample per call (the baseline of comparison 1)."""
    w = model.sample(K)
    cols = []
    for k in range(K):
        f = model.predict(w.theta[:, :, k:k + 1], batch.x)  # (M, 1, B)
        var = model.noise_var()[:, None, None]
        log_lik = -0.5 * (math.log(2 * math.pi) + var.log() + (batch.y.unsqueeze(1) - f).pow(2) / var)
        cols.append(N_TRAIN * log_lik.mean(-1))
    scaled = torch.cat(cols, dim=1)  # (M, K)
    return LatentTerms(scaled.T, model.log_prior(w).T, model.log_q(w).T, model.kl(w.mean, w.std.pow(2)))


def vae_steps(objective, steps: int) -> float:
    torch.manual_seed(0)
    vae = build_vae(ModelConfig(latent=[50], encoder_hidden=[[200, 200]], decoder_hidden=[[200, 200]],
                                activation="tanh"), 784)
    optimizer = torch.optim.Adam(vae.parameters(), lr=1e-3, betas=(0.99, 0.999), eps=1e-4)
    x = (torch.rand(steps, 20, 784) < 0.2).float()
    start = time.perf_counter()
    for s in range(steps):
        bound, _ = objective(vae, x[s])
        optimizer.zero_grad()
        (-bound.mean()).backward()
        optimizer.step()
    return (time.perf_counter() - start) / steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--vae-steps", type=int, default=20)
    parser.add_argument("--smoke", action="store_true", help="tiny sizes: checks that the script runs (tests)")
    args = parser.parse_args()
    if args.smoke:
        vars(args).update(SMOKE)
        global N_TRAIN, K
        N_TRAIN, K = 40, 4
    torch.set_num_threads(1)
    names = ("batched K", "loop K", "grid batched", "grid chunked", "grid by split", "grid ensemble", "vr-max single",
             "iwae full")
    times: dict[str, list[float]] = {k: [] for k in names}
    for _ in range(args.rounds):
        times["batched K"].append(bnn_epoch(1, (0.0,)))
        times["loop K"].append(bnn_epoch(1, (0.0,), loop_samples=True))
        times["grid batched"].append(bnn_epoch(20, ALPHAS))
        times["grid chunked"].append(bnn_epoch(20, ALPHAS, chunk=4))
        times["grid by split"].append(sum(bnn_epoch(1, ALPHAS) for _ in range(20)))
        times["grid ensemble"].append(ensemble_epoch(20, ALPHAS))
        times["vr-max single"].append(vae_steps(VRMaxSingle(n_samples=50), args.vae_steps))
        times["iwae full"].append(vae_steps(IWAE(n_samples=50), args.vae_steps))
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"torch {torch.__version__}, 1 thread, median of {args.rounds} interleaved rounds")
    print(f"1. BNN epoch, Boston, K = {K}, one model: batched {med['batched K']:.3f} s, loop over K "
          f"{med['loop K']:.3f} s -> speed-up {med['loop K'] / med['batched K']:.1f}x (aim >= 10x)")
    print(f"2. Boston grid epoch, 20 splits x 4 methods: batched {med['grid batched']:.2f} s (in chunks of 4 models "
          f"{med['grid chunked']:.2f} s), split by split {med['grid by split']:.2f} s -> speed-up "
          f"{med['grid by split'] / med['grid batched']:.1f}x ({med['grid by split'] / med['grid chunked']:.1f}x "
          f"chunked; aim >= 5x); 500 epochs ~ {500 * med['grid chunked'] / 60:.0f} min chunked")
    print(f"3. MNIST VAE step, K = 50, batch 20: VR-max single backward {1e3 * med['vr-max single']:.1f} ms, IWAE "
          f"{1e3 * med['iwae full']:.1f} ms -> ratio {med['vr-max single'] / med['iwae full']:.2f} "
          f"(aim <= 0.5; paper 0.42)")
    print(f"4. Boston grid epoch, 80 models as one: batched BNN in chunks of 4 {med['grid chunked']:.2f} s, "
          f"torch.func ensembles (4 x 20 members) {med['grid ensemble']:.2f} s -> ratio ensemble / batched "
          f"{med['grid ensemble'] / med['grid chunked']:.2f} (all 80 batched at once: "
          f"{med['grid ensemble'] / med['grid batched']:.2f})")


if __name__ == "__main__":
    main()
