"""Training: the one loop (:mod:`.trainer`), its typed settings (:mod:`.config`: optimizer, LR schedule — a spec's
nested ``train:`` block), :class:`VariationalTask` (:mod:`.variational`), the task of every VAE-like experiment,
and :mod:`.ensemble`, several runs of one architecture trained as one model (``train.ensemble``); :mod:`.nvdm`,
NVDM's alternating decoder / encoder schedule."""

from fyexp.train.config import OptimizerConfig, ScheduleConfig, learning_rates, make_optimizer
from fyexp.train.trainer import (CHECKPOINT, METRICS, TensorBatches, TrainConfig, Trainer, TrainTask, rng_state,
                                 seed_everything, set_rng_state)
from fyexp.train.variational import VariationalTask
from fyexp.train.ensemble import EnsembleMember, MemberResult, fit_ensemble

__all__ = ["TrainConfig", "TrainTask", "Trainer", "VariationalTask", "OptimizerConfig", "ScheduleConfig",
           "make_optimizer", "learning_rates", "seed_everything", "rng_state", "set_rng_state", "TensorBatches",
           "CHECKPOINT", "METRICS", "EnsembleMember", "MemberResult", "fit_ensemble"]
