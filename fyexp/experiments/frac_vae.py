"""Fractional-posterior VAEs (Chai & Bonilla §5.2–5.3, App. C.4–C.5): frac Tables 2, 6, 7, 8, 9; Figures 1, 3–7.

Each cell trains the 2-D-latent conv VAE with a continuous Bernoulli likelihood (:mod:`fyexp.models.conv_vae`)
on one objective with :class:`fyexp.train.VariationalTask` and the spec's ``train:`` block (Adam lr 1e-3,
weight decay 1e-5, batch 64):

* ``L``       L_γ with the explicit Gaussian posterior (:class:`fyexp.objectives.Fractional`, K = 100 samples);
* ``Lh``      L^h_γ with the semi-implicit posterior (10 × 10; :mod:`fyexp.objectives.semi_implicit`);
* ``Lbh`` / ``Lbh-alt``  L^bh_γ / L^bh-alt_γ with jointly learnt Bayes and fractional posteriors;
* ``Lbeta``   the β-VAE objective E log p(x|z) − β KL (Monte Carlo KL, as the authors' negative values show);
* ``L-fixed-decoder``  Table 7: the encoder of L_γ retrained for ``table7_epochs`` against the decoder of the
  ELBO run (seed ``figure_seed``), which is frozen (BatchNorm in inference mode).

``parameterization`` is ``consistent`` (fyexp) or ``authors`` (std = exp(logvar) while log q uses −½Σ logvar);
authors'-variant rows carry the metric suffix ``_authors`` (the report's convention column).

Metrics, per test image then averaged (:mod:`fyexp.metrics.evidence`; 1,024 samples, 32 × 32 semi-implicit):
``train_total`` (the training objective averaged over the last epoch, K training samples, as logged), the
Test-using-Objective columns ``test_obj_total/data/div`` (L^bh: ``test_obj_div_kl`` + ``test_obj_div_renyi``)
and Test-using-ELBO ``test_elbo_total/data/div``.  Table 8 (:mod:`fyexp.metrics.degeneracy`) from 500 implicit
samples per test image; Table 9 adds FID (missing without Inception weights; :mod:`fyexp.metrics.fid`) and the
offline ``frechet_proxy`` of ``n_generated`` decoded prior samples against the test set.
"""

from __future__ import annotations

import dataclasses
import functools
import io
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np
import torch

from fyexp.data.vision import image_splits, load_images
from fyexp.errors import FyexpError, require
from fyexp.experiments import Experiment, register
from fyexp.io import atomic_write_bytes
from fyexp.metrics import fid as fid_metrics
from fyexp.metrics.degeneracy import degeneracy_table
from fyexp.metrics.evidence import EvalPlan, evidence_breakdown
from fyexp.models.conv_vae import ConvVAE
from fyexp.models.semi_implicit import SemiImplicitVAE
from fyexp.objectives import ELBO, Fractional
from fyexp.objectives.semi_implicit import BayesHierarchicalFractional, HierarchicalFractional
from fyexp.results import Cell
from fyexp.train import OptimizerConfig, TrainConfig, Trainer, VariationalTask, seed_everything

METHODS = ("L", "Lh", "Lbh", "Lbh-alt", "Lbeta", "L-fixed-decoder")
SEMI_IMPLICIT = ("Lh", "Lbh", "Lbh-alt")
SETTING = {"MNIST": "MNIST", "FashionMNIST": "Fashion-MNIST"}


@dataclass
class Config:
    """Hyperparameters of the frac VAE grid (frac App. C.4–C.5, ``anchors.md``)."""

    tables: list[str] = field(default_factory=lambda: ["2", "6", "7", "8", "9"])
    mnist_gammas: list[float] = field(default_factory=lambda: [1.0, 0.9, 0.5, 0.1])
    bh_gammas: list[float] = field(default_factory=lambda: [0.9, 0.5, 0.1])
    table7_gammas: list[float] = field(default_factory=lambda: [1.0, 0.9, 0.5, 0.1])
    fashion_gammas: list[float] = field(default_factory=lambda: [1.0, 1e-1, 1e-3, 1e-5])
    fashion_betas: list[float] = field(default_factory=lambda: [5.0, 10.0, 100.0, 1000.0, 100000.0])
    fashion_4d_gammas: list[float] = field(default_factory=lambda: [1.0, 1e-3, 1e-5])
    authors_rows: list[str] = field(default_factory=list)       # e.g. ["FashionMNIST/Lbeta/1000"], "*" for all
    n_train: int = 60_000
    n_test: int | None = None
    train: TrainConfig = field(default_factory=lambda: TrainConfig(
        epochs=500, batch_size=64, optimizer=OptimizerConfig(name="adam", lr=1e-3, weight_decay=1e-5)))
    table7_epochs: int = 50
    n_samples: int = 100
    n_u: int = 10
    n_z: int = 10
    n_cross: int = 5
    bh_kl_weight: Literal["paper", "one"] = "paper"
    eval_samples: int = 1024
    eval_n_u: int = 32
    eval_n_z: int = 32
    eval_chunk: int = 256
    eval_batch: int = 100
    width: int = 32
    cb_clamp: float = 1e-4
    degeneracy_samples: int = 500
    n_generated: int = 10_000
    fid_weights: str | None = None          # Inception weights file; else $FYEXP_FID_WEIGHTS, else torch's hub cache
    proxy_n_train: int = 60_000
    proxy_epochs: int = 2
    figure_seed: int = 0
    grid_size: int = 20
    n_scatter: int = 5000
    n_implicit_images: int = 16

    def __post_init__(self):
        require(set(self.tables) <= {"2", "6", "7", "8", "9"}, "tables", "a subset of ['2','6','7','8','9']",
                self.tables)
        for key in ("mnist_gammas", "table7_gammas", "fashion_gammas", "fashion_4d_gammas"):
            require(all(0 < g <= 1 for g in getattr(self, key)), key, "numbers in (0, 1]", getattr(self, key))
        require(all(0 < g < 1 for g in self.bh_gammas), "bh_gammas", "numbers in (0, 1)", self.bh_gammas)
        require(all(b > 0 for b in self.fashion_betas), "fashion_betas", "positive numbers", self.fashion_betas)
        for key in ("n_train", "table7_epochs", "n_samples", "n_u", "n_z", "eval_samples", "eval_n_u", "eval_n_z",
                    "eval_chunk", "eval_batch", "degeneracy_samples", "n_generated", "grid_size", "n_scatter"):
            require(getattr(self, key) >= 1, key, "a positive integer", getattr(self, key))
        require(1 <= self.n_cross < min(self.n_u, self.eval_n_u), "n_cross", "an integer in [1, min(n_u, eval_n_u))",
                self.n_cross)
        require(self.n_test is None or self.n_test >= 2, "n_test", "an integer >= 2 or null", self.n_test)


# ------------------------------------------------------------------------------------------ naming
def number_text(value: float, powers: bool) -> str:
    """A row name's number: ``1.0``, ``0.9``; with ``powers`` an integer power of ten other than 1 as ``10^-3``."""
    exponent = math.log10(value)
    if powers and value != 1.0 and abs(exponent - round(exponent)) < 1e-9:
        return f"10^{int(round(exponent))}"
    return f"{value:.1f}"


def paper_row(method: str, value: float, dataset: str) -> str:
    """The row name of ``paper_tables.csv``: L_0.9, L^h_1.0, L^bh-alt_0.5, L_10^-3, L^beta_5.0, L^beta_10^2 …"""
    powers = dataset == "FashionMNIST"
    prefix = {"L": "L", "L-fixed-decoder": "L", "Lh": "L^h", "Lbh": "L^bh", "Lbh-alt": "L^bh-alt",
              "Lbeta": "L^beta"}[method]
    return f"{prefix}_{number_text(value, powers)}"


def _authors_wanted(config: Config, dataset: str, method: str, value: float) -> bool:
    names = {"*", f"{dataset}/{method}/{value:g}", f"{dataset}/{method}/*", f"*/{method}/*"}
    return bool(names & set(config.authors_rows))


# ------------------------------------------------------------------------------------------ models
def build_model(config: Config, method: str, latent: int, parameterization: str):
    if method in SEMI_IMPLICIT:
        return SemiImplicitVAE(latent, config.width, parameterization, config.cb_clamp, bayes=method != "Lh",
                               n_implicit=config.n_u)
    return ConvVAE(latent, config.width, parameterization, config.cb_clamp)


def training_objective(config: Config, method: str, value: float):
    if method == "Lh":
        return HierarchicalFractional(gamma=value, n_u=config.n_u, n_z=config.n_z)
    if method in ("Lbh", "Lbh-alt"):
        return BayesHierarchicalFractional(gamma=value, n_u=config.n_u, n_z=config.n_z, n_cross=config.n_cross,
                                           variant="bh" if method == "Lbh" else "bh_alt", kl_weight=config.bh_kl_weight)
    if method == "Lbeta":
        return ELBO(beta=value, analytic=False, n_samples=config.n_samples)
    return Fractional(gamma=value, n_samples=config.n_samples)


def eval_plan(config: Config, method: str, value: float) -> EvalPlan:
    kind = {"Lbeta": "beta", "Lbh": "bh", "Lbh-alt": "bh_alt"}.get(method, "fractional")
    common = dict(kind=kind, gamma=1.0 if method == "Lbeta" else value, beta=value if method == "Lbeta" else 1.0,
                  n_cross=config.n_cross, kl_weight=config.bh_kl_weight)
    if method in SEMI_IMPLICIT:
        return EvalPlan(n_u=config.eval_n_u, n_z=config.eval_n_z,
                        chunk_u=max(config.n_cross + 1, config.eval_chunk // config.eval_n_z), **common)
    return EvalPlan(n_u=1, n_z=config.eval_samples, chunk_z=config.eval_chunk, **common)


class FrozenDecoderVAE(ConvVAE):
    """Table 7's model: the decoder is fixed (no gradients, BatchNorm always in inference mode)."""

    def freeze_decoder(self) -> "FrozenDecoderVAE":
        for p in self.decoder.parameters():
            p.requires_grad_(False)
        self.decoder.eval()
        return self

    def train(self, mode: bool = True):
        super().train(mode)
        self.decoder.eval()
        return self


@functools.lru_cache(maxsize=4)
def image_labels(name: str, data_dir: str | None, train: bool) -> torch.Tensor:
    """Class labels of a split (Figure 4's colours, the proxy classifier's targets)."""
    import torchvision

    from fyexp.data.vision import DEFAULT_DOWNLOAD_ROOT

    root = Path(data_dir) if data_dir is not None else DEFAULT_DOWNLOAD_ROOT
    try:
        return getattr(torchvision.datasets, name)(root=str(root), train=train, download=data_dir is None).targets
    except RuntimeError as exc:
        raise FyexpError(f"{name} labels not found under {root / name / 'raw'}: {exc}") from None


def inverse_cdf_grid(n: int) -> torch.Tensor:
    """(n², 2) latents: the coordinate-wise standard-normal inverse CDF of the midpoints (i + ½)/n of an n × n
    grid of the unit square (frac Figures 1, 3, 7), rows top (high z₂) to bottom, columns left to right."""
    u = (torch.arange(n, dtype=torch.float64) + 0.5) / n
    z = torch.distributions.Normal(0.0, 1.0).icdf(u)
    z2, z1 = torch.meshgrid(z.flip(0), z, indexing="ij")
    return torch.stack([z1.reshape(-1), z2.reshape(-1)], -1)


def _uint8(images: torch.Tensor) -> np.ndarray:
    return (images.clamp(0, 1) * 255).round().to(torch.uint8).reshape(-1, 28, 28).cpu().numpy()


# ------------------------------------------------------------------------------------------ runner
@register
class FracVAE(Experiment):
    name = "frac_vae"
    Config = Config

    def cells(self, config: Config, seeds):
        cells: list[Cell] = []

        def add(method, dataset, value, latent, seed, table):
            cells.append(Cell(method, seed, {"dataset": dataset, "value": value, "latent": latent,
                                             "parameterization": "consistent", "table": table}))
            if _authors_wanted(config, dataset, method, value):
                cells.append(Cell(method, seed, {"dataset": dataset, "value": value, "latent": latent,
                                                 "parameterization": "authors", "table": table}))

        tables = set(config.tables)
        for seed in seeds:
            if tables & {"2", "7"}:
                for g in config.mnist_gammas:
                    add("L", "MNIST", g, 2, seed, "2")
            if tables & {"2", "8"}:
                for g in config.mnist_gammas:
                    add("Lh", "MNIST", g, 2, seed, "2")
            if tables & {"2", "6", "8"}:
                for g in config.bh_gammas:
                    add("Lbh", "MNIST", g, 2, seed, "2")
            if tables & {"6", "8"}:
                for g in config.bh_gammas:
                    add("Lbh-alt", "MNIST", g, 2, seed, "6")
        if "7" in tables:
            for g in config.table7_gammas:
                add("L-fixed-decoder", "MNIST", g, 2, config.figure_seed, "7")
        if "9" in tables:
            for seed in seeds:
                for g in config.fashion_gammas:
                    add("L", "FashionMNIST", g, 2, seed, "9")
                for b in config.fashion_betas:
                    add("Lbeta", "FashionMNIST", b, 2, seed, "9")
                for g in config.fashion_4d_gammas:
                    add("L", "FashionMNIST", g, 4, seed, "9")
        return cells

    # ------------------------------------------------------------------------------------ training
    def _train(self, config: Config, cell: Cell, ctx, data, work_dir: Path, label: str):
        p = cell.params
        seed_everything(cell.seed)
        model = build_model(config, cell.method, p["latent"], p["parameterization"])
        objective = training_objective(config, cell.method, p["value"])
        trainer = Trainer(dataclasses.replace(config.train, seed=cell.seed), device=ctx.device, work_dir=work_dir,
                          subtask=ctx.subtask, label=label)
        history = trainer.fit(VariationalTask(model, objective), (data.train,))
        return model, history

    def _reference_cell(self, config: Config, parameterization: str) -> Cell:
        return Cell("L", config.figure_seed, {"dataset": "MNIST", "value": 1.0, "latent": 2,
                                              "parameterization": parameterization, "table": "2"})

    def _fixed_decoder(self, config: Config, cell: Cell, ctx, data):
        """Table 7: train (or reuse) the reference ELBO model, then the encoder for γ against its frozen decoder."""
        p = cell.params
        ref_cell = self._reference_cell(config, p["parameterization"])
        reference, _ = self._train(config, ref_cell, ctx, data, ctx.work_dir.parent / ref_cell.key,
                                   f"{ctx.experiment}/{ref_cell.key} (Table 7 reference)")
        seed_everything(cell.seed + 1000)
        model = FrozenDecoderVAE(p["latent"], config.width, p["parameterization"], config.cb_clamp).to(ctx.device)
        model.decoder.load_state_dict(reference.decoder.state_dict())
        model.freeze_decoder()
        train = dataclasses.replace(config.train, seed=cell.seed, epochs=config.table7_epochs)
        trainer = Trainer(train, device=ctx.device, work_dir=ctx.work_dir, subtask=ctx.subtask,
                          label=f"{ctx.experiment}/{cell.key}")
        history = trainer.fit(VariationalTask(model, Fractional(gamma=p["value"], n_samples=config.n_samples)),
                              (data.train,))
        return model, history

    def run_cell(self, config: Config, cell: Cell, ctx):
        p = cell.params
        data = image_splits(p["dataset"], ctx.data_dir, config.n_train, 0, config.n_test)
        if cell.method == "L-fixed-decoder":
            model, history = self._fixed_decoder(config, cell, ctx, data)
        else:
            model, history = self._train(config, cell, ctx, data, ctx.work_dir, f"{ctx.experiment}/{cell.key}")
        model.eval()
        test = data.test.to(ctx.device)
        torch.manual_seed(cell.seed + 12345)
        columns = evidence_breakdown(model, test, eval_plan(config, cell.method, p["value"]), config.eval_batch)
        metrics = {"train_total": (-history[-1]["train_loss"], float("nan"))}
        for key, per_image in columns.items():
            metrics[f"test_{key}"] = (float(per_image.mean()), 2 * float(per_image.std()) / math.sqrt(len(per_image)))
        if cell.method in SEMI_IMPLICIT:
            with torch.no_grad():
                u = torch.cat([model.implicit(xb, config.degeneracy_samples).cpu()
                               for xb in test.split(config.eval_batch)], 1)
            metrics.update({k: (v, float("nan")) for k, v in degeneracy_table(u).items()})
        extra_rows = []
        if p["dataset"] == "FashionMNIST":
            extra_rows = self._generation_metrics(config, model, data, ctx, metrics)
        if cell.seed == config.figure_seed:
            self._save_artifacts(config, cell, model, test, ctx)
        epoch_time = float(np.mean([h["epoch_time_s"] for h in history])) if history else float("nan")
        rows = self._rows(config, cell, metrics) + extra_rows + [
            {"metric": "epoch_time_s", "value": epoch_time, "setting": SETTING[p["dataset"]]},
            {"metric": "epochs", "value": float(len(history)), "setting": SETTING[p["dataset"]]}]
        for row in rows:
            row.setdefault("status", "ok")
        return rows

    # --------------------------------------------------------------------------------------- rows
    def _rows(self, config: Config, cell: Cell, metrics: dict) -> list[dict]:
        p = cell.params
        suffix = "_authors" if p["parameterization"] == "authors" else ""
        row = paper_row(cell.method, p["value"], p["dataset"])
        evidence = [m for m in metrics if m.startswith(("train_", "test_"))]
        degeneracy = [m for m in metrics if m.startswith(("genvar_", "totvar_"))]
        targets: list[tuple[str, str, str, list[str]]] = []       # (table, setting, paper_row, metrics)
        if cell.method == "L-fixed-decoder":
            targets.append(("7", "MNIST fixed decoder", row, evidence))
        elif p["dataset"] == "FashionMNIST":
            targets.append(("9", f"Fashion-MNIST dim(z)={p['latent']}", row, evidence + ["fid", "frechet_proxy"]))
        else:
            if cell.method in ("L", "Lh", "Lbh") and "2" in config.tables:
                targets.append(("2", "MNIST", row, evidence))
            if cell.method in ("Lbh", "Lbh-alt") and "6" in config.tables:
                targets.append(("6", "MNIST", row, evidence))
            if degeneracy and "8" in config.tables:
                targets.append(("8", "MNIST", row, degeneracy))
            if (cell.method == "L" and p["value"] == 1.0 and cell.seed == config.figure_seed
                    and "7" in config.tables):
                targets.append(("7", "MNIST fixed decoder", "L_1.0 (reference)", evidence))
        rows, used = [], set()
        for table, setting, name, keys in targets:
            for metric in keys:
                if metric not in metrics:
                    continue
                value, tol = metrics[metric]
                used.add(metric)
                rows.append({"paper": "frac", "table": table, "setting": setting, "paper_row": name,
                             "metric": metric + suffix, "value": value, "tolerance": tol, "gamma_or_beta": p["value"],
                             "parameterization": p["parameterization"]})
        for metric, (value, tol) in metrics.items():        # everything else, without paper keys
            if metric not in used:
                rows.append({"metric": metric + suffix, "value": value, "tolerance": tol,
                             "setting": SETTING[p["dataset"]], "gamma_or_beta": p["value"],
                             "parameterization": p["parameterization"]})
        return rows

    def _generation_metrics(self, config: Config, model, data, ctx, metrics: dict) -> list[dict]:
        """FID (or its missing record) and the proxy Fréchet distance of decoded prior samples vs the test set."""
        with torch.no_grad():
            z = torch.randn(config.n_generated, model.latent, device=ctx.device)
            generated = torch.cat([model.decode_image(b) for b in z.split(1000)]).cpu()
        reference = data.test
        result = fid_metrics.fid(generated, reference, config.fid_weights, ctx.device)
        rows = []
        if result.status == "ok":
            metrics["fid"] = (result.value, float("nan"))
        else:
            rows.append({"metric": "fid", "value": float("nan"), "status": "missing", "label": result.reason,
                         "setting": SETTING["FashionMNIST"]})
        settings = fid_metrics.ProxySettings(n_train=config.proxy_n_train, epochs=config.proxy_epochs)
        full = load_images("FashionMNIST", None if ctx.data_dir is None else str(ctx.data_dir), True)
        labels = image_labels("FashionMNIST", None if ctx.data_dir is None else str(ctx.data_dir), True)
        test_all = load_images("FashionMNIST", None if ctx.data_dir is None else str(ctx.data_dir), False)
        test_labels = image_labels("FashionMNIST", None if ctx.data_dir is None else str(ctx.data_dir), False)
        classifier, accuracy = fid_metrics.cached_proxy(ctx.work_dir.parents[1] / "fid-proxy", full, labels,
                                                        test_all, test_labels, settings)
        metrics["frechet_proxy"] = (fid_metrics.proxy_frechet(classifier, generated, reference), float("nan"))
        metrics["proxy_classifier_test_accuracy"] = (accuracy, float("nan"))
        return rows

    # ---------------------------------------------------------------------------------- artifacts
    @torch.no_grad()
    def _save_artifacts(self, config: Config, cell: Cell, model, test: torch.Tensor, ctx) -> None:
        p = cell.params
        out: dict[str, np.ndarray] = {}
        n = min(config.n_scatter, len(test))
        x = test[:n]
        labels = image_labels(p["dataset"], None if ctx.data_dir is None else str(ctx.data_dir), False)[:n]
        out["labels"] = labels.numpy().astype(np.uint8)
        if p["latent"] == 2:
            grid = inverse_cdf_grid(config.grid_size).to(ctx.device, torch.float32)
            out["grid"] = _uint8(model.decode_image(grid))
        out["test_images"] = _uint8(test[:config.grid_size])
        if cell.method in SEMI_IMPLICIT:
            which = "q" if cell.method == "Lh" else "r"
            out["samples"] = torch.cat([model.posterior_samples(b, which) for b in x.split(500)]).cpu().numpy()
            out["implicit"] = model.implicit(test[:config.n_implicit_images], config.degeneracy_samples).cpu().numpy()
        else:
            mu, log_var = model.encode(x)
            out["means"] = mu.cpu().numpy()
            out["samples"] = model.sample(mu, log_var, 1)[0].cpu().numpy()
        ctx.artifact_dir.mkdir(parents=True, exist_ok=True)
        path = ctx.artifact_dir / f"{cell.key}.npz"
        buffer = io.BytesIO()
        np.savez_compressed(buffer, **{k: (v.astype(np.float16) if v.dtype.kind == "f" else v) for k, v in out.items()})
        atomic_write_bytes(path, buffer.getvalue())
