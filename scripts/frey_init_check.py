"""An independent check of the Frey Face plateau (vr-vae NOTES, "Frey Face fidelity on fold 0"), in plain torch.

The authors' Frey Face VAE (YingzhenLi/VRbound ``vae_autograd/``): 560-200-200-20 softplus encoder and decoder,
the decoder's mean through a sigmoid and its log-variance a linear output, the encoder's log-variance likewise,
the ELBO with K = 5 samples and a Monte Carlo KL, Adam at 5e-4 (ε 1e-9 on the per-point mean), batch 100, the last
partial batch skipped, run 0's split (``np.random.seed(0)``, shuffle, the first 1,768 faces).  Written apart from
fyexp's models and trainer, so that a plateau seen by both is no artefact of either; prints the training bound per
image every 25 epochs.  Two questions it answers, each in a few minutes on one core:

* ``--init authors`` (every weight and bias ~ N(0, 0.01²), ``parameter_server.py`` l. 30) vs ``--init torch`` (torch's
  default): does the collapsed-posterior plateau (a bound near 660–672) come from the initialization?
* ``--dtype 64`` vs ``32``: does float64 arithmetic (the authors' autograd numpy) shorten it?

    python scripts/frey_init_check.py --data-dir DATA --init authors --dtype 32 --epochs 400
"""

from __future__ import annotations

import argparse
import math
import os
import pickle
import time
from pathlib import Path

import numpy as np
import torch
from torch import nn

HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


def fold0_training_faces(data_dir: Path, dtype: torch.dtype) -> torch.Tensor:
    with (data_dir / "FreyFace" / "freyfaces.pkl").open("rb") as handle:
        faces = pickle.load(handle, encoding="latin1")[0].astype(np.float64) / 255.0
    np.random.seed(0)
    np.random.shuffle(faces)
    return torch.tensor(faces[: int(0.9 * len(faces))], dtype=dtype)


def mlp(inputs: int, outputs: int) -> nn.Sequential:
    return nn.Sequential(nn.Linear(inputs, 200), nn.Softplus(), nn.Linear(200, 200), nn.Softplus(),
                         nn.Linear(200, 2 * outputs))


def elbo(encoder: nn.Module, decoder: nn.Module, x: torch.Tensor, k: int = 5) -> torch.Tensor:
    """(1/K) Σ_k [log p(x|z_k) + log p(z_k) − log q(z_k|x)] per image, z_k ~ q(z|x) = N(μ, diag σ²)."""
    mu, log_var = encoder(x).chunk(2, -1)
    z = mu + (0.5 * log_var).exp() * torch.randn((k, *mu.shape), dtype=x.dtype)
    log_q = (-HALF_LOG_2PI - 0.5 * log_var - 0.5 * (z - mu) ** 2 / log_var.exp()).sum(-1)
    log_prior = (-HALF_LOG_2PI - 0.5 * z ** 2).sum(-1)
    logits, x_log_var = decoder(z).chunk(2, -1)
    log_px = (-HALF_LOG_2PI - 0.5 * x_log_var - 0.5 * (x - torch.sigmoid(logits)) ** 2 / x_log_var.exp()).sum(-1)
    return (log_px + log_prior - log_q).mean(0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=Path(os.environ.get("FYEXP_DATA_DIR", "data")))
    parser.add_argument("--init", choices=["authors", "torch"], default="authors")
    parser.add_argument("--dtype", choices=["32", "64"], default="32")
    parser.add_argument("--epochs", type=int, default=400)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    torch.set_num_threads(1)
    dtype = torch.float64 if args.dtype == "64" else torch.float32
    train = fold0_training_faces(args.data_dir, dtype)
    torch.manual_seed(args.seed)
    encoder, decoder = mlp(560, 20).to(dtype), mlp(20, 560).to(dtype)
    params = [*encoder.parameters(), *decoder.parameters()]
    if args.init == "authors":
        with torch.no_grad():
            for p in params:
                p.normal_(0.0, 0.01)
    optimizer = torch.optim.Adam(params, lr=5e-4, eps=1e-9)
    steps, start = len(train) // 100, time.time()
    for epoch in range(1, args.epochs + 1):
        order, total = torch.randperm(len(train)), 0.0
        for j in range(steps):
            loss = -elbo(encoder, decoder, train[order[j * 100:(j + 1) * 100]]).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total -= loss.item()
        if epoch % 25 == 0:
            print(f"init {args.init} float{args.dtype} seed {args.seed} epoch {epoch}: training bound "
                  f"{total / steps:.1f} ({time.time() - start:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
