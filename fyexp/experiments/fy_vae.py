"""FY β-VAEs on MNIST and Fashion-MNIST (FYVI §4.2, Table 2, Appendix C; samples like FYVL Figure 3).

Each cell composes shared pieces: the authors' MLP VAE (:func:`fyexp.models.fy_vae.build_fy_vae`, 784–512–256)
with a β-Gaussian posterior of index ρ (1 Gaussian, 3/2 biweight, 2 Epanechnikov) and a binary ρ′-entmax head
(1 Bernoulli, 2 Ψ₂ sparse binary), trained by :class:`fyexp.train.VariationalTask` on the FY β-ELBO
(:class:`fyexp.objectives.ELBO` with β, FYVI §4.2 / eq. 25)

    −Σ_i ( E_{Z∼q_i}[L_Ψ_ρ′(θ(Z); x_i)] + β L_Ω_ρ(η_N(0,I); q_i) ),

one reparameterized sample per image, averaged over the mini-batch, with the spec's ``train:`` settings.
``regularizer: fy`` uses the FY loss in closed form (the KL at ρ = 1); ``regularizer: authors`` the authors'
code's term (β-Gaussian rows only; see :func:`~fyexp.distributions.beta_gaussian.authors_regularizer`).

Metrics (FYVI Appendix C; :mod:`fyexp.metrics.reconstruction`): the mean over test images of Σ_pixels |x − x̂| at a
posterior sample (``l1_reconstruction_error``), at the mode (``..._mode``), at the authors' Gaussian sample (ρ > 1).

A run whose loss or gradient turns non-finite is measured at the end of its last finite epoch, and its rows carry
``diverged_in_epoch`` (the Trainer's ``keep_last_finite``). This follows what the authors' script does, not a
setting of theirs: ``fy-vae-image/mvb.py`` (github.com/deep-spin/fy-vi at 27bd093) has no NaN guard, saves a
checkpoint whenever a validation error beats the best of the current epoch (the best is reset at each epoch's start,
l. 142; validation every ``eval_interval`` batches and the save, l. 181–189) and tests the saved file (l. 205); a
NaN error never beats the best, so after a divergence the file holds a model from before it. Ours keeps the end of
the epoch before the divergence where theirs keeps the best validation point saved before it (ours, labelled): no
run that stays finite changes.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from fyexp.data.images import to_uint8
from fyexp.data.vision import image_splits
from fyexp.experiments import register
from fyexp.experiments.fy_vae_config import LATENT_NAMES, OBSERVATION_NAMES, Config, cell_config
from fyexp.experiments.grid import GridExperiment, PaperKeys, metric
from fyexp.metrics.reconstruction import l1_errors
from fyexp.models.fy_vae import build_fy_vae, decoded_prior_samples, mode_reconstructions
from fyexp.objectives import ELBO
from fyexp.store.results import DIVERGED_IN_EPOCH, Cell
from fyexp.train import EnsembleMember, Trainer, VariationalTask, seed_everything

L1_METRICS = {"l1_reconstruction_error": "sample", "l1_reconstruction_error_mode": "mode",
              "l1_reconstruction_error_gaussian_sample": "gaussian_sample"}   # metric → latent of l1_errors


def paper_row(cell: Cell) -> str:
    """The cell's row name of FYVI Table 2 in ``paper_tables.csv``."""
    return f"{OBSERVATION_NAMES[cell.params['obs_rho']]} / {LATENT_NAMES[cell.params['latent_rho']]}"


@register
class FYVAE(GridExperiment):
    name = "fy_vae"
    Config = Config
    cell_config = staticmethod(cell_config)   # the settings scope, in the light config module
    columns = {"setting": "dataset", "rho": "latent_rho", "rho_prime": "obs_rho", "regularizer": "regularizer"}
    paper_keys = PaperKeys(tables=(("fyvi", "2"),), metrics=(*L1_METRICS, DIVERGED_IN_EPOCH),
                           row=lambda c: paper_row(c) if c.params["regularizer"] == "fy" else "",
                           label=lambda c: f"{paper_row(c)} [authors' regularizer]"
                           if c.params["regularizer"] == "authors" else None)
    seed_streams = {"init": 0, "batches": 0}  # weights, then the global RNG (training, evaluation); batch order

    def load_data(self, name: str, data_dir, n_train: int, n_valid: int, n_test: int | None):
        """The cell's images, :func:`fyexp.data.vision.image_splits`: the runner's one data source, replaced on an
        instance to feed it other data (``fyexp.run.fingerprints``' synthetic strokes)."""
        return image_splits(name, data_dir, n_train, n_valid, n_test)

    def method(self, config: Config, params: dict) -> str:
        return f"{OBSERVATION_NAMES[params['obs_rho']].split()[0].lower()}-" \
               f"{LATENT_NAMES[params['latent_rho']].split()[0].lower()}"

    def _task(self, config: Config, cell: Cell, data) -> VariationalTask:
        """The cell's model and objective, seeded as every run of the cell seeds them."""
        p = cell.params
        seed_everything(self.seed_stream(cell, "init"))
        return VariationalTask(build_fy_vae(data.train.shape[1], config.hidden, config.latent, p["latent_rho"],
                                            p["obs_rho"], p["regularizer"]), ELBO(beta=config.beta), data.valid)

    def prefit(self, config: Config, cells: list[Cell], ctxs: list) -> None:
        """With ``train.ensemble``: train ``cells`` — the seeds of one cell, grouped by
        :func:`fyexp.run.runner.prefit_ensembles` — as one ensemble (:meth:`fyexp.train.Trainer.fit_ensemble`).  Each
        member writes its solo run's checkpoint to its cell's work_dir, so :meth:`measure` then finds it finished
        and only evaluates, with the solo run's numbers (to float tolerance); a failed member is resumed, and fails,
        there.  Every latent ρ trains in the ensemble (the β-Gaussian's radius draw: once per member)."""
        if not config.train.ensemble or len(cells) < 2:
            return
        members = []
        for cell, ctx in zip(cells, ctxs):
            data = self.load_data(cell.params["dataset"], ctx.data_dir, config.n_train, config.n_valid, config.n_test)
            task = self._task(config, cell, data)  # its member at once: the member starts from this RNG state
            members.append(EnsembleMember(task, (data.train,), self.seed_stream(cell, "batches"), ctx.work_dir,
                                          f"{ctx.experiment}/{cell.key}"))
        Trainer(config.train, device=ctxs[0].device, subtask=ctxs[0].subtask,
                label=f"{ctxs[0].experiment}/ensemble").fit_ensemble(members)

    def measure(self, config: Config, cell: Cell, ctx):
        p = cell.params
        data = self.load_data(p["dataset"], ctx.data_dir, config.n_train, config.n_valid, config.n_test)
        task = self._task(config, cell, data)
        trainer = Trainer(dataclasses.replace(config.train, seed=self.seed_stream(cell, "batches")), device=ctx.device,
                          work_dir=ctx.work_dir, subtask=ctx.subtask, label=f"{ctx.experiment}/{cell.key}",
                          keep_last_finite=True)
        history, model = trainer.fit(task, (data.train,)), task.model.eval()
        test = data.test.to(ctx.device)
        errors = l1_errors(model, test)
        if cell.seed == config.figure_seed:
            originals = test[:config.n_reconstructions]  # with decoded prior samples and their reconstructions
            images = {"samples": decoded_prior_samples(model, config.n_prior_samples, config.latent, p["latent_rho"]),
                      "originals": originals, "reconstructions": mode_reconstructions(model, originals)}
            ctx.save_artifact(cell.key, **{name: to_uint8(x, (28, 28)) for name, x in images.items()})
        if p["latent_rho"] == 1.0:  # a Gaussian sample of a Gaussian posterior is its own sample
            del errors["gaussian_sample"]
        out = [metric(name, float(v.mean()), 2 * (float(v.std()) / math.sqrt(len(v))))
               for name, latent in L1_METRICS.items() if (v := errors.get(latent)) is not None]
        last, epoch_time = history[-1], float(np.mean([h["epoch_time_s"] for h in history]))
        if trainer.stopped is not None:  # measured at the end of the epoch before (the module docstring)
            out.append(metric(DIVERGED_IN_EPOCH, trainer.stopped["epoch"]))
        return out + [metric("final_train_loss", last["train_loss"]), metric("final_valid_l1", last["valid_l1"]),
                      metric("epoch_time_s", epoch_time)]
