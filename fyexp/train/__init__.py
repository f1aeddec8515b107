"""Training: the one loop (:mod:`.trainer`), its typed settings (:mod:`.config`: ``TrainConfig``, optimizer, LR
schedule — a spec's nested ``train:`` block), :class:`VariationalTask` (:mod:`.variational`), the task of every
VAE-like experiment, and :mod:`.ensemble`, several runs of one architecture trained as one model
(``train.ensemble``); :mod:`.nvdm`, NVDM's alternating decoder / encoder schedule; what both trainers share
(task, batches, RNG, checkpoints) is in :mod:`._state`.

The settings import without torch (a spec is read and shown without it); the rest is imported on first use
(``from fyexp.train import Trainer`` imports :mod:`.trainer` then).
"""

import importlib

from fyexp.train.config import OptimizerConfig, ScheduleConfig, TrainConfig, learning_rates, make_optimizer

# name → the module of this package that defines it, imported when the name is first asked for
_LAZY = {"Trainer": "trainer", "TrainTask": "_state", "TensorBatches": "_state", "seed_everything": "_state",
         "rng_state": "_state", "set_rng_state": "_state", "CHECKPOINT": "_state", "METRICS": "_state",
         "training_finished": "_state",
         "VariationalTask": "variational", "EnsembleMember": "ensemble", "MemberResult": "ensemble",
         "fit_ensemble": "ensemble"}

__all__ = ["TrainConfig", "OptimizerConfig", "ScheduleConfig", "make_optimizer", "learning_rates", *_LAZY]


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
