"""``VariationalTask(model, objective)``: the one TrainTask of every VAE-like experiment.

The loss of a batch is −(1/B) Σ_i bound_i, the bound being the objective's (ELBO, FY β-ELBO, VR-α, IWAE,
VR-max, L_γ; :mod:`fyexp.objectives`) on the model's K samples (:mod:`fyexp.models`).  Validation, when data
is given, reports ``valid_loss`` (the same objective) and, where the model decodes a mean, ``valid_l1``
(mean over data points of Σ_d |x_d − E[x_d | z_1]| at the first posterior sample).
"""

from __future__ import annotations

from typing import Any, Mapping

import torch

from fyexp.objectives import Objective
from fyexp.models.latent import LatentModel
from fyexp.train.trainer import TrainTask


class VariationalTask(TrainTask):
    """Train ``model`` on ``objective``; ``valid`` (optional) is a tensor of held-out data points."""

    def __init__(self, model: LatentModel, objective: Objective, valid: torch.Tensor | None = None):
        self.model, self.objective, self.valid = model, objective, valid

    def configure_optimizers(self) -> dict[str, torch.optim.Optimizer]:
        if self.valid is not None:
            self.valid = self.valid.to(next(self.model.parameters()).device)
        return super().configure_optimizers()

    def loss(self, batch: Any) -> tuple[torch.Tensor, Mapping[str, torch.Tensor]]:
        x = batch[0] if isinstance(batch, (tuple, list)) else batch
        bound, parts = self.objective(self.model, x)
        return -bound.mean(), parts

    def validate(self, epoch: int) -> dict[str, float]:
        if self.valid is None:
            return {}
        terms = self.model.terms(self.valid, self.objective.n_samples)
        metrics = {"valid_loss": float(-self.objective.bound(terms).mean())}
        if terms.decode_mean is not None:
            metrics["valid_l1"] = float((self.valid - terms.decode_mean()[0]).abs().sum(-1).mean())
        return metrics
