"""Training settings as typed, validated nested configs (a spec's ``train:`` block, :class:`TrainConfig`): optimizer
and LR schedule.  Importing them needs no torch (only :func:`make_optimizer` does).

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

from dataclasses import field
from typing import TYPE_CHECKING, Annotated, Iterable, Literal

from fyexp.core.constraints import Interval, NonNegativeFloat, PositiveFloat, PositiveInt, settings

if TYPE_CHECKING:  # torch is imported by make_optimizer: a spec's train: block is read without it (`fyexp show`)
    import torch


_Beta = Annotated[float, Interval(float, 0, 1, "left")]   # Adam's decay rates, in [0, 1)


@settings
class OptimizerConfig:
    """``name`` and its arguments (``betas``/``eps`` for Adam(W), ``momentum`` for SGD/RMSprop).  ``adam_iwae`` is
    the IWAE code's Adam, on the gradient of the minibatch sum (:mod:`fyexp.train.iwae_adam`)."""

    name: Literal["adam", "adamw", "sgd", "rmsprop", "adam_iwae"] = "adam"
    lr: PositiveFloat = 1e-3
    betas: tuple[_Beta, _Beta] = (0.9, 0.999)
    eps: PositiveFloat = 1e-8
    weight_decay: NonNegativeFloat = 0.0
    momentum: NonNegativeFloat = 0.0

    def __post_init__(self):
        from fyexp.core.errors import require

        require(self.name != "adam_iwae" or self.weight_decay == 0, "weight_decay",
                "0 with adam_iwae (the IWAE code's Adam has no weight decay)", self.weight_decay)


def make_optimizer(config: OptimizerConfig, params: Iterable[torch.nn.Parameter],
                   batch_size: int = 1) -> torch.optim.Optimizer:
    """The torch optimizer of ``config`` over ``params``, with torch's multi-tensor (``foreach``) update.

    ``batch_size`` matters to ``adam_iwae`` alone, whose moments are of the minibatch sum's gradient
    (:class:`fyexp.train.iwae_adam.IWAEAdam`); every other optimizer is invariant to it or never sees it.

    On the CPU torch otherwise takes the per-parameter loop.  The multi-tensor update performs the same elementwise
    operations in the same order, so it computes the same numbers bit for bit (Adam, AdamW, RMSprop, SGD; float32
    and float64, with weight decay, momentum and eps: ``tests/train/test_trainer.py``) in about 60% of the optimizer's
    time (``scripts/bench_queue.py``): no committed row moves.  The ``fused`` kernels are faster still but round
    differently (Adam: about 1e-8 apart after 60 steps), so they are not used.
    """
    import torch

    params = list(params)
    if config.name == "adam_iwae":
        from fyexp.train.iwae_adam import IWAEAdam

        return IWAEAdam(params, lr=config.lr, betas=tuple(config.betas), eps=config.eps, summed_over=batch_size)
    if config.name in ("adam", "adamw"):
        cls = torch.optim.Adam if config.name == "adam" else torch.optim.AdamW
        return cls(params, lr=config.lr, betas=tuple(config.betas), eps=config.eps, weight_decay=config.weight_decay,
                   foreach=True)
    if config.name == "sgd":
        return torch.optim.SGD(params, lr=config.lr, momentum=config.momentum, weight_decay=config.weight_decay,
                               foreach=True)
    return torch.optim.RMSprop(params, lr=config.lr, eps=config.eps, momentum=config.momentum,
                               weight_decay=config.weight_decay, foreach=True)


@settings
class ScheduleConfig:
    """The learning rate per epoch as a multiple of the optimizer's ``lr``.

    * ``constant``: factor 1;
    * ``step``: factor ``gamma ** ((epoch − 1) // step_size)``;
    * ``iwae`` (Burda et al. §5, ``docs/protocols.md``): stage i = 1 … ``stages`` lasts g^{i−1} epochs
      (g = ``stage_growth``: 3 in IWAE, 3,280 epochs for 8 stages; 2 for VR's Caltech 101 Silhouettes, "the same
      settings as MNIST except that the training proceeded for Σ_{i=0}^{7} 2^i = 255 epochs", VRbound
      ``tex/appendix/exp_details.tex`` line 13) at lr · 10^{−(i−1)/7} (with lr = 1e-3: 1e-3 · 10^{−(i−1)/7}), the
      last stage's rate after that; ``rounded`` uses the authors' code's 1e-4 · round(10^{1−(i−1)/7}, 1) / 1e-3
      instead (yburda/iwae ``experiments.py`` line 119).
    """

    name: Literal["constant", "step", "iwae"] = "constant"
    step_size: PositiveInt = 1
    gamma: PositiveFloat = 0.1
    stages: PositiveInt = 8
    stage_growth: PositiveInt = 3
    rounded: bool = False

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


@settings
class TrainConfig:
    """How to train (the *what* is the task).

    A spec's ``train:`` block is this dataclass, nested (``optimizer:`` and ``schedule:`` are
    :class:`~fyexp.train.config.OptimizerConfig` and :class:`~fyexp.train.config.ScheduleConfig`); the runner
    sets ``seed`` per cell.  ``num_workers=None`` picks 0 on the CPU and up to 4 on CUDA (DataLoader path
    only).  ``amp`` uses bf16 autocast on CUDA (no gradient scaler needed) and is ignored on the CPU.
    ``log_every`` is how often (in steps) the progress bar is refreshed and the NaN guard synchronises.
    ``ensemble`` asks the runner to train the seeds of a cell as one model (:meth:`Trainer.fit_ensemble`,
    :mod:`fyexp.train.ensemble`): meant for a GPU, where one small model is launch-bound; off by default, since
    on the CPU it does not pay — ``scripts/bench_grid.py`` on the shared 2-core machine (load average ≈ 11),
    12 FYVI Table 2 networks: 0.91× the throughput of one after another at 1 thread, and at 2 threads 2.1× of
    a 2-thread sequential run that is itself ~9× slower than 1 thread; one single-threaded cell per core
    (``fyexp run NAME --executor local``) is the CPU's best use.
    """

    epochs: PositiveInt = 1
    batch_size: PositiveInt = 64
    optimizer: OptimizerConfig = field(default_factory=OptimizerConfig)
    schedule: ScheduleConfig = field(default_factory=ScheduleConfig)
    seed: int = 0
    amp: bool = False
    compile: bool = False
    num_workers: int | None = None
    drop_last: bool = False
    log_every: PositiveInt = 50
    check_grads: bool = True
    ensemble: bool = False


__all__ = ["TrainConfig", "OptimizerConfig", "ScheduleConfig", "make_optimizer", "learning_rates"]
