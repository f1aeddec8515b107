"""Training settings as typed, validated nested configs (a spec's ``train:`` block): optimizer and LR schedule.

```yaml
train:
  epochs: 3280
  batch_size: 20
  optimizer: {name: adam, lr: 1.0e-3, betas: [0.99, 0.999], eps: 1.0e-4}
  schedule: {name: iwae}          # constant | step | iwae
```

The schedule is a pure function of the (1-based) epoch, ``lr(epoch) = base lr × factor(epoch)``, applied by the
Trainer at the start of every epoch; since the optimizer state (with its base lr) and the epoch are checkpointed,
a run resumed mid-schedule is identical to an uninterrupted one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Literal

import torch

from fyexp.errors import require


@dataclass
class OptimizerConfig:
    """``name`` and its arguments (``betas``/``eps`` for Adam(W), ``momentum`` for SGD/RMSprop)."""

    name: Literal["adam", "adamw", "sgd", "rmsprop"] = "adam"
    lr: float = 1e-3
    betas: tuple[float, float] = (0.9, 0.999)
    eps: float = 1e-8
    weight_decay: float = 0.0
    momentum: float = 0.0

    def __post_init__(self):
        require(self.lr > 0, "lr", "a positive number", self.lr)
        require(all(0 <= b < 1 for b in self.betas), "betas", "two numbers in [0, 1)", list(self.betas))
        require(self.eps > 0, "eps", "a positive number", self.eps)
        require(self.weight_decay >= 0, "weight_decay", "a number >= 0", self.weight_decay)
        require(self.momentum >= 0, "momentum", "a number >= 0", self.momentum)


def make_optimizer(config: OptimizerConfig, params: Iterable[torch.nn.Parameter]) -> torch.optim.Optimizer:
    """The torch optimizer of ``config`` over ``params``."""
    params = list(params)
    if config.name in ("adam", "adamw"):
        cls = torch.optim.Adam if config.name == "adam" else torch.optim.AdamW
        return cls(params, lr=config.lr, betas=tuple(config.betas), eps=config.eps, weight_decay=config.weight_decay)
    if config.name == "sgd":
        return torch.optim.SGD(params, lr=config.lr, momentum=config.momentum, weight_decay=config.weight_decay)
    return torch.optim.RMSprop(params, lr=config.lr, eps=config.eps, momentum=config.momentum,
                               weight_decay=config.weight_decay)


@dataclass
class ScheduleConfig:
    """The learning rate per epoch as a multiple of the optimizer's ``lr``.

    * ``constant``: factor 1;
    * ``step``: factor ``gamma ** ((epoch − 1) // step_size)``;
    * ``iwae`` (Burda et al. §5, ``anchors.md``): stage i = 1 … ``stages`` lasts g^{i−1} epochs
      (g = ``stage_growth``: 3 in IWAE, 3,280 epochs for 8 stages; 2 for VR's Caltech 101 Silhouettes, "the same
      settings as MNIST except that the training proceeded for Σ_{i=0}^{7} 2^i = 255 epochs", VRbound
      ``tex/appendix/exp_details.tex`` line 13) at lr · 10^{−(i−1)/7} (with lr = 1e-3: 1e-3 · 10^{−(i−1)/7}), the
      last stage's rate after that; ``rounded`` uses the authors' code's 1e-4 · round(10^{1−(i−1)/7}, 1) / 1e-3
      instead (yburda/iwae ``experiments.py`` line 119).
    """

    name: Literal["constant", "step", "iwae"] = "constant"
    step_size: int = 1
    gamma: float = 0.1
    stages: int = 8
    stage_growth: int = 3
    rounded: bool = False

    def __post_init__(self):
        require(self.step_size >= 1, "step_size", "an integer >= 1", self.step_size)
        require(self.gamma > 0, "gamma", "a positive number", self.gamma)
        require(self.stages >= 1, "stages", "an integer >= 1", self.stages)
        require(self.stage_growth >= 1, "stage_growth", "an integer >= 1", self.stage_growth)

    def stage(self, epoch: int) -> int:
        """The IWAE stage i (1-based) of a 1-based epoch."""
        i, end = 1, 1
        while epoch > end and i < self.stages:
            i += 1
            end += self.stage_growth ** (i - 1)
        return i

    @property
    def iwae_epochs(self) -> int:
        """Σ_{i=1}^{stages} g^{i−1} (g = 3: 3,280 for 8 stages; g = 2: 255)."""
        return sum(self.stage_growth ** (i - 1) for i in range(1, self.stages + 1))

    def factor(self, epoch: int) -> float:
        """The multiplier of the base learning rate in ``epoch`` (1-based)."""
        if self.name == "constant":
            return 1.0
        if self.name == "step":
            return self.gamma ** ((epoch - 1) // self.step_size)
        i = self.stage(epoch)
        if self.rounded:
            return round(10 ** (1 - (i - 1) / 7), 1) / 10
        return 10 ** (-(i - 1) / 7)


def learning_rates(schedule: ScheduleConfig, base_lr: float, epochs: int) -> list[float]:
    """The learning rate of every epoch 1 … ``epochs``."""
    return [base_lr * schedule.factor(e) for e in range(1, epochs + 1)]


__all__ = ["OptimizerConfig", "ScheduleConfig", "make_optimizer", "learning_rates"]
