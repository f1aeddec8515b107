"""Dynamic binarization (the IWAE protocol, Burda et al. 2016): every training batch draws x ∼ Bernoulli(gray
levels) afresh, so the model sees a new binary sample of each image at every epoch."""

from __future__ import annotations

import torch

from fyexp.train.variational import VariationalTask


class BinarizingTask(VariationalTask):
    """:class:`VariationalTask` that draws x ∼ Bernoulli(gray levels) for every training batch (when ``binarize``)
    and, given held-out images, computes the training objective's bound on them every ``valid_every`` epochs."""

    def __init__(self, model, objective, binarize: bool, valid: torch.Tensor | None = None, valid_every: int = 1):
        super().__init__(model, objective, valid)
        self.binarize, self.valid_every = binarize, valid_every

    def validate(self, epoch: int) -> dict[str, float]:
        return super().validate(epoch) if epoch % self.valid_every == 0 else {}

    def loss(self, batch):
        x = batch[0] if isinstance(batch, (tuple, list)) else batch
        return super().loss((torch.bernoulli(x) if self.binarize else x,))


__all__ = ["BinarizingTask"]
