"""Fractional-posterior VAEs (Chai & Bonilla §5.2–5.3, App. C.4–C.5): frac Tables 2, 6, 7, 8, 9; Figures 1, 3–7.

Each cell trains the conv VAE of :mod:`fyexp.models.conv_vae` on its method's objective (``METHODS``) with the
spec's ``train:`` block; ``L-fixed-decoder`` (Table 7) trains L_γ's encoder against the frozen decoder of the figure
seed's ELBO cell.  Grid and settings: :mod:`fyexp.experiments.frac_vae_config`.  Metrics: ``train_total``, the
evidence breakdown ``test_obj_*`` / ``test_elbo_*`` (:mod:`fyexp.metrics.evidence`), Table 8's degeneracy, Table 9's
FID and proxy (:mod:`fyexp.metrics.generation`); the ``authors`` parameterization's rows end in ``_authors``.
"""

from __future__ import annotations

import math
from dataclasses import replace
from math import nan

import numpy as np
import torch

from fyexp.data.vision import image_labels, image_splits
from fyexp.experiments import register
from fyexp.experiments.base import CellWork
from fyexp.experiments.frac_vae_config import L_GAMMA, METHODS, SETTING, Config, cell_config, cell_work
from fyexp.experiments.grid import GridExperiment, Metric, PaperKeys, metric
from fyexp.metrics.degeneracy import model_degeneracy
from fyexp.metrics.evidence import EvalPlan, evidence_breakdown
from fyexp.metrics.generation import FIDPass, generation_scores, prior_images
from fyexp.models.conv_vae import FrozenDecoderVAE
from fyexp.models.latent_views import latent_views
from fyexp.models.semi_implicit import build_conv_vae
from fyexp.reference.rows import number_label
from fyexp.store.results import Cell
from fyexp.train import Trainer, VariationalTask, seed_everything

RECORDS = ("epoch_time_s", "epochs")      # of the run, not of the posterior: no suffix, no convention columns


def paper_row(cell: Cell) -> str:
    """The row of ``paper_tables.csv``: L_0.9, L^h_1.0, L^bh-alt_0.5, L_10^-3, L^beta_5.0, L^beta_10^2 …"""
    powers = cell.params["dataset"] == "FashionMNIST"          # Table 9 prints 10^-3, 10^5
    return f"{METHODS[cell.method].prefix}_{number_label(cell.params['value'], powers)}"


def paper_keys(figure_seed: int) -> tuple[PaperKeys, ...]:
    """Tables 2, 6, 8 (MNIST), 7 (fixed decoder, and the figure seed's ELBO cell as its reference), 9."""
    evidence, fixed = ("train_*", "test_*"), "L-fixed-decoder"

    def mnist(cell: Cell, *methods: str) -> bool:
        return cell.params["dataset"] == "MNIST" and cell.method != fixed and (not methods or cell.method in methods)

    def reference(cell: Cell) -> bool:
        return mnist(cell, "L") and cell.params["value"] == 1.0 and cell.seed == figure_seed

    return (PaperKeys((("frac", "7"),), evidence, paper_row, "MNIST fixed decoder", when=lambda c: c.method == fixed),
            PaperKeys((("frac", "9"),), evidence + ("fid", "frechet_proxy"), paper_row,
                      lambda c: f"Fashion-MNIST dim(z)={c.params['latent']}",
                      when=lambda c: c.params["dataset"] == "FashionMNIST"),
            PaperKeys((("frac", "2"),), evidence, paper_row, "MNIST", when=lambda c: mnist(c, "L", "Lh", "Lbh")),
            PaperKeys((("frac", "6"),), evidence, paper_row, "MNIST", when=lambda c: mnist(c, "Lbh", "Lbh-alt")),
            PaperKeys((("frac", "8"),), ("genvar_*", "totvar_*"), paper_row, "MNIST", when=mnist),
            PaperKeys((("frac", "7"),), evidence, lambda c: "L_1.0 (reference)", "MNIST fixed decoder", when=reference))


@register
class FracVAE(GridExperiment):
    name = "frac_vae"
    Config = Config
    columns = {"gamma_or_beta": "value", "parameterization": "parameterization"}
    seed_streams = {"init": 0, "table7_encoder": 1000, "mc": 12345}
    records = RECORDS
    cell_config = staticmethod(cell_config)        # settings hashes as before grids were declared

    def work(self, stated: dict, params: dict) -> CellWork | None:
        """Training images per epoch and evaluation units (:func:`cell_work`)."""
        return CellWork.of(cell_work(stated, params))

    def metric_name(self, cell: Cell, name: str) -> str:
        return f"{name}_authors" if cell.params["parameterization"] == "authors" else name

    def paper_keys_for(self, config: Config) -> tuple[PaperKeys, ...]:
        return paper_keys(config.figure_seed)

    def row_defaults(self, cell: Cell) -> dict:
        """Each row a status and a setting (default: the data set)."""
        return {"status": "ok", "setting": SETTING[cell.params["dataset"]]}

    def _fit(self, config: Config, cell: Cell, ctx, data, model, objective, note: str | None = None, **train):
        """Train in ``cell``'s work folder (at once from a finished checkpoint there; ``note`` when there is none)."""
        trainer = Trainer(replace(config.train, seed=cell.seed, **train), device=ctx.device, subtask=ctx.subtask,
                          work_dir=ctx.work_dir.parent / cell.key, label=f"{ctx.experiment}/{cell.key}")
        if note and ctx.progress is not None and not trainer.checkpoint_path.is_file():
            ctx.progress.note(note)
        return model, trainer.fit(VariationalTask(model, objective), (data.train,))

    def _train(self, config: Config, cell: Cell, ctx, data, note: str | None = None):
        p, m = cell.params, METHODS[cell.method]
        seed_everything(self.seed_stream(cell, "init"))
        model = build_conv_vae(p["latent"], config.width, p["parameterization"], config.cb_clamp, bayes=m.bayes,
                               semi_implicit=m.semi_implicit, n_implicit=config.n_u)
        return self._fit(config, cell, ctx, data, model, m.objective(config, p["value"]), note)

    def _fixed_decoder(self, config: Config, cell: Cell, ctx, data):
        """Table 7: the encoder for γ against the frozen decoder of the ELBO cell (L, γ = 1, same parameterization,
        figure seed): that cell's trained model, trained first in its own work folder if it has not run yet."""
        p, ref = cell.params, Cell("L", config.figure_seed, {**cell.params, "value": 1.0, "table": "2"})
        reference = self._train(config, ref, ctx, data, f"{cell.key}: training its reference {ref.key} first")[0]
        seed_everything(self.seed_stream(cell, "table7_encoder"))
        model = FrozenDecoderVAE(p["latent"], config.width, p["parameterization"], config.cb_clamp).to(ctx.device)
        model.decoder.load_state_dict(reference.decoder.state_dict())
        return self._fit(config, cell, ctx, data, model.freeze_decoder(), L_GAMMA.objective(config, p["value"]),
                         epochs=config.table7_epochs)

    def _generation(self, config: Config, ctx, model, data, dataset: str) -> list[Metric]:
        """Table 9's FID of ``n_generated`` decoded prior samples against the first ``fid_reference_images`` test
        images (the whole test split by default; their statistics cached per data set in ``work/fid-reference``),
        and our proxy against the cell's ``n_test`` test images."""
        s = generation_scores(prior_images(model, config.n_generated, ctx.device), data.test, dataset,
                              ctx.data_dir, config.fid_weights, {"n_train": config.proxy_n_train,
                              "epochs": config.proxy_epochs}, ctx.work_dir.parents[1] / "fid-proxy", ctx.device,
                              fid=FIDPass(config.fid_dims, config.fid_reference_images,
                                          ctx.work_dir.parents[1] / "fid-reference",
                                          ctx.work_dir / "fid-generated-features.npz", ctx.subtask))
        return [metric("fid", s.fid.value, nan) if s.fid.status == "ok" else
                metric("fid", nan, status="missing", label=s.fid.reason),
                metric("frechet_proxy", s.frechet_proxy, nan),
                metric("proxy_classifier_test_accuracy", s.proxy_accuracy, nan)]

    def measure(self, config: Config, cell: Cell, ctx) -> list[Metric]:
        p, m = cell.params, METHODS[cell.method]
        data = image_splits(p["dataset"], ctx.data_dir, config.n_train, 0, config.n_test)
        train = self._fixed_decoder if cell.method == "L-fixed-decoder" else self._train
        model, history = train(config, cell, ctx, data)
        model.eval()
        test = data.test.to(ctx.device)
        torch.manual_seed(self.seed_stream(cell, "mc"))
        plan = EvalPlan.of(m.kind, p["value"], m.semi_implicit, n_samples=config.eval_samples, n_u=config.eval_n_u,
                           n_z=config.eval_n_z, chunk=config.eval_chunk, n_cross=config.n_cross,
                           kl_weight=config.bh_kl_weight)
        out = [metric("train_total", -history[-1]["train_loss"], nan)]
        out += [metric(f"test_{key}", v.mean(), 2 * float(v.std()) / math.sqrt(len(v)))
                for key, v in evidence_breakdown(model, test, plan, config.eval_batch).items()]
        if m.semi_implicit:
            out += [metric(k, v, nan) for k, v in
                    model_degeneracy(model, test, config.degeneracy_samples, config.eval_batch).items()]
        if p["dataset"] == "FashionMNIST":
            out += self._generation(config, ctx, model, data, p["dataset"])
        if cell.seed == config.figure_seed:
            labels = image_labels(p["dataset"], None if ctx.data_dir is None else str(ctx.data_dir), False)
            ctx.save_artifact(cell.key, **latent_views(
                model, test, labels, grid_size=config.grid_size, n_scatter=config.n_scatter, bayes=m.bayes,
                n_implicit=config.n_implicit_images, implicit_samples=config.degeneracy_samples,
                semi_implicit=m.semi_implicit))
        epoch_time = float(np.mean([h["epoch_time_s"] for h in history])) if history else nan
        return out + [metric("epoch_time_s", epoch_time), metric("epochs", len(history))]
