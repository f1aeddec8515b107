"""NVDM's training (Miao et al., 2016; FYVI Appendix D): the β-ELBO with alternating decoder / encoder passes.

:func:`train_nvdm` builds :func:`fyexp.models.build_nvdm` and trains it with :class:`fyexp.train.Trainer` on the
β-ELBO (:class:`fyexp.objectives.ELBO`), i.e. per document the loss E_q[N · L(θ(z); x/N)] + β KL(q ‖ N(0, I)) with
one reparameterized sample, L the multinomial NLL (NVDM, α = 1) or the Tsallis α-entmax FY loss (FY-NVDM), in
NVDM's schedule (:class:`NVDMTask`): an NVDM epoch is ``alternating_epochs`` decoder-only passes followed by as
many encoder-only passes.  The validation RE ‖x/N − α-entmax(θ(μ(x)))‖₁ after each NVDM epoch feeds tuning's
pruning.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Callable, Protocol

import torch

from fyexp.models.nvdm import build_nvdm, reconstruction_error
from fyexp.models.vae import VAE
from fyexp.objectives import ELBO
from fyexp.train.config import make_optimizer
from fyexp.train.trainer import TrainConfig, Trainer, seed_everything
from fyexp.train.variational import VariationalTask

__all__ = ["NVDMSettings", "NVDMTask", "train_nvdm"]


class NVDMSettings(Protocol):
    """What NVDM's training reads from a config (e.g. :class:`fyexp.experiments.nvdm_config.NVDMConfig`)."""

    n_topics: int
    hidden: int
    beta: float
    alternating_epochs: int
    train: TrainConfig

    @property
    def alpha(self) -> float:
        """The observation's Tsallis index α (1: softmax / multinomial NLL; > 1: α-entmax / FY loss)."""


class NVDMTask(VariationalTask):
    """NVDM's objective and alternating schedule for :class:`fyexp.train.Trainer`.

    Trainer epochs are passes over the data; NVDM epoch e consists of passes 2A(e−1)+1 … 2Ae, the first A
    updating only the decoder, the last A only the encoder (A = ``alternating_epochs``; Miao et al.'s order).
    The other half's parameters are frozen for the pass, so no gradient is computed for them.  After each
    NVDM epoch the validation RE is computed and passed to ``report(epoch, value)`` (which may prune).
    """

    def __init__(self, model: VAE, config: NVDMSettings, valid: torch.Tensor,
                 report: Callable[[int, float], None] | None = None):
        super().__init__(model, ELBO(beta=config.beta), valid)
        self.config, self.report = config, report
        self.cycle = 2 * config.alternating_epochs

    def configure_optimizers(self) -> dict[str, torch.optim.Optimizer]:
        optimizer = self.train_config.optimizer
        return {"decoder": make_optimizer(optimizer, self.model.decoder_parameters()),
                "encoder": make_optimizer(optimizer, self.model.encoder_parameters())}

    def phase(self, epoch: int) -> str:
        return "decoder" if (epoch - 1) % self.cycle < self.config.alternating_epochs else "encoder"

    def optimizers_for_epoch(self, epoch: int) -> list[str]:
        return [self.phase(epoch)]

    def on_epoch_start(self, epoch: int) -> None:
        decoder = self.phase(epoch) == "decoder"
        for p in self.model.decoder_parameters():
            p.requires_grad_(decoder)
        for p in self.model.encoder_parameters():
            p.requires_grad_(not decoder)

    def validate(self, epoch: int) -> dict[str, float]:
        if epoch % self.cycle:
            return {}
        return {"valid_re": float(reconstruction_error(self.model, self.valid, self.config.alpha).mean())}

    def on_epoch_end(self, epoch: int, metrics) -> bool:
        if "valid_re" in metrics and self.report is not None:
            self.report(epoch // self.cycle, metrics["valid_re"])
        return False


def train_nvdm(config: NVDMSettings, train: torch.Tensor, valid: torch.Tensor, *, seed: int, device: str,
               work_dir: Path | None, subtask=None, label: str = "nvdm",
               report: Callable[[int, float], None] | None = None) -> tuple[VAE, list[dict]]:
    """Train one model (resuming from ``work_dir``'s checkpoint); return it and the per-pass history."""
    seed_everything(seed)
    model = build_nvdm(train.shape[1], config.n_topics, config.hidden, config.alpha)
    task = NVDMTask(model, config, valid.to(device), report)
    passes = dataclasses.replace(config.train, epochs=config.train.epochs * task.cycle, seed=seed)
    trainer = Trainer(passes, device=device, work_dir=work_dir, subtask=subtask, label=label)
    history = trainer.fit(task, train)
    for p in model.parameters():
        p.requires_grad_(True)
    model.eval()
    return model, history
