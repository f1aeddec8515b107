"""Benchmark: the trainer's epoch vs a hand-written PyTorch loop on the same model and batches, and the
cost of every latent/decoder pair of the FY β-VAE relative to Gaussian–Bernoulli.

    python scripts/bench_trainer.py --data-dir /work/shared/data --device cpu --steps 200

Both loops run the same :class:`fyexp.experiments.fy_vae.FYVAETask` loss on the same shuffled batches of
MNIST (on the device); the trainer adds its NaN guard, logging and progress.  Times are per step and
extrapolated to a 55,000-image epoch (860 steps of 64).
"""

from __future__ import annotations

import argparse
import time

import torch

from fyexp.data.vision import image_splits
from fyexp.experiments.fy_vae import FYVAETask
from fyexp.models.vae import MLPVAE
from fyexp.train import TensorBatches, TrainConfig, Trainer, seed_everything

STEPS_PER_EPOCH = 860


def _task(device, obs, rho, valid):
    seed_everything(0)
    return FYVAETask(MLPVAE().to(device), obs, rho, "fy", 0.01, 5e-5, valid)


def _sync(device):
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def plain_loop(train, device, steps, obs=1.0, rho=1.0):
    """The reference: for batch: loss, zero_grad, backward, step."""
    task = _task(device, obs, rho, train[:10])
    opt = torch.optim.Adam(task.model.parameters(), lr=5e-5)
    batches = TensorBatches((train,), 64, device, torch.Generator().manual_seed(0))
    it = iter(batches)
    for _ in range(10):  # warm-up
        loss, _ = task.loss(next(it)); opt.zero_grad(); loss.backward(); opt.step()
    _sync(device)
    tic = time.perf_counter()
    for _ in range(steps):
        loss, _ = task.loss(next(it))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    _sync(device)
    return (time.perf_counter() - tic) / steps


def trainer_loop(train, device, steps, obs=1.0, rho=1.0, compile=False):
    """The trainer on ``steps`` batches (one short epoch; validation on 10 images), after a warm-up epoch."""
    task = _task(device, obs, rho, train[:10])
    data = train[:64 * steps]
    trainer = Trainer(TrainConfig(epochs=2, batch_size=64, compile=compile, log_every=50), device=device)
    history = trainer.fit(task, (data,))
    return history[-1]["epoch_time_s"] / steps


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--compile", action="store_true", help="also time the trainer with torch.compile")
    args = parser.parse_args()
    train = image_splits("MNIST", args.data_dir, 55_000, 5_000).train.to(args.device)
    print(f"device {args.device}, torch {torch.__version__}, threads {torch.get_num_threads()}, {args.steps} steps")
    plain = plain_loop(train, args.device, args.steps)
    ours = trainer_loop(train, args.device, args.steps)
    print(f"Gaussian–Bernoulli  plain loop {plain * 1e3:7.2f} ms/step ({plain * STEPS_PER_EPOCH:6.1f} s/epoch)   "
          f"trainer {ours * 1e3:7.2f} ms/step ({ours * STEPS_PER_EPOCH:6.1f} s/epoch)   ratio {ours / plain:.3f}")
    if args.compile:
        comp = trainer_loop(train, args.device, args.steps, compile=True)
        print(f"trainer + torch.compile {comp * 1e3:7.2f} ms/step   ratio to plain {comp / plain:.3f}")
    for obs in (1.0, 2.0):
        for rho in (1.0, 1.5, 2.0):
            t = plain_loop(train, args.device, args.steps, obs, rho)
            print(f"decoder rho'={obs:g} latent rho={rho:g}: {t * 1e3:7.2f} ms/step "
                  f"({t * STEPS_PER_EPOCH:6.1f} s/epoch), {t / plain:.2f}x Gaussian–Bernoulli")


if __name__ == "__main__":
    main()
