"""FY β-VAEs on MNIST and Fashion-MNIST (FYVI §4.2, Table 2, Appendix C; samples like FYVL Figure 3).

Each cell composes shared pieces: an MLP VAE (:func:`fyexp.models.build_vae`, 784–512–256) with a β-Gaussian
posterior of index ρ (1 Gaussian, 3/2 biweight, 2 Epanechnikov) and a binary ρ′-entmax head (1 Bernoulli,
2 Ψ₂ sparse binary), trained by :class:`fyexp.train.VariationalTask` on the FY β-ELBO
(:class:`fyexp.objectives.ELBO` with β, FYVI §4.2 / eq. 25)

    −Σ_i ( E_{Z∼q_i}[L_Ψ_ρ′(θ(Z); x_i)] + β L_Ω_ρ(η_N(0,I); q_i) ),

one reparameterized sample per image, averaged over the mini-batch, with the spec's ``train:`` settings.
``regularizer: fy`` uses the FY loss in closed form (the KL at ρ = 1); ``regularizer: authors`` the authors'
code's term (β-Gaussian rows only; see :func:`~fyexp.distributions.beta_gaussian.authors_regularizer`).

Metric (FYVI Appendix C): ``l1_reconstruction_error`` = mean over test images of Σ_pixels |x − x̂|, with x̂ the
decoder's mean at one latent sample from the model's own posterior; ``..._mode`` at the posterior mode μ;
``..._gaussian_sample`` at z = μ + σ ε, ε ∼ N(0, I), as the authors' evaluation did for every encoder (a bug
for β-Gaussian encoders).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np
import torch

from fyexp.data.vision import DATASETS, image_splits
from fyexp.distributions.beta_gaussian import BetaGaussian
from fyexp.errors import require
from fyexp.experiments import register
from fyexp.experiments.grid import GridExperiment, PaperKeys, check_axes, metric
from fyexp.models import VAE, ModelConfig, build_vae
from fyexp.objectives import ELBO
from fyexp.results import Cell
from fyexp.train import EnsembleMember, OptimizerConfig, TrainConfig, Trainer, VariationalTask, seed_everything

LATENT_NAMES = {1.0: "Gaussian rho=1", 1.5: "Biweight rho=3/2", 2.0: "Epanechnikov rho=2"}
OBSERVATION_NAMES = {1.0: "Bernoulli rho'=1", 2.0: "Psi_2 sparse binary rho'=2"}
SIDE = 28


@dataclass
class Grid:
    """The axes of the grid (FYVI Table 2): data set × observation ρ′ × posterior ρ × regularizer."""

    dataset: list[str] = field(default_factory=lambda: list(DATASETS))
    obs_rho: list[float] = field(default_factory=lambda: [1.0, 2.0])
    latent_rho: list[float] = field(default_factory=lambda: [1.0, 1.5, 2.0])
    regularizer: list[Literal["fy", "authors"]] = field(default_factory=lambda: ["fy", "authors"])
    include: list[dict] = field(default_factory=list)
    exclude: list[dict] = field(default_factory=lambda: [{"regularizer": "authors", "latent_rho": 1.0}])

    def __post_init__(self):
        check_axes(self)
        require(set(self.dataset) <= set(DATASETS), "dataset", f"names among {list(DATASETS)}", self.dataset)
        require(set(self.obs_rho) <= set(OBSERVATION_NAMES), "obs_rho", "values among [1, 2]", self.obs_rho)
        require(set(self.latent_rho) <= set(LATENT_NAMES), "latent_rho", "values among [1, 1.5, 2]", self.latent_rho)


@dataclass
class Config:
    """Hyperparameters of the FY β-VAE grid (FYVI Appendix C; the paper profile follows ``anchors.md``)."""

    grid: Grid = field(default_factory=Grid)
    n_train: int = 55_000
    n_valid: int = 5_000
    n_test: int | None = None
    train: TrainConfig = field(default_factory=lambda: TrainConfig(epochs=50, batch_size=64,
                                                                   optimizer=OptimizerConfig(lr=5e-5)))
    beta: float = 0.01
    hidden: int = 512
    latent: int = 256
    figure_seed: int = 0
    n_prior_samples: int = 64
    n_reconstructions: int = 16

    def __post_init__(self):
        for key in ("n_train", "n_valid", "hidden", "latent"):
            require(getattr(self, key) > 0, key, "a positive integer", getattr(self, key))
        require(self.n_test is None or self.n_test > 0, "n_test", "a positive integer or null", self.n_test)
        require(self.beta >= 0, "beta", "a number >= 0", self.beta)


def paper_row(obs_rho: float, latent_rho: float) -> str:
    """The row name of FYVI Table 2 in ``paper_tables.csv``."""
    return f"{OBSERVATION_NAMES[obs_rho]} / {LATENT_NAMES[latent_rho]}"


def build_model(config: Config, n_in: int, obs_rho: float, latent_rho: float, regularizer: str) -> VAE:
    """The authors' MLP (``mvb.py``): 784 → 512 (ReLU) → (μ, log σ²) ∈ ℝ^{2·256}; 256 → 512 (ReLU) → 784 scores."""
    return build_vae(ModelConfig(latent=[config.latent], encoder_hidden=[[config.hidden]],
                                 decoder_hidden=[[config.hidden]], activation="relu", posterior="beta_gaussian",
                                 posterior_rho=latent_rho, regularizer=regularizer, observation="binary_entmax",
                                 observation_rho=obs_rho), n_in)


@torch.no_grad()
def l1_errors(model: VAE, images: torch.Tensor, chunk: int = 2_500) -> dict[str, torch.Tensor]:
    """Per-image Σ_pixels |x − x̂| at a posterior sample, at the mode, and at a Gaussian sample; each (N,)."""
    out: dict[str, list[torch.Tensor]] = {"sample": [], "mode": [], "gaussian_sample": []}
    for x in images.split(chunk):
        q = model.posterior(x)
        latents = {"sample": q.rsample(), "mode": q.mode,
                   "gaussian_sample": q.loc + q.scale * torch.randn_like(q.loc)}
        for key, z in latents.items():
            x_hat = model.observation.mean(model.decode(z))
            out[key].append((x - x_hat).abs().sum(-1))
    return {k: torch.cat(v) for k, v in out.items()}


def _to_uint8(images: torch.Tensor) -> np.ndarray:
    return (images.clamp(0, 1) * 255).round().to(torch.uint8).reshape(-1, SIDE, SIDE).cpu().numpy()


def _table2_row(cell: Cell) -> str:
    p = cell.params
    return paper_row(p["obs_rho"], p["latent_rho"]) if p["regularizer"] == "fy" else ""


def _authors_label(cell: Cell) -> str | None:
    p = cell.params
    return f"{paper_row(p['obs_rho'], p['latent_rho'])} [authors' regularizer]" if p["regularizer"] == "authors" else None


L1_METRICS = ("l1_reconstruction_error", "l1_reconstruction_error_mode", "l1_reconstruction_error_gaussian_sample")


@register
class FYVAE(GridExperiment):
    name = "fy_vae"
    Config = Config
    columns = {"setting": "dataset", "rho": "latent_rho", "rho_prime": "obs_rho", "regularizer": "regularizer"}
    paper_keys = PaperKeys(tables=(("fyvi", "2"),), metrics=L1_METRICS, row=_table2_row, label=_authors_label)

    def method(self, config: Config, params: dict) -> str:
        return f"{OBSERVATION_NAMES[params['obs_rho']].split()[0].lower()}-" \
               f"{LATENT_NAMES[params['latent_rho']].split()[0].lower()}"

    @staticmethod
    def _task(config: Config, cell: Cell, data) -> VariationalTask:
        """The cell's model and objective, seeded as every run of the cell seeds them."""
        p = cell.params
        seed_everything(cell.seed)
        model = build_model(config, data.train.shape[1], p["obs_rho"], p["latent_rho"], p["regularizer"])
        return VariationalTask(model, ELBO(beta=config.beta), data.valid)

    def prefit(self, config: Config, cells: list[Cell], ctxs: list) -> None:
        """With ``train.ensemble``: train ``cells`` — the seeds of one cell, grouped by
        :func:`fyexp.runner.prefit_ensembles` — as one ensemble (:meth:`fyexp.train.Trainer.fit_ensemble`).  Each
        member writes its solo run's checkpoint to its cell's work_dir, so :meth:`measure` then finds it finished
        and only evaluates — with the numbers of the solo run (to float tolerance); a member that failed is
        resumed, and fails, there.  Every latent ρ trains in the ensemble: the β-Gaussian sampler's radius draw is
        a plain torch function that the ensemble draws once per member (see :mod:`fyexp.train.ensemble`)."""
        if not config.train.ensemble or len(cells) < 2:
            return
        splits: dict[str, object] = {}
        members = []
        for cell, ctx in zip(cells, ctxs):
            name = cell.params["dataset"]
            data = splits.setdefault(name, image_splits(name, ctx.data_dir, config.n_train, config.n_valid,
                                                        config.n_test))
            members.append(EnsembleMember(self._task(config, cell, data), (data.train,), cell.seed, ctx.work_dir,
                                          f"{ctx.experiment}/{cell.key}"))
        first = ctxs[0]
        Trainer(config.train, device=first.device, subtask=first.subtask,
                label=f"{first.experiment}/ensemble").fit_ensemble(members)

    def measure(self, config: Config, cell: Cell, ctx):
        p = cell.params
        data = image_splits(p["dataset"], ctx.data_dir, config.n_train, config.n_valid, config.n_test)
        task = self._task(config, cell, data)
        model = task.model
        trainer = Trainer(dataclasses.replace(config.train, seed=cell.seed), device=ctx.device,
                          work_dir=ctx.work_dir, subtask=ctx.subtask, label=f"{ctx.experiment}/{cell.key}")
        history = trainer.fit(task, (data.train,))

        model.eval()
        test = data.test.to(ctx.device)
        errors = l1_errors(model, test)
        if cell.seed == config.figure_seed:
            self._save_artifacts(config, cell, model, test, ctx.artifact_dir)
        per_image = dict(zip(L1_METRICS, (errors["sample"], errors["mode"], errors["gaussian_sample"])))
        if p["latent_rho"] == 1.0:  # a Gaussian sample of a Gaussian posterior is its own sample
            del per_image["l1_reconstruction_error_gaussian_sample"]
        out = [metric(name, float(v.mean()), 2 * (float(v.std()) / math.sqrt(len(v)))) for name, v in per_image.items()]
        last = history[-1]
        epoch_time = float(np.mean([h["epoch_time_s"] for h in history])) if history else float("nan")
        return out + [metric("final_train_loss", last["train_loss"]), metric("final_valid_l1", last["valid_l1"]),
                      metric("epoch_time_s", epoch_time)]

    @staticmethod
    def _save_artifacts(config: Config, cell: Cell, model: VAE, test: torch.Tensor, folder: Path) -> None:
        """Decoded prior samples (from q* = β-Gaussian(0, I), the entmax of η) and test reconstructions."""
        with torch.no_grad():
            n = config.latent
            prior = BetaGaussian(torch.zeros(n, device=test.device), torch.ones(n, device=test.device),
                                 cell.params["latent_rho"])
            samples = model.observation.mean(model.decode(prior.rsample((config.n_prior_samples,))))
            originals = test[:config.n_reconstructions]
            recon = model.observation.mean(model.decode(model.posterior(originals).mode))
        folder.mkdir(parents=True, exist_ok=True)
        np.savez_compressed(folder / f"{cell.key}.npz", samples=_to_uint8(samples), originals=_to_uint8(originals),
                            reconstructions=_to_uint8(recon))
