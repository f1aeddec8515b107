"""The paper queue's training steps (issue 28): fyexp's step against a hand-written loop and the matmul peak.

For each workload of the paper queue, one thread (``torch.set_num_threads(1)``), interleaved rounds, medians:

* **fyexp**: the real thing — the model and task the experiment's runner builds from the spec's ``paper`` profile
  (``FYVAE._task``, ``BinarizingTask`` + ``build_vae(model_config(...))``, ``NVDMTask`` + ``build_nvdm``, the frac
  ``METHODS`` objective on ``build_conv_vae``), trained one epoch by :class:`fyexp.train.Trainer` on synthetic data of
  the right shape; seconds per step from the epoch's ``epoch_time_s``;
* **hand**: the same model and loss as a hand-written loop in the same process — plain ``nn.Linear`` layers,
  ``torch.optim.Adam``, ``zero_grad / backward / step`` and nothing else; the maths that is not a one-liner (the
  binary 2-entmax FY loss, the β-Gaussian's sampling and FY regularizer, the Tsallis FY multinomial loss) is
  called from fyexp's function, as a hand-written loop would import it.  The frac cell's hand loop is a bare loop
  around the same module and objective (its conv VAE is not re-written);
* **ratio** fyexp / hand, and the fraction of the matmul peak: the achieved GFLOP/s of a step,
  6 · params · batch / step time, over a 512×784 @ 784×512 float32 matmul's GFLOP/s measured in the workload's
  own rounds.  6 · params · batch counts one pass of the batch through every weight: right for the K = 1 MLPs
  (FY β-VAE, NVDM), an undercount where the decoder sees K·B samples (VR, frac: their %peak is not comparable).

Then VR-max against IWAE at K = 50 (Caltech; the paper's ratio is 0.42 on a GPU), VR-max's current path
(:class:`~fyexp.objectives.single_backward.VRMaxSingle`) beside the all-samples :class:`~fyexp.objectives.VRMax`.

Usage: ``python scripts/bench_queue.py [--rounds 5] [--scale 1] [--only fy-vae]`` (``--smoke``: seconds).

Quiet machine, 2026-11-25 (both cores' queue paused, load ≈ 1; malloc tuned as in every cell, ``fyexp.train.allocator``;
matmul peak 99–103 GFLOP/s; 5 rounds): fyexp / hand loop — FY β-VAE Bernoulli/Gaussian 1.12× (41.6% of peak),
Ψ₂/Gaussian 1.10× (44.2%), Bernoulli/β-Gaussian 1.09× (40.8%); VR Caltech K = 5 1.04×, K = 50 1.01×, Frey Face 1.01×;
FY-NVDM 0.98× (68% of peak; 120.5 → 100.9 ms per pass with the malloc setting); frac L_γ K = 100 1.00×; VR-max /
IWAE at K = 50 0.51.  With glibc's default malloc the same run gave FY β-VAE 1.24× / 1.06× / 1.04× and FY-NVDM
120.5 ms.  What keeps the FY β-VAE above 1.05× (torch.profiler, 60 steps each, per step): Adam's ``sqrt`` 1.40 ms
against the hand loop's 0.61 (the same 8 calls; the multi-tensor update makes all eight square-root buffers before
dividing, the loop one at a time, which stays in cache; the per-parameter loop in fyexp measured 11.9 against
foreach's 11.5 ms, so it is not the fix), the FY loss's constant Σ xlogy (0.32 ms, part of the logged loss), and the
ELBO's and logging's small elementwise ops (``mul`` 0.41 against 0.11 ms, views 0.13 ms).

Findings before (issue 28; the shared 2-core machine at load average 11–13, so a median of 9 interleaved rounds, the
Trainer of the previous commit loaded beside the new one in the same process): the per-step NaN guard (a foreach
norm of every gradient) and the per-name logging sums cost 4–16% of a step (FY β-VAE Bernoulli 1.13× → 1.08× the
hand loop, Ψ₂ 1.26× → 1.10×, β-Gaussian 1.19× → 1.15×, Caltech K = 5 1.21× → 1.02×, Frey Face 1.00× → 0.98×).
What is left is not the loop: the FY loss computes its constant Σ x log x + (1−x) log(1−x) every step (part of the
logged loss; the hand loop drops it), the VAE computes log q and log p(z) that the analytic ELBO does not read, and
the β-Gaussian builds its distribution object.  The default (for-loop) Adam was a quarter of the step: the
multi-tensor (``foreach``) update is bit-identical and 0.57× the loop's time over the FY β-VAE's 1.2 M parameters
(``scripts/bench_optimizer.py``: 11.8 vs 20.6 ms at load ~8), so :func:`~fyexp.train.config.make_optimizer` uses it
since the round after these numbers (the hand loop keeps torch's default); a fused Adam is faster still (0.20×) but
changes the last bits from the first step; ``torch.compile`` of the loss took 305 s to compile,
was not faster after it, and is not bit-identical.  VR-max with one backward pass
(:class:`~fyexp.objectives.single_backward.VRMaxSingle`) is 0.35–0.54 of IWAE's step at K = 50 across runs: the
K-sample forward pass without a graph (a third of IWAE's forward + backward) and the optimizer step bound it.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Callable

import torch
import torch.nn.functional as F
from torch import nn

from fyexp.distributions.beta_gaussian import BetaGaussian, fy_regularizer
from fyexp.experiments import get_experiment
from fyexp.losses.binary_entmax import binary_fy_loss
from fyexp.losses.fy_multinomial import fy_multinomial_loss
from fyexp.models.vae import build_vae
from fyexp.models.vr_architectures import model_config
from fyexp.objectives import IWAE, VRMax
from fyexp.objectives.single_backward import VRMaxSingle
from fyexp.store.results import Cell
from fyexp.spec.specs import load_spec, resolve
from fyexp.train import Trainer, seed_everything
from fyexp.train.binarizing import BinarizingTask

EXPERIMENTS = Path(__file__).resolve().parents[1] / "experiments"
SMOKE = {"rounds": 1, "scale": 0.0, "peak_reps": 3}


def paper(name: str):
    """The experiment of spec ``name`` and its resolved ``paper`` config."""
    spec = load_spec(name, EXPERIMENTS)
    experiment = get_experiment(spec.runner)
    return experiment, resolve(spec, "paper", experiment.Config).config


# ------------------------------------------------------------------------------------------ the peak
def matmul_gflops(reps: int) -> float:
    """GFLOP/s of a 512×784 @ 784×512 float32 matmul (median of ``reps`` timings of 20 products)."""
    a, b = torch.randn(512, 784), torch.randn(784, 512)
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        for _ in range(20):
            a @ b
        times.append((time.perf_counter() - start) / 20)
    return 2 * 512 * 784 * 512 / statistics.median(times) / 1e9


# --------------------------------------------------------------------------------------- fyexp's side
def trainer_step(task, data: torch.Tensor, train, steps: int) -> float:
    """Seconds per step of one Trainer epoch of ``steps`` batches (the epoch's own clock)."""
    n = steps * train.batch_size
    config = dataclasses.replace(train, epochs=1, seed=0, log_every=min(train.log_every, steps))
    history = Trainer(config, label="bench").fit(task, (data[:n],))
    return history[-1]["epoch_time_s"] / steps


def hand_steps(loss_of: Callable[[torch.Tensor], torch.Tensor], params, train, data: torch.Tensor,
               steps: int) -> float:
    """Seconds per step of the hand-written loop: shuffled batches, zero_grad, backward, Adam step."""
    opt = train.optimizer
    adam = torch.optim.Adam(params, lr=opt.lr, betas=tuple(opt.betas), eps=opt.eps, weight_decay=opt.weight_decay)
    b = train.batch_size
    order = torch.randperm(steps * b)
    start = time.perf_counter()
    for s in range(steps):
        x = data[order[s * b:(s + 1) * b]]
        loss = loss_of(x)
        adam.zero_grad(set_to_none=True)
        loss.backward()
        adam.step()
    return (time.perf_counter() - start) / steps


def n_params(module: nn.Module) -> int:
    return sum(p.numel() for p in module.parameters())


# ------------------------------------------------------------------------------------------ workloads
@dataclasses.dataclass
class Workload:
    name: str
    fyexp: Callable[[int], float]   # steps -> seconds per step
    hand: Callable[[int], float]
    params: int
    batch: int
    steps: int                      # steps per timing at --scale 1 (about a second or two on a quiet core)
    hand_kind: str = "nn.Linear"


def fy_vae(obs_rho: float, latent_rho: float, fused: bool = False) -> Workload:
    """FYVI Table 2's cell (MNIST shape, 784-512-256, batch 64, Adam lr 5e-5, β = 0.01).  ``fused``: the Trainer's
    task steps a fused Adam (``torch.optim.Adam(fused=True)``), which is *not* bit-identical to the default
    for-loop Adam on the CPU (last-bit differences from the first step), so fyexp does not use it: the row only
    measures what it would give; the hand loop keeps the plain Adam."""
    experiment, config = paper("fy-vae")
    data = torch.rand(4096, 784)
    cell = Cell(experiment.method(config, {"obs_rho": obs_rho, "latent_rho": latent_rho}), 0,
                {"dataset": "MNIST", "obs_rho": obs_rho, "latent_rho": latent_rho, "regularizer": "fy"})
    task = experiment._task(config, cell, SimpleNamespace(train=data, valid=None))
    if fused:
        opt = config.train.optimizer
        task.configure_optimizers = lambda: {"main": torch.optim.Adam(task.model.parameters(), lr=opt.lr,
                                                                      betas=tuple(opt.betas), eps=opt.eps,
                                                                      fused=True)}

    torch.manual_seed(0)
    enc1, enc2 = nn.Linear(784, config.hidden), nn.Linear(config.hidden, 2 * config.latent)
    dec1, dec2 = nn.Linear(config.latent, config.hidden), nn.Linear(config.hidden, 784)
    hand = nn.ModuleList([enc1, enc2, dec1, dec2])

    def loss_of(x):
        mu, log_var = enc2(F.relu(enc1(x))).chunk(2, -1)
        if latent_rho == 1.0:
            z = mu + (0.5 * log_var).exp() * torch.randn_like(mu)
            divergence = 0.5 * (mu.pow(2) + log_var.exp() - 1.0 - log_var).sum(-1)
        else:
            q = BetaGaussian(mu, (0.5 * log_var).exp(), latent_rho, validate_args=False)
            z, divergence = q.rsample(), fy_regularizer(q)
        theta = dec2(F.relu(dec1(z)))
        if obs_rho == 1.0:
            reconstruction = (F.softplus(theta) - theta * x).sum(-1)
        else:
            reconstruction = binary_fy_loss(theta, x, obs_rho).sum(-1)
        return (reconstruction + config.beta * divergence).mean()

    name = f"FY β-VAE {'Bernoulli' if obs_rho == 1 else 'Ψ₂'} / " \
           f"{'Gaussian' if latent_rho == 1 else f'β-Gaussian ρ={latent_rho:g}'}{' fused Adam*' if fused else ''}"
    return Workload(name, lambda s: trainer_step(task, data, config.train, s),
                    lambda s: hand_steps(loss_of, hand.parameters(), config.train, data, s),
                    n_params(task.model), config.train.batch_size, 40)


def _vr_hand(dataset: str, k: int, n_in: int, objective: str = "iwae"):
    """Li & Turner Table 4's one-layer VAE by hand (Gaussian q, tanh/softplus MLPs) and its IWAE / VR-max loss."""
    arch = model_config(dataset, 1)
    act = {"tanh": torch.tanh, "softplus": F.softplus}[arch.activation]
    sizes_e, sizes_d = [n_in, *arch.encoder_hidden[0]], [arch.latent[0], *arch.decoder_hidden[0]]
    gaussian = arch.observation == "gaussian"
    enc = nn.ModuleList(nn.Linear(a, b) for a, b in zip(sizes_e, sizes_e[1:]))
    dec = nn.ModuleList(nn.Linear(a, b) for a, b in zip(sizes_d, sizes_d[1:]))
    head_q = nn.Linear(sizes_e[-1], 2 * arch.latent[0])
    head_p = nn.Linear(sizes_d[-1], n_in * (2 if gaussian else 1))
    modules = nn.ModuleList([enc, dec, head_q, head_p])
    log2pi = float(torch.log(torch.tensor(2 * torch.pi)))

    def log_weights(x, noise):
        h = x
        for layer in enc:
            h = act(layer(h))
        mu, log_var = head_q(h).chunk(2, -1)
        std = (0.5 * log_var).exp()
        z = mu + std * noise                               # (K, B, n)
        log_q = (-0.5 * (noise.pow(2) + log2pi) - 0.5 * log_var).sum(-1)
        log_prior = -0.5 * (z.pow(2) + log2pi).sum(-1)
        h = z
        for layer in dec:
            h = act(layer(h))
        theta = head_p(h)
        if gaussian:
            m, lv = theta.chunk(2, -1)
            log_lik = -0.5 * (log2pi + lv + (x - m).pow(2) / lv.exp()).sum(-1)
        else:
            log_lik = -F.binary_cross_entropy_with_logits(theta, x.expand_as(theta), reduction="none").sum(-1)
        return log_lik + log_prior - log_q

    def loss_of(x):
        noise = torch.randn(k, len(x), arch.latent[0])
        if objective == "iwae":
            return -(torch.logsumexp(log_weights(x, noise), 0)).mean()
        with torch.no_grad():                              # VR-max: score K, back-propagate the best only
            best = log_weights(x, noise).argmax(0)
        chosen = noise.gather(0, best.view(1, -1, 1).expand(1, -1, noise.shape[-1]))
        return -log_weights(x, chosen)[0].mean()

    return modules, loss_of


def vr_vae(dataset: str, k: int, method: str = "iwae") -> Workload:
    """Li & Turner's one-layer VAE of ``dataset`` at K samples, the ``paper`` profile's training block."""
    _, config = paper("vr-vae")
    train = getattr(config, f"train_{dataset}")
    n_in = {"caltech": 784, "freyface": 560}[dataset]
    data = torch.bernoulli(torch.rand(4096, n_in)) if dataset == "caltech" else torch.rand(4096, n_in)
    seed_everything(0)
    model = build_vae(model_config(dataset, 1), n_in)
    objective = {"iwae": IWAE(n_samples=k), "vr_max": VRMaxSingle(n_samples=k),
                 "vr_max_all": VRMax(n_samples=k)}[method]
    task = BinarizingTask(model, objective, False, None, 1)
    hand, loss_of = _vr_hand(dataset, k, n_in, "vr_max" if method.startswith("vr_max") else "iwae")
    name = {"caltech": "Caltech", "freyface": "Frey Face"}[dataset]
    return Workload(f"VR VAE {name} K={k} {method}", lambda s: trainer_step(task, data, train, s),
                    lambda s: hand_steps(loss_of, hand.parameters(), train, data, s), n_params(model),
                    train.batch_size, 40 if k == 5 else 10)


def fy_nvdm(vocab: int = 2000) -> Workload:
    """FY-NVDM ``paper`` (ρ′ = 1.314, 50 topics, 500 hidden, batch 1,024): one decoder pass step and one encoder
    pass step alternately, as NVDM's schedule does (A = 1 here: one pass of each)."""
    from fyexp.train.nvdm import NVDMTask
    from fyexp.models.nvdm import build_nvdm

    _, config = paper("fy-nvdm")
    config = dataclasses.replace(config, alternating_epochs=1)
    g = torch.Generator().manual_seed(0)
    counts = torch.poisson(torch.full((8192, vocab), 0.05), generator=g)
    counts[torch.arange(len(counts)), torch.randint(vocab, (len(counts),), generator=g)] += 1.0
    seed_everything(0)
    model = build_nvdm(vocab, config.n_topics, config.hidden, config.alpha)
    task = NVDMTask(model, config, counts[:16])
    task.validate = lambda epoch: {}
    train = config.train

    def fyexp_step(steps):
        n = steps * train.batch_size
        run = dataclasses.replace(train, epochs=2, seed=0, log_every=min(train.log_every, steps))
        history = Trainer(run, label="bench").fit(task, (counts[:n],))
        for p in model.parameters():
            p.requires_grad_(True)
        return sum(h["epoch_time_s"] for h in history[-2:]) / (2 * steps)

    torch.manual_seed(0)
    enc1 = nn.Linear(vocab, config.hidden)
    mean, log_sigma = nn.Linear(config.hidden, config.n_topics), nn.Linear(config.hidden, config.n_topics)
    decoder = nn.Linear(config.n_topics, vocab)
    encoder = nn.ModuleList([enc1, mean, log_sigma])

    def loss_of(x):
        h = torch.tanh(enc1(x))
        mu, ls = mean(h), log_sigma(h)
        z = mu + ls.exp() * torch.randn_like(mu)
        kl = 0.5 * (mu.pow(2) + torch.exp(2.0 * ls) - 1.0 - 2.0 * ls).sum(-1)
        return (fy_multinomial_loss(decoder(z), x, config.alpha) + config.beta * kl).mean()

    def hand_step(steps):
        times = []
        for part, other in ((decoder, encoder), (encoder, decoder)):
            for p in other.parameters():
                p.requires_grad_(False)
            times.append(hand_steps(loss_of, part.parameters(), train, counts, steps))
            for p in other.parameters():
                p.requires_grad_(True)
        return sum(times) / 2

    return Workload(f"FY-NVDM ρ′={config.alpha:g} (dec/enc passes)", fyexp_step, hand_step, n_params(model),
                    train.batch_size, 5)


def frac_cell(gamma: float = 0.5, smoke: bool = False) -> Workload:
    """The frac claims' cell: L_γ, explicit Gaussian posterior, MNIST, 2-D latent, K = 100 (``paper``; K = 2 in
    ``--smoke``)."""
    from fyexp.experiments.frac_vae_config import METHODS
    from fyexp.models.semi_implicit import build_conv_vae
    from fyexp.train import VariationalTask

    _, config = paper("frac-vae")
    if smoke:
        config = dataclasses.replace(config, n_samples=2)
    data = torch.rand(4096, 784)
    seed_everything(0)
    model = build_conv_vae(2, config.width, "consistent", config.cb_clamp)
    objective = METHODS["L"].objective(config, gamma)
    task = VariationalTask(model, objective)
    seed_everything(0)
    twin = build_conv_vae(2, config.width, "consistent", config.cb_clamp)
    data_flat = data

    def loss_of(x):
        return -objective(twin, x)[0].mean()

    return Workload(f"frac L_γ={gamma:g} MNIST K={objective.n_samples}",
                    lambda s: trainer_step(task, data_flat, config.train, s),
                    lambda s: hand_steps(loss_of, twin.parameters(), config.train, data_flat, s),
                    n_params(model), config.train.batch_size, 2, hand_kind="bare loop, same module")


WORKLOADS: dict[str, Callable[[], Workload]] = {
    "fy-vae-bernoulli": lambda: fy_vae(1.0, 1.0),
    "fy-vae-psi2": lambda: fy_vae(2.0, 1.0),
    "fy-vae-beta-gaussian": lambda: fy_vae(1.0, 1.5),
    "fy-vae-bernoulli-fused": lambda: fy_vae(1.0, 1.0, fused=True),
    "vr-caltech-5": lambda: vr_vae("caltech", 5),
    "vr-caltech-50": lambda: vr_vae("caltech", 50),
    "vr-freyface-5": lambda: vr_vae("freyface", 5),
    "fy-nvdm": fy_nvdm,
}


def median_pair(work: Workload, rounds: int, steps: int, peak_reps: int) -> tuple[float, float, float]:
    """Medians over ``rounds`` of (fyexp, hand) seconds per step and of the matmul GFLOP/s, the three alternating
    within a round (after one warm-up step of each), so that the peak is the one the machine gave the workload."""
    work.fyexp(1), work.hand(1)
    mine, theirs, peaks = [], [], []
    for r in range(rounds):
        order = (work.fyexp, work.hand) if r % 2 == 0 else (work.hand, work.fyexp)
        times = {f: f(steps) for f in order}
        mine.append(times[work.fyexp])
        theirs.append(times[work.hand])
        peaks.append(matmul_gflops(peak_reps))
    return statistics.median(mine), statistics.median(theirs), statistics.median(peaks)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--scale", type=float, default=1.0, help="multiplies every workload's steps per timing")
    parser.add_argument("--peak-reps", type=int, default=15)
    parser.add_argument("--only", default="", help="workloads whose key contains this text")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes: the code paths only (the suite)")
    args = parser.parse_args(argv)
    if args.smoke:
        for key, value in SMOKE.items():
            setattr(args, key, value)
    torch.set_num_threads(1)
    from fyexp.train.allocator import tune_allocator

    tuned = tune_allocator()   # as every cell does (fyexp.run.runner.execute_cell); FYEXP_MALLOC=default: glibc's own
    peak = matmul_gflops(args.peak_reps)
    print(f"matmul peak (512x784 @ 784x512 float32, 1 thread): {peak:.1f} GFLOP/s now; each row's %peak is of the "
          f"median peak measured in its own rounds (GFLOP/s column); malloc {'tuned' if tuned else 'glibc default'} "
          f"(fyexp.train.allocator) for both sides")
    print(f"{'workload':44s} {'fyexp ms':>9s} {'hand ms':>8s} {'ratio':>6s} {'fyexp %peak':>11s} "
          f"{'hand %peak':>10s} {'GFLOP/s':>8s}  hand loop")
    workloads = {**WORKLOADS, "frac": lambda: frac_cell(0.5, smoke=args.smoke)}
    for key, build in workloads.items():
        if args.only not in key:
            continue
        work = build()
        mine, theirs, peak = median_pair(work, args.rounds, max(1, round(work.steps * args.scale)), args.peak_reps)
        flops = 6 * work.params * work.batch / 1e9
        print(f"{work.name:44s} {mine * 1e3:9.2f} {theirs * 1e3:8.2f} {mine / theirs:5.2f}x "
              f"{100 * flops / mine / peak:10.1f}% {100 * flops / theirs / peak:9.1f}% {peak:8.1f}  {work.hand_kind}", flush=True)
    print("* fused Adam changes the last bits of every step (not bit-identical): measured, not used by fyexp")
    if args.only in "vr-max":
        iwae, vrmax = vr_vae("caltech", 50, "iwae"), vr_vae("caltech", 50, "vr_max")
        vrmax_all = vr_vae("caltech", 50, "vr_max_all")
        for w in (iwae, vrmax, vrmax_all):
            w.fyexp(1)
        times = {w.name: [] for w in (iwae, vrmax, vrmax_all)}
        for _ in range(args.rounds):
            for w in (iwae, vrmax, vrmax_all):
                times[w.name].append(w.fyexp(max(1, round(10 * args.scale))))
        t_iwae, t_max, t_all = (statistics.median(times[w.name]) for w in (iwae, vrmax, vrmax_all))
        print(f"VR-max / IWAE step, Caltech K=50 (Trainer): VR-max one backward {t_max * 1e3:.2f} ms, "
              f"IWAE {t_iwae * 1e3:.2f} ms: ratio {t_max / t_iwae:.2f} (paper 0.42); "
              f"VR-max back-propagating all K: ratio {t_all / t_iwae:.2f}")


if __name__ == "__main__":
    main()
