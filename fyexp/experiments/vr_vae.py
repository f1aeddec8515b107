r"""VAEs trained with the VR bound: Li & Turner Table 1, the in-text numbers (§5.1), Figures 3 and 4.

One cell = one method × setting (data set, stochastic layers L, samples K) × seed (× fold for Frey Face):

=================  ==========================================================================  ================
method             objective (:mod:`fyexp.objectives`)                                         row
=================  ==========================================================================  ================
``vae``            ELBO, α = 1: (1/K) Σ_k log w_k (spec ``elbo`` / ``freyface.elbo`` mc)       Table 1 "VAE"
                   or with the closed-form KL for L = 1 (``analytic``)
``iwae``           IWAE, α = 0, all K samples back-propagated                                  Table 1 "IWAE"
``vr_max``         VR-max by Algorithm 1: one backward pass through the max-weight sample      Table 1 "VR-max"
``vr_half``        VR-α at α = 0.5 (eq. 18), all samples back-propagated                        text "VR-0.5"
``iwae_single``    IWAE with one backward pass through a sample drawn ∝ w_k                     text "IWAE (single
                                                                                                backward pass)"
=================  ==========================================================================  ================

Architectures (Table 4, :mod:`fyexp.models.vr_architectures`): Frey Face d200-d200-s20, softplus, Gaussian/Gaussian
(its decoder mean link, initialization, weight prior, runs and VAE bound: the spec's ``freyface:`` block, the
authors' code in ``paper``, :mod:`fyexp.experiments.vr_vae_frey`);
Caltech 101 Silhouettes d500-s200, tanh, Bernoulli/Gaussian; MNIST d200-d200-s50 (L = 1) and
d200-d200-s100-d100-d100-s50 (L = 2), tanh, Bernoulli/Gaussian.  MNIST is binarized stochastically: each training
batch draws x ∼ Bernoulli(gray levels); the test set is binarized once (seed 0).  Metric: ``test_loglik`` =
mean over test images of L̂_{0,S}(x) (S = 5,000, :func:`~fyexp.objectives.mc_log_likelihood`).

The grid is declared in the spec: one ``include`` entry per setting (data set, L, K) with its methods and, for
Frey Face, its folds (``fold: null`` elsewhere: the cell has no fold).

Figure 3: decoded samples of the VR-max models (artifacts ``samples-<cell>.npz``).  Figure 4: on ``bias_points``
test images of the Frey Face VAE (method ``vae``, fold 0), the bias L̂_{0,S} − L̂_{α,K} for α ∈ {0, −1, −5,
−50, −500} and K ∈ {5, 50}, mean and std over ``bias_repetitions`` draws (:func:`fyexp.metrics.vr_bias.vr_bias`;
rows ``bias_mean`` / ``bias_std``).  The report draws both figures from these rows and artifacts.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import torch

from fyexp.data.images import to_uint8
from fyexp.data.vr_images import DATASETS, IMAGE_SHAPES, load_data
from fyexp.core.errors import CellFailed
from fyexp.experiments import register
from fyexp.experiments.base import CellWork
from fyexp.experiments.grid import GridExperiment, PaperKeys, metric
from fyexp.experiments.vr_vae_frey import WeightPriorTask, normal_init
from fyexp.experiments.vr_vae_config import (FREYFACE_ONLY, PAPER_ROWS, Config,  # noqa: F401
                                             Grid, cell_config, cell_work)
from fyexp.metrics.vr_bias import vr_bias
from fyexp.models import build_vae
from fyexp.models.sampling import prior_samples
from fyexp.models.vr_architectures import model_config
from fyexp.objectives import ELBO, IWAE, VR, mc_log_likelihood
from fyexp.objectives.single_backward import VRMaxSingle, VRSingle
from fyexp.store.results import Cell
from fyexp.train import Trainer, seed_everything
from fyexp.train.binarizing import BinarizingTask

#: method → objective of K samples (paper table and row: :data:`~fyexp.experiments.vr_vae_config.PAPER_ROWS`)
OBJECTIVES = {
    "vae": lambda k: ELBO(n_samples=k),
    "iwae": lambda k: IWAE(n_samples=k),
    "vr_max": lambda k: VRMaxSingle(n_samples=k),
    "vr_half": lambda k: VR(n_samples=k, alpha=0.5),
    "iwae_single": lambda k: VRSingle(n_samples=k, alpha=0.0),
}


def _setting(cell: Cell) -> str:
    return f"{DATASETS[cell.params['dataset']]} L={cell.params['L']} K={cell.params['K']}"


def stopping_metrics(history: list[dict], row: str, extra: dict) -> list:
    """The validation bound at each validated epoch (``valid_bound``) and the epoch that maximizes it
    (``best_epoch``): the stopping epoch "tuned on the VI setting" (VR §5.1) when the cell is the VAE."""
    curve = [(h["epoch"], -h["valid_loss"]) for h in history if "valid_loss" in h]
    if not curve:
        return []
    best_epoch, best = max(curve, key=lambda point: point[1])
    return [metric("valid_bound", bound, epoch=epoch, label=row, **extra) for epoch, bound in curve] + [
        metric("best_epoch", best_epoch, label=row, **extra), metric("best_valid_bound", best, label=row, **extra)]


@register
class VRVAE(GridExperiment):
    name = "vr_vae"
    Config = Config
    paper_keys = tuple(PaperKeys(tables=(("vr", table),), metrics=("test_loglik",),
                                 row=lambda c: PAPER_ROWS[c.method][1],
                                 when=lambda c, t=table: PAPER_ROWS[c.method][0] == t) for table in ("1", "text"))

    def load_data(self, config: Config, dataset: str, fold: int | None, root):
        """The cell's data set, :func:`fyexp.data.vr_images.load_data`: the runner's one data source, replaced on an
        instance to feed it other data (``fyexp.run.fingerprints``' synthetic images)."""
        return load_data(config, dataset, fold, root)

    cell_config = staticmethod(cell_config)   # the settings scope, in the light config module

    def work(self, stated: dict, params: dict) -> CellWork | None:
        """Training images per epoch and evaluation units (:func:`cell_work`)."""
        return CellWork.of(cell_work(stated, params))

    def _task(self, config: Config, cell: Cell, data) -> BinarizingTask:
        """The cell's model and training task, seeded as every run of the cell seeds them; Frey Face cells follow
        ``config.freyface`` (decoder mean link, initialization, weight prior, the VAE's KL term)."""
        dataset, k = cell.params["dataset"], cell.params["K"]
        model_cfg = model_config(dataset, cell.params["L"])
        protocol = config.freyface if dataset == "freyface" else None
        if protocol is not None:
            model_cfg.observation = protocol.observation
        seed_everything(self.seed_stream(cell, "init"))
        model = build_vae(model_cfg, data.train.shape[1])
        if protocol is not None and protocol.init_std is not None:
            normal_init(model, protocol.init_std)
        objective = OBJECTIVES[cell.method](k)
        kl = protocol.elbo if protocol is not None else config.elbo.get(dataset, "analytic")
        if cell.method == "vae" and kl == "mc":
            objective = ELBO(n_samples=k, analytic=False)
        if protocol is None or not protocol.weight_prior:
            return BinarizingTask(model, objective, data.binarize, data.valid, config.valid_every)
        return WeightPriorTask(model, objective, data.binarize, data.valid, config.valid_every,
                               coefficient=protocol.weight_prior, n_train=len(data.train))

    def measure(self, config: Config, cell: Cell, ctx):
        p = cell.params
        dataset, layers, k, fold = p["dataset"], p["L"], p["K"], p.get("fold")
        data = self.load_data(config, dataset, fold, ctx.data_dir)
        task = self._task(config, cell, data)
        model, row = task.model, PAPER_ROWS[cell.method][1]
        train = dataclasses.replace(getattr(config, f"train_{dataset}"), seed=cell.seed)
        history = Trainer(train, device=ctx.device, work_dir=ctx.work_dir, subtask=ctx.subtask,
                          label=f"{ctx.experiment}/{cell.key}").fit(task, (data.train,))
        train_time = sum(h["epoch_time_s"] for h in history)

        model.eval()
        test = data.test.to(ctx.device)
        per_point = mc_log_likelihood(model, test, config.test_samples, config.test_chunk, config.test_batch)
        if not torch.isfinite(per_point).all():
            raise CellFailed(f"{cell.key}: non-finite test log-likelihood")
        extra = {"setting": _setting(cell), "L": layers, "K": k, "fold": fold if fold is not None else math.nan,
                 "n_test": len(test), "test_samples": config.test_samples}
        se = float(per_point.std()) / math.sqrt(len(per_point))
        out = [metric("test_loglik", float(per_point.mean()), 2 * se, **extra)]
        out += [metric(name, value, label=row, **extra) for name, value in (
            ("train_time_s", train_time), ("epoch_time_s", train_time / max(len(history), 1)),
            ("final_train_bound", -history[-1]["train_loss"]))]
        out += stopping_metrics(history, row, extra)
        if cell.method == "vr_max" and fold in (None, 0):
            ctx.save_artifact(f"samples-{cell.key}", images=to_uint8(prior_samples(model, config.n_figure_samples)),
                              shape=np.array(IMAGE_SHAPES[dataset]), setting=extra["setting"])
        if dataset == "freyface" and cell.method == "vae" and fold == 0:
            n = min(config.bias_points, len(test))
            for alpha, draws, mean, std in vr_bias(model, test[:n], per_point[:n], config.bias_alphas,
                                                   config.bias_samples, config.bias_repetitions):
                out += [metric(name, value, alpha=alpha, K=draws, label="Frey Face VAE, fold 0")
                        for name, value in (("bias_mean", mean), ("bias_std", std))]
        return out
