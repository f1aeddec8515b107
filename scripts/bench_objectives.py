"""Benchmark: the cost of the VR / IWAE objectives against K, and the trainer's epoch against a hand-written loop.

1. **Objectives.**  One training step (K samples → log-weights → bound → backward → Adam step) of the VR MNIST
   architecture (Li & Turner §5.2: 784–200–200–50 tanh encoder, 50–200–200–784 tanh decoder, Bernoulli
   likelihood, batch 100) for the ELBO at K = 1 (analytic KL) and VR-α (α = 0.5), IWAE (α = 0) and VR-max
   (α = −∞) at K ∈ {1, 5, 50}.  Each configuration has its own model from the same initialisation; the
   configurations are timed round-robin (``--reps`` rounds of ``--steps`` steps), so a load change on the
   machine hits them all alike.  Printed: median ms/step, the ratio to the ELBO at K = 1, and that ratio / K
   (flat when the cost is linear in K; below 1 when the encoder's one pass is amortised over the K samples).
2. **Trainer vs hand-written loop.**  One epoch of the same VAE (ELBO, K = 1) through :class:`fyexp.train.Trainer`
   and through a plain ``for batch: loss, zero_grad, backward, step`` loop over the same batches, alternated
   A B B A … so that drift cancels; the trainer's time is its ``epoch_time_s`` (the batch loop, with the NaN guard
   and progress bookkeeping; its validation and checkpoint are outside), and also the whole ``fit`` call.
3. ``--fy-pairs``: the FY β-VAE of fy-vae (784–512–256, ReLU) for every decoder ρ′ × posterior ρ, ms/step
   relative to Bernoulli / Gaussian (this was ``scripts/bench_trainer.py``).

    python scripts/bench_objectives.py --data-dir DATA [--device cpu] [--steps 20] [--reps 5] [--epoch-images 6000]
        [--fy-pairs | --fy-pairs-only] [--threads 1] [--smoke]

Without ``--data-dir`` the images are random binary vectors (the timings do not depend on the pixels).
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import time

import torch

from fyexp.models import ModelConfig, build_vae
from fyexp.objectives import ELBO, IWAE, VR, VRMax
from fyexp.train import OptimizerConfig, TensorBatches, TrainConfig, Trainer, VariationalTask, seed_everything

SMOKE = {"batch": 8, "steps": 2, "reps": 1, "epoch_images": 32, "fy_pairs": True}
VR_MNIST = ModelConfig(latent=[50], encoder_hidden=[[200, 200]], decoder_hidden=[[200, 200]], activation="tanh",
                       posterior="gaussian", observation="bernoulli")


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def _images(data_dir: str | None, n: int, device: str) -> torch.Tensor:
    if data_dir:
        from fyexp.data.vision import image_splits

        x = image_splits("MNIST", data_dir, n, 100).train[:n]
        return torch.bernoulli(x, generator=torch.Generator().manual_seed(0)).to(device)
    return (torch.rand(n, 784, generator=torch.Generator().manual_seed(0)) < 0.13).float().to(device)


def _model(config: ModelConfig, device: str):
    seed_everything(0)
    return build_vae(config, 784).to(device)


class Stepper:
    """One objective on its own model and optimizer; ``run(batches)`` times ``len(batches)`` training steps."""

    def __init__(self, objective, config: ModelConfig, device: str):
        self.objective, self.device = objective, device
        self.model = _model(config, device)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=1e-3)
        self.times: list[float] = []

    def step(self, x: torch.Tensor) -> None:
        bound, _ = self.objective(self.model, x)
        loss = -bound.mean()
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        self.optimizer.step()

    def run(self, batches: list[torch.Tensor]) -> None:
        _sync(self.device)
        tic = time.perf_counter()
        for x in batches:
            self.step(x)
        _sync(self.device)
        self.times.append((time.perf_counter() - tic) / len(batches))


def bench_objectives(images: torch.Tensor, args) -> None:
    batches = list(images[:args.batch * args.steps].split(args.batch))
    configs = [("ELBO (analytic KL)", 1, ELBO(n_samples=1))]
    for k in (1, 5, 50):
        configs += [("VR alpha=0.5", k, VR(alpha=0.5, n_samples=k)), ("IWAE (alpha=0)", k, IWAE(n_samples=k)),
                    ("VR-max (alpha=-inf)", k, VRMax(n_samples=k))]
    steppers = [Stepper(obj, VR_MNIST, args.device) for _, _, obj in configs]
    for s in steppers:  # warm-up
        s.run(batches[:3])
        s.times.clear()
    for _ in range(args.reps):
        for s in steppers:
            s.run(batches)
    base, best = statistics.median(steppers[0].times), min(steppers[0].times)
    print(f"\n1. objectives on 784-200-200-50 tanh, Bernoulli, batch {args.batch}: {args.reps} rounds of "
          f"{args.steps} steps (forward + backward + Adam); median (and best) round")
    print(f"{'objective':22s} {'K':>3s} {'ms/step':>15s} {'x ELBO K=1':>13s} {'(x)/K':>7s}")
    for (name, k, _), s in zip(configs, steppers):
        t, b = statistics.median(s.times), min(s.times)
        print(f"{name:22s} {k:3d} {t * 1e3:7.2f} ({b * 1e3:6.2f}) {t / base:6.2f} ({b / best:5.2f}) {t / base / k:7.2f}")


def _plain_epoch(task: VariationalTask, optimizer, data: torch.Tensor, batch: int, device: str, seed: int) -> float:
    """The reference loop: the same batches (TensorBatches, same generator seed) and the same loss."""
    batches = TensorBatches((data,), batch, device, torch.Generator().manual_seed(seed))
    _sync(device)
    tic = time.perf_counter()
    for b in batches:
        loss, _ = task.loss(b)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    _sync(device)
    return time.perf_counter() - tic


def bench_trainer(images: torch.Tensor, args) -> None:
    data = images[:args.epoch_images]
    train = TrainConfig(epochs=1, batch_size=args.batch, optimizer=OptimizerConfig(lr=1e-3))
    plain_task = VariationalTask(_model(VR_MNIST, args.device), ELBO())
    plain_opt = torch.optim.Adam(plain_task.model.parameters(), lr=1e-3)
    ours_task = VariationalTask(_model(VR_MNIST, args.device), ELBO())
    _plain_epoch(plain_task, plain_opt, data[:args.batch * 3], args.batch, args.device, 0)  # warm-up
    Trainer(train, device=args.device).fit(ours_task, (data[:args.batch * 3],))
    plain, loop, fit = [], [], []
    for rep in range(args.reps):
        order = ("plain", "trainer") if rep % 2 == 0 else ("trainer", "plain")
        for which in order:
            if which == "plain":
                plain.append(_plain_epoch(plain_task, plain_opt, data, args.batch, args.device, rep))
            else:
                tic = time.perf_counter()
                history = Trainer(dataclasses.replace(train, seed=rep), device=args.device).fit(ours_task, (data,))
                fit.append(time.perf_counter() - tic)
                loop.append(history[-1]["epoch_time_s"])
    p, t, f = statistics.median(plain), statistics.median(loop), statistics.median(fit)
    steps = -(-len(data) // args.batch)
    print(f"\n2. one epoch of {len(data)} images ({steps} steps of {args.batch}), ELBO K=1, median of {args.reps} "
          f"alternated epochs each")
    print(f"hand-written loop  {p:7.3f} s  ({p / steps * 1e3:6.2f} ms/step)")
    print(f"Trainer epoch      {t:7.3f} s  ({t / steps * 1e3:6.2f} ms/step)   ratio {t / p:.3f}")
    print(f"Trainer.fit call   {f:7.3f} s  (with optimizer set-up and history)      ratio {f / p:.3f}")
    print(f"best epochs: hand-written {min(plain):.3f} s, Trainer {min(loop):.3f} s, ratio {min(loop) / min(plain):.3f}")
    print("per-epoch ratios Trainer/hand-written (pairs in run order): "
          + " ".join(f"{a / b:.3f}" for a, b in zip(loop, plain)))


def bench_fy_pairs(images: torch.Tensor, args) -> None:
    batches = list(images[:64 * args.steps].split(64))
    pairs = [(o, r) for o in (1.0, 2.0) for r in (1.0, 1.5, 2.0)]
    steppers = []
    for obs_rho, rho in pairs:
        config = ModelConfig(latent=[256], encoder_hidden=[[512]], decoder_hidden=[[512]], activation="relu",
                             posterior="beta_gaussian", posterior_rho=rho, observation="binary_entmax",
                             observation_rho=obs_rho)
        steppers.append(Stepper(ELBO(beta=0.01), config, args.device))
    for _ in range(args.reps):
        for s in steppers:
            s.run(batches)
    base = statistics.median(steppers[0].times)
    print(f"\n3. FY beta-VAE 784-512-256 (fy-vae), batch 64, median of {args.reps} rounds of {args.steps} steps")
    for (obs_rho, rho), s in zip(pairs, steppers):
        t = statistics.median(s.times)
        print(f"decoder rho'={obs_rho:g} posterior rho={rho:g}: {t * 1e3:7.2f} ms/step, {t / base:.2f}x "
              f"Bernoulli/Gaussian")
    worst = max(statistics.median(s.times) for s in steppers) / base
    print(f"largest overhead of a sparse latent / decoder over Bernoulli/Gaussian: {worst:.2f}x (aim <= 1.3x)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--batch", type=int, default=100)
    parser.add_argument("--steps", type=int, default=20, help="steps per timed round (part 1 and 3)")
    parser.add_argument("--reps", type=int, default=5, help="rounds (part 1 and 3) / epochs per loop (part 2)")
    parser.add_argument("--epoch-images", type=int, default=6000, help="training images per epoch in part 2")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--fy-pairs", action="store_true", help="also time the FY beta-VAE pairs (part 3)")
    parser.add_argument("--fy-pairs-only", action="store_true", help="only part 3 (implies --fy-pairs)")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes: checks that the script runs (tests)")
    args = parser.parse_args()
    if args.smoke:
        vars(args).update(SMOKE)
    if args.threads:
        torch.set_num_threads(args.threads)
    images = _images(args.data_dir, max(args.epoch_images, args.batch * args.steps, 64 * args.steps), args.device)
    print(f"device {args.device}, torch {torch.__version__}, {torch.get_num_threads()} threads, "
          f"{'MNIST (binarised)' if args.data_dir else 'random binary images'}")
    if not args.fy_pairs_only:
        bench_objectives(images, args)
        bench_trainer(images, args)
    if args.fy_pairs or args.fy_pairs_only:
        bench_fy_pairs(images, args)


if __name__ == "__main__":
    main()
